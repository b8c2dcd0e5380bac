#pragma once
// The byte moves of an exchange's copies. A strided transfer of a column block moves thousands of rows
// of a few dozen bytes each; a library call per row costs more than its bytes, so short rows are moved
// inline. Every byte is read before any is written, so overlapping regions move as memmove moves them
// (a plan may copy a region onto itself). The engine's exchanges and host moves use it, and so may
// vertex bodies that move short rows.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tilesim::sim {

namespace detail {

// Moves n bytes, w <= n <= 2w, as two possibly overlapping words of w bytes: first and last.
template <std::size_t W>
inline void move_two_words(std::byte* dst, const std::byte* src, std::size_t n) {
  unsigned char head[W], tail[W];
  std::memcpy(head, src, W);
  std::memcpy(tail, src + n - W, W);
  std::memcpy(dst, head, W);
  std::memcpy(dst + n - W, tail, W);
}

}  // namespace detail

inline void move_bytes(std::byte* dst, const std::byte* src, std::size_t n) {
  if (n > 64) {
    std::memmove(dst, src, n);
  } else if (n >= 32) {
    detail::move_two_words<32>(dst, src, n);
  } else if (n >= 16) {
    detail::move_two_words<16>(dst, src, n);
  } else if (n >= 8) {
    detail::move_two_words<8>(dst, src, n);
  } else if (n >= 4) {
    detail::move_two_words<4>(dst, src, n);
  } else if (n > 0) {
    std::memmove(dst, src, n);
  }
}

}  // namespace tilesim::sim
