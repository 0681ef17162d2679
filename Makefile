# bulkhead: top-level entry points. `make run` and `make test` do all setup themselves.
JOBS ?= $(shell nproc)
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
ARGS ?=

.PHONY: setup build build-server build-asan run test format-check layering-check unit-test unit-test-asan release-test interop-test cluster-test nemesis-test nemesis sidekiq-test mastodon-test e2e-test dashboard-test dashboard-screenshots deploy-test bench bench-fanout bench-inflight replay replay-sidekiq clean

setup:
	@bash scripts/setup

# Ninja: one build graph across targets (a test binary's files compile while the libraries it links
# are still being built). A build folder configured earlier with another generator is reconfigured.
GENERATOR = -G Ninja
# ccache, when the machine has it, for rebuilds in several checkouts (it is not installed by setup).
LAUNCHER = $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache,)
forget-generator = if [ -f $(1)/CMakeCache.txt ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$$' $(1)/CMakeCache.txt; then \
  rm -rf $(1)/CMakeCache.txt $(1)/CMakeFiles; fi

RELEASE_CMAKE = $(call forget-generator,$(BUILD_DIR)); cmake -S . -B $(BUILD_DIR) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) >/dev/null

# Everything in Release: the server, its unit tests, the benchmarks.
build: setup
	$(RELEASE_CMAKE)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The server binary alone: what `make run`, the replay and the interop and e2e suites need.
build-server: setup
	$(RELEASE_CMAKE)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target bulkhead

# The sanitizer build: clang-14 with ASan and UBSan, every library also instrumented for libFuzzer
# (BULKHEAD_FUZZ), so that one build serves both the unit tests and the fuzz targets. Everything
# at -O0 (ASAN_OPT): measured on 2 cores, the build takes 6 min against 8 at -O1 and the unit tests
# 80 s against 66 (the simulations, which -O0 slows most, run in Release: release-test). For long
# fuzzing runs, `make fuzz ASAN_OPT=-O1 ASAN_DIR=build-asan-o1` gives more executions per second.
# Line tables only: reports still name file and line.
ASAN_OPT ?= -O0
ASAN_CMAKE = $(call forget-generator,$(ASAN_DIR)); cmake -S . -B $(ASAN_DIR) $(GENERATOR) -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS=$(ASAN_OPT) -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
  -DBULKHEAD_FUZZ=ON -DBULKHEAD_BENCH=OFF $(LAUNCHER) >/dev/null

build-asan: setup
	$(ASAN_CMAKE)
	cmake --build $(ASAN_DIR) -j $(JOBS)

run: build-server
	mkdir -p data
	./$(BUILD_DIR)/bulkhead serve $(ARGS)

# The unit tests in Release: a developer's quick loop. `make test` runs them under the sanitizers
# instead (unit-test-asan: the same tests, and memory and undefined-behaviour errors found too).
unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

# Every unit test under the sanitizers but the simulations (ctest label "simulation": thousands of
# deliveries through the real dispatcher per scenario, about a minute each under ASan against a
# second in Release; release-test runs them).
unit-test-asan: build-asan
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 600 -LE simulation

# What `make test` runs in Release: the simulations (label "simulation") and the incident replayed
# for 15 s against its baseline (ctest replay_blackhole_15s, docs/incident.md; ctest runs it alone:
# its verdicts are about latency). Builds only the server and the simulation binaries.
SIMULATION_TARGETS = dispatch_simulation_test
release-test: build-server
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(SIMULATION_TARGETS)
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300 \
	  -R '^replay_blackhole_15s$$|SimulationTest\.'

interop-test: build-server
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 interop/

# Several nodes on real redis-server / redis-sentinel processes: kill -9 a node, fail over the
# primary (tests/cluster/).
cluster-test: build-server
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 cluster/

# Faults against three nodes on real redis-server / redis-sentinel processes, each node behind a
# fault proxy, with recording clients and the history checker (tests/nemesis/, docs/reliability.md).
# nemesis-test: the short version of every scenario (about 70 s); nemesis: the full lengths
# (a 60 s SIGSTOP, a 30 s cut, Redis stalled 10 s; production liveness timings; about 8 min),
# histories and reports in $(NEMESIS_OUT).
NEMESIS_OUT ?= $(CURDIR)/$(BUILD_DIR)/nemesis
nemesis-test: build-server
	rm -rf $(BUILD_DIR)/nemesis-short && mkdir -p $(BUILD_DIR)/nemesis-short
	cd tests && NEMESIS_OUT=$(CURDIR)/$(BUILD_DIR)/nemesis-short BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 nemesis/

nemesis: build-server
	cd tests && NEMESIS_MODE=full NEMESIS_OUT=$(NEMESIS_OUT) BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead \
	  node --test --test-concurrency=1 --test-timeout=1200000 nemesis/
	node tests/nemesis/check.mjs $(NEMESIS_OUT)/*.jsonl || true

# The Sidekiq bridge with real Ruby processes (Debian's ruby-sidekiq: Sidekiq::Client pushing, a
# `sidekiq` process running the outcome jobs), a real redis-server as the application's Redis,
# web-push-testing and an inbox that verifies signatures (tests/sidekiq/).
sidekiq-test: build-server
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 sidekiq/

# The Mastodon adapter (integrations/mastodon/bulkhead.rb, docs/mastodon.md): in one Ruby process
# against stand-ins of Mastodon's classes, in three worker shapes (three processes at once); then
# end to end in a real `sidekiq` process with a real redis-server and bulkhead (tests/mastodon/).
mastodon-test: build-server
	printf '%s\n' 4.4 aesgcm changed | xargs -P 3 -I{} env MASTODON_SHAPE={} ruby integrations/mastodon/test/adapter_test.rb
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 mastodon/

# Real Prometheus + Alertmanager + a webhook receiver against bulkhead's /metrics and shipped rules.
e2e-test: build-server
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 e2e/

# The web dashboard in headless Chromium (tests/dashboard/): pages, figures, actions, XSS, CSRF,
# auth. Screenshots go to $(BUILD_DIR)/dashboard-shots; `make dashboard-screenshots` refreshes docs/img/.
dashboard-test: build-server
	rm -rf $(BUILD_DIR)/dashboard-shots
	cd tests && DASHBOARD_SCREENSHOTS=$(CURDIR)/$(BUILD_DIR)/dashboard-shots BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 dashboard/

dashboard-screenshots: build-server
	cd tests && DASHBOARD_SCREENSHOTS=$(CURDIR)/docs/img BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 dashboard/

deploy-test: setup
	if [ -x deploy/test ]; then bash deploy/test; fi

# Every tracked C++ file matches .clang-format (scripts/check-format).
format-check: setup
	bash scripts/check-format

# The module order (scripts/check-layering): a module includes and links only the modules before it
# in the top CMakeLists.txt's list. The self-test first proves on fake trees that the check fails on
# an upward include, DEPS or link.
layering-check:
	python3 scripts/check-layering --self-test
	python3 scripts/check-layering

# The Release unit tests are not part of it: unit-test-asan runs the same tests with more checks,
# and building them a second time in Release cost about a quarter of the run.
test: format-check layering-check unit-test-asan release-test interop-test cluster-test nemesis-test sidekiq-test mastodon-test e2e-test dashboard-test deploy-test fuzz-test

bench: build
	bash bench/run

# The delivery fan-out alone (bench/run.d/60-fanout.sh, docs/benchmarks.md): 1,000 HTTPS hosts on
# loopback, bulkhead against the Sidekiq way and the machine's crypto limit; ~15 minutes, root.
bench-fanout: build-server
	bash bench/run.d/60-fanout.sh

# 15,000 deliveries held in flight to never-answering hosts beside healthy ones (bench/fanout/
# inflight.mjs, docs/benchmarks.md): the healthy rate alone and beside them; 3-5 minutes, root.
bench-inflight: build-server
	FANOUT_MAIN=bench/fanout/inflight.mjs bash bench/run.d/60-fanout.sh

# The incident replayed on loopback (docs/incident.md): `make replay ARGS="--fault 5xx"`.
replay: build-server
	./$(BUILD_DIR)/bulkhead replay --baseline --out $(BUILD_DIR)/replay $(ARGS)

# The incident on a real Sidekiq process and redis-server (docs/incident.md, "On a real Sidekiq"):
# the story's minute twice, the 2019 way and handed to bulkhead through its Sidekiq bridge; about
# 2.5 minutes. `make test` runs an 8-s version (tests/sidekiq/replay.test.mjs).
replay-sidekiq: build-server
	./$(BUILD_DIR)/bulkhead replay --pipeline sidekiq --out $(BUILD_DIR)/replay-sidekiq $(ARGS)

# Fuzzing (fuzz/README.md): libFuzzer targets, built in the sanitizer build $(ASAN_DIR).
# `make fuzz` runs each target FUZZ_SECONDS (keeping what it finds in $(ASAN_DIR)/fuzz-corpus);
# `make fuzz-test` (part of `make test`) runs each FUZZ_TEST_SECONDS, one target per core (about a
# minute in all on 2 cores), and fails on any crash.
# FUZZ_TARGETS picks targets: `make fuzz FUZZ_TARGETS="http fwp" FUZZ_SECONDS=600`.
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 20
FUZZ_TARGETS ?=

.PHONY: fuzz-build fuzz fuzz-test

# Only the fuzz targets (`make fuzz` needs no tests); `make test` has built everything already.
fuzz-build: setup
	$(ASAN_CMAKE)
	cmake --build $(ASAN_DIR) -j $(JOBS) --target fuzz_all

fuzz: fuzz-build
	bash fuzz/run --build-dir $(ASAN_DIR) --seconds $(FUZZ_SECONDS) --keep-corpus $(FUZZ_TARGETS)

fuzz-test: fuzz-build
	bash fuzz/run --build-dir $(ASAN_DIR) --seconds $(FUZZ_TEST_SECONDS) --jobs $(JOBS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
