#include "ir/op_graph.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "ir/op_operands.hpp"

namespace tilesim {

namespace {

struct KindName {
  OpKind kind;
  const char* name;
};
constexpr KindName kind_names[] = {
    {OpKind::gather, "gather"},           {OpKind::scatter_add, "scatter_add"},
    {OpKind::scatter_mean, "scatter_mean"}, {OpKind::scatter_max, "scatter_max"},
    {OpKind::degree_count, "degree_count"}, {OpKind::matmul, "matmul"},
    {OpKind::segment_matmul, "segment_matmul"}, {OpKind::unary, "unary"},
    {OpKind::binary, "binary"},           {OpKind::unary_grad, "unary_grad"},
    {OpKind::sum_to, "sum_to"},           {OpKind::loss, "loss"},
    {OpKind::loss_grad, "loss_grad"},     {OpKind::optimizer_step, "optimizer_step"},
    {OpKind::cast, "cast"},
};

struct UnaryName {
  UnaryFn fn;
  const char* name;
};
constexpr UnaryName unary_names[] = {
    {UnaryFn::relu, "relu"},
    {UnaryFn::leaky_relu, "leaky_relu"},
    {UnaryFn::shifted_softplus, "shifted_softplus"},
    {UnaryFn::exp, "exp"},
    {UnaryFn::scale, "scale"},
    {UnaryFn::rsqrt_or_zero, "rsqrt_or_zero"},
    {UnaryFn::reciprocal_or_zero, "reciprocal_or_zero"},
    {UnaryFn::cosine_cutoff, "cosine_cutoff"},
    {UnaryFn::sigmoid, "sigmoid"},
    {UnaryFn::softplus, "softplus"},
    {UnaryFn::sqrt, "sqrt"},
    {UnaryFn::log, "log"},
    {UnaryFn::clamp_min, "clamp_min"},
};

[[noreturn]] void bad_op(const Op& op, const std::string& what) {
  throw std::invalid_argument("op '" + op.name + "' (" + to_string(op.kind) + "): " + what);
}

// [other_rows, other_groups] must be a shape [num_inputs, num_features] broadcasts from (binary's other,
// sum_to's output): one row or every row, groups that divide the features.
void check_broadcast_shape(const Op& op) {
  const OpShape& s = op.shape;
  if (s.other_rows != 1 && s.other_rows != s.num_inputs)
    bad_op(op, "other_rows must be 1 or num_inputs, found " + std::to_string(s.other_rows));
  if (s.other_groups <= 0 || s.num_features % s.other_groups != 0)
    bad_op(op, "other_groups must divide num_features " + std::to_string(s.num_features) + ", found " + std::to_string(s.other_groups));
}

}  // namespace

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string to_string(OpKind kind) {
  for (const auto& entry : kind_names)
    if (entry.kind == kind) return entry.name;
  throw std::logic_error("to_string: unknown op kind");
}

std::optional<OpKind> op_kind_from_string(const std::string& name) {
  for (const auto& entry : kind_names)
    if (name == entry.name) return entry.kind;
  return std::nullopt;
}

bool is_scatter(OpKind kind) {
  return kind == OpKind::scatter_add || kind == OpKind::scatter_mean || kind == OpKind::scatter_max;
}

bool is_training_kind(OpKind kind) {
  return kind == OpKind::unary_grad || kind == OpKind::sum_to || kind == OpKind::loss || kind == OpKind::loss_grad ||
         kind == OpKind::optimizer_step;
}

void require_forward_op(const Op& op, const std::string& who) {
  if (is_training_kind(op.kind))
    throw std::invalid_argument(who + ": op '" + op.name + "': " + to_string(op.kind) + " is a training-step op, which this backend does not run yet");
  if ((op.kind == OpKind::matmul || op.kind == OpKind::segment_matmul) && (op.transpose_input || op.transpose_weight))
    throw std::invalid_argument(who + ": op '" + op.name + "': a transposed " + to_string(op.kind) +
                                " (a training step's backward), which this backend does not run yet");
}

bool is_indexed(OpKind kind) { return kind == OpKind::gather || kind == OpKind::degree_count || is_scatter(kind); }

std::string to_string(UnaryFn fn) {
  for (const auto& entry : unary_names)
    if (entry.fn == fn) return entry.name;
  throw std::logic_error("to_string: unknown unary function");
}

std::optional<UnaryFn> unary_fn_from_string(const std::string& name) {
  for (const auto& entry : unary_names)
    if (name == entry.name) return entry.fn;
  return std::nullopt;
}

std::string to_string(BinaryFn fn) {
  switch (fn) {
    case BinaryFn::add: return "add";
    case BinaryFn::subtract: return "subtract";
    case BinaryFn::multiply: return "multiply";
    case BinaryFn::divide: return "divide";
    case BinaryFn::equal: return "equal";
  }
  throw std::logic_error("to_string: unknown binary function");
}

std::string to_string(LossFn fn) { return fn == LossFn::mse ? "mse" : "cross_entropy"; }

std::optional<LossFn> loss_fn_from_string(const std::string& name) {
  if (name == "cross_entropy") return LossFn::cross_entropy;
  if (name == "mse") return LossFn::mse;
  return std::nullopt;
}

std::string to_string(OptimizerSpec::Kind kind) { return kind == OptimizerSpec::Kind::adam ? "adam" : "sgd"; }

std::string to_string(OpPhase phase) {
  switch (phase) {
    case OpPhase::forward: return "forward";
    case OpPhase::loss: return "loss";
    case OpPhase::backward: return "backward";
    case OpPhase::optimizer: return "optimizer";
  }
  throw std::logic_error("to_string: unknown op phase");
}

std::int64_t TensorInfo::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

namespace {
bool has_labels(const Op& op) {
  return (op.kind == OpKind::loss || op.kind == OpKind::loss_grad) && op.loss == LossFn::cross_entropy;
}
}  // namespace

std::int64_t Op::num_indices() const {
  if (kind == OpKind::gather) return shape.num_outputs;
  if (is_scatter(kind) || kind == OpKind::degree_count || has_labels(*this)) return shape.num_inputs;
  return 0;
}

std::int64_t Op::index_range() const {
  if (kind == OpKind::gather) return shape.num_inputs;
  if (is_scatter(kind) || kind == OpKind::degree_count) return shape.num_outputs;
  if (has_labels(*this)) return shape.num_features;
  return 0;
}

std::int64_t Op::output_rows() const {
  if (is_indexed(kind)) return shape.num_outputs;
  switch (kind) {
    case OpKind::sum_to: return shape.other_rows;
    case OpKind::loss: return 1;
    case OpKind::optimizer_step: return 1 + optimizer.state_rows();
    case OpKind::segment_matmul: return transpose_input ? shape.num_segments * shape.num_features : shape.num_inputs;
    default: return shape.num_inputs;
  }
}

std::int64_t Op::output_cols() const {
  switch (kind) {
    case OpKind::degree_count:
    case OpKind::loss: return 1;
    case OpKind::matmul:
    case OpKind::segment_matmul: return shape.out_features;
    case OpKind::sum_to: return shape.other_groups;
    case OpKind::optimizer_step: return shape.num_inputs * shape.num_features;
    default: return shape.num_features;
  }
}

double Op::flops() const {
  const double m = static_cast<double>(shape.num_inputs);
  const double k = static_cast<double>(shape.num_features);
  const double out = static_cast<double>(output_rows()) * static_cast<double>(output_cols());
  switch (kind) {
    case OpKind::gather: return 0.0;
    case OpKind::scatter_add:
    case OpKind::scatter_max: return m * k;
    case OpKind::scatter_mean: return m * k + out;
    case OpKind::degree_count: return m;
    case OpKind::matmul: return 2.0 * m * k * static_cast<double>(shape.out_features) + (bias >= 0 ? out : 0.0);
    case OpKind::segment_matmul: return 2.0 * m * k * static_cast<double>(shape.out_features);
    case OpKind::unary:
    case OpKind::binary: return out;
    case OpKind::cast: return cast_scale() != 1.0f ? out : 0.0;
    case OpKind::unary_grad: return 2.0 * out;  // the derivative, then the multiply by grad
    case OpKind::sum_to: return m * k;
    // cross_entropy: max, subtract, exp, sum per element and a log, a subtract and the mean per row;
    // mse: subtract, square, sum per element. Row weights add a multiply and the weights' sum per row.
    case OpKind::loss: return (loss == LossFn::mse ? 3.0 * m * k : 4.0 * m * k + 3.0 * m) + (aux >= 0 ? 2.0 * m : 0.0);
    // cross_entropy: the softmax again (max, subtract, exp, sum, divide) and the one-hot subtract and
    // the mean's scale; mse: subtract and scale. Row weights add the weights' sum and each row's
    // w / sum (the per-element scale is there already).
    case OpKind::loss_grad: return (loss == LossFn::mse ? 2.0 * m * k : 7.0 * m * k) + (aux >= 0 ? 2.0 * m : 0.0);
    case OpKind::optimizer_step: {
      // Per element: sgd 2 (+2 weight decay, +2 momentum); adam 13 (+2 weight decay): the two moment
      // updates (3 and 4), the denominator (sqrt, divide, add), the step (divide, multiply, subtract).
      const double p = m * k;
      const double decay = optimizer.weight_decay != 0 ? 2.0 : 0.0;
      if (optimizer.kind == OptimizerSpec::Kind::adam) return (13.0 + decay) * p;
      return (2.0 + decay + (optimizer.momentum != 0 ? 2.0 : 0.0)) * p;
    }
  }
  return 0.0;
}

std::int64_t Op::min_bytes_read() const {
  const std::int64_t value_bytes = dtype_bytes(dtype);
  const std::int64_t index_bytes = dtype_bytes(DType::int32);
  const std::int64_t m = shape.num_inputs, k = shape.num_features, n = shape.out_features;
  switch (kind) {
    case OpKind::gather:
      return num_indices() * index_bytes + std::min(shape.num_inputs, shape.num_outputs) * k * value_bytes;
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max: return num_indices() * index_bytes + m * k * value_bytes;
    case OpKind::degree_count: return num_indices() * index_bytes;
    case OpKind::matmul: return (m * k + k * n + (bias >= 0 ? n : 0)) * value_bytes;
    case OpKind::segment_matmul:  // transpose_input: the weight operand is the gradient [M, N]
      return (m * k + (transpose_input ? m * n : shape.num_segments * k * n)) * value_bytes + (shape.num_segments + 1) * index_bytes;
    case OpKind::unary: return m * k * value_bytes;
    case OpKind::binary: return (m * k + shape.other_rows * shape.other_groups) * value_bytes;
    case OpKind::unary_grad: return 2 * m * k * value_bytes;
    case OpKind::sum_to: return m * k * value_bytes;
    case OpKind::loss:
    case OpKind::loss_grad:
      // Row weights are float32 whatever the predictions' dtype.
      return m * k * value_bytes + (loss == LossFn::mse ? m * k * value_bytes : m * index_bytes) +
             (aux >= 0 ? m * dtype_bytes(DType::float32) : 0);
    case OpKind::optimizer_step:  // Adam's step number is float32 whatever the op's dtype
      return (2 + optimizer.state_rows()) * m * k * value_bytes + (aux >= 0 ? dtype_bytes(DType::float32) : 0);
    case OpKind::cast: return m * k * dtype_bytes(input_dtype);
  }
  return 0;
}

std::int64_t Op::min_bytes_written() const { return output_rows() * output_cols() * dtype_bytes(dtype); }

std::int64_t Op::min_bytes() const { return min_bytes_read() + min_bytes_written(); }

TensorId OpGraph::add_tensor(TensorInfo info) {
  tensors.push_back(std::move(info));
  return static_cast<TensorId>(tensors.size() - 1);
}

const Op& OpGraph::add_gather_scatter(const std::string& name, OpKind kind, DType dtype, OpShape shape) {
  if (kind != OpKind::gather && !is_scatter(kind))
    throw std::invalid_argument("add_gather_scatter: op '" + name + "' is a " + to_string(kind));
  Op op;
  op.name = name;
  op.kind = kind;
  op.dtype = dtype;
  op.shape = shape;
  const bool gather = kind == OpKind::gather;
  op.input = add_tensor({name + (gather ? ".table" : ".src"), {shape.num_inputs, shape.num_features}, dtype});
  op.indices = add_tensor({name + ".indices", {op.num_indices()}, DType::int32});
  op.output = add_tensor({name + ".out", {shape.num_outputs, shape.num_features}, dtype});
  ops.push_back(op);
  return ops.back();
}

TensorId OpGraph::add_op(Op op) {
  const auto expect = [&](TensorId id, const char* role, std::vector<std::int64_t> shape, DType dtype) {
    if (id < 0 || static_cast<std::size_t>(id) >= tensors.size()) bad_op(op, std::string(role) + " tensor is missing");
    const TensorInfo& info = tensor(id);
    if (info.shape != shape || info.dtype != dtype)
      bad_op(op, std::string(role) + " '" + info.name + "' is " + shape_text(info.shape) + " " + to_string(info.dtype) +
                     ", expected " + shape_text(shape) + " " + to_string(dtype));
  };
  // Parameters and their gradients may differ in shape but not in size (a bias [F] and its sum_to [1, F]).
  const auto expect_elements = [&](TensorId id, const char* role, std::int64_t elements) {
    if (id < 0 || static_cast<std::size_t>(id) >= tensors.size()) bad_op(op, std::string(role) + " tensor is missing");
    const TensorInfo& info = tensor(id);
    if (info.elements() != elements || info.dtype != op.dtype)
      bad_op(op, std::string(role) + " '" + info.name + "' is " + shape_text(info.shape) + " " + to_string(info.dtype) + ", expected " +
                     std::to_string(elements) + " " + to_string(op.dtype) + " elements");
  };
  const OpShape& s = op.shape;
  const auto positive = [&](std::int64_t v, const char* field) {
    if (v <= 0) bad_op(op, std::string(field) + " must be positive, found " + std::to_string(v));
  };
  positive(s.num_inputs, "num_inputs");
  positive(s.num_features, "num_features");
  switch (op.kind) {
    case OpKind::gather:
      positive(s.num_outputs, "num_outputs");
      expect(op.input, "table", {s.num_inputs, s.num_features}, op.dtype);
      expect(op.indices, "indices", {s.num_outputs}, DType::int32);
      break;
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max:
      positive(s.num_outputs, "num_outputs");
      expect(op.input, "src", {s.num_inputs, s.num_features}, op.dtype);
      expect(op.indices, "indices", {s.num_inputs}, DType::int32);
      break;
    case OpKind::degree_count:
      positive(s.num_outputs, "num_outputs");
      if (s.num_features != 1) bad_op(op, "num_features must be 1, found " + std::to_string(s.num_features));
      expect(op.indices, "indices", {s.num_inputs}, DType::int32);
      break;
    case OpKind::matmul:
      positive(s.out_features, "out_features");
      if (op.transpose_input) expect(op.input, "input", {s.num_features, s.num_inputs}, op.dtype);
      else expect(op.input, "input", {s.num_inputs, s.num_features}, op.dtype);
      if (op.transpose_weight) expect(op.weight, "weight", {s.out_features, s.num_features}, op.dtype);
      else expect(op.weight, "weight", {s.num_features, s.out_features}, op.dtype);
      if (op.bias >= 0) expect(op.bias, "bias", {s.out_features}, op.dtype);
      break;
    case OpKind::segment_matmul: {
      positive(s.out_features, "out_features");
      positive(s.num_segments, "num_segments");
      if (op.transpose_input && op.transpose_weight) bad_op(op, "transposes both operands, a form segment_matmul does not have");
      const SegmentMatmulOperands operands = segment_matmul_operands(op);
      expect(operands.input, "input", {s.num_inputs, s.num_features}, op.dtype);
      expect(operands.offsets, "offsets", {s.num_segments + 1}, DType::int32);
      if (op.transpose_input) expect(operands.weight, "grad", {s.num_inputs, s.out_features}, op.dtype);
      else if (op.transpose_weight) expect(operands.weight, "weight", {s.num_segments, s.out_features, s.num_features}, op.dtype);
      else expect(operands.weight, "weight", {s.num_segments, s.num_features, s.out_features}, op.dtype);
      break;
    }
    case OpKind::unary: expect(op.input, "input", {s.num_inputs, s.num_features}, op.dtype); break;
    case OpKind::binary: {
      const BinaryOperands operands = binary_operands(op);
      expect(operands.left, "input", {s.num_inputs, s.num_features}, op.dtype);
      check_broadcast_shape(op);
      expect(operands.right, "other", {s.other_rows, s.other_groups}, op.dtype);
      break;
    }
    case OpKind::unary_grad:
      expect(op.input, "input", {s.num_inputs, s.num_features}, op.dtype);
      expect(op.weight, "grad", {s.num_inputs, s.num_features}, op.dtype);
      break;
    case OpKind::sum_to:
      expect(op.input, "input", {s.num_inputs, s.num_features}, op.dtype);
      check_broadcast_shape(op);
      break;
    case OpKind::loss:
    case OpKind::loss_grad: {
      const LossOperands operands = loss_operands(op);
      expect(operands.predictions, "predictions", {s.num_inputs, s.num_features}, op.dtype);
      if (op.loss == LossFn::cross_entropy) expect(operands.labels, "labels", {s.num_inputs}, DType::int32);
      else expect(operands.targets, "targets", {s.num_inputs, s.num_features}, op.dtype);
      if (operands.row_weights >= 0) expect(operands.row_weights, "row weights", {s.num_inputs}, DType::float32);
      break;
    }
    case OpKind::optimizer_step: {
      const OptimizerStepOperands operands = optimizer_step_operands(op);
      const std::int64_t p = s.num_inputs * s.num_features;
      expect_elements(operands.param, "parameter", p);
      expect_elements(operands.grad, "grad", p);
      const std::int64_t rows = op.optimizer.state_rows();
      if (rows > 0) expect(operands.state, "state", {rows, p}, op.dtype);
      else if (operands.state >= 0) bad_op(op, "has a state tensor, but " + to_string(op.optimizer.kind) + " without momentum keeps none");
      if (op.optimizer.kind == OptimizerSpec::Kind::adam) expect(operands.step_number, "step", {1, 1}, DType::float32);
      break;
    }
    case OpKind::cast: {
      if (!is_value_dtype(op.dtype)) bad_op(op, "casts to " + to_string(op.dtype) + ", which is not a value dtype");
      if (op.input < 0 || static_cast<std::size_t>(op.input) >= tensors.size()) bad_op(op, "input tensor is missing");
      // The input's dtype is the graph tensor's: any value dtype, read as it is stored.
      const TensorInfo& in = tensor(op.input);
      op.input_dtype = in.dtype;
      if (!is_value_dtype(op.input_dtype)) bad_op(op, "input '" + in.name + "' is " + to_string(op.input_dtype) + ", not a value dtype");
      // Any shape of num_inputs x num_features elements whose last dimension is num_features (a 1-D bias,
      // a [S, K, N] weight): the output keeps the input's shape, as tensor.to(dtype) does.
      if (in.elements() != s.num_inputs * s.num_features || in.shape.empty() || in.shape.back() != s.num_features)
        bad_op(op, "input '" + in.name + "' is " + shape_text(in.shape) + ", expected " + std::to_string(s.num_inputs) + " x " +
                       std::to_string(s.num_features) + " elements ending in a dimension of " + std::to_string(s.num_features));
      if (op.scalar == 0) op.scalar = 1.0f;
      if (!std::isfinite(op.scalar)) bad_op(op, "scale " + std::to_string(op.scalar) + " is not finite");
      break;
    }
  }
  std::vector<std::int64_t> out_shape = {op.output_rows(), op.output_cols()};
  if (op.kind == OpKind::cast) out_shape = tensor(op.input).shape;
  op.output = add_tensor({op.name + ".out", std::move(out_shape), op.dtype});
  ops.push_back(op);
  return op.output;
}

std::vector<TensorId> OpGraph::graph_inputs() const {
  std::vector<bool> written(tensors.size(), false);
  for (const Op& op : ops) written.at(static_cast<std::size_t>(op.output)) = true;
  std::vector<TensorId> inputs;
  for (std::size_t t = 0; t < tensors.size(); ++t)
    if (!written[t]) inputs.push_back(static_cast<TensorId>(t));
  return inputs;
}

}  // namespace tilesim
