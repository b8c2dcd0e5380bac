#include "workloads/training/autodiff.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/op_operands.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::training {
namespace {

class Backward {
 public:
  Backward(OpGraph& g, std::size_t forward_end, const std::set<TensorId>& leaves, double leaf_scale)
      : g_(g), needs_(g.tensors.size(), false), forward_end_(forward_end), leaves_(leaves), leaf_scale_(leaf_scale) {}

  std::vector<bool>& needs() { return needs_; }
  std::map<TensorId, TensorId>& grads() { return grads_; }

  // The ops of one forward op's backward.
  void differentiate(const Op& f, TensorId g);

 private:
  const std::vector<std::int64_t>& shape(TensorId t) const { return g_.tensor(t).shape; }
  std::int64_t rows(TensorId t) const { return shape(t).size() == 1 ? 1 : shape(t).at(0); }
  std::int64_t cols(TensorId t) const { return shape(t).back(); }
  bool needs(TensorId t) const { return t >= 0 && needs_[static_cast<std::size_t>(t)]; }

  TensorId emit(const Op& f, Op op, const std::string& suffix) {
    op.name = f.name + ".grad" + suffix;
    // A gradient has its tensor's dtype: each backward op computes in the dtype of what it reads (a
    // cast's backward sets its own: the forward input's), as autograd's formulas do on half tensors.
    if (op.kind != OpKind::cast) op.dtype = op.input >= 0 ? g_.tensor(op.input).dtype : f.dtype;
    op.phase = OpPhase::backward;
    op.grad_of = f.name;
    op.available_memory_proportion = f.available_memory_proportion;  // a layer's setting covers its backward
    const TensorId out = g_.add_op(std::move(op));
    needs_.resize(g_.tensors.size(), false);
    return out;
  }
  Op reading(OpKind kind, TensorId x) const {
    Op op;
    op.kind = kind;
    op.input = x;
    op.shape.num_inputs = rows(x);
    op.shape.num_features = cols(x);
    return op;
  }
  TensorId gather(const Op& f, TensorId table, TensorId idx, const std::string& s) {
    Op op = reading(OpKind::gather, table);
    op.indices = idx;
    op.shape.num_outputs = g_.tensor(idx).shape.at(0);
    return emit(f, op, s);
  }
  TensorId scatter_add(const Op& f, TensorId src, TensorId idx, std::int64_t n, const std::string& s) {
    Op op = reading(OpKind::scatter_add, src);
    op.indices = idx;
    op.shape.num_outputs = n;
    return emit(f, op, s);
  }
  TensorId binary(const Op& f, BinaryFn fn, TensorId x, TensorId other, const std::string& s) {
    Op op = reading(OpKind::binary, x);
    op.binary = fn;
    op.weight = other;
    op.shape.other_rows = rows(other);
    op.shape.other_groups = cols(other);
    return emit(f, op, s);
  }
  TensorId unary(const Op& f, UnaryFn fn, TensorId x, float scalar, const std::string& s) {
    Op op = reading(OpKind::unary, x);
    op.unary = fn;
    op.scalar = scalar;
    return emit(f, op, s);
  }
  // t summed down to `like`'s shape (torch's sum_to_size); t itself when the shapes agree.
  TensorId reduce(const Op& f, TensorId t, TensorId like, const std::string& s) {
    if (rows(t) == rows(like) && cols(t) == cols(like)) return t;
    Op op = reading(OpKind::sum_to, t);
    op.shape.other_rows = rows(like);
    op.shape.other_groups = cols(like);
    return emit(f, op, s);
  }
  // Adds `grad` to what `t` has received so far (autograd's accumulation of several consumers).
  void accumulate(const Op& f, TensorId t, TensorId grad) {
    // A leaf's gradient is scaled in the cast that brings it back (differentiate, cast); an op of another
    // kind reading a leaf would pass it on unscaled.
    if (leaf_scale_ != 1.0 && leaves_.count(t) != 0 && f.kind != OpKind::cast)
      throw std::logic_error("training: op '" + f.name + "' (" + to_string(f.kind) + ") reads the trained tensor '" + g_.tensor(t).name +
                             "' directly, so its gradient would miss the 1 / loss_scale of the cast from the master weights");
    auto it = grads_.find(t);
    if (it == grads_.end()) {
      grads_.emplace(t, grad);
      return;
    }
    it->second = binary(f, BinaryFn::add, it->second, grad, ".accumulate." + g_.tensor(t).name);
  }

  OpGraph& g_;
  std::vector<bool> needs_;
  std::size_t forward_end_;
  const std::set<TensorId>& leaves_;
  double leaf_scale_;
  std::map<TensorId, TensorId> grads_;

 public:
  // A cast's backward: the gradient cast back to the input's dtype, times the cast's own factor (d(s x) /
  // dx = s), and for a leaf (a master weight) times leaf_scale (1 / loss_scale: the unscaling).
  TensorId cast_back(const Op& f, TensorId g) {
    Op op = reading(OpKind::cast, g);
    op.dtype = f.input_dtype;
    op.scalar = static_cast<float>(static_cast<double>(f.cast_scale()) * (leaves_.count(f.input) != 0 ? leaf_scale_ : 1.0));
    return emit(f, op, "");
  }
};

void Backward::differentiate(const Op& f, TensorId g) {
  const OpShape& s = f.shape;
  switch (f.kind) {
    case OpKind::gather:  // index_select's backward: index_add into zeros
      if (needs(f.input)) accumulate(f, f.input, scatter_add(f, g, f.indices, s.num_inputs, ""));
      return;
    case OpKind::scatter_add:  // scatter_add's backward: gather
      if (needs(f.input)) accumulate(f, f.input, gather(f, g, f.indices, ""));
      return;
    case OpKind::scatter_mean: {  // gather of the gradient over each row's count
      if (!needs(f.input)) return;
      Op count;
      count.kind = OpKind::degree_count;
      count.indices = f.indices;
      count.shape.num_inputs = s.num_inputs;
      count.shape.num_features = 1;
      count.shape.num_outputs = s.num_outputs;
      const TensorId n = emit(f, count, ".count");
      const TensorId inv = unary(f, UnaryFn::reciprocal_or_zero, n, 0, ".inverse_count");
      accumulate(f, f.input, gather(f, binary(f, BinaryFn::multiply, g, inv, ".scaled"), f.indices, ""));
      return;
    }
    case OpKind::scatter_max: {  // scatter_reduce amax: the gradient split evenly among the maxima
      if (!needs(f.input)) return;
      const TensorId max_e = gather(f, f.output, f.indices, ".max");
      const TensorId mask = binary(f, BinaryFn::equal, f.input, max_e, ".mask");
      const TensorId ties = scatter_add(f, mask, f.indices, s.num_outputs, ".ties");
      const TensorId inv = unary(f, UnaryFn::reciprocal_or_zero, ties, 0, ".inverse_ties");
      const TensorId share = gather(f, binary(f, BinaryFn::multiply, g, inv, ".shared"), f.indices, ".spread");
      accumulate(f, f.input, binary(f, BinaryFn::multiply, share, mask, ""));
      return;
    }
    case OpKind::degree_count: return;  // counts of indices: no gradient
    case OpKind::matmul: {
      if (f.transpose_input || f.transpose_weight) break;
      if (needs(f.input)) {  // g @ W^T
        Op op = reading(OpKind::matmul, g);
        op.weight = f.weight;
        op.transpose_weight = true;
        op.shape.out_features = s.num_features;
        accumulate(f, f.input, emit(f, op, ".input"));
      }
      if (needs(f.weight)) {  // x^T @ g
        Op op;
        op.kind = OpKind::matmul;
        op.input = f.input;
        op.transpose_input = true;
        op.weight = g;
        op.shape.num_inputs = s.num_features;
        op.shape.num_features = s.num_inputs;
        op.shape.out_features = s.out_features;
        accumulate(f, f.weight, emit(f, op, ".weight"));
      }
      if (f.bias >= 0 && needs(f.bias)) {
        Op op = reading(OpKind::sum_to, g);
        op.shape.other_rows = 1;
        op.shape.other_groups = s.out_features;
        accumulate(f, f.bias, emit(f, op, ".bias"));
      }
      return;
    }
    case OpKind::segment_matmul: {  // pyg_lib's autograd: segment_matmul(g, offsets, W^T) and x_s^T @ g_s
      if (f.transpose_input || f.transpose_weight) break;
      const SegmentMatmulOperands operands = segment_matmul_operands(f);
      if (needs(operands.input))  // g_s @ W_s^T, the same W read transposed
        accumulate(f, operands.input, emit(f, layers::segment_matmul_input_grad("", g_, g, operands.offsets, operands.weight), ".input"));
      if (needs(operands.weight))  // x_s^T @ g_s per segment, [S * K, N] (zero for an empty segment)
        accumulate(f, operands.weight, emit(f, layers::segment_matmul_weight_grad("", g_, operands.input, operands.offsets, g), ".weight"));
      return;  // offsets: no gradient
    }
    case OpKind::unary:
      if (needs(f.input)) {
        Op op = reading(OpKind::unary_grad, f.input);
        op.unary = f.unary;
        op.scalar = f.scalar;
        op.weight = g;
        accumulate(f, f.input, emit(f, op, ""));
      }
      return;
    case OpKind::binary: {
      const BinaryOperands operands = binary_operands(f);
      const TensorId x = operands.left, o = operands.right;
      switch (f.binary) {
        case BinaryFn::add:
          if (needs(x)) accumulate(f, x, g);
          if (needs(o)) accumulate(f, o, reduce(f, g, o, ".other"));
          return;
        case BinaryFn::subtract:
          if (needs(x)) accumulate(f, x, g);
          if (needs(o)) accumulate(f, o, unary(f, UnaryFn::scale, reduce(f, g, o, ".other_sum"), -1.0f, ".other"));
          return;
        case BinaryFn::multiply:
          if (needs(x)) accumulate(f, x, binary(f, BinaryFn::multiply, g, o, ".input"));
          if (needs(o)) accumulate(f, o, reduce(f, binary(f, BinaryFn::multiply, g, x, ".other_product"), o, ".other"));
          return;
        case BinaryFn::divide:
          if (needs(x)) accumulate(f, x, binary(f, BinaryFn::divide, g, o, ".input"));
          if (needs(o)) {  // -sum(g * out) / o
            const TensorId r = reduce(f, binary(f, BinaryFn::multiply, g, operands.output, ".other_product"), o, ".other_sum");
            accumulate(f, o, unary(f, UnaryFn::scale, binary(f, BinaryFn::divide, r, o, ".other_quotient"), -1.0f, ".other"));
          }
          return;
        case BinaryFn::equal: return;  // a mask: no gradient
      }
      return;
    }
    case OpKind::cast:  // tensor.to(dtype)'s backward: the gradient converted back (and scaled)
      if (needs(f.input)) accumulate(f, f.input, cast_back(f, g));
      return;
    default: break;
  }
  throw std::invalid_argument("training: the backward of op '" + f.name + "' (" + to_string(f.kind) +
                              (f.transpose_input || f.transpose_weight ? ", transposed" : "") + ") is not lowered yet");
}

}  // namespace

std::map<TensorId, TensorId> append_backward(OpGraph& graph, std::size_t forward_end, TensorId output, TensorId output_grad,
                                             const std::set<TensorId>& requires_grad, double requires_grad_scale) {
  Backward b(graph, forward_end, requires_grad, requires_grad_scale);
  std::vector<bool>& needs = b.needs();
  for (TensorId t : requires_grad) needs.at(static_cast<std::size_t>(t)) = true;
  for (std::size_t k = 0; k < forward_end; ++k) {
    const Op& op = graph.ops[k];
    if (op.detach) continue;
    const bool values_need = (op.input >= 0 && needs[static_cast<std::size_t>(op.input)]) ||
                             (op.weight >= 0 && needs[static_cast<std::size_t>(op.weight)]) ||
                             (op.bias >= 0 && needs[static_cast<std::size_t>(op.bias)]);
    needs[static_cast<std::size_t>(op.output)] = values_need;
  }
  b.grads().emplace(output, output_grad);
  // Group bookkeeping: which forward group each op belongs to.
  std::vector<std::ptrdiff_t> group_of(forward_end, -1);
  for (std::size_t gi = 0; gi < graph.groups.size(); ++gi)
    for (std::size_t k = graph.groups[gi].first_op; k < graph.groups[gi].first_op + graph.groups[gi].op_count && k < forward_end; ++k)
      group_of[k] = static_cast<std::ptrdiff_t>(gi);
  std::ptrdiff_t open_group = -1;
  for (std::size_t k = forward_end; k-- > 0;) {
    const Op f = graph.ops[k];  // a copy: emitting ops grows graph.ops
    auto it = b.grads().find(f.output);
    if (it == b.grads().end() || f.detach) continue;
    const std::size_t first = graph.ops.size();
    b.differentiate(f, it->second);
    if (graph.ops.size() == first) continue;
    if (group_of[k] < 0) {  // ops outside any layer (a loss head) close the open backward group
      open_group = -1;
      continue;
    }
    const OpGroup& fg = graph.groups[static_cast<std::size_t>(group_of[k])];
    if (open_group != group_of[k]) {
      graph.groups.push_back({fg.name + ".grad", fg.kind, first, 0, OpPhase::backward});
      open_group = group_of[k];
    }
    graph.groups.back().op_count = graph.ops.size() - graph.groups.back().first_op;
  }
  std::map<TensorId, TensorId> out;
  for (TensorId t : requires_grad) {
    auto it = b.grads().find(t);
    if (it != b.grads().end()) out.emplace(t, it->second);
  }
  return out;
}

}  // namespace tilesim::workloads::training
