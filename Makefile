# bulkhead: top-level entry points. `make run` and `make test` do all setup themselves.
JOBS ?= $(shell nproc)
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
ARGS ?=

.PHONY: setup build build-asan run test format-check unit-test unit-test-asan interop-test cluster-test e2e-test deploy-test bench replay clean

setup:
	@bash scripts/setup

build: setup
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The sanitizer build: clang-14 with ASan and UBSan, every library also instrumented for libFuzzer
# (BULKHEAD_FUZZ), so that one build serves both the unit tests and the fuzz targets. Libraries at
# -O1 (under ASan, -O0 runs the dispatcher simulation about 3.5x slower), test code at -O0
# (CMakeLists.txt), line tables only: reports still name file and line.
ASAN_CMAKE = cmake -S . -B $(ASAN_DIR) -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
  -DBULKHEAD_FUZZ=ON -DBULKHEAD_BENCH=OFF >/dev/null

build-asan: setup
	$(ASAN_CMAKE)
	cmake --build $(ASAN_DIR) -j $(JOBS)

run: build
	mkdir -p data
	./$(BUILD_DIR)/bulkhead serve $(ARGS)

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

# Every unit test under the sanitizers but the dispatcher simulation's Deferred variants: each
# scenario drives thousands of deliveries through the real dispatcher and engine and takes about a
# minute under ASan; their Inline variants run here, both run in the Release `unit-test`, and the
# deferred timing itself is covered by every other dispatch test.
ASAN_CTEST_EXCLUDE ?= DispatcherSimulationTest\..*/Deferred

unit-test-asan: build-asan
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 600 -E '$(ASAN_CTEST_EXCLUDE)'

interop-test: build
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 interop/

# Several nodes on real redis-server / redis-sentinel processes: kill -9 a node, fail over the
# primary (tests/cluster/).
cluster-test: build
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 cluster/

# Real Prometheus + Alertmanager + a webhook receiver against bulkhead's /metrics and shipped rules.
e2e-test: build
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 e2e/

deploy-test: setup
	if [ -x deploy/test ]; then bash deploy/test; fi

# Every tracked C++ file matches .clang-format (scripts/check-format).
format-check: setup
	bash scripts/check-format

test: format-check unit-test unit-test-asan interop-test cluster-test e2e-test deploy-test fuzz-test

bench: build
	bash bench/run

# The incident replayed on loopback (docs/incident.md): `make replay ARGS="--fault 5xx"`.
replay: build
	./$(BUILD_DIR)/bulkhead replay --baseline --out $(BUILD_DIR)/replay $(ARGS)

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
