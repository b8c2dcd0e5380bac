#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace tilesim {

// Element types of tensors. Values are float32 for now; indices are int32 (as on the IPU, where
// PopTorch lowers torch's int64 indices to int32).
enum class DType { float32, int32 };

std::int64_t dtype_bytes(DType dtype);
std::string to_string(DType dtype);
// Parses a value dtype name ("float32"); nullopt for names tilesim does not know.
std::optional<DType> dtype_from_string(const std::string& name);

}  // namespace tilesim
