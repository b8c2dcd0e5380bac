#pragma once
// What every reference bound is built from: the unit roundoffs of float32 and of the float64 sums the
// references make, the floor that lets exact zeros compare, and the way a value is printed in a
// mismatch message (enough digits to tell float32 neighbours apart).
#include <cstdio>
#include <string>

namespace tilesim::reference {

inline constexpr double kU32 = 0x1p-24;      // float32 unit roundoff
inline constexpr double kU64 = 0x1p-53;      // float64 unit roundoff (the references' own sums)
inline constexpr double kTinyAbs = 1e-30;    // far below any wrong value

inline std::string format_value(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

}  // namespace tilesim::reference
