// The planners' integer helpers that stand in for divisions in the program builders' loops
// (models/ipu/planning/blocks.hpp): each must give exactly what the division gives, at the edges
// of every quotient, for the sizes a machine can have.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include "models/ipu/planning/blocks.hpp"

using namespace tilesim::ipu;

namespace {

std::int64_t floor_div_exact(std::int64_t x, std::int64_t d) {
  std::int64_t q = x / d;
  if (x % d != 0 && (x < 0) != (d < 0)) --q;
  return q;
}

}  // namespace

TEST_CASE("FixedDivisor gives the integer quotient at and around every multiple", "[ipu][unit]") {
  std::mt19937_64 engine(7);
  for (const std::int64_t d : {1LL, 2LL, 3LL, 7LL, 64LL, 511LL, 512LL, 11397LL, 1000003LL, (1LL << 31) - 1}) {
    const FixedDivisor divide(d);
    std::uniform_int_distribution<std::int64_t> quotient(0, (std::int64_t{1} << 40) / d);
    for (int k = 0; k < 2000; ++k) {
      const std::int64_t q = quotient(engine);
      for (const std::int64_t x : {q * d, q * d + d - 1, q * d + d / 2, q * d > 0 ? q * d - 1 : 0}) {
        CHECK(divide(x) == x / d);
      }
    }
    CHECK(divide(0) == 0);
    CHECK(divide((std::int64_t{1} << 52) + 12345) == ((std::int64_t{1} << 52) + 12345) / d);
  }
}

TEST_CASE("SteppedQuotient follows floor((x0 + k step) / d) from either sign of x0", "[ipu][unit]") {
  std::mt19937_64 engine(11);
  std::uniform_int_distribution<std::int64_t> small(1, 5000), start(-20000, 20000);
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t d = small(engine), step = small(engine), x0 = start(engine);
    SteppedQuotient q(x0, step, d);
    for (std::int64_t k = 0; k < 200; ++k) {
      REQUIRE(q.quotient == floor_div_exact(x0 + k * step, d));
      REQUIRE(q.remainder == x0 + k * step - q.quotient * d);
      q.next();
    }
  }
}
