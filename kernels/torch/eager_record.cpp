// Records the ATen operators each forward op dispatches when written as PyG's eager Python call.
// Only the Python-level structure is transcribed (which torch functions PyG calls, with which
// arguments); everything below it (F.linear's addmm, torch.zeros' fill, a scalar multiply's wrapped
// number) is whatever libtorch dispatches, seen through at::RecordFunction.
#include "kernels/torch/eager_record.hpp"

#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/record_function.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <unordered_set>

namespace tilesim::kernels::torch_peer {

namespace {

// The recording in progress on this thread (callbacks are thread-local, and the ops run here).
thread_local std::vector<RecordedCall>* recording = nullptr;
thread_local int current_depth = 0;

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (recording != nullptr) {
    RecordedCall call;
    call.op = fn.name();
    call.depth = current_depth;
    call.autograd_node = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
    for (const c10::IValue& v : fn.inputs())
      if (v.isTensor()) {
        const auto sizes = v.toTensor().sizes();
        call.tensor_shapes.emplace_back(sizes.begin(), sizes.end());
      }
    recording->push_back(std::move(call));
  }
  ++current_depth;
  return nullptr;
}

void on_exit(const at::RecordFunction&, at::ObserverContext*) { --current_depth; }

// Registers the callbacks for one recording and removes them however it ends.
class Recorder {
 public:
  explicit Recorder(std::vector<RecordedCall>& out, bool with_autograd_nodes = false) {
    recording = &out;
    current_depth = 0;
    std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> scopes = {at::RecordScope::FUNCTION};
    if (with_autograd_nodes) scopes.insert(at::RecordScope::BACKWARD_FUNCTION);
    handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&on_enter, &on_exit).needsInputs(true).scopes(scopes));
  }
  ~Recorder() {
    at::removeCallback(handle_);
    recording = nullptr;
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

 private:
  at::CallbackHandle handle_;
};

at::Tensor values(std::vector<std::int64_t> shape) { return at::rand(shape, at::TensorOptions().dtype(at::kFloat)); }
at::Tensor index(std::int64_t count, std::int64_t range) {
  return at::randint(range, {count}, at::TensorOptions().dtype(at::kLong));
}

constexpr double pi = 3.14159265358979323846;

// A Python number as Python's bindings pass it to an arithmetic operator: a 0-dim "wrapped number"
// tensor made without the dispatcher, so `x * 0.5` records aten::mul.Tensor alone, as from Python (the
// C++ Scalar overloads would record a conversion Python never makes).
at::Tensor py(double value) {
  at::Tensor t = c10::scalar_to_tensor(value);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// PyG's ShiftedSoftplus: F.softplus(x) - log(2) (a Python float).
at::Tensor shifted_softplus(const at::Tensor& x) { return at::sub(at::softplus(x), py(std::log(2.0))); }

// The operands, made before recording starts (they are the op's inputs, not its work).
struct Operands {
  at::Tensor input, weight, bias, idx;
};

Operands operands(const Op& op) {
  const OpShape& s = op.shape;
  Operands o;
  switch (op.kind) {
    case OpKind::gather:
      o.input = values({s.num_inputs, s.num_features});
      o.idx = index(s.num_outputs, s.num_inputs);
      break;
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max:
      o.input = values({s.num_inputs, s.num_features});
      o.idx = index(s.num_inputs, s.num_outputs);
      break;
    case OpKind::degree_count: o.idx = index(s.num_inputs, s.num_outputs); break;
    case OpKind::matmul:
      o.input = values({s.num_inputs, s.num_features});
      o.weight = values({s.out_features, s.num_features});  // torch.nn.Linear keeps W as [out, in]
      if (op.bias >= 0) o.bias = values({s.out_features});
      break;
    case OpKind::unary: o.input = values({s.num_inputs, s.num_features}); break;
    case OpKind::binary:
      o.input = values({s.num_inputs, s.num_features});
      // A bias row is a 1-D parameter [F] in PyG; a per-row scalar a 1-D [E] (edge weight, cutoff); a
      // per-group scalar [E, H] (GAT's attention); a same-shape operand [E, F].
      if (s.other_rows == 1) o.weight = values({s.num_features});
      else if (s.other_groups == 1) o.weight = values({s.num_inputs});
      else o.weight = values({s.num_inputs, s.other_groups});
      break;
    default: break;
  }
  return o;
}

at::Tensor binary_call(BinaryFn fn, const at::Tensor& a, const at::Tensor& b) {
  switch (fn) {
    case BinaryFn::add: return a + b;
    case BinaryFn::subtract: return a - b;
    case BinaryFn::multiply: return a * b;
    case BinaryFn::divide: return a / b;
    case BinaryFn::equal: return a == b;
  }
  throw std::invalid_argument("unknown binary function");
}

// One op as PyG calls it. Each branch is the Python line(s) named by eager_python_call().
at::Tensor run_eager(const Op& op, const Operands& o) {
  const OpShape& s = op.shape;
  switch (op.kind) {
    case OpKind::gather: return o.input.index_select(0, o.idx);
    case OpKind::scatter_add: {
      // torch_scatter.scatter_sum: broadcast the index over the features, zeros, scatter_add_.
      const at::Tensor i = o.idx.view({-1, 1}).expand_as(o.input);
      return at::zeros({s.num_outputs, s.num_features}, o.input.options()).scatter_add_(0, i, o.input);
    }
    case OpKind::scatter_mean: {
      // torch_scatter.scatter_mean: the sum, a count of ones scattered the same way, count[count < 1] = 1,
      // then out.true_divide_(count) with the count broadcast over the features.
      const at::Tensor i = o.idx.view({-1, 1}).expand_as(o.input);
      at::Tensor out = at::zeros({s.num_outputs, s.num_features}, o.input.options()).scatter_add_(0, i, o.input);
      const at::Tensor ones = at::ones({s.num_inputs}, o.input.options());
      at::Tensor count = at::zeros({s.num_outputs}, o.input.options()).scatter_add_(0, o.idx, ones);
      count.masked_fill_(count < 1, 1);
      return out.true_divide_(count.view({-1, 1}).expand_as(out));
    }
    case OpKind::scatter_max: {
      // PyG 2.x's scatter(reduce='max') on ATen (torch >= 1.12): scatter_reduce_ into zeros, excluding them.
      const at::Tensor i = o.idx.view({-1, 1}).expand_as(o.input);
      return at::zeros({s.num_outputs, s.num_features}, o.input.options())
          .scatter_reduce_(0, i, o.input, "amax", /*include_self=*/false);
    }
    case OpKind::degree_count: {
      // torch_geometric.utils.degree: zeros, ones, scatter_add_.
      const at::TensorOptions f32 = at::TensorOptions().dtype(at::kFloat);
      return at::zeros({s.num_outputs}, f32).scatter_add_(0, o.idx, at::ones({s.num_inputs}, f32));
    }
    case OpKind::matmul: return at::linear(o.input, o.weight, o.bias.defined() ? c10::optional<at::Tensor>(o.bias) : c10::nullopt);
    case OpKind::unary: {
      const at::Tensor& x = o.input;
      switch (op.unary) {
        case UnaryFn::relu: return at::relu(x);
        case UnaryFn::leaky_relu: return at::leaky_relu(x, op.scalar);
        case UnaryFn::shifted_softplus: return shifted_softplus(x);
        case UnaryFn::exp: return at::exp(x);
        case UnaryFn::softplus: return at::softplus(x);
        case UnaryFn::sigmoid: return x.sigmoid();
        case UnaryFn::sqrt: return at::sqrt(x);
        case UnaryFn::log: return at::log(x);
        case UnaryFn::clamp_min: return at::clamp_min(x, at::Scalar(static_cast<double>(op.scalar)));  // deg.clamp_(1): a Python number
        case UnaryFn::scale: return at::mul(py(static_cast<double>(op.scalar)), x);
        case UnaryFn::rsqrt_or_zero:
        case UnaryFn::reciprocal_or_zero: {
          // In place on the degree PyG computed and owns: here the operand, made for this call alone.
          at::Tensor d = x.pow_(op.unary == UnaryFn::rsqrt_or_zero ? -0.5 : -1.0);
          return d.masked_fill_(d == std::numeric_limits<double>::infinity(), 0);
        }
        case UnaryFn::cosine_cutoff:
          // CFConv: 0.5 * (torch.cos(edge_weight * PI / self.cutoff) + 1.0)
          return at::mul(py(0.5), at::add(at::cos(at::div(at::mul(x, py(pi)), py(static_cast<double>(op.scalar)))), py(1.0)));
      }
      break;
    }
    case OpKind::binary: {
      const at::Tensor& x = o.input;
      if (s.other_rows == 1 || s.other_groups == s.num_features) {
        return binary_call(op.binary, x, o.weight);  // out + self.bias; x_j * W
      } else if (s.other_groups == 1) {
        return binary_call(op.binary, x, o.weight.view({-1, 1}));  // edge_weight.view(-1, 1) * x_j
      } else {
        // GAT: x_j [E, H, C] * alpha.unsqueeze(-1), the result viewed back as [E, H * C].
        return binary_call(op.binary, x.view({s.num_inputs, s.other_groups, -1}), o.weight.unsqueeze(-1))
            .view({s.num_inputs, s.num_features});
      }
    }
    default: break;
  }
  throw std::invalid_argument("op '" + op.name + "' (" + to_string(op.kind) +
                              "): no eager PyG transcription (forward gather, scatter, degree, matmul, unary and binary ops only)");
}

}  // namespace

std::string eager_python_call(const Op& op) {
  const OpShape& s = op.shape;
  switch (op.kind) {
    case OpKind::gather: return "x.index_select(0, index)";
    case OpKind::scatter_add: return "torch_scatter.scatter(src, index, 0, dim_size=N, reduce='sum')";
    case OpKind::scatter_mean: return "torch_scatter.scatter(src, index, 0, dim_size=N, reduce='mean')";
    case OpKind::scatter_max: return "torch_geometric.utils.scatter(src, index, 0, dim_size=N, reduce='max') on ATen";
    case OpKind::degree_count: return "torch_geometric.utils.degree(index, N)";
    case OpKind::matmul: return op.bias >= 0 ? "torch.nn.functional.linear(x, W, b)" : "torch.nn.functional.linear(x, W)";
    case OpKind::unary:
      switch (op.unary) {
        case UnaryFn::relu: return "torch.relu(x)";
        case UnaryFn::leaky_relu: return "torch.nn.functional.leaky_relu(x, slope)";
        case UnaryFn::shifted_softplus: return "torch.nn.functional.softplus(x) - log(2)";
        case UnaryFn::exp: return "torch.exp(x)";
        case UnaryFn::softplus: return "torch.nn.functional.softplus(x)";
        case UnaryFn::sigmoid: return "x.sigmoid()";
        case UnaryFn::sqrt: return "torch.sqrt(x)";
        case UnaryFn::log: return "torch.log(x)";
        case UnaryFn::clamp_min: return "x.clamp_min(min)";
        case UnaryFn::scale: return "(1 + eps) * x";
        case UnaryFn::rsqrt_or_zero: return "d = deg.pow_(-0.5); d.masked_fill_(d == inf, 0)";
        case UnaryFn::reciprocal_or_zero: return "d = deg.pow_(-1); d.masked_fill_(d == inf, 0)";
        case UnaryFn::cosine_cutoff: return "0.5 * (torch.cos(edge_weight * PI / cutoff) + 1.0)";
      }
      break;
    case OpKind::binary: {
      const std::string sym = op.binary == BinaryFn::add        ? " + "
                              : op.binary == BinaryFn::subtract ? " - "
                              : op.binary == BinaryFn::multiply ? " * "
                              : op.binary == BinaryFn::divide   ? " / "
                                                                : " == ";
      if (s.other_rows == 1) return "x" + sym + "bias";
      if (s.other_groups == s.num_features) return "x" + sym + "y";
      if (s.other_groups == 1) return "x" + sym + "w.view(-1, 1)";
      return "(x.view(-1, H, C)" + sym + "a.unsqueeze(-1)).view(-1, H * C)";
    }
    default: break;
  }
  return "";
}

std::vector<RecordedCall> record_eager_op(const Op& op) {
  const Operands o = operands(op);
  std::vector<RecordedCall> calls;
  {
    Recorder recorder(calls);
    (void)run_eager(op, o);
  }
  return calls;
}

}  // namespace tilesim::kernels::torch_peer

namespace tilesim::kernels::torch_peer {

bool has_eager_backward(const Op& op) {
  switch (op.kind) {
    case OpKind::gather:
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::matmul: return true;
    case OpKind::unary:
      return op.unary == UnaryFn::relu || op.unary == UnaryFn::leaky_relu || op.unary == UnaryFn::shifted_softplus ||
             op.unary == UnaryFn::exp || op.unary == UnaryFn::scale || op.unary == UnaryFn::softplus ||
             op.unary == UnaryFn::sigmoid || op.unary == UnaryFn::sqrt || op.unary == UnaryFn::log ||
             op.unary == UnaryFn::clamp_min;
    case OpKind::binary: return op.binary != BinaryFn::equal;
    default: return false;
  }
}

std::vector<RecordedCall> record_eager_backward(const Op& op) {
  if (!has_eager_backward(op))
    throw std::invalid_argument("op '" + op.name + "': no backward recorded for " + to_string(op.kind) +
                                " (no gradient flows through it in the lowered layers)");
  Operands o = operands(op);
  // Every float operand requires grad, as inside a network: the input (an earlier layer's output) and
  // the parameters or activations it is combined with.
  for (at::Tensor* t : {&o.input, &o.weight, &o.bias})
    if (t->defined() && t->is_floating_point()) t->requires_grad_(true);
  const at::Tensor out = run_eager(op, o);
  const at::Tensor grad = at::ones_like(out);
  std::vector<RecordedCall> calls;
  {
    Recorder recorder(calls, /*with_autograd_nodes=*/true);
    out.backward(grad);
  }
  return calls;
}

}  // namespace tilesim::kernels::torch_peer
