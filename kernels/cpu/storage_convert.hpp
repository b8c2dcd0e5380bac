#pragma once
// Whole arrays between float32 and a storage type, split over the OpenMP team when large (one thread
// below parallel::kParallelMinBytes moved): a 16-bit operand widened for a float32 kernel, a float32
// result rounded once into 16-bit storage. Rows of work inside a kernel use rows::load / rows::store.
#include <cstdint>

#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/row_ops.hpp"

namespace tilesim::kernels::cpu {

// to[i] = float(from[i]) for i in [0, count).
template <class T>
void widen(const T* from, std::int64_t count, float* to) {
  parallel::for_each_block(count, count * static_cast<std::int64_t>(sizeof(T) + sizeof(float)),
                           [&](std::int64_t begin, std::int64_t end) { rows::load(from + begin, end - begin, to + begin); });
}

// to[i] = T(from[i]) for i in [0, count): the one rounding of each element.
template <class T>
void narrow(const float* from, std::int64_t count, T* to) {
  parallel::for_each_block(count, count * static_cast<std::int64_t>(sizeof(T) + sizeof(float)),
                           [&](std::int64_t begin, std::int64_t end) { rows::store(from + begin, end - begin, to + begin); });
}

}  // namespace tilesim::kernels::cpu
