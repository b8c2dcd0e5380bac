# tilesim: two commands do everything on a fresh Debian 12 machine (as root):
#   make run    install missing packages, build (Release), run the default workload
#   make test   install missing packages, build, run every test, then the tests again under ASan+UBSan
.PHONY: all deps build run test test-release test-asan bench clean

WORKLOAD ?= workloads/examples/default.json
TILESIM := build/release/apps/tilesim

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release

run: build
	$(TILESIM) run $(WORKLOAD)

test: test-release test-asan

test-release: build
	ctest --preset release

test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	ctest --preset asan

bench: build
	build/release/bench/tilesim_bench

clean:
	rm -rf build out
