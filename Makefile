# Front door: `make demo` and `make test` work on a fresh machine (they install
# missing Debian packages when run as root, then build).
JOBS ?= $(shell nproc)
BUILD := build

.PHONY: all setup build demo test test-quick soak format clean install package

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@cmake --preset default >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/trellis demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j 1 --timeout 900

test-quick: build
	cd $(BUILD) && ctest --output-on-failure -L unit

# Installs the command, libtrellis.so, the headers, the CMake package and the
# pkg-config file under PREFIX (README, "Install").
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The Debian package (CPack), in $(BUILD)/.
package: build
	cd $(BUILD) && cpack -G DEB

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.h')

clean:
	rm -rf $(BUILD)

# Benchmarks (bench/, docs/benchmarks.md): one JSON line per configuration on
# stdout and appended to $(BUILD)/bench-results.jsonl. `bench` is the quick
# mode (scaled-down sizes, a few minutes); `bench-full` runs the full sizes.
.PHONY: bench bench-full
bench: build
	./$(BUILD)/bench/trellis_bench --out $(BUILD)/bench-results.jsonl

bench-full: build
	./$(BUILD)/bench/trellis_bench --full --out $(BUILD)/bench-results.jsonl

# Soak (docs/testing.md): generative episodes with random seeds in
# SOAK_JOBS parallel jobs for SOAK_MINUTES, not stopping at failures; then
# each job shrinks its failures within SOAK_SHRINK_SECONDS (0: no shrink).
# Prints one summary line; outputs go to /tmp/trellis-soak-<time>/.
SOAK_MINUTES ?= 30
SOAK_JOBS ?= 2
SOAK_SHRINK_SECONDS ?= 300
soak: build
	@SOAK_MINUTES=$(SOAK_MINUTES) SOAK_JOBS=$(SOAK_JOBS) SOAK_SHRINK_SECONDS=$(SOAK_SHRINK_SECONDS) \
	  bash scripts/soak.sh $(BUILD)/tests/generative/generative_tests
