#pragma once
// Integer arithmetic shared by the models: how many blocks of `b` items hold `a` items.
#include <cstdint>

namespace tilesim {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace tilesim
