# bulkhead: top-level entry points. `make run` and `make test` do all setup themselves.
JOBS ?= $(shell nproc)
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
ARGS ?=

.PHONY: setup build build-asan run test format-check unit-test unit-test-asan interop-test e2e-test deploy-test bench replay clean

setup:
	@bash scripts/setup

build: setup
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS)

build-asan: setup
	cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DBULKHEAD_SANITIZE=ON -DBULKHEAD_BENCH=OFF >/dev/null
	cmake --build $(ASAN_DIR) -j $(JOBS)

run: build
	mkdir -p data
	./$(BUILD_DIR)/bulkhead serve $(ARGS)

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

unit-test-asan: build-asan
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 600

interop-test: build
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 interop/

# Real Prometheus + Alertmanager + a webhook receiver against bulkhead's /metrics and shipped rules.
e2e-test: build
	cd tests && BULKHEAD_BINARY=$(CURDIR)/$(BUILD_DIR)/bulkhead node --test --test-concurrency=1 --test-timeout=300000 e2e/

deploy-test: setup
	if [ -x deploy/test ]; then bash deploy/test; fi

# Every tracked C++ file matches .clang-format (scripts/check-format).
format-check: setup
	bash scripts/check-format

test: format-check unit-test unit-test-asan interop-test e2e-test deploy-test fuzz-test

bench: build
	bash bench/run

# The incident replayed on loopback (docs/incident.md): `make replay ARGS="--fault 5xx"`.
replay: build
	./$(BUILD_DIR)/bulkhead replay --baseline --out $(BUILD_DIR)/replay $(ARGS)

# Fuzzing (fuzz/README.md): libFuzzer targets built with clang-14 under ASan/UBSan in $(FUZZ_DIR).
# `make fuzz` runs each target FUZZ_SECONDS (keeping what it finds in $(FUZZ_DIR)/fuzz-corpus);
# `make fuzz-test` (part of `make test`) runs each FUZZ_TEST_SECONDS (~2.5 min in all) and fails
# on any crash.
# FUZZ_TARGETS picks targets: `make fuzz FUZZ_TARGETS="http fwp" FUZZ_SECONDS=600`.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 20
FUZZ_TARGETS ?=

.PHONY: fuzz-build fuzz fuzz-test

fuzz-build: setup
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
	  -DBULKHEAD_FUZZ=ON -DBULKHEAD_TESTS=OFF -DBULKHEAD_BENCH=OFF >/dev/null
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzz_all

fuzz: fuzz-build
	bash fuzz/run --build-dir $(FUZZ_DIR) --seconds $(FUZZ_SECONDS) --keep-corpus $(FUZZ_TARGETS)

fuzz-test: fuzz-build
	bash fuzz/run --build-dir $(FUZZ_DIR) --seconds $(FUZZ_TEST_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
