#pragma once
// The ranges of the values users give (sizes, seeds, counts), each stated once with its reason. Readers
// check against these and quote them in their messages (range_text), so a message never promises a
// range the code does not accept. docs/workload-format.md and docs/sweep-format.md list them.
#include <cstdint>
#include <limits>
#include <string>

#include "common/error.hpp"

namespace tilesim::limits {

// Node, edge, feature, index and output counts: tilesim's index type is int32.
inline constexpr std::int64_t max_size = std::numeric_limits<std::int32_t>::max();

// Seeds: JSON integers are read as int64, so a seed is a non-negative int64; a report's seed is
// therefore always one the workload reader accepts again.
inline constexpr std::int64_t max_seed = std::numeric_limits<std::int64_t>::max();

// Timed and untimed calls per op of a measured backend (--repeats, --warmup, the sweep's cpu section):
// far more than a median needs, few enough that the timings vector and the run stay small.
inline constexpr std::int64_t max_timed_calls = 100000;
inline constexpr std::int64_t max_warmup_calls = 1000;

// Training steps and mini-batches per run (--steps, --batches, train.steps, loader.batches).
inline constexpr std::int64_t max_steps = 1000000;

// Repeats of each sweep point.
inline constexpr std::int64_t max_sweep_repeats = 1000;

// Worker processes of a sweep (--jobs).
inline constexpr std::int64_t max_jobs = 256;

// One line of an index file holds one integer: a generous bound on its length, so a file with no
// newlines (or /dev/zero) is refused after this many bytes instead of being read whole.
inline constexpr std::int64_t max_index_line_bytes = 256;

// results.csv files (one row per point, a few hundred bytes each): a million-point sweep fits; a line
// is far shorter than its bound.
inline constexpr std::int64_t max_results_csv_bytes = std::int64_t{1} << 30;
inline constexpr std::int64_t max_csv_line_bytes = std::int64_t{1} << 16;

// JSON input files (workload, sweep, machine, calibration): the shipped ones are under 20 KB.
inline constexpr std::int64_t max_json_file_bytes = std::int64_t{16} << 20;

// "[lo, hi]", for messages.
inline std::string range_text(std::int64_t lo, std::int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

// A command-line value in [lo, hi], or an InputError naming the option and quoting the range:
// "--repeats: expected an integer in [1, 100000], found 0". `what`: the kind of value expected.
inline std::int64_t checked_option(const std::string& option, std::int64_t value, std::int64_t lo, std::int64_t hi,
                                   const std::string& what = "an integer") {
  if (value < lo || value > hi) throw InputError("", option, what + " in " + range_text(lo, hi), std::to_string(value));
  return value;
}

}  // namespace tilesim::limits
