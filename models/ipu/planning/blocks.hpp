#pragma once
// Splitting a dimension into contiguous blocks, as the planners do for rows, columns and lookups.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/integer_math.hpp"

namespace tilesim::ipu {

struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
  bool contains(std::int64_t x) const { return x >= begin && x < end; }
};

// Exact floor division of a non-negative number by a divisor fixed for a whole loop, by a
// multiplication and a step of correction: a 64-bit division per item was most of the time of the
// program builders' walks over rows and indices. Exact for any non-negative x whose quotient times
// the divisor fits in 63 bits (the correction steps see to it); one step at most below 2^52.
struct FixedDivisor {
  std::int64_t divisor;
  double inverse;
  explicit FixedDivisor(std::int64_t d) : divisor(d), inverse(1.0 / static_cast<double>(d)) {}
  std::int64_t operator()(std::int64_t x) const {
    std::int64_t q = static_cast<std::int64_t>(static_cast<double>(x) * inverse);
    while (q * divisor > x) --q;
    while ((q + 1) * divisor <= x) ++q;
    return q;
  }
};

// floor((x0 + k * step) / divisor) for k = 0, 1, 2, ... (x0 of either sign; step and divisor
// positive), a step at a time without a division: the quotient and remainder carried forward.
struct SteppedQuotient {
  std::int64_t quotient, remainder, quotient_step, remainder_step, divisor;
  SteppedQuotient(std::int64_t x0, std::int64_t step, std::int64_t d)
      : quotient(x0 / d), remainder(x0 % d), quotient_step(step / d), remainder_step(step % d), divisor(d) {
    if (remainder < 0) {
      remainder += d;
      --quotient;
    }
  }
  void next() {
    quotient += quotient_step;
    remainder += remainder_step;
    if (remainder >= divisor) {
      remainder -= divisor;
      ++quotient;
    }
  }
};

// Block k of `total` items cut into blocks of `block_size` (the last may be short or empty).
inline Range block(std::int64_t total, std::int64_t block_size, std::int64_t k) {
  const std::int64_t b = std::min(total, k * block_size);
  return {b, std::min(total, b + block_size)};
}

// The block counts the planners try for a dimension of `limit` items: the powers of two below it and
// the limit itself.
inline std::vector<std::int64_t> powers_of_two_up_to(std::int64_t limit) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = 1; x <= limit; x *= 2) v.push_back(x);
  if (v.empty() || v.back() != limit) v.push_back(limit);
  return v;
}

}  // namespace tilesim::ipu
