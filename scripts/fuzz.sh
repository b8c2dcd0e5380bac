#!/usr/bin/env bash
# Runs the libFuzzer targets of the fuzz build (preset `fuzz`, tests/fuzz/) one after the other, each in
# one process (no -jobs: this project's hosts have 2 cores and other work), from its seed corpus and its
# regression inputs. Prints one line per target (runs, exec/s, wall time, result) and exits 1 when any
# target has a finding: a crash, a sanitizer report, a leak, an input slower than TIMEOUT seconds or one
# that takes more than RSS_MB MiB, or an error that breaks tests/fuzz/fuzz_support.hpp's rule.
#
#   scripts/fuzz.sh RUNS [MAX_TIME_S] [TARGET...]
#
# RUNS: executions per target (libFuzzer -runs); MAX_TIME_S: stop a target after this many seconds
# even short of RUNS (0 or absent: no limit); TARGETs: a subset (default: every target built).
# Environment: FUZZ_TIMEOUT (seconds per input, default 10), FUZZ_RSS_MB (default 2048).
#
# Files, all under build/fuzz/ (never in the source tree):
#   corpus/TARGET/     inputs libFuzzer found that add coverage (kept between runs; the seeds and
#                      regressions in tests/fuzz/ are read, never written)
#   artifacts/TARGET/  the input of a finding (crash-*, leak-*, timeout-*, oom-*)
#   logs/TARGET.log    libFuzzer's output
# A finding's input goes, minimised (fuzz_TARGET -minimize_crash=1 -runs=10000 FILE), into
# tests/fuzz/regressions/TARGET/ with its fix (README.md, "Fuzzing").
set -uo pipefail

cd "$(dirname "$0")/.."
build=build/fuzz
runs=${1:?usage: scripts/fuzz.sh RUNS [MAX_TIME_S] [TARGET...]}
max_time=${2:-0}
shift $(( $# >= 2 ? 2 : 1 ))
timeout=${FUZZ_TIMEOUT:-10}
rss_mb=${FUZZ_RSS_MB:-2048}

all_targets=(workload sweep ipu_machine gpu_machine cpu_machine cpu_node edge_list matrix_market metis index_file)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

# Longest input per target: JSON files and graph and index files of a few KB reach every branch of their
# readers; the machine files, whose seeds state every figure of a chip (tests/fuzz/corpus/*_machine/
# compact-*), get twice that.
max_len() {
  case "$1" in
    ipu_machine|gpu_machine) echo 8192 ;;
    *) echo 4096 ;;
  esac
}
dict_args() {
  case "$1" in
    workload|sweep|ipu_machine|gpu_machine|cpu_machine|cpu_node) echo "-dict=tests/fuzz/json.dict" ;;
  esac
}

failed=()
printf '%-14s %10s %9s %8s  %s\n' target runs exec/s wall result
for t in "${targets[@]}"; do
  exe=$build/tests/fuzz/fuzz_$t
  if [ ! -x "$exe" ]; then
    echo "fuzz: $exe is not built (cmake --preset fuzz && cmake --build --preset fuzz)" >&2
    exit 2
  fi
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t" "$build/logs"
  log=$build/logs/$t.log
  start=$(date +%s)
  # shellcheck disable=SC2046  # dict_args is one word or none
  "$exe" "$build/corpus/$t" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" \
    -runs="$runs" -max_total_time="$max_time" -max_len="$(max_len "$t")" -timeout="$timeout" \
    -rss_limit_mb="$rss_mb" -artifact_prefix="$build/artifacts/$t/" -print_final_stats=1 $(dict_args "$t") \
    >"$log" 2>&1
  status=$?
  wall=$(( $(date +%s) - start ))
  done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  if [ "$status" -eq 0 ]; then
    result="no finding"
  else
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    result="FINDING (exit $status${artifact:+, input $artifact}; log $log)"
    failed+=("$t")
  fi
  printf '%-14s %10s %9s %7ss  %s\n' "$t" "${done_runs:-?}" "${rate:-?}" "$wall" "$result"
  if [ "$status" -ne 0 ]; then
    grep -E 'ERROR|fuzz finding|terminate called|what\(\)|SUMMARY|Test unit written' "$log" | head -n 20 | sed 's/^/    /'
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
