#pragma once
// Which OpenBLAS kernel set ("core") a host should use, from cpuid features rather than the CPU's model
// number: OpenBLAS's own detection matches family/model tables, and a virtual machine that hides or
// fakes the model (or a CPU newer than the tables) gets the generic Prescott kernels, ~4x slower
// SGEMM. OpenBLAS reads OPENBLAS_CORETYPE once, in its load-time constructor, so the variable must be set
// before that runs: TILESIM_SELECT_OPENBLAS_CORETYPE_AT_LOAD puts select_openblas_coretype() in an
// executable's .preinit_array, which the dynamic loader runs before any shared library's constructor
// (no re-exec, the pid and arguments stay as they are). A user's own OPENBLAS_CORETYPE is kept.
#include <string>

namespace tilesim::kernels::cpu {

// The x86 features that decide the core, as cpuid (and xgetbv, for the OS saving the vector state) say.
struct CpuFeatures {
  bool avx2 = false, fma = false;                                                  // with OS-saved YMM state
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512cd = false;  // with ZMM state
  bool avx512_bf16 = false, avx512_fp16 = false, amx_bf16 = false, amx_tile = false;
};

CpuFeatures host_cpu_features();

// OpenBLAS's name for the best kernel set those features run: "SapphireRapids" (AMX-BF16, AVX-512-BF16
// and -FP16; an OpenBLAS built without it falls back to Cooperlake itself), "Cooperlake" (AVX-512-BF16),
// "SkylakeX" (AVX-512 F/BW/VL/DQ/CD), "Haswell" (AVX2 + FMA); empty below that (OpenBLAS decides).
std::string openblas_coretype_for(const CpuFeatures& features);

// Sets OPENBLAS_CORETYPE from this host's cpuid when it is unset (and there is a name to set). Returns
// the value in force afterwards (empty when none). Uses only getenv/setenv, so it may run before main.
std::string select_openblas_coretype();

}  // namespace tilesim::kernels::cpu

// In one source file of an executable (at namespace scope): select_openblas_coretype() before any shared
// library is initialised, OpenBLAS included.
#define TILESIM_SELECT_OPENBLAS_CORETYPE_AT_LOAD                                                                        \
  namespace {                                                                                                           \
  void tilesim_select_openblas_coretype_preinit(int, char**, char**) { tilesim::kernels::cpu::select_openblas_coretype(); } \
  __attribute__((section(".preinit_array"), used)) void (*const tilesim_openblas_coretype_preinit)(int, char**, char**) = \
      &tilesim_select_openblas_coretype_preinit;                                                                       \
  }
