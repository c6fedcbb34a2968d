# The two commands a newcomer runs: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
DATA ?= $(abspath ../shared/traces)

.PHONY: deps build run test test-sanitize test-tsan fuzz test-fuzz bench format clean

deps:
	@bash tools/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The main job: every policy over several capacities on the built-in default workload. Builds
# the command line only (no tests, micro-benchmarks, libraries or Python module): `make build`
# or `make test` builds everything.
run: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target kvpolicy
	$(BUILD)/kvpolicy compare

test: build
	cd $(BUILD) && KVPOLICY_DATA=$${KVPOLICY_DATA:-$(DATA)} ctest --output-on-failure -j $(JOBS)

# Unit tests under address + undefined-behaviour sanitizers, and the multi-threaded ones (async
# GBM training, parallel sweeps) under the thread sanitizer. CI runs both. The address build is
# clang's and also holds the libFuzzer targets (`make fuzz`), so CI compiles it once for both.
# Line tables (-g1) are all a sanitizer's report needs, and compile a fifth faster than full
# debug information.
$(BUILD)-asan/build.ninja:
	cmake -S . -B $(BUILD)-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DKVPOLICY_SANITIZE=address -DKVPOLICY_FUZZ=ON \
	  -DKVPOLICY_BENCH=OFF

test-sanitize: deps $(BUILD)-asan/build.ninja
	cmake --build $(BUILD)-asan -j $(JOBS) --target kvpolicy_tests kvpolicy
	# The CLI checks and the fault campaign run the sanitized binary too. The whole-trace
	# Mooncake replays (goldens), the README tour, the results tables and the long equality
	# sweeps of lru's parking and serve's guard (ServeGuard.BoundHoldsInServeMode runs that code
	# here) run in `make test` only: under the sanitizers they take minutes each and check no
	# code the others do not.
	cd $(BUILD)-asan && KVPOLICY_DATA=$${KVPOLICY_DATA:-$(DATA)} ctest --output-on-failure -j $(JOBS) \
	  -E 'Mooncake|ReadmeTour|ResultsTables|LruParking|ServeGuard.BoundHoldsUnderPreemption|ServeGuard.GuardedLruIsLru'

test-tsan: deps
	cmake -S . -B $(BUILD)-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DKVPOLICY_SANITIZE=thread -DKVPOLICY_BENCH=OFF
	cmake --build $(BUILD)-tsan -j $(JOBS) --target kvpolicy_tsan_tests
	cd $(BUILD)-tsan && ctest --output-on-failure -j $(JOBS) -R 'GbmPredictor|KeyGbm|Sweep' -E '^Cli'

# libFuzzer on every reader, parser and policy spec, FUZZ_SECONDS each (tools/fuzz.sh), in the
# address-sanitizer build; CI runs `make test-fuzz`: each target over its corpus and a few
# seconds of fuzzing.
FUZZ_SECONDS ?= 60
fuzz: deps $(BUILD)-asan/build.ninja
	cmake --build $(BUILD)-asan -j $(JOBS) --target kvpolicy_fuzz kvpolicy_fuzz_seeds
	bash tools/fuzz.sh $(BUILD)-asan $(FUZZ_SECONDS) $(BUILD)-asan/fuzz-table.md

test-fuzz:
	$(MAKE) fuzz FUZZ_SECONDS=4

bench: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target kvpolicy
	$(BUILD)/kvpolicy bench --data $(DATA)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD)-lean $(BUILD)-asan $(BUILD)-tsan build-pip
