#pragma once
// The torch-cpu peer's ops, called the way PyTorch Geometric calls them, on buffers the caller owns.
// libtorch stays behind this header (its headers take seconds to compile): only torch_ops.cpp includes
// ATen. Each factory wraps the buffers as tensors once (no copy; the int64 indices ATen's scatter ops
// require are converted once, as a PyG edge_index already holds them) and returns a call that runs the
// op into the caller's output, so timing it times the ATen kernel and its dispatch, not allocation.
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/scatter_reduce.hpp"

namespace tilesim::kernels::torch_peer {

// The libtorch version this build links, e.g. "1.13.1".
std::string version();
// ATen's intra-op thread count (OpenMP in Debian's build, the same libgomp as the CPU kernels). Set it to
// the CPU kernels' count before comparing, so both sides use the same cores.
void set_num_threads(int threads);
int num_threads();

class PeerCall {
 public:
  struct Impl;
  explicit PeerCall(std::unique_ptr<Impl> impl);
  PeerCall(PeerCall&&) noexcept;
  PeerCall& operator=(PeerCall&&) noexcept;
  ~PeerCall();
  void operator()() const;  // one call; writes the output buffer given to the factory

 private:
  std::unique_ptr<Impl> impl_;
};

// out = table.index_select(0, indices)                       (PyG: x.index_select(0, edge_index[0]))
PeerCall index_select(const float* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                      std::int64_t num_lookups, float* out);
// out.zero_().index_add_(0, indices, src)
PeerCall index_add(const float* src, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                   std::int64_t num_outputs, float* out);
// PyG's scatter(src, index, dim=0, reduce=...): out.zero_() then scatter_add_ (sum) or
// scatter_reduce_(.., "mean" | "amax", include_self=False) with the int64 index broadcast over features.
// Rows no index points at are 0, as in PyG.
PeerCall scatter(cpu::Reduce reduce, const float* src, std::int64_t num_messages, std::int64_t num_features,
                 const std::int32_t* indices, std::int64_t num_outputs, float* out);
// at::segment_reduce(src, reduce, offsets=offsets): rows offsets[s] .. offsets[s + 1] - 1 reduce into
// out[s]; empty segments give 0. offsets has num_segments + 1 entries.
PeerCall segment_reduce(cpu::Reduce reduce, const float* src, std::int64_t num_messages, std::int64_t num_features,
                        const std::int64_t* offsets, std::int64_t num_segments, float* out);
// PyG's unfused message passing with edge weights: out.zero_().index_add_(0, dst, x.index_select(0, src) * w[:, None]).
PeerCall gather_scale_scatter(const float* x, std::int64_t num_nodes, std::int64_t num_features, const std::int32_t* src_nodes,
                              const std::int32_t* dst_nodes, const float* weights, std::int64_t num_edges,
                              std::int64_t num_outputs, float* out);
// c = a @ b (at::mm), or c = bias + a @ b with bias [n] broadcast over rows (at::addmm). Row-major.
PeerCall mm(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c);

}  // namespace tilesim::kernels::torch_peer
