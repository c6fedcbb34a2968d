# The two commands a newcomer runs: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
DATA ?= $(abspath ../shared/traces)

.PHONY: deps build run test test-sanitize bench format clean

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The main job: every policy over several capacities on the built-in default workload.
run: build
	$(BUILD)/kvpolicy compare

test: build
	cd $(BUILD) && KVPOLICY_DATA=$${KVPOLICY_DATA:-$(DATA)} ctest --output-on-failure -j $(JOBS)

# Unit tests under address + undefined-behaviour sanitizers (CI runs this too).
test-sanitize: deps
	cmake -S . -B $(BUILD)-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKVPOLICY_SANITIZE=ON -DKVPOLICY_BENCH=OFF
	cmake --build $(BUILD)-asan -j $(JOBS) --target kvpolicy_tests
	cd $(BUILD)-asan && KVPOLICY_DATA=$${KVPOLICY_DATA:-$(DATA)} ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/kvpolicy bench --data $(DATA)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD)-asan
