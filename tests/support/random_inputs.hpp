#pragma once
// Seeded random test inputs, drawn the same way by every test that needs values or indices: values
// uniform in [lo, hi), indices uniform in [0, range) (optionally sorted, as edges by destination).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace tilesim_test {

inline std::vector<float> random_values(std::int64_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

inline std::vector<std::int32_t> random_indices(std::int64_t n, std::int64_t range, std::mt19937& rng, bool sorted = false) {
  std::uniform_int_distribution<std::int32_t> d(0, static_cast<std::int32_t>(range - 1));
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (auto& i : v) i = d(rng);
  if (sorted) std::sort(v.begin(), v.end());
  return v;
}

}  // namespace tilesim_test
