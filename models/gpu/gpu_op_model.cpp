// predict_op: every op kind of the op graph as eager PyTorch with PyG runs it. The calibrated kinds
// (gather, scatter_add, scatter_max) go through predict(); the others are built here from the same
// kernel terms (gpu_kernel_list.hpp) as the sequence of ATen calls PyG makes for them, read from PyG
// 2.x (gcn_conv.py gcn_norm, schnet.py ShiftedSoftplus and CFConv, utils/degree.py) and torch_scatter
// (scatter.py scatter_mean); a training step's kinds come from gpu_training_model.cpp (autograd's
// backward formulas, the losses) and gpu_optimizer_model.cpp (torch.optim's foreach update). Eager host
// floors: the fitted per-call floors where the call was measured, else one aten_call floor per ATen
// call (machine file, eager_host_floor_s).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "models/gpu/eager_calls.hpp"
#include "models/gpu/gpu_kernel_list.hpp"

namespace tilesim::gpu {

GpuOp gpu_op_for(OpKind kind) {
  switch (kind) {
    case OpKind::gather: return GpuOp::gather;
    case OpKind::scatter_add: return GpuOp::scatter_add;
    case OpKind::scatter_max: return GpuOp::scatter_max;
    default: break;
  }
  throw std::logic_error("gpu_op_for: op kind " + to_string(kind) + " is not one of the calibrated GPU ops (use predict_op)");
}

namespace {

// One elementwise pass: bytes read and written per element (a bool mask is 1 byte).
struct Pass {
  const char* name;
  double read_bytes, write_bytes;
};

// The ATen calls PyG makes for each unary function, one kernel each (4-byte float values).
std::vector<Pass> unary_passes(UnaryFn fn) {
  switch (fn) {
    case UnaryFn::relu: return {{"relu", 4, 4}};
    case UnaryFn::leaky_relu: return {{"leaky_relu", 4, 4}};
    case UnaryFn::exp: return {{"exp", 4, 4}};
    // CGConv: self.lin_f(z).sigmoid() and F.softplus(self.lin_s(z)), one call each.
    case UnaryFn::sigmoid: return {{"sigmoid", 4, 4}};
    case UnaryFn::softplus: return {{"softplus", 4, 4}};
    // PNA: torch.sqrt, torch.log, deg.clamp_(1), one call each.
    case UnaryFn::sqrt: return {{"sqrt", 4, 4}};
    case UnaryFn::log: return {{"log", 4, 4}};
    case UnaryFn::clamp_min: return {{"clamp_min", 4, 4}};
    case UnaryFn::scale: return {{"mul_scalar", 4, 4}};
    // SchNet's ShiftedSoftplus: F.softplus(x) - self.shift.
    case UnaryFn::shifted_softplus: return {{"softplus", 4, 4}, {"sub_shift", 4, 4}};
    // gcn_norm: deg.pow_(-0.5), then masked_fill_(deg_inv_sqrt == inf, 0): pow, eq (a bool mask), fill.
    case UnaryFn::rsqrt_or_zero: return {{"pow_", 4, 4}, {"eq_inf", 4, 1}, {"masked_fill_", 5, 4}};
    case UnaryFn::reciprocal_or_zero: return {{"reciprocal", 4, 4}, {"eq_inf", 4, 1}, {"masked_fill_", 5, 4}};
    // CFConv: C = 0.5 * (torch.cos(edge_weight * PI / self.cutoff) + 1.0): five calls.
    case UnaryFn::cosine_cutoff:
      return {{"mul_pi", 4, 4}, {"div_cutoff", 4, 4}, {"cos", 4, 4}, {"add_one", 4, 4}, {"mul_half", 4, 4}};
  }
  throw std::logic_error("unary_passes: unknown unary function");
}

const char* binary_kernel(BinaryFn fn) {
  switch (fn) {
    case BinaryFn::add: return "add";
    case BinaryFn::subtract: return "sub";
    case BinaryFn::multiply: return "mul";
    case BinaryFn::divide: return "div";
    case BinaryFn::equal: return "eq";
  }
  throw std::logic_error("binary_kernel: unknown binary function");
}

void require_positive(const Op& op, std::int64_t v, const char* field) {
  if (v < 1) throw std::invalid_argument("GPU model: op '" + op.name + "': " + field + " must be at least 1");
}

HostSide model_unary(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double elements = static_cast<double>(op.shape.num_inputs) * static_cast<double>(op.shape.num_features);
  const auto passes = unary_passes(op.unary);
  p.call = std::string("elementwise ") + to_string(op.unary);
  p.flops = op.flops();
  p.footprint_bytes = elements * (4.0 + 4.0 + (passes.size() > 1 ? 4.0 : 0.0));  // input, output, one temporary
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  const double per_pass_flops = p.flops / static_cast<double>(passes.size());
  for (const Pass& pass : passes)
    ks.add(pass.name, elements * (pass.read_bytes + pass.write_bytes), {{"compute", per_pass_flops / peak_flops_per_s(op.dtype, m)}});
  ks.finish(p);
  return {static_cast<double>(passes.size()) * m.eager.aten_call_s, true};
}

HostSide model_binary(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype));
  const double elements = static_cast<double>(op.shape.num_inputs) * static_cast<double>(op.shape.num_features);
  const double other = static_cast<double>(op.shape.other_rows) * static_cast<double>(op.shape.other_groups);
  p.call = std::string("elementwise ") + to_string(op.binary) + " (broadcast)";
  p.flops = op.flops();
  p.footprint_bytes = (2.0 * elements + other) * value_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add(binary_kernel(op.binary), p.footprint_bytes, {{"compute", p.flops / peak_flops_per_s(op.dtype, m)}});
  ks.finish(p);
  return {m.eager.aten_call_s, true};
}

// A cast (mixed precision: a master weight's autocast cast, the predictions' .float() for the loss, the
// loss gradient's and each master gradient's casts): one elementwise kernel reading the input at its
// dtype's bytes and writing the output at the op's, the scale folded in. (Eager PyTorch folds the loss
// scale into the loss's scalar seed, and GradScaler unscales every gradient in one fused foreach kernel,
// a pass over the same bytes, counted here in each gradient's cast instead.)
HostSide model_cast(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double elements = static_cast<double>(op.shape.num_inputs) * static_cast<double>(op.shape.num_features);
  p.call = std::string("tensor.to(") + to_string(op.dtype) + ")" + (op.cast_scale() != 1.0f ? " with a scale" : "");
  p.flops = op.flops();
  p.footprint_bytes = elements * static_cast<double>(dtype_bytes(op.input_dtype) + dtype_bytes(op.dtype));
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("copy_", p.footprint_bytes, {{"compute", p.flops / peak_flops_per_s(DType::float32, m)}});
  ks.finish(p);
  return {m.eager.aten_call_s, true};
}

HostSide model_scatter_mean(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype)), index_bytes = static_cast<double>(m.index_bytes);
  const double rows = static_cast<double>(op.shape.num_inputs), features = static_cast<double>(op.shape.num_features);
  const double out_rows = static_cast<double>(op.shape.num_outputs), out_elements = out_rows * features;
  const double updates_per_address = rows / out_rows;  // uniform random indices, as for scatter_add
  p.call = "torch_scatter.scatter(reduce='mean')";
  p.flops = op.flops();
  // Tensors: src, index, out; ones (per message) and count (per output row) for the count.
  p.footprint_bytes = rows * features * value_bytes + rows * index_bytes + out_elements * value_bytes + rows * value_bytes +
                      out_rows * value_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("fill_zeros", out_elements * value_bytes, {});
  add_scatter_add_kernel(ks, m, op.dtype, rows, features, out_elements, updates_per_address);
  ks.add("fill_ones", rows * value_bytes, {});
  ks.add("fill_zeros_count", out_rows * value_bytes, {});
  add_scatter_add_kernel(ks, m, op.dtype, rows, 1.0, out_rows, updates_per_address);
  ks.add("lt_one", out_rows * (value_bytes + 1.0), {});
  ks.add("masked_fill_", out_rows * (1.0 + 2.0 * value_bytes), {});
  ks.add("true_divide_", (2.0 * out_elements + out_rows) * value_bytes, {{"compute", out_elements / peak_flops_per_s(op.dtype, m)}});
  ks.finish(p);
  // Two scatter_sum calls (each the fitted torch_scatter sum floor: Python wrapper, broadcast views,
  // zeros, scatter_add_) and four more ATen calls: ones, lt, the masked assignment, true_divide_.
  return {2.0 * m.calibration.host_scatter_add_s + 4.0 * m.eager.aten_call_s, true};
}

HostSide model_degree_count(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype)), index_bytes = static_cast<double>(m.index_bytes);
  const double rows = static_cast<double>(op.shape.num_inputs), out_rows = static_cast<double>(op.shape.num_outputs);
  p.call = "torch_geometric.utils.degree";
  p.flops = op.flops();
  p.footprint_bytes = rows * (index_bytes + value_bytes) + out_rows * value_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("fill_zeros", out_rows * value_bytes, {});
  ks.add("fill_ones", rows * value_bytes, {});
  add_scatter_add_kernel(ks, m, op.dtype, rows, 1.0, out_rows, rows / out_rows);
  ks.finish(p);
  return {3.0 * m.eager.aten_call_s, true};  // zeros, ones, scatter_add_
}

// The kernels and host side of one op as written by hand from PyTorch's and PyG's sources.
GpuPrediction predict_op_hand(const Op& op, const GpuMachine& machine, GpuMode mode, const ForeachStep* step) {
  require_positive(op, op.shape.num_inputs, "num_inputs");
  require_positive(op, op.shape.num_features, "num_features");
  if (op.kind == OpKind::gather || op.kind == OpKind::scatter_max ||
      (op.kind == OpKind::scatter_add && op.phase != OpPhase::backward))
    return predict(gpu_op_for(op.kind), op.shape, op.dtype, machine, mode);

  GpuPrediction p;
  p.mode = mode;
  HostSide host;
  switch (op.kind) {
    case OpKind::scatter_add:
      // In a backward pass a scatter-add is index_select's gradient, which autograd runs in ATen
      // (new_zeros, index_add_): the same kernels as torch_scatter's sum, without its Python wrapper,
      // so two ATen calls' floors instead of the fitted torch_scatter floor.
      p = predict(GpuOp::scatter_add, op.shape, op.dtype, machine, GpuMode::kernel);
      p.mode = mode;
      p.call = "autograd: index_select's backward (zeros, index_add_)";
      host = {2.0 * machine.eager.aten_call_s, true};
      break;
    case OpKind::scatter_mean:
      require_positive(op, op.shape.num_outputs, "num_outputs");
      host = model_scatter_mean(op, machine, p);
      break;
    case OpKind::degree_count:
      require_positive(op, op.shape.num_outputs, "num_outputs");
      host = model_degree_count(op, machine, p);
      break;
    case OpKind::matmul:
      require_positive(op, op.shape.out_features, "out_features");
      host = model_matmul(op, machine, p);
      break;
    case OpKind::segment_matmul:
      require_positive(op, op.shape.out_features, "out_features");
      require_positive(op, op.shape.num_segments, "num_segments");
      host = model_segment_matmul(op, machine, p);
      break;
    case OpKind::unary: host = model_unary(op, machine, p); break;
    case OpKind::cast:
      (void)peak_flops_per_s(op.input_dtype, machine);  // rejects an input dtype the model does not know
      host = model_cast(op, machine, p);
      break;
    case OpKind::binary:
      require_positive(op, op.shape.other_rows, "other_rows");
      require_positive(op, op.shape.other_groups, "other_groups");
      host = model_binary(op, machine, p);
      break;
    case OpKind::unary_grad: host = model_unary_grad(op, machine, p); break;
    case OpKind::sum_to:
      require_positive(op, op.shape.other_rows, "other_rows");
      require_positive(op, op.shape.other_groups, "other_groups");
      host = model_sum_to(op, machine, p);
      break;
    case OpKind::loss: host = model_loss(op, machine, p); break;
    case OpKind::loss_grad: host = model_loss_grad(op, machine, p); break;
    case OpKind::optimizer_step: {
      // Alone (no step given), the op's parameter is the whole step.
      const ForeachStep alone{{op.shape.num_inputs * op.shape.num_features}, 0};
      host = model_optimizer_step(op, step != nullptr ? *step : alone, machine, p);
      break;
    }
    default: throw std::invalid_argument("GPU model: op '" + op.name + "': op kind " + to_string(op.kind) + " is not modeled");
  }
  (void)peak_flops_per_s(op.dtype, machine);  // rejects a dtype the model does not know
  if (mode == GpuMode::kernel) {
    p.time_s = p.kernel_s;
    return p;
  }
  p.host_floor_s = host.floor_s;
  p.host_waits_for_device = !host.overlaps_device;
  p.time_s = host.overlaps_device ? std::max(p.host_floor_s, p.kernel_s) : p.host_floor_s + p.kernel_s;
  if (p.host_floor_s >= p.kernel_s) p.limiter = "host";
  return p;
}

// The op's recorded ATen sequence, when it has one, into the prediction; for the kinds whose host side
// is not a fitted floor of the whole call (matmul, unary, binary, degree_count), the host floor becomes
// the recorded calls' (models/gpu/eager_calls.hpp): what PyTorch dispatches, not a hand count.
void apply_recorded_sequence(const Op& op, const GpuMachine& machine, GpuPrediction& p) {
  const RecordedSequence* seq = recorded_sequence(op);
  if (seq == nullptr) return;
  p.aten_calls = instantiate(*seq, op);
  p.python_kernel_calls = seq->kernel_calls();
  const bool host_from_record = op.kind == OpKind::matmul || op.kind == OpKind::unary || op.kind == OpKind::binary ||
                                op.kind == OpKind::degree_count;
  if (!host_from_record || p.mode != GpuMode::eager) return;
  p.call = seq->python;
  p.host_floor_s = recorded_host_s(*seq, machine);
  p.time_s = std::max(p.host_floor_s, p.kernel_s);
  if (p.host_floor_s >= p.kernel_s) {
    p.limiter = "host";
  } else if (p.limiter == "host") {
    // The hand count's floor was the larger one; the recorded one is not: the slowest kernel bounds.
    const auto slowest = std::max_element(p.kernels.begin(), p.kernels.end(),
                                          [](const GpuKernel& a, const GpuKernel& b) { return a.time_s < b.time_s; });
    if (slowest != p.kernels.end()) p.limiter = slowest->limiter;
  }
}

}  // namespace

GpuPrediction predict_op(const Op& op, const GpuMachine& machine, GpuMode mode, const ForeachStep* step) {
  GpuPrediction p = predict_op_hand(op, machine, mode, step);
  apply_recorded_sequence(op, machine, p);
  return p;
}

}  // namespace tilesim::gpu
