#include "kernels/cpu/openblas_coretype.hpp"

#include <cpuid.h>

#include <cstdint>
#include <cstdlib>

namespace tilesim::kernels::cpu {
namespace {

// XCR0: which register state the OS saves on a context switch. Without it the instructions fault, so a
// feature counts only when its state is saved.
std::uint64_t xcr0() {
  std::uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (std::uint64_t{hi} << 32) | lo;
}

bool bit(std::uint32_t reg, int b) { return ((reg >> b) & 1u) != 0; }

}  // namespace

CpuFeatures host_cpu_features() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = bit(ecx, 27), fma = bit(ecx, 12);
  if (!osxsave) return f;
  const std::uint64_t state = xcr0();
  const bool ymm = (state & 0x6) == 0x6;      // SSE and AVX state
  const bool zmm = (state & 0xE6) == 0xE6;    // plus opmask, ZMM0-15 upper halves, ZMM16-31
  const bool tiles = (state & 0x60000) == 0x60000;  // XTILECFG and XTILEDATA (Linux grants use on request)
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  f.avx2 = ymm && bit(ebx, 5);
  f.fma = ymm && fma;
  f.avx512f = zmm && bit(ebx, 16);
  f.avx512dq = zmm && bit(ebx, 17);
  f.avx512cd = zmm && bit(ebx, 28);
  f.avx512bw = zmm && bit(ebx, 30);
  f.avx512vl = zmm && bit(ebx, 31);
  f.avx512_fp16 = zmm && bit(edx, 23);
  f.amx_bf16 = tiles && bit(edx, 22);
  f.amx_tile = tiles && bit(edx, 24);
  const unsigned max_subleaf = eax;
  if (max_subleaf >= 1) {
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    f.avx512_bf16 = zmm && bit(eax, 5);
  }
  return f;
}

std::string openblas_coretype_for(const CpuFeatures& f) {
  const bool skylake_x = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512cd;
  if (skylake_x && f.avx512_bf16 && f.avx512_fp16 && f.amx_bf16 && f.amx_tile) return "SapphireRapids";
  if (skylake_x && f.avx512_bf16) return "Cooperlake";
  if (skylake_x) return "SkylakeX";
  if (f.avx2 && f.fma) return "Haswell";
  return "";
}

std::string select_openblas_coretype() {
  if (const char* set = std::getenv("OPENBLAS_CORETYPE"); set != nullptr && set[0] != '\0') return set;
  const std::string core = openblas_coretype_for(host_cpu_features());
  if (!core.empty()) setenv("OPENBLAS_CORETYPE", core.c_str(), 0);
  return core;
}

}  // namespace tilesim::kernels::cpu
