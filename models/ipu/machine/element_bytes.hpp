#pragma once
// The element types the simulated IPU's tiles hold, and their sizes in bytes: the one place that
// half precision changes. Values (tables, messages, partial sums, counts, matmul and elementwise
// operands) are float32, the type the machine files' codelet costs describe and the vertices compute
// in; indices and segment offsets are int32, as PopTorch lowers torch's int64 indices.
#include <cstdint>

#include "ir/dtype.hpp"

namespace tilesim::ipu {

inline constexpr DType kValueDType = DType::float32;
inline constexpr DType kIndexDType = DType::int32;
inline constexpr std::int64_t kValueBytes = dtype_bytes(kValueDType);
inline constexpr std::int64_t kIndexBytes = dtype_bytes(kIndexDType);

// The vertices' functional bodies read values as float and indices as std::int32_t.
static_assert(sizeof(float) == kValueBytes, "vertex bodies hold values as float");
static_assert(sizeof(std::int32_t) == kIndexBytes, "vertex bodies hold indices as std::int32_t");

}  // namespace tilesim::ipu
