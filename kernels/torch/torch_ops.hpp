#pragma once
// The torch-cpu peer's ops, called the way PyTorch Geometric calls them, on buffers the caller owns.
// libtorch stays behind this header (its headers take seconds to compile): only torch_ops.cpp includes
// ATen, besides the training step's own files (torch_training.cpp, autograd_ops.*). Each factory wraps the buffers as tensors once (no copy; the int64 indices ATen's scatter ops
// require are converted once, as a PyG edge_index already holds them) and returns a call that runs the
// op into the caller's output, so timing it times the ATen kernel and its dispatch, not allocation.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "ir/op_graph.hpp"
#include "kernels/cpu/scatter_reduce.hpp"

namespace tilesim::kernels::torch_peer {

// The libtorch version this build links, e.g. "1.13.1".
std::string version();
// ATen's intra-op thread count (OpenMP in Debian's build, the same libgomp as the CPU kernels). Set it to
// the CPU kernels' count before comparing, so both sides use the same cores.
void set_num_threads(int threads);
int num_threads();

// A call libtorch cannot make in the dtype asked for (ATen has no CPU kernel of that type).
class UnsupportedByPeer : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PeerCall {
 public:
  struct Impl;
  explicit PeerCall(std::unique_ptr<Impl> impl);
  PeerCall(PeerCall&&) noexcept;
  PeerCall& operator=(PeerCall&&) noexcept;
  ~PeerCall();
  void operator()() const;  // one call; writes the output buffer given to the factory
  // For a call made in a half dtype (ValueDTypeScope): widens the half output of the last call into the
  // caller's float buffer. Nothing to do for float32, whose calls write the buffer directly.
  void finish() const;

 private:
  std::unique_ptr<Impl> impl_;
};

// While one of these lives (on this thread), the factories below hold their float operands as tensors
// of `dtype` (float16 or bfloat16: at::kHalf, at::kBFloat16), converted once when the call is made, as
// a half model holds them; the call writes a half output tensor, which PeerCall::finish() widens into
// the caller's buffer. The caller's float values must be values of the dtype (they are, in tilesim).
class ValueDTypeScope {
 public:
  explicit ValueDTypeScope(DType dtype);
  ~ValueDTypeScope();
  ValueDTypeScope(const ValueDTypeScope&) = delete;
  ValueDTypeScope& operator=(const ValueDTypeScope&) = delete;

 private:
  DType previous_;
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

// PyG's torch_geometric.utils.degree: out.zero_().scatter_add_(0, index, ones(E)), int64 index, the ones
// allocated per call as PyG does.
PeerCall degree(const std::int32_t* indices, std::int64_t count, std::int64_t num_outputs, float* out);
// pyg_lib's segment_matmul on the CPU: one at::mm_out per segment, rows offsets[s] .. offsets[s + 1] - 1
// of a times weights[s] (k x n). offsets has num_segments + 1 entries.
PeerCall segment_mm(const float* a, const std::int32_t* offsets, std::int64_t num_segments, const float* weights, std::int64_t k,
                    std::int64_t n, float* c);
// The op graph's unary functions through ATen's out= kernels: relu (clamp_min_out, relu's kernel with an
// out= form), leaky_relu_out, softplus_out then sub_(log 2) (PyG's ShiftedSoftplus), exp_out, mul_out by a
// scalar, pow_out(-0.5) and reciprocal_out with masked_fill_ of the x <= 0 / x == 0 entries (PyG's GCN
// masks the infinities of zero degrees), and SchNet's cutoff 0.5 (cos(pi x / c) + 1) masked from c on.
PeerCall unary(UnaryFn fn, float scalar, const float* x, std::int64_t count, float* out);
// out = x.to(to) (a [count] tensor held in `from`, written into `out` by copy_, the out= form of .to), and
// with a scale other than 1 as PyTorch's mixed precision multiplies: in float32, x.float() * scale rounded
// once into `to` (mul_out into float32, then copy_), or for a float32 result copy_ then mul_ (GradScaler's
// unscale of a half gradient). Makes its own tensors in the two dtypes (ValueDTypeScope is not read).
PeerCall cast(DType from, DType to, float scale, const float* x, std::int64_t count, float* out);
// out = x (fn) other with `other` [other_rows, other_groups] viewed as [other_rows, other_groups, 1] against
// x viewed as [rows, other_groups, num_features / other_groups]: ATen's broadcasting add/sub/mul/div_out.
PeerCall binary(BinaryFn fn, const float* x, std::int64_t num_rows, std::int64_t num_features, const float* other,
                std::int64_t other_rows, std::int64_t other_groups, float* out);

}  // namespace tilesim::kernels::torch_peer
