# tilesim: two commands do everything on a fresh Debian 12 machine (as root):
#   make run    install missing packages, build (Release), run the hydronet sweep (simulated Bow IPU,
#               A100 model, this host's CPU) and write its speedup surfaces, rooflines and tables to out/
#   make test   install missing packages, build, run every test, then the CPU-kernel and peer tests
#               again with the libraries' instruction sets capped at AVX2 (test-isa-capped), then every
#               test under ASan+UBSan (the libraries and tilesim instrumented, the test code linked
#               against them), then a short run of every fuzz target (test-fuzz)
#   make check  the everyday tiers: build (Release) and run every test not labelled slow (under 2 minutes)
#   make fuzz   build the libFuzzer targets of the file readers (clang, ASan+UBSan; tests/fuzz/) and run
#               each for FUZZ_RUNS runs (default 10^6; FUZZ_TARGETS="metis sweep" picks some); any
#               finding fails. Crash inputs go to build/fuzz/artifacts/, logs to build/fuzz/logs/.
# make run WORKLOAD=FILE (or make run-workload) runs one workload file instead, as `tilesim run`.
.PHONY: all deps build run run-sweep run-workload design-space test test-release test-isa-capped test-asan test-fuzz check fuzz fuzz-build bench bench-sim clean

WORKLOAD ?= workloads/examples/default.json
TILESIM := build/release/apps/tilesim
SWEEP_OUT := out/hydronet
PLOTS := $(SWEEP_OUT)/plots

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release

ifeq ($(origin WORKLOAD),command line)
run: run-workload
else
run: run-sweep
endif

run-workload: build
	$(TILESIM) run $(WORKLOAD)

# The hydronet grid (594 points per op) on ipu:bow (timing-only), gpu-model:a100-40gb:eager and the CPU
# kernels (workloads/sweeps/hydronet.json); then the CPU's ceilings, the
# rooflines, the speedup surfaces (against the A100 model and the measured A100, with the measured Bow
# beside the simulated one) and the tables. Paths are printed as they are written; a five-line summary
# closes.
run-sweep: build
	@mkdir -p $(SWEEP_OUT)
	$(TILESIM) calibrate --out out/calibration/cpu.json
	$(TILESIM) sweep workloads/sweeps/hydronet.json --out $(SWEEP_OUT) --overwrite
	$(TILESIM) roofline $(SWEEP_OUT)/results.csv --machine cpu:out/calibration/cpu.json --out $(PLOTS)
	$(TILESIM) plot surface $(SWEEP_OUT)/results.csv --target ipu:bow --target validation/hydronet-gnn/bow \
	  --baseline gpu-model:a100-40gb:eager --baseline validation/hydronet-gnn/a100 --average-over num_features --out $(PLOTS)
	$(TILESIM) plot surface $(SWEEP_OUT)/results.csv --target ipu:bow --baseline gpu-model:a100-40gb:eager --out $(PLOTS)
	$(TILESIM) report $(SWEEP_OUT)/results.csv --format markdown > $(SWEEP_OUT)/report.md
	$(TILESIM) report $(SWEEP_OUT)/results.csv --format latex > $(SWEEP_OUT)/report.tex
	$(TILESIM) report $(SWEEP_OUT)/results.csv --format csv > $(SWEEP_OUT)/report.csv
	@echo
	@$(TILESIM) report $(SWEEP_OUT)/results.csv --format summary --target ipu:bow \
	  --baseline gpu-model:a100-40gb:eager --baseline validation/hydronet-gnn/a100 --baseline cpu
	@echo "files: $(SWEEP_OUT)/results.csv, $$(ls $(PLOTS)/*.pdf | wc -l) figures in $(PLOTS)/ (PDF, SVG, PNG, script, data), tables $(SWEEP_OUT)/report.{md,tex,csv}"

# The design-space example (docs/sweep-format.md, "A design-space example"): the hydronet gather/scatter
# grid and GCN training on the Cora-shaped graph over the Bow's SRAM per tile x exchange bandwidth x tile
# count (27 what-if machines) and the A100 model's HBM bandwidth (4), 36,828 + 62 rows; then the
# sensitivity, Pareto and contour plots of each. A few minutes on 2 cores.
DESIGN_OUT := out/design_space
DESIGN_COST := chip.num_tiles*chip.sram_bytes_per_tile
design-space: build
	$(TILESIM) sweep workloads/sweeps/design_space_hydronet.json --out $(DESIGN_OUT)/hydronet --overwrite --jobs 2
	$(TILESIM) sweep workloads/sweeps/design_space_gcn_cora.json --out $(DESIGN_OUT)/gcn_cora --overwrite
	$(TILESIM) plot sensitivity $(DESIGN_OUT)/hydronet/results.csv
	$(TILESIM) plot pareto $(DESIGN_OUT)/hydronet/results.csv --backends ipu:bow --cost '$(DESIGN_COST)'
	$(TILESIM) plot contour $(DESIGN_OUT)/hydronet/results.csv --backends ipu:bow --x chip.sram_bytes_per_tile --y chip.exchange_bytes_per_cycle
	$(TILESIM) plot contour $(DESIGN_OUT)/hydronet/results.csv --backends ipu:bow --x chip.num_tiles --y chip.exchange_bytes_per_cycle
	$(TILESIM) plot sensitivity $(DESIGN_OUT)/gcn_cora/results.csv
	$(TILESIM) plot pareto $(DESIGN_OUT)/gcn_cora/results.csv --backends ipu:bow --cost '$(DESIGN_COST)'
	$(TILESIM) plot contour $(DESIGN_OUT)/gcn_cora/results.csv --backends ipu:bow --x chip.num_tiles --y chip.exchange_bytes_per_cycle
	@echo "design space: $(DESIGN_OUT)/hydronet/results.csv, $(DESIGN_OUT)/gcn_cora/results.csv; figures in their plots/ folders"

test: test-release test-isa-capped test-asan test-fuzz

test-release: build
	ctest --preset release

# The host's CPU decides which kernels oneDNN, ATen and OpenBLAS run (AMX, AVX-512 BF16, AVX-512 or
# AVX2), and with them how half matmuls accumulate. These tests run on whatever CPU the host has in
# test-release; here they run again with each library capped at AVX2 through its documented variable
# (ONEDNN_MAX_CPU_ISA and its older name DNNL_MAX_CPU_ISA, ATEN_CPU_CAPABILITY, OPENBLAS_CORETYPE), so
# the paths an AMD EPYC or an older Intel host takes are tested on every host. The selection: every
# test whose name says it runs the CPU kernels, the torch-cpu peer, half dtypes or mixed precision.
ISA_CAPPED_ENV := ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Haswell
ISA_CAPPED_TESTS := cpu|CPU|torch|peer|half|float16|bfloat16|mixed precision|matmul|calibrat
test-isa-capped: build
	env $(ISA_CAPPED_ENV) ctest --preset release -R '$(ISA_CAPPED_TESTS)' -LE python

# The fast tiers (labels unit, formula, validation and cli; tests/CMakeLists.txt) without the slow ones:
# everyday work. `make test` stays the whole suite, twice.
check: build
	ctest --preset release --label-exclude slow

test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	ctest --preset asan

# Fuzzing (scripts/fuzz.sh): one target after another, each in one process. make test runs each target
# for FUZZ_TEST_RUNS runs or FUZZ_TEST_TIME seconds, whichever comes first (about 2 minutes in all); the
# seed corpus and the regression inputs are replayed by the Release and ASan tests too (tests/fuzz/).
FUZZ_RUNS ?= 1000000
FUZZ_TEST_RUNS ?= 20000
FUZZ_TEST_TIME ?= 12
FUZZ_TARGETS ?=

fuzz-build: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz

fuzz: fuzz-build
	scripts/fuzz.sh $(FUZZ_RUNS) 0 $(FUZZ_TARGETS)

test-fuzz: fuzz-build
	scripts/fuzz.sh $(FUZZ_TEST_RUNS) $(FUZZ_TEST_TIME) $(FUZZ_TARGETS)

bench: build
	build/release/bench/tilesim_bench

# The simulator-speed benchmarks against the saved baseline (bench/baselines/sim_speed.json): prints each
# benchmark's change. `make bench-sim SAVE=1` stores this run as the new baseline.
SIM_BASELINE := bench/baselines/sim_speed.json
bench-sim: build
	build/release/bench/tilesim_bench --benchmark_filter='^(simulate|native)/' \
	  $(if $(SAVE),--tilesim_save_baseline=$(SIM_BASELINE),--tilesim_baseline=$(SIM_BASELINE))

clean:
	rm -rf build out
