#!/usr/bin/env bash
# Writes a fingerprint of every deterministic number tilesim produces: the validation figures, each
# shipped example's simulated cycles and modeled times (per op, with the IPU plans), and every row of the
# hydronet and schnet_block sweeps on the simulated and modeled backends. Measured times (cpu, torch-cpu,
# cuda), host wall times, dates and tool versions are left out, so two builds that compute the same
# results give byte-identical fingerprints. Used to check that a refactor changes no result:
#   scripts/results-fingerprint.sh build/release/apps/tilesim /tmp/before
#   (change, rebuild)
#   scripts/results-fingerprint.sh build/release/apps/tilesim /tmp/after
#   diff -r /tmp/before/fingerprint /tmp/after/fingerprint
# Takes a few minutes on a 2-core host (the schnet_block sweep dominates).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 TILESIM_BINARY OUT_DIR" >&2
  exit 2
fi
T=$(realpath "$1")
out=$(realpath -m "$2")
cd "$(dirname "$0")/.."
mkdir -p "$out/fingerprint" "$out/raw"
canon="python3 scripts/results_canonical.py"

# 1. Validation: every (machine, op, split) figure.
"$T" validate --json --no-plots --out "$out/raw/validation" > "$out/raw/validation.json"
$canon validation "$out/raw/validation.json" > "$out/fingerprint/validation.txt"

# 2. Every example on the deterministic backends (timing-only: the same cycles as functional runs).
for w in workloads/examples/*.json; do
  name=$(basename "$w" .json)
  backends="ipu:bow,ipu:bow:static,ipu:mk2,ipu:bow-2000,gpu-model:a100-40gb,gpu-model:a100-40gb:eager"
  rc=0
  "$T" run "$w" --backends "$backends" --timing-only --json --out "$out/raw/run-$name" \
    > "$out/raw/run-$name.json" 2> "$out/raw/run-$name.err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    # A workload too large for a single IPU exits 3; it is fingerprinted on the system it runs on.
    backends="ipu:bow-2000:static,gpu-model:a100-40gb,gpu-model:a100-40gb:eager"
    rc=0
    "$T" run "$w" --backends "$backends" --timing-only --json --out "$out/raw/run-$name" \
      > "$out/raw/run-$name.json" 2> "$out/raw/run-$name.err" || rc=$?
  fi
  { echo "exit $rc"; $canon run "$out/raw/run-$name.json"; } > "$out/fingerprint/run-$name.txt"
done

# 3. The sweeps on the simulated and modeled backends.
for s in hydronet schnet_block; do
  "$T" sweep "workloads/sweeps/$s.json" --backends ipu:bow,gpu-model:a100-40gb:eager \
    --out "$out/raw/sweep-$s" --overwrite > "$out/raw/sweep-$s.log" 2>&1
  $canon sweep "$out/raw/sweep-$s/results.csv" > "$out/fingerprint/sweep-$s.txt"
done

# 4. The IPU and GPU fits (printed, not written).
"$T" calibrate-model --ipu bow --json > "$out/raw/fit-ipu.json"
"$T" calibrate-model --gpu a100-40gb --json > "$out/raw/fit-gpu.json"
$canon validation "$out/raw/fit-ipu.json" > "$out/fingerprint/fit-ipu.txt"
$canon validation "$out/raw/fit-gpu.json" > "$out/fingerprint/fit-gpu.txt"

echo "fingerprint: $out/fingerprint ($(cat "$out"/fingerprint/* | wc -l) lines)"
