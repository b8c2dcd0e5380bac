#include "kernels/torch/accumulation_probe.hpp"

#include <algorithm>
#include <cstdio>

#include "kernels/torch/torch_ops.hpp"

namespace tilesim::kernels::torch_peer {
namespace {

constexpr std::int64_t kM = 64, kK = 128, kN = 64;

// Values of the dtype in [-1, 1), from a fixed linear congruential sequence: the same probe on every host.
std::vector<float> probe_values(DType dtype, std::int64_t count, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  std::uint32_t state = seed;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    x = round_to(dtype, static_cast<float>(state >> 8) * 0x1p-23f - 1.0f);
  }
  return v;
}

std::vector<double> exact_product(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>* bias) {
  std::vector<double> c(static_cast<std::size_t>(kM * kN), 0.0);
  for (std::int64_t i = 0; i < kM; ++i)
    for (std::int64_t j = 0; j < kN; ++j) {
      double sum = bias ? (*bias)[static_cast<std::size_t>(j)] : 0.0;
      for (std::int64_t p = 0; p < kK; ++p)
        sum += static_cast<double>(a[static_cast<std::size_t>(i * kK + p)]) * b[static_cast<std::size_t>(p * kN + j)];
      c[static_cast<std::size_t>(i * kN + j)] = sum;
    }
  return c;
}

}  // namespace

ProbeOutcome classify_accumulation(DType dtype, const std::vector<double>& exact, const std::vector<float>& got,
                                   const std::string& how) {
  ProbeOutcome r;
  r.dtype = dtype;
  r.ran = true;
  r.outputs = static_cast<std::int64_t>(std::min(exact.size(), got.size()));
  for (std::size_t i = 0; i < exact.size() && i < got.size(); ++i)
    if (round_to(dtype, static_cast<float>(exact[i])) != got[i]) ++r.differing;
  if (exact.size() != got.size()) r.differing += static_cast<std::int64_t>(std::max(exact.size(), got.size()) - r.outputs);
  const double fraction = r.outputs > 0 ? static_cast<double>(r.differing) / static_cast<double>(r.outputs) : 1.0;
  r.accumulation = fraction > kInDtypeFraction ? reference::DotAccumulation::in_dtype : reference::DotAccumulation::float32;
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.1f%%", 100.0 * fraction);
  r.detail = std::string(r.accumulation == reference::DotAccumulation::in_dtype ? "partial sums in " + to_string(dtype)
                                                                                  : std::string("float32 accumulators")) +
             ": probed with " + how + ", " + std::to_string(r.differing) + " of " + std::to_string(r.outputs) + " outputs (" + percent +
             ") differ from the exact product rounded once to " + to_string(dtype) + " (more than " +
             std::to_string(static_cast<int>(100 * kInDtypeFraction)) + "% means partial sums in the dtype)";
  return r;
}

ProbeOutcome probe_accumulation(DType dtype) {
  const std::vector<float> a = probe_values(dtype, kM * kK, 1u);
  const std::vector<float> b = probe_values(dtype, kK * kN, 2u);
  const std::vector<float> bias = probe_values(dtype, kN, 3u);
  const std::string how = "at::mm_out and at::addmm_out, " + std::to_string(kM) + " x " + std::to_string(kK) + " @ " +
                          std::to_string(kK) + " x " + std::to_string(kN);
  std::vector<double> exact = exact_product(a, b, nullptr);
  const std::vector<double> exact_bias = exact_product(a, b, &bias);
  exact.insert(exact.end(), exact_bias.begin(), exact_bias.end());
  std::vector<float> got(exact.size(), 0.0f);
  try {
    ValueDTypeScope scope(dtype);
    const PeerCall plain = mm(a.data(), b.data(), kM, kK, kN, nullptr, got.data());
    const PeerCall with_bias = mm(a.data(), b.data(), kM, kK, kN, bias.data(), got.data() + kM * kN);
    plain();
    plain.finish();
    with_bias();
    with_bias.finish();
  } catch (const UnsupportedByPeer& e) {
    ProbeOutcome r;
    r.dtype = dtype;
    r.detail = std::string("not probed: ") + e.what();
    return r;
  }
  return classify_accumulation(dtype, exact, got, how);
}

const HostAccumulation& host_accumulation() {
  static const HostAccumulation found = [] {
    HostAccumulation h;
    h.float16 = probe_accumulation(DType::float16);
    h.bfloat16 = probe_accumulation(DType::bfloat16);
    h.accumulation.float16 = h.float16.accumulation;
    h.accumulation.bfloat16 = h.bfloat16.accumulation;
    return h;
  }();
  return found;
}

}  // namespace tilesim::kernels::torch_peer
