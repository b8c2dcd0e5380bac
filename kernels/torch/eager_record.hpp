#pragma once
// What eager PyTorch dispatches for one forward op of the op graph when PyG calls it: each op kind is
// written here once as the Python call PyG 2.x / torch_scatter makes (F.linear, x.index_select,
// zeros + scatter_add_ on a broadcast index, the elementwise calls of CFConv's cosine cutoff, ...), run
// through libtorch on small probe tensors, and every ATen operator the dispatcher enters is recorded
// with at::RecordFunction callbacks: its name, how deep it was nested and its tensor arguments' shapes.
// The GPU model reads the result (models/gpu/eager/aten_calls.json, written by tilesim-record-eager)
// instead of a hand-kept list of calls: which calls each op makes, which of them launch kernels.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim::kernels::torch_peer {

// One recorded ATen operator.
struct RecordedCall {
  std::string op;     // "aten::addmm", "aten::view", ...
  int depth = 0;      // 0: called from the (Python-level) call itself; 1: from inside a depth-0 op, ...
  bool autograd_node = false;  // a backward node (AddmmBackward0, ...) rather than an ATen operator
  std::vector<std::vector<std::int64_t>> tensor_shapes;  // its tensor arguments, in order
};

// Runs `op` (a forward op; shapes as in ir/op_graph.hpp, values arbitrary) as PyG's eager call and
// returns the ATen operators it dispatched, in order. Throws std::invalid_argument for an op with no
// eager transcription here (training kinds, segment_matmul: pyg_lib is not part of libtorch).
std::vector<RecordedCall> record_eager_op(const Op& op);

// The backward of `op` as autograd runs it after PyG's eager call, every float operand requiring grad:
// the autograd nodes the engine evaluates and the ATen operators each calls, in order (the engine's own
// calls outside any node, such as its shape checks, included at their depth). std::invalid_argument for
// ops no gradient flows through in tilesim's lowered layers (degree, gcn_norm's powers, the cutoff,
// comparisons) and for torch_scatter's max (its backward is the CUDA extension's, not ATen's).
bool has_eager_backward(const Op& op);
std::vector<RecordedCall> record_eager_backward(const Op& op);

// The Python-level call each op kind is transcribed from, for the record file ("torch.nn.functional.linear").
std::string eager_python_call(const Op& op);

}  // namespace tilesim::kernels::torch_peer
