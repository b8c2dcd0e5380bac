#pragma once
// How the torch-cpu peer accumulates a half matmul on this host, found out rather than assumed.
//
// ATen does not document it, and it changes with the CPU: libtorch 1.13 (Debian's) sends a bfloat16
// mm or addmm to oneDNN, whose accumulators are float32, only where the CPU has AVX-512 BW, VL and DQ;
// elsewhere (an AMD EPYC or an Intel CPU with AVX2 alone) its own gemm keeps the partial sums of
// mm(a, b) in bfloat16. Verifying the peer's outputs against float32 accumulation then fails on such
// hosts, and verifying everything against bfloat16 accumulation would let a host with float32
// accumulators get away with much more than it does.
//
// So the backend probes once per process: a 64 x 128 by 128 x 64 product of pseudo-random values of
// the dtype, through the very calls the backend makes for a matmul (at::mm_out and at::addmm_out), is
// compared with the exact product rounded once to the dtype. Float32 accumulators leave an output on
// the other side of a rounding boundary only when the exact value lies within float32's error of a tie:
// a fraction of a percent of the outputs. Partial sums rounded in the dtype move most outputs (85% of
// them for bfloat16 with libtorch 1.13 on AVX2). More than kInDtypeFraction of the outputs differing
// means the dtype accumulates in itself; the verification bounds (reference::Accumulation) follow, and the
// report says what was found and how.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/reference/reference.hpp"

namespace tilesim::kernels::torch_peer {

inline constexpr double kInDtypeFraction = 0.10;

struct ProbeOutcome {
  DType dtype = DType::bfloat16;
  bool ran = false;                    // false: the peer has no mm of this dtype (nothing to verify)
  reference::DotAccumulation accumulation = reference::DotAccumulation::float32;
  std::int64_t outputs = 0;            // outputs compared
  std::int64_t differing = 0;          // outputs unequal to the exact product rounded once to the dtype
  std::string detail;                  // the finding in words, for the report
};

// The classification alone: `exact` the double-precision products, `got` what the implementation
// returned (values of `dtype`), `how` the calls made, for the text.
ProbeOutcome classify_accumulation(DType dtype, const std::vector<double>& exact, const std::vector<float>& got,
                                   const std::string& how);

// The probe itself, through the backend's mm factory (torch_ops.hpp); for float16 and bfloat16.
ProbeOutcome probe_accumulation(DType dtype);

// Both dtypes, probed on the first call and kept for the process (thread-safe).
struct HostAccumulation {
  reference::Accumulation accumulation;
  ProbeOutcome float16, bfloat16;
};
const HostAccumulation& host_accumulation();

}  // namespace tilesim::kernels::torch_peer
