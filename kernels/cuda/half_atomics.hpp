#pragma once
// Atomic read-modify-writes of 16-bit stored values (value_storage.hpp's float16 and bfloat16), for the
// kernels that accumulate into a half output as ATen does: scatter_add_ (and so PyG's scatter sum and
// mean, and degree) adds into the half tensor with atomicAdd on __half / __nv_bfloat16, each addition
// rounding in the dtype; scatter max compares and swaps (ATen's gpuAtomicMax for half is a
// compare-and-swap loop). In host emulation the threads run one after another, so each update is a
// plain load, float32 arithmetic and a rounded store: the same update the device makes atomically.
#include <cstdint>

#include "kernels/cuda/host_device.hpp"
#include "kernels/cuda/value_storage.hpp"

namespace tilesim::kernels::cuda {

// The updates, as functions of an element's bits. The sum first rounds the addend to the dtype, as
// atomicAdd takes a __half / __nv_bfloat16 (the kernels' addends are loaded elements or 1: exact), then
// adds in float32 and rounds once. That is the hardware's correctly rounded half add: the float32 sum of
// two 16-bit values rounded to the 16-bit format is their sum rounded directly, because float32's 24
// significand bits are at least 2 p + 2 for p = 11 (float16) and 8 (bfloat16), where double rounding
// cannot change a result.
template <class S>
struct AddStored {
  float addend;
  TILESIM_HD std::uint16_t operator()(std::uint16_t current) const { return S::store(S::load(current) + S::load(S::store(addend))); }
};
// The larger of the element and `value` (a value of the dtype); a NaN value never wins, as with the
// float32 kernel's comparison.
template <class S>
struct MaxStored {
  float value;
  TILESIM_HD std::uint16_t operator()(std::uint16_t current) const { return value > S::load(current) ? S::store(value) : current; }
};

#ifdef __CUDA_ARCH__
// One atomic update of a 16-bit element: a compare-and-swap loop on the aligned 32-bit word that holds
// it, since 32-bit atomicCAS exists on every architecture (16-bit atomicCAS needs sm_70). The GPU is
// little-endian: the element at byte offset 2 of the word is its high half.
template <class Update>
__device__ void atomic_update_16(std::uint16_t* address, Update update) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  unsigned int* word = reinterpret_cast<unsigned int*>(at & ~std::uintptr_t{3});
  const unsigned int shift = (at & 2u) != 0 ? 16u : 0u;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const auto current = static_cast<std::uint16_t>(assumed >> shift);
    const std::uint16_t next = update(current);
    if (next == current) return;  // nothing to write (a max that loses)
    old = atomicCAS(word, assumed, (assumed & ~(0xFFFFu << shift)) | (static_cast<unsigned int>(next) << shift));
  } while (assumed != old);
}
#endif

// *address += value in the dtype, atomically on the device: the hardware's half atomicAdd where the
// architecture has it (float16 from sm_70, bfloat16 from sm_80, the CMake default builds sm_80 and
// sm_90), the compare-and-swap loop below that.
TILESIM_HD inline void atomic_add_stored(Float16Storage, std::uint16_t* address, float value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  atomicAdd(reinterpret_cast<__half*>(address), __float2half_rn(value));
#elif defined(__CUDA_ARCH__)
  atomic_update_16(address, AddStored<Float16Storage>{value});
#else
  *address = AddStored<Float16Storage>{value}(*address);
#endif
}
TILESIM_HD inline void atomic_add_stored(BFloat16Storage, std::uint16_t* address, float value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  atomicAdd(reinterpret_cast<__nv_bfloat16*>(address), __float2bfloat16_rn(value));
#elif defined(__CUDA_ARCH__)
  atomic_update_16(address, AddStored<BFloat16Storage>{value});
#else
  *address = AddStored<BFloat16Storage>{value}(*address);
#endif
}

// *address = max(*address, value), atomically on the device (no architecture has a 16-bit float
// atomicMax).
template <class S>
TILESIM_HD void atomic_max_16(std::uint16_t* address, float value) {
#ifdef __CUDA_ARCH__
  atomic_update_16(address, MaxStored<S>{value});
#else
  *address = MaxStored<S>{value}(*address);
#endif
}
TILESIM_HD inline void atomic_max_stored(Float16Storage, std::uint16_t* address, float value) { atomic_max_16<Float16Storage>(address, value); }
TILESIM_HD inline void atomic_max_stored(BFloat16Storage, std::uint16_t* address, float value) { atomic_max_16<BFloat16Storage>(address, value); }

}  // namespace tilesim::kernels::cuda
