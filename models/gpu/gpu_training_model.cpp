// The backward and loss kinds of a training step as eager PyTorch's autograd launches them: each is the
// list of kernels the backward formulas of tools/autograd/derivatives.yaml (and the ATen functions they
// call) run, one ATen call per kernel, built from the same kernel terms as the forward kinds
// (gpu_kernel_list.hpp). Bytes per element are the op dtype's (4 for float32, 2 for float16 and bfloat16), 1-byte
// bool masks and the machine's index_bytes for torch's int64 labels. The kernel sequences were checked
// with torch.profiler on PyTorch 2.11 (H100): the same kernels, in this order, for every kind here but
// the weighted losses (row weights, Op::aux), which are not profiled.
#include <stdexcept>
#include <vector>

#include "models/gpu/gpu_kernel_list.hpp"

namespace tilesim::gpu {

namespace {

// One elementwise kernel of a backward formula: bytes it reads and writes per element.
struct ElementPass {
  const char* name;
  double bytes_per_element;
};

// The backward of each forward call PyG makes for the function (gpu_op_model.cpp, unary_passes), in the
// order autograd runs them (the last forward call's first). A call whose derivative is the identity
// (adding or subtracting a constant) launches nothing.
std::vector<ElementPass> unary_grad_passes(UnaryFn fn) {
  switch (fn) {
    // threshold_backward(grad, result, 0): one kernel reading both and writing the gradient.
    case UnaryFn::relu: return {{"threshold_backward", 12}};
    case UnaryFn::leaky_relu: return {{"leaky_relu_backward", 12}};
    // exp: grad * result.
    case UnaryFn::exp: return {{"mul_grad_result", 12}};
    // softplus_backward(grad, self, beta, threshold); the shift's subtraction passes the gradient on.
    case UnaryFn::shifted_softplus: return {{"softplus_backward", 12}};
    case UnaryFn::softplus: return {{"softplus_backward", 12}};
    // sigmoid_backward(grad, result): grad (1 - result) result, one kernel reading both.
    case UnaryFn::sigmoid: return {{"sigmoid_backward", 12}};
    // sqrt: grad / (2 * result): mul, div; log: grad / self: one div; clamp_min (a Python number's
    // ClampMinBackward0): where(self >= min, grad, 0): the mask, then the select (autograd also copies
    // its one-element 0 to the grad's type, a launch left out here: tests/models/gpu/eager_calls_test.cpp).
    case UnaryFn::sqrt: return {{"mul_two_result", 8}, {"div_grad", 12}};
    case UnaryFn::log: return {{"div_grad_self", 12}};
    case UnaryFn::clamp_min: return {{"ge_min", 5}, {"where_grad", 13}};
    // mul by a Python scalar: grad * scalar.
    case UnaryFn::scale: return {{"mul_scalar", 8}};
    // masked_fill_'s backward is grad.masked_fill(mask, 0), out of place: a copy, then the fill reading
    // the saved bool mask; pow_'s is grad * (exponent * self.pow(exponent - 1)): pow, mul, mul. The
    // `== inf` mask has no gradient.
    case UnaryFn::rsqrt_or_zero:
      return {{"copy_grad", 8}, {"masked_fill_", 9}, {"pow", 8}, {"mul_exponent", 8}, {"mul_grad", 12}};
    // As above with reciprocal's -grad * (result * result): mul, neg, mul.
    case UnaryFn::reciprocal_or_zero:
      return {{"copy_grad", 8}, {"masked_fill_", 9}, {"mul_result_result", 8}, {"neg_grad", 8}, {"mul_grad", 12}};
    // 0.5 * (cos(x * PI / cutoff) + 1): mul by 0.5; + 1 nothing; cos's grad * -sin(x): sin, neg, mul;
    // div by the cutoff; mul by PI.
    case UnaryFn::cosine_cutoff:
      return {{"mul_half", 8}, {"sin", 8}, {"neg_sin", 8}, {"mul_grad", 12}, {"div_cutoff", 8}, {"mul_pi", 8}};
  }
  throw std::logic_error("unary_grad_passes: unknown unary function");
}

double elements_of(const Op& op) {
  return static_cast<double>(op.shape.num_inputs) * static_cast<double>(op.shape.num_features);
}

// A loss with row weights (Op::aux), as the torch-cpu peer records it (kernels/torch/autograd_ops.cpp):
// the per-row losses of reduction='none' (cross entropy: log_softmax, then nll_loss's per-row values;
// mse: the elementwise squares, then their mean over each row), times the weights, summed, over the
// weights' sum clamped above 0. Seven ATen calls. Unlike the unweighted sequences these were not
// profiled: they follow the ATen functions the formula calls.
HostSide model_weighted_loss(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype)), index_bytes = static_cast<double>(m.index_bytes);
  const double rows = static_cast<double>(op.shape.num_inputs), elements = elements_of(op);
  p.flops = op.flops();
  const double compute_s = p.flops / peak_flops_per_s(op.dtype, m);
  const bool ce = op.loss == LossFn::cross_entropy;
  p.call = ce ? "(torch.nn.functional.cross_entropy(reduction='none') * w).sum() / w.sum()"
              : "(torch.nn.functional.mse_loss(reduction='none').mean(1) * w).sum() / w.sum()";
  // The predictions (and targets, or labels), the per-row losses, the weights and their product.
  p.footprint_bytes = (ce ? 2.0 * elements * value_bytes + rows * index_bytes : 3.0 * elements * value_bytes) + 3.0 * rows * value_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  if (ce) {
    ks.add("log_softmax", 2.0 * elements * value_bytes, {{"compute", compute_s}});
    ks.add("nll_loss_forward", rows * (index_bytes + 2.0 * value_bytes), {});  // labels and picked values in, a loss per row out
  } else {
    ks.add("mse_elementwise", 3.0 * elements * value_bytes, {{"compute", compute_s}});
    ks.add("mean_rows", (elements + rows) * value_bytes, {});
  }
  ks.add("mul_weights", 3.0 * rows * value_bytes, {});
  ks.add("sum", (rows + 1.0) * value_bytes, {});
  ks.add("sum_weights", (rows + 1.0) * value_bytes, {});
  ks.add("clamp_min", 2.0 * value_bytes, {});
  ks.add("div", 3.0 * value_bytes, {});
  ks.finish(p);
  return {7.0 * m.eager.aten_call_s, true};
}

// Its backward as autograd runs it from those formulas (the weights take no gradient): the seed, the
// divide's and the multiply's backwards (the sum's is an expand, a view), then cross entropy's
// nll_loss_backward into zeros and log_softmax_backward_data, or mse's mean backward (the row gradient
// expanded and divided by C) and mse_loss_backward into zeros. Six ATen calls; not profiled either.
HostSide model_weighted_loss_grad(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype)), index_bytes = static_cast<double>(m.index_bytes);
  const double rows = static_cast<double>(op.shape.num_inputs), elements = elements_of(op);
  p.flops = op.flops();
  const double compute_s = p.flops / peak_flops_per_s(op.dtype, m);
  const bool ce = op.loss == LossFn::cross_entropy;
  p.call = ce ? "loss.backward(): div, mul by w, nll_loss_backward, log_softmax_backward_data"
              : "loss.backward(): div, mul by w, mean_backward, mse_loss_backward";
  p.footprint_bytes = (ce ? 3.0 * elements * value_bytes + rows * index_bytes : 4.0 * elements * value_bytes) + 2.0 * rows * value_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("fill_seed", value_bytes, {});
  ks.add("div_backward", 3.0 * value_bytes, {});
  ks.add("mul_weights_backward", (2.0 * rows + 1.0) * value_bytes, {});  // the expanded scalar times w, a row gradient out
  if (ce) {
    ks.add("fill_zeros_grad_input", elements * value_bytes, {});
    ks.add("nll_loss_backward", rows * (index_bytes + 2.0 * value_bytes), {});
    ks.add("log_softmax_backward", 3.0 * elements * value_bytes, {{"compute", compute_s}});
  } else {
    ks.add("mean_backward", (elements + rows) * value_bytes, {});
    ks.add("fill_zeros_grad_input", elements * value_bytes, {});
    ks.add("mse_loss_backward", 4.0 * elements * value_bytes, {{"compute", compute_s}});
  }
  ks.finish(p);
  return {6.0 * m.eager.aten_call_s, true};
}

}  // namespace

HostSide model_unary_grad(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double elements = elements_of(op);
  const auto passes = unary_grad_passes(op.unary);
  p.call = "autograd: backward of " + to_string(op.unary);
  p.flops = op.flops();
  // The saved input (or result), the incoming gradient, the output, and one temporary between kernels.
  p.footprint_bytes = elements * (4.0 + 4.0 + 4.0 + (passes.size() > 1 ? 4.0 : 0.0));
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  const double per_pass_flops = p.flops / static_cast<double>(passes.size());
  for (const ElementPass& pass : passes)
    ks.add(pass.name, elements * pass.bytes_per_element, {{"compute", per_pass_flops / peak_flops_per_s(op.dtype, m)}});
  ks.finish(p);
  return {static_cast<double>(passes.size()) * m.eager.aten_call_s, true};
}

HostSide model_sum_to(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype));
  const double in_elements = elements_of(op);
  const double out_elements = static_cast<double>(op.shape.other_rows) * static_cast<double>(op.shape.other_groups);
  // Autograd's sum_to_size is one ATen sum over the broadcast dimensions: ATen's reduce kernel, which
  // reads the gradient once and writes the reduced shape (columns of a bias row, rows of a per-row or
  // per-head scalar). When ATen splits a long reduction over several blocks it also zeroes a few
  // bytes of semaphores (a memset, not modeled: models/gpu/README.md).
  p.call = "torch.Tensor.sum_to_size (autograd's reduction to a broadcast operand)";
  p.flops = op.flops();
  p.footprint_bytes = (in_elements + out_elements) * value_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("reduce_sum", p.footprint_bytes, {{"compute", p.flops / peak_flops_per_s(op.dtype, m)}});
  ks.finish(p);
  return {m.eager.aten_call_s, true};
}

HostSide model_loss(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  if (op.loss_row_weights() >= 0) return model_weighted_loss(op, m, p);
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype)), index_bytes = static_cast<double>(m.index_bytes);
  const double rows = static_cast<double>(op.shape.num_inputs), elements = elements_of(op);
  p.flops = op.flops();
  const double compute_s = p.flops / peak_flops_per_s(op.dtype, m);
  if (op.loss == LossFn::cross_entropy) {
    // F.cross_entropy = log_softmax (one warp-per-row softmax kernel) + nll_loss (labels, one value
    // per row, the mean and the total weight written as two scalars). ATen runs nll_loss's forward in
    // a single block (LossNLL.cu), which this bandwidth term does not see: fine for a training mask's
    // rows, optimistic for hundreds of thousands.
    p.call = "torch.nn.functional.cross_entropy";
    p.footprint_bytes = 2.0 * elements * value_bytes + rows * index_bytes + 2.0 * value_bytes;
    p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
    KernelList ks(m, p.l2_hit_fraction);
    ks.add("log_softmax", 2.0 * elements * value_bytes, {{"compute", compute_s}});
    ks.add("nll_loss_forward", rows * (index_bytes + value_bytes) + 2.0 * value_bytes, {});
    ks.finish(p);
  } else {
    // F.mse_loss(reduction='mean'): the squared differences into a temporary, then the mean.
    p.call = "torch.nn.functional.mse_loss";
    p.footprint_bytes = 3.0 * elements * value_bytes + value_bytes;
    p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
    KernelList ks(m, p.l2_hit_fraction);
    ks.add("mse_elementwise", 3.0 * elements * value_bytes, {{"compute", compute_s}});
    ks.add("mean", elements * value_bytes + value_bytes, {});
    ks.finish(p);
  }
  return {2.0 * m.eager.aten_call_s, true};  // two ATen calls either way
}

HostSide model_loss_grad(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  if (op.loss_row_weights() >= 0) return model_weighted_loss_grad(op, m, p);
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype)), index_bytes = static_cast<double>(m.index_bytes);
  const double rows = static_cast<double>(op.shape.num_inputs), elements = elements_of(op);
  p.flops = op.flops();
  const double compute_s = p.flops / peak_flops_per_s(op.dtype, m);
  // loss.backward() starts from a seed gradient of ones (a one-element fill), then runs the loss's
  // backward node; both loss backwards allocate their result with zeros_like first (a fill).
  if (op.loss == LossFn::cross_entropy) {
    // nll_loss_backward writes -1/M at each row's label (labels read, one value per row written);
    // log_softmax_backward_data reads that gradient and the saved log-probabilities.
    p.call = "loss.backward(): nll_loss_backward, log_softmax_backward_data";
    p.footprint_bytes = 3.0 * elements * value_bytes + rows * index_bytes + 3.0 * value_bytes;
    p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
    KernelList ks(m, p.l2_hit_fraction);
    ks.add("fill_seed", value_bytes, {});
    ks.add("fill_zeros_grad_input", elements * value_bytes, {});
    ks.add("nll_loss_backward", rows * (index_bytes + value_bytes) + 2.0 * value_bytes, {});
    ks.add("log_softmax_backward", 3.0 * elements * value_bytes, {{"compute", compute_s}});
    ks.finish(p);
    return {4.0 * m.eager.aten_call_s, true};
  }
  // mse_loss_backward: 2 / n * (input - target) * grad, reading both and writing the gradient.
  p.call = "loss.backward(): mse_loss_backward";
  p.footprint_bytes = 3.0 * elements * value_bytes + value_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("fill_seed", value_bytes, {});
  ks.add("fill_zeros_grad_input", elements * value_bytes, {});
  ks.add("mse_loss_backward", 3.0 * elements * value_bytes + value_bytes, {{"compute", compute_s}});
  ks.finish(p);
  return {3.0 * m.eager.aten_call_s, true};
}

}  // namespace tilesim::gpu
