#pragma once
// The element types the simulated IPU's tiles hold, and their sizes in bytes. Values (tables, messages,
// partial sums, counts, matmul and elementwise operands) are of the op's value type, float32 or float16
// (IpuMachine::value_dtype, set per op by with_value_dtype); matmul partial products are float32 whatever
// the operands (poplin's default partials type). Indices and segment offsets are int32, as PopTorch
// lowers torch's int64 indices.
#include <cstdint>

#include "ir/dtype.hpp"

namespace tilesim::ipu {

inline constexpr DType kPartialDType = DType::float32;
inline constexpr DType kIndexDType = DType::int32;
inline constexpr std::int64_t kPartialBytes = dtype_bytes(kPartialDType);
inline constexpr std::int64_t kIndexBytes = dtype_bytes(kIndexDType);
// Loss row weights and Adam's step number are float32 whatever the op's value type.
inline constexpr std::int64_t kFloat32Bytes = dtype_bytes(DType::float32);

// The vertices' functional bodies read indices as std::int32_t.
static_assert(sizeof(std::int32_t) == kIndexBytes, "vertex bodies hold indices as std::int32_t");

}  // namespace tilesim::ipu
