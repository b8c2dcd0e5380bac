#pragma once
// The op graph: tensors and the ops between them, shared by every backend and the report.
// FLOPs and minimum bytes are properties of an op, computed here once.
//
// Ops read graph inputs (tensors no op writes: generated or loaded by the workload) or the outputs of
// earlier ops; every op writes one fresh output tensor. Ops run in list order. Layers (GCN, SchNet
// blocks, ...) lower to several ops; an OpGroup names such a run of consecutive ops so reports can
// give per-layer totals. Between ops every tensor is a plain row-major array; how a backend lays it
// out (the simulated IPU spreads rows over tiles) is the backend's business.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace tilesim {

using TensorId = std::int32_t;

struct TensorInfo {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype = DType::float32;
  // Values fixed before any program is built (a model's graph edges and segment offsets): a backend
  // may compile them into its program (the IPU's static index mode). Generated op indices are not.
  bool known_at_compile_time = false;

  std::int64_t elements() const;
  std::int64_t bytes() const { return elements() * dtype_bytes(dtype); }
};
// A tensor shape as messages write it: "[2708, 1433]".
std::string shape_text(const std::vector<std::int64_t>& shape);

enum class OpKind {
  gather,          // out[o, :] = input[indices[o], :]
  scatter_add,     // out[n, :] = sum of input[e, :] over e with indices[e] == n (0 where none)
  scatter_mean,    // the sum divided by the count (0 where none), PyG scatter(reduce='mean')
  scatter_max,     // the elementwise max (0 where none, as PyG/torch_scatter fill empty rows)
  degree_count,    // out[n, 0] = number of e with indices[e] == n, as float (PyG utils.degree)
  matmul,          // out = input @ weight (+ bias broadcast over rows), torch.nn.Linear with W transposed
  segment_matmul,  // rows [offsets[s], offsets[s+1]) of input times weight[s] (pyg_lib segment_matmul)
  unary,           // out = f(input), elementwise
  binary,          // out = input (op) other, with `other` broadcast as described at BinaryFn
  // The kinds a training step adds (workloads/training lowers a model's backward pass into ops):
  unary_grad,      // out = grad * f'(input), elementwise: `weight` holds grad (input's shape)
  sum_to,          // out = input summed down to the shape [other_rows, other_groups] it was broadcast
                   // from (torch's sum_to_size: a bias row's column sums, a per-row scalar's row sums)
  loss,            // out [1, 1] = the mean loss of predictions `input` [M, C] (LossFn)
  loss_grad,       // out [M, C] = d loss / d input for the same operands
  optimizer_step,  // out [1 + S, P] = the updated parameter, then its S updated state rows (OptimizerSpec)
  // Mixed precision (a half model's training step: float32 master weights, a float32 loss, loss scaling):
  cast,            // out = round_to(op.dtype, scalar * input), elementwise: input in its own dtype (Op::input_dtype,
                   // the graph tensor's), out in op.dtype; scalar 1 is a plain conversion (tensor.to(dtype))
};
std::string to_string(OpKind kind);
std::optional<OpKind> op_kind_from_string(const std::string& name);
// The ops that index rows through an index tensor (gather and the scatter family, degree_count).
bool is_indexed(OpKind kind);
bool is_scatter(OpKind kind);  // scatter_add, scatter_mean, scatter_max
// The kinds only a training step's backward, loss and optimizer use.
bool is_training_kind(OpKind kind);

enum class UnaryFn {
  relu,
  leaky_relu,        // x >= 0 ? x : scalar * x   (GAT: scalar = 0.2)
  shifted_softplus,  // log(1 + exp(x)) - log(2)  (SchNet)
  exp,
  scale,             // scalar * x                 (GIN's 1 + eps)
  rsqrt_or_zero,     // x > 0 ? 1/sqrt(x) : 0      (GCN's deg^-1/2 with PyG's inf -> 0 mask)
  reciprocal_or_zero,// x != 0 ? 1/x : 0
  cosine_cutoff,     // x < scalar ? 0.5 * (cos(pi * x / scalar) + 1) : 0   (SchNet, scalar = cutoff)
  sigmoid,           // 1 / (1 + exp(-x))                                  (CGConv's gate)
  softplus,          // log(1 + exp(x)), x above 20 (torch's threshold)    (CGConv's core)
  sqrt,              // sqrt(x), NaN below 0                               (PNA's std aggregator)
  log,               // log(x), -inf at 0, NaN below                       (PNA's degree scalers)
  clamp_min,         // max(x, scalar), NaN kept                           (PNA's deg.clamp_(1))
};
std::string to_string(UnaryFn fn);
std::optional<UnaryFn> unary_fn_from_string(const std::string& name);

// out[r, c] = input[r, c] (op) other[r', g] where `other` has shape [rows or 1, groups] and groups divides
// num_features: r' = r (or 0 when other has one row), g = c / (num_features / groups). This covers a
// same-shape operand (groups = num_features), a per-row scalar (groups = 1: GCN's edge weight, SchNet's
// cutoff), a per-head scalar (GAT: groups = heads), and a bias row (one row).
// equal gives 1 where input == other and 0 elsewhere (the mask scatter_max's backward routes by).
enum class BinaryFn { add, subtract, multiply, divide, equal };
std::string to_string(BinaryFn fn);

// The loss of a training step, reduced by the mean as torch's default reduction='mean' does:
//  cross_entropy: labels (int32, in `indices`) [M] in [0, C); mean over rows of logsumexp(x_r) - x_r[label]
//                 (torch.nn.functional.cross_entropy on logits)
//  mse:           targets (float, in `weight`) [M, C]; mean over all M*C elements of (x - t)^2 (mse_loss)
// With per-row weights w (float [M], in `aux`, optional, each >= 0) the mean becomes a weighted one:
//  cross_entropy: sum_r w_r ce_r / sum_r w_r       (F.cross_entropy(reduction='none') * w, summed, / sum(w))
//  mse:           sum_r w_r sum_c (x - t)^2 / (C sum_r w_r)
// and both the loss and its gradient are 0 when sum_r w_r = 0 (an all-padding batch). Weights 0 for
// padding rows and 1 for real ones give a batch padded to a fixed shape (PopTorch's fixed-size batches
// on the simulated IPU) exactly the loss and gradients of the unpadded batch (F.cross_entropy's
// ignore_index). Without `aux` every row weighs 1, as above.
enum class LossFn { cross_entropy, mse };
std::string to_string(LossFn fn);
std::optional<LossFn> loss_fn_from_string(const std::string& name);

// An optimizer's update rule, as torch.optim implements it (foreach off, maximize off, dampening 0,
// nesterov off, amsgrad off; weight decay as L2 added to the gradient, not AdamW's decoupled decay):
//  sgd:  g' = g + wd p; with momentum: b = mu b + g' (b starts at 0, which equals torch's first-step
//        clone), p = p - lr b; without: p = p - lr g'.                          state rows: b (momentum > 0)
//  adam: g' = g + wd p; m = b1 m + (1 - b1) g'; v = b2 v + (1 - b2) g'^2;
//        p = p - (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)          state rows: m, v
//        with t the 1-based step number, read from the op's `aux` tensor [1, 1].
struct OptimizerSpec {
  enum class Kind { sgd, adam };
  Kind kind = Kind::sgd;
  double lr = 1e-3;
  double momentum = 0;         // sgd
  double weight_decay = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam
  // Rows of optimizer state per parameter element: sgd 0 (1 with momentum), adam 2.
  std::int64_t state_rows() const { return kind == Kind::adam ? 2 : (momentum != 0 ? 1 : 0); }
};
std::string to_string(OptimizerSpec::Kind kind);

// Where an op belongs in a training step; inference graphs are all forward.
enum class OpPhase { forward, loss, backward, optimizer };
std::string to_string(OpPhase phase);

// Sizes. The three fields of the gather/scatter benchmarks keep their hydronet-gnn meaning:
//  gather:       table [num_inputs, num_features], indices [num_outputs] in [0, num_inputs),
//                out [num_outputs, num_features]           (PyG index_select)
//  scatter_*:    src [num_inputs, num_features], indices [num_inputs] in [0, num_outputs),
//                out [num_outputs, num_features]           (PyG scatter, reduce = sum/mean/max)
//  degree_count: indices [num_inputs] in [0, num_outputs), out [num_outputs, 1]; num_features = 1
// and for the dense ops:
//  matmul:         input [num_inputs, num_features], weight [num_features, out_features],
//                  bias [out_features] when has_bias, out [num_inputs, out_features]
//  segment_matmul: input [num_inputs, num_features], offsets (int32, in `indices`) [num_segments + 1]
//                  with offsets[0] = 0 and offsets[num_segments] = num_inputs, non-decreasing;
//                  weight [num_segments, num_features, out_features], out [num_inputs, out_features]
//  unary/binary:   input and out [num_inputs, num_features]; binary's other [other_rows, other_groups]
// (num_outputs is unused by the dense ops and left 0; out_features/num_segments are 0 where unused.)
// matmul with transpose_input reads input stored as [num_features, num_inputs] (x^T @ g, a weight's
// gradient) and with transpose_weight reads weight stored as [out_features, num_features] (g @ W^T, an
// input's gradient); M, K and N, FLOPs and bytes are those of the product either way.
// segment_matmul's backward (pyg_lib's autograd) has two transposed forms, with S = num_segments and the
// same offsets [S + 1] over the M rows:
//  transpose_weight: input [M, K] (the gradient of the forward's output), weight the forward's weight
//                    read transposed, stored [S, N, K] (the forward's [S, K', N'] with K' = N, N' = K),
//                    out [M, N]: rows of segment s times weight[s]^T (g_s @ W_s^T, the input's gradient)
//  transpose_input:  input [M, K] (the forward's input), weight [M, N] (the gradient of the forward's
//                    output), out [S * K, N] row-major, i.e. [S, K, N]: out[s] = input_s^T @ weight_s over
//                    the rows of segment s (the weight's gradient; zero for an empty segment)
// FLOPs are 2*M*K*N in all three forms; bytes every operand read once and the output written once.
// and for the training kinds:
//  unary_grad:     input (the forward op's input) and weight (the gradient of its output) [M, F], out [M, F]
//  sum_to:         input [M, F], out [other_rows, other_groups] (other_rows 1 or M, other_groups divides F)
//  loss:           input [M, C]; labels [M] (cross_entropy) or targets [M, C] (mse); aux the row weights
//                  [M] when set; out [1, 1]
//  loss_grad:      the same operands, out [M, C]
//  optimizer_step: input the parameter and weight its gradient, each P = M * F elements (a 1-D bias [F] is
//                  M = 1); bias the state [S, P] when S = state_rows() > 0; aux the step [1, 1] (adam,
//                  float32 whatever the op's dtype); out [1 + S, P]
// and for the mixed-precision kind:
//  cast:           input of M * F elements ([M, F], or any shape ending in F: a 1-D bias, a [S, K, F] weight)
//                  in any value dtype (input_dtype), out of the input's shape in op.dtype; `scalar` the factor,
//                  where 0 (an Op's default) means 1 (Op::cast_scale(); OpGraph::add_op writes the 1)
struct OpShape {
  std::int64_t num_inputs = 0;
  std::int64_t num_features = 0;
  std::int64_t num_outputs = 0;
  std::int64_t out_features = 0;
  std::int64_t num_segments = 0;
  std::int64_t other_rows = 0;    // binary: num_inputs or 1
  std::int64_t other_groups = 0;  // binary: divides num_features
};

struct Op {
  std::string name;
  OpKind kind = OpKind::gather;
  DType dtype = DType::float32;  // of the values (input and out)
  OpShape shape;
  TensorId input = -1;    // gather: the table; scatter_*: the messages (src); dense ops: the left operand
  TensorId indices = -1;  // int32: gather/scatter_*/degree_count indices; segment_matmul offsets; else -1
  TensorId output = -1;
  TensorId weight = -1;   // matmul, segment_matmul: the weight; binary: `other`; else -1
  TensorId bias = -1;     // matmul: the bias when shape has one; else -1
  UnaryFn unary = UnaryFn::relu;     // unary only
  BinaryFn binary = BinaryFn::add;   // binary only
  float scalar = 0;                  // unary leaky_relu slope, scale factor, cosine cutoff; cast: its factor
  // cast: the input tensor's value dtype (op.dtype is the output's). OpGraph::add_op copies it from the
  // graph tensor, so it is the graph's word; ops built without a graph (tests, models) set it themselves.
  DType input_dtype = DType::float32;
  bool transpose_input = false;      // matmul: input stored [num_features, num_inputs]; segment_matmul:
                                     // out[s] = input_s^T @ weight_s (see above)
  bool transpose_weight = false;     // matmul: weight stored [out_features, num_features]; segment_matmul:
                                     // weight stored [num_segments, out_features, num_features]
  LossFn loss = LossFn::cross_entropy;  // loss, loss_grad
  OptimizerSpec optimizer;           // optimizer_step
  TensorId aux = -1;                 // optimizer_step (adam): the step number t as a [1, 1] float;
                                     // loss, loss_grad: the optional row weights [M] (LossFn)
  OpPhase phase = OpPhase::forward;
  std::string grad_of;               // backward ops: the forward op whose gradient they compute
  bool detach = false;               // the output carries no gradient (PyG's softmax max: src.detach())
  // The simulated IPU's available memory proportion for this op (the share of a tile's SRAM its plan's
  // temporaries may use, models/ipu/planning/temporary_budget.hpp); 0: the machine file's default.
  double available_memory_proportion = 0;

  // gather: num_outputs; scatter_*/degree_count: num_inputs; loss/loss_grad (cross_entropy): num_inputs
  // labels; else 0.
  std::int64_t num_indices() const;
  std::int64_t index_range() const;   // indices lie in [0, index_range) (labels: [0, num_features))
  std::int64_t output_rows() const;
  std::int64_t output_cols() const;
  // Floating-point operations (a multiply-add is 2; a compare, exp or divide is 1):
  // gather 0; scatter_add E*F; scatter_mean E*F + N*F; scatter_max E*F; degree_count E;
  // matmul 2*M*K*N (+ M*N with bias); segment_matmul 2*M*K*N; unary and binary one per output element;
  // cast one per element when it scales (scalar != 1), else 0 (a conversion moves bytes only).
  double flops() const;
  // Minimum bytes any implementation must move between memory and the processor: every operand read
  // once (for a gather at most min(rows, lookups) distinct rows), the output written once. Each tensor
  // at its own dtype: a cast reads input_dtype and writes op.dtype; loss row weights and Adam's step
  // number are float32.
  std::int64_t min_bytes() const;
  std::int64_t min_bytes_read() const;
  std::int64_t min_bytes_written() const;
  // cast: the factor it multiplies by (scalar, 1 where left 0).
  float cast_scale() const { return scalar == 0 ? 1.0f : scalar; }

  // The operands some kinds keep in a generic slot, by their role (the table above); -1 where absent.
  // Read and written through these, a backend's code says what it means; code for one kind that reads
  // several of them takes that kind's view of all its operands (ir/op_operands.hpp).
  TensorId optimizer_state() const { return bias; }      // optimizer_step: [S, P] when S = state_rows() > 0
  TensorId step_number() const { return aux; }           // optimizer_step (adam): t as a [1, 1] float32
  TensorId loss_row_weights() const { return aux; }      // loss, loss_grad: the per-row weights [M], float32
  TensorId segment_offsets() const { return indices; }   // segment_matmul: int32 [num_segments + 1]
  TensorId binary_other() const { return weight; }       // binary: the right operand [other_rows, other_groups]
  void set_optimizer_state(TensorId t) { bias = t; }
  void set_step_number(TensorId t) { aux = t; }
  void set_loss_row_weights(TensorId t) { aux = t; }
  void set_segment_offsets(TensorId t) { indices = t; }
  void set_binary_other(TensorId t) { weight = t; }
};

// A run of consecutive ops that one layer (or a composite op such as schnet_block) lowered to.
struct OpGroup {
  std::string name;    // e.g. "conv1", "schnet_block_0"
  std::string kind;    // e.g. "gcn", "sage", "gin", "gat", "schnet", "rgcn", "schnet_block"
  std::size_t first_op = 0;
  std::size_t op_count = 0;
  OpPhase phase = OpPhase::forward;  // a layer's backward ops form a group of their own ("conv1.grad")
};

// For backends that run forward graphs only: throws std::invalid_argument "<who>: op 'NAME': ..." for a
// training kind or a transposed matmul or segment_matmul, so such an op fails loudly instead of being run as a plain one.
void require_forward_op(const Op& op, const std::string& who);

struct OpGraph {
  std::vector<TensorInfo> tensors;
  std::vector<Op> ops;
  std::vector<OpGroup> groups;
  // A training step whose backward recomputes the forward activations it reads instead of keeping them
  // (the workload's "train": {"recompute": true}): a backend with little memory trades cycles for it
  // (the simulated IPU); one that keeps every tensor anyway ignores it.
  bool recompute_activations = false;

  TensorId add_tensor(TensorInfo info);
  // Adds a gather or scatter_* op with fresh input, index and output tensors named after it.
  const Op& add_gather_scatter(const std::string& name, OpKind kind, DType dtype, OpShape shape);
  // Adds an op over existing tensors: fills op.output with a fresh tensor "<name>.out" of the op's output
  // shape (a cast's: its input's), checks that the operands' shapes match op.shape (std::invalid_argument naming the op if
  // not), and returns the output tensor.
  TensorId add_op(Op op);
  const TensorInfo& tensor(TensorId id) const { return tensors.at(static_cast<std::size_t>(id)); }
  // Tensors no op writes: what a backend's caller must provide.
  std::vector<TensorId> graph_inputs() const;
};

}  // namespace tilesim
