#pragma once
// Integer arithmetic shared by the models and the workload checks: how many blocks of `b` items hold
// `a` items; sums and products of byte counts that stop at INT64_MAX instead of wrapping (a declared
// size of billions must read as "too much", never as a small or negative number).
#include <cstdint>
#include <limits>

namespace tilesim {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

inline std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::int64_t>::max() : r;
}

inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::int64_t>::max() : r;
}

}  // namespace tilesim
