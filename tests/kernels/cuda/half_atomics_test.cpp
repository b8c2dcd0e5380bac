// The 16-bit atomics of the CUDA kernels (kernels/cuda/half_atomics.hpp) as the host emulation runs
// them. The emulated add must be what the device's atomicAdd on __half / __nv_bfloat16 stores: the
// exact sum of the element and the addend (rounded to the dtype first) rounded once to nearest even.
// The test checks that against the exact sum itself, over random pairs of finite values of every
// magnitude, subnormals included, so the emulation's float32 add-then-round is shown to be that
// correctly rounded half add rather than assumed to be.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "kernels/cuda/half_atomics.hpp"
#include "kernels/cuda/kernel_bodies.hpp"

using namespace tilesim;
namespace cuda = tilesim::kernels::cuda;

namespace {

// Finite 16-bit patterns lie below the all-ones exponent: 0x7C00 (float16), 0x7F80 (bfloat16).
template <class S>
constexpr std::uint16_t infinity_bits() {
  return S::dtype == DType::float16 ? 0x7C00 : 0x7F80;
}

// A pattern's place in value order (-0 and +0 both 0), and back: adjacent places are adjacent values.
std::int32_t order_of(std::uint16_t bits) {
  const std::int32_t magnitude = bits & 0x7FFF;
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}
std::uint16_t bits_of(std::int32_t order) {
  return order >= 0 ? static_cast<std::uint16_t>(order) : static_cast<std::uint16_t>(0x8000 | -order);
}

}  // namespace

TEMPLATE_TEST_CASE("cuda half atomic add (host emulation) stores the correctly rounded sum", "[kernels][cuda][unit]", cuda::Float16Storage,
                   cuda::BFloat16Storage) {
  using S = TestType;
  std::mt19937 rng(15);
  std::uniform_int_distribution<std::uint32_t> any_bits(0, 0xFFFF);
  const std::int32_t largest = infinity_bits<S>() - 1;
  std::int64_t checked = 0, ties = 0, not_nearest = 0, odd_ties = 0;
  std::string first_failure;
  while (checked < 200000) {
    const auto a = static_cast<std::uint16_t>(any_bits(rng));
    // Half of the addends near a's magnitude, where cancellation and carries happen; the rest anywhere.
    const auto b = static_cast<std::uint16_t>(checked % 2 == 0 ? any_bits(rng) : ((a ^ 0x8000u) + any_bits(rng) % 64) & 0xFFFFu);
    if ((a & 0x7FFF) > largest || (b & 0x7FFF) > largest) continue;  // infinities and NaNs
    const double exact = static_cast<double>(S::load(a)) + static_cast<double>(S::load(b));  // exact in double
    if (std::fabs(exact) > static_cast<double>(S::load(bits_of(largest)))) continue;            // rounds to the largest or overflows
    std::uint16_t element = a;
    cuda::atomic_add_stored(S{}, &element, S::load(b));
    const std::int32_t place = order_of(element);
    const double got = S::load(element);
    // No value of the dtype is nearer the exact sum than the stored one; a tie goes to the even pattern.
    bool wrong = std::abs(place) > largest;
    for (const std::int32_t neighbour : {place - 1, place + 1}) {
      if (wrong || std::abs(neighbour) > largest) continue;
      const double other = S::load(bits_of(neighbour));
      if (std::fabs(exact - got) > std::fabs(exact - other)) wrong = true, ++not_nearest;
      if (std::fabs(exact - got) == std::fabs(exact - other) && exact != got) {
        ++ties;
        if ((std::abs(place) & 1) != 0) wrong = true, ++odd_ties;
      }
    }
    if (wrong && first_failure.empty())
      first_failure = "a=" + std::to_string(a) + " b=" + std::to_string(b) + " exact=" + std::to_string(exact) + " got=" + std::to_string(got);
    ++checked;
  }
  INFO(first_failure);
  CHECK(not_nearest == 0);
  CHECK(odd_ties == 0);
  CHECK(ties > 0);  // the random pairs did reach the tie-breaking rule
}

TEMPLATE_TEST_CASE("cuda half atomic add rounds the addend to the dtype first, as atomicAdd takes a half", "[kernels][cuda][unit]",
                   cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  // With p significand bits: 1 + 2^(1-p) plus 2^-p - 2^-(p+12). The addend is no value of the dtype and
  // rounds up to 2^-p, which puts the sum on a tie that goes to the even 1 + 2^(2-p); added unrounded,
  // the sum would lie just below the tie and round down to 1 + 2^(1-p).
  const int p = S::dtype == DType::float16 ? 11 : 8;
  std::uint16_t element = S::store(1.0f + std::ldexp(1.0f, 1 - p));
  cuda::atomic_add_stored(S{}, &element, std::ldexp(1.0f, -p) - std::ldexp(1.0f, -p - 12));
  CHECK(S::load(element) == 1.0f + std::ldexp(1.0f, 2 - p));
  // Counting past the last consecutive integer: 2^11 + 1 (float16) and 2^8 + 1 (bfloat16) are ties that
  // round to the even 2^11 and 2^8, so a count stops there, as it does on the device.
  const float top = S::dtype == DType::float16 ? 2048.0f : 256.0f;
  element = S::store(top - 1.0f);
  for (int i = 0; i < 5; ++i) cuda::atomic_add_stored(S{}, &element, 1.0f);
  CHECK(S::load(element) == top);
}

TEMPLATE_TEST_CASE("cuda half atomic max (host emulation) keeps the larger value from -inf, negatives included, and ignores NaN",
                   "[kernels][cuda][unit]", cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  std::uint16_t element = S::store(-std::numeric_limits<float>::infinity());
  for (float v : {-3.0f, -5.0f, -0.5f, -2.0f}) cuda::atomic_max_stored(S{}, &element, v);
  CHECK(S::load(element) == -0.5f);
  cuda::atomic_max_stored(S{}, &element, std::numeric_limits<float>::quiet_NaN());
  CHECK(S::load(element) == -0.5f);
  cuda::atomic_max_stored(S{}, &element, 2.0f);
  CHECK(S::load(element) == 2.0f);
}
