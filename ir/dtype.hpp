#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace tilesim {

// Element types of tensors. Values are float32 for now; indices are int32 (as on the IPU, where
// PopTorch lowers torch's int64 indices to int32).
enum class DType { float32, int32 };

// Bytes of one element. constexpr, so models can name their element sizes as constants.
constexpr std::int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::int32: return 4;
  }
  throw std::logic_error("dtype_bytes: unknown dtype");
}

std::string to_string(DType dtype);
// Parses a value dtype name ("float32"); nullopt for names tilesim does not know.
std::optional<DType> dtype_from_string(const std::string& name);

}  // namespace tilesim
