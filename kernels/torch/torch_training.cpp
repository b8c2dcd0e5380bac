// The torch-cpu peer's training step through libtorch's autograd and torch::optim (torch_training.hpp).
#include "kernels/torch/torch_training.hpp"

#include <ATen/ATen.h>
#include <c10/util/string_utils.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "ir/op_operands.hpp"
#include "kernels/cpu/timing.hpp"
#include "kernels/torch/autograd_ops.hpp"
#include "kernels/torch/training_checks.hpp"
#include "kernels/torch/training_graph.hpp"

namespace tilesim::kernels::torch_peer {
namespace {

const std::string kWho = "torch-cpu backend";

// A tensor's values as float32 (a half tensor's widened: exact).
std::vector<float> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kFloat).contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

at::ScalarType training_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::float16: return at::kHalf;
    case DType::bfloat16: return at::kBFloat16;
    default: return at::kFloat;
  }
}

// The key torch::optim keeps a parameter's state under (its TensorImpl's address, as Optimizer does).
std::string state_key(const at::Tensor& p) { return c10::guts::to_string(p.unsafeGetTensorImpl()); }

// Runs `call` for `op`, turning an ATen failure into an error that names the op: a kernel libtorch lacks
// for a half dtype (libtorch 1.13 has no float16 CPU mm) is the request's limit, as on the forward path
// (torch_ops.hpp, UnsupportedByPeer), said as bad input; anything else is an internal error.
template <class F>
auto naming(const Op& op, DType model_dtype, F&& call) {
  try {
    return call();
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    if (is_half_dtype(model_dtype) && what.find("not implemented for") != std::string::npos)
      throw InputError("backend torch-cpu: op '" + op.name + "' (" + to_string(op.kind) + ", a " + to_string(model_dtype) +
                       " training step): libtorch " + TORCH_VERSION + " has no " + to_string(model_dtype) + " CPU kernel for it (ATen: " +
                       what.substr(0, what.find('\n')) + "); run it on the other backends, or in another dtype");
    throw std::runtime_error(kWho + ": op '" + op.name + "': " + what);
  }
}

class TrainingStep {
 public:
  TrainingStep(const OpGraph& graph, const TrainingStepPlan& plan, const TensorValues& inputs)
      : graph_(graph), plan_(plan), inputs_(inputs) {
    std::vector<torch::optim::OptimizerParamGroup> adam_groups, sgd_groups;
    for (const TrainedParameter& p : plan.parameters) {
      const Op& step = graph.ops[p.step_op];
      // An owned copy: the optimizer updates it in place, and each repeat starts again from the input.
      at::Tensor leaf = wrap(step, p.param).clone();
      leaf.set_requires_grad(true);
      values_[p.param] = leaf;
      params_.push_back(leaf);
      const OptimizerSpec& o = step.optimizer;
      if (o.kind == OptimizerSpec::Kind::adam) {
        auto options = std::make_unique<torch::optim::AdamOptions>(o.lr);
        options->betas(std::make_tuple(o.beta1, o.beta2)).eps(o.eps).weight_decay(o.weight_decay);
        adam_groups.emplace_back(std::vector<at::Tensor>{leaf}, std::move(options));
      } else {
        auto options = std::make_unique<torch::optim::SGDOptions>(o.lr);
        options->momentum(o.momentum).weight_decay(o.weight_decay);
        sgd_groups.emplace_back(std::vector<at::Tensor>{leaf}, std::move(options));
      }
    }
    // One optimizer per kind, a parameter group per update op (each with its own op's settings).
    if (!adam_groups.empty()) adam_ = std::make_unique<torch::optim::Adam>(std::move(adam_groups));
    if (!sgd_groups.empty()) sgd_ = std::make_unique<torch::optim::SGD>(std::move(sgd_groups), torch::optim::SGDOptions(0));
  }

  std::string optimizer_name() const {
    return std::string("torch::optim::") + (adam_ && sgd_ ? "Adam + SGD" : adam_ ? "Adam" : "SGD");
  }

  // The parameters and optimizer state back to the step's inputs, gradients cleared (set to None, as
  // zero_grad(set_to_none=True) leaves them). Not timed.
  void restore() {
    at::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const TrainedParameter& p = plan_.parameters[i];
      const Op& step = graph_.ops[p.step_op];
      params_[i].copy_(wrap(step, p.param));
      params_[i].mutable_grad() = at::Tensor();
      const at::Tensor& leaf = params_[i];
      auto row = [&](std::int64_t r) { return wrap(step, p.state).select(0, r).reshape(leaf.sizes()).clone(); };
      if (step.optimizer.kind == OptimizerSpec::Kind::adam) {
        // torch's Adam counts the step before updating: the state after t - 1 steps gives step t.
        const double t = inputs_.f32(step.step_number()).at(0);
        if (!(t >= 1) || t != std::floor(t))
          throw std::invalid_argument(kWho + ": op '" + step.name + "': Adam's step number " + std::to_string(t) +
                                      " is not a whole number >= 1");
        auto state = std::make_unique<torch::optim::AdamParamState>();
        state->step(static_cast<std::int64_t>(t) - 1);
        state->exp_avg(row(0));
        state->exp_avg_sq(row(1));
        adam_->state()[state_key(leaf)] = std::move(state);
      } else if (step.optimizer.momentum != 0) {
        // Zeros before the first step: mu * 0 + g equals the clone of g torch makes when it has no buffer.
        auto state = std::make_unique<torch::optim::SGDParamState>();
        state->momentum_buffer(row(0));
        sgd_->state()[state_key(leaf)] = std::move(state);
      }
    }
  }

  void forward() {
    for (std::size_t k : plan_.forward_ops) {
      const Op& op = graph_.ops[k];
      values_[op.output] = naming(op, plan_.model_dtype, [&] { return record_op(op, operands(op)); });
    }
  }

  // A half model's predictions cast to float32 first (autocast's float32 loss), then the loss.
  void loss() {
    for (std::size_t k : plan_.loss_input_ops) {
      const Op& op = graph_.ops[k];
      values_[op.output] = naming(op, plan_.model_dtype, [&] { return record_op(op, operands(op)); });
    }
    const Op& op = graph_.ops[plan_.loss_op];
    loss_ = naming(op, plan_.model_dtype, [&] { return record_loss(op, operands(op)); });
  }

  // With a loss scale, torch.amp's scaler.scale(loss).backward(): the float32 loss times the scale.
  void backward() {
    naming(graph_.ops[plan_.loss_op], plan_.model_dtype, [&] {
      if (plan_.loss_scale != 1.0) loss_.mul(plan_.loss_scale).backward();
      else loss_.backward();
      return 0;
    });
  }

  // The gradients unscaled (GradScaler's unscale_: each float32 master gradient times 1 / scale, in
  // place; exact for a power of two), the gradient ops on them, then the updates.
  void optimizer() {
    at::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      if (plan_.loss_scale != 1.0) params_[i].mutable_grad().mul_(1.0 / plan_.loss_scale);
      values_[plan_.parameters[i].grad] = gradient(i);
    }
    for (std::size_t k : plan_.gradient_ops) {
      const Op& op = graph_.ops[k];
      values_[op.output] = naming(op, plan_.model_dtype, [&] { return record_op(op, operands(op)); });
    }
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const Op& step = graph_.ops[plan_.parameters[i].step_op];
      params_[i].mutable_grad() = values_.at(optimizer_step_operands(step).grad).reshape(params_[i].sizes());
    }
    if (adam_) adam_->step();
    if (sgd_) sgd_->step();
  }

  // After backward: the forward outputs, the loss's cast input and the loss, and autograd's gradients
  // (unscaled, as the update will read them), each in its graph tensor's dtype.
  void capture_activations(TensorValues& out) const {
    auto keep = [&](TensorId id, const at::Tensor& t) { out.set_f32(id, to_vector(t), graph_.tensor(id).dtype); };
    for (std::size_t k : plan_.forward_ops) keep(graph_.ops[k].output, values_.at(graph_.ops[k].output));
    for (std::size_t k : plan_.loss_input_ops) keep(graph_.ops[k].output, values_.at(graph_.ops[k].output));
    keep(graph_.ops[plan_.loss_op].output, loss_);
    for (std::size_t i = 0; i < params_.size(); ++i)
      keep(plan_.parameters[i].grad, plan_.loss_scale != 1.0 ? gradient(i).mul(1.0 / plan_.loss_scale) : gradient(i));
  }

  // After the update: the gradient ops' outputs and each update [1 + S, P]: the parameter, then its state.
  void capture_updates(TensorValues& out) {
    for (std::size_t k : plan_.gradient_ops)
      out.set_f32(graph_.ops[k].output, to_vector(values_.at(graph_.ops[k].output)), graph_.ops[k].dtype);
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const Op& step = graph_.ops[plan_.parameters[i].step_op];
      std::vector<float> update = to_vector(params_[i]);
      auto append = [&](const at::Tensor& t) {
        const std::vector<float> v = to_vector(t);
        update.insert(update.end(), v.begin(), v.end());
      };
      const std::string key = state_key(params_[i]);
      if (step.optimizer.kind == OptimizerSpec::Kind::adam) {
        const auto& s = static_cast<const torch::optim::AdamParamState&>(*adam_->state().at(key));
        append(s.exp_avg());
        append(s.exp_avg_sq());
      } else if (step.optimizer.momentum != 0) {
        append(static_cast<const torch::optim::SGDParamState&>(*sgd_->state().at(key)).momentum_buffer());
      }
      out.set_f32(step.output, std::move(update), step.dtype);
    }
  }

 private:
  // A graph input as a tensor of its graph shape, wrapped without a copy (int32 indices and labels
  // become an int64 copy, once, as PyG's edge_index and targets are int64).
  at::Tensor wrap(const Op& op, TensorId id) {
    auto it = wrapped_.find(id);
    if (it != wrapped_.end()) return it->second;
    const TensorInfo& info = graph_.tensor(id);
    if (!inputs_.has(id))
      throw std::invalid_argument(kWho + ": op '" + op.name + "': no values for its operand '" + info.name + "'");
    at::Tensor t;
    if (info.dtype == DType::int32) {
      const auto& v = inputs_.i32(id);
      if (static_cast<std::int64_t>(v.size()) != info.elements()) mismatch(op, info, v.size());
      t = at::from_blob(const_cast<std::int32_t*>(v.data()), info.shape, at::TensorOptions().dtype(at::kInt)).to(at::kLong);
    } else {
      const auto& v = inputs_.f32(id);
      if (static_cast<std::int64_t>(v.size()) != info.elements()) mismatch(op, info, v.size());
      t = at::from_blob(const_cast<float*>(v.data()), info.shape, at::TensorOptions().dtype(at::kFloat));
      // A half model's inputs (node features, edge weights) as the half tensors it holds: an owned copy,
      // made once (exact: the values are the dtype's).
      if (info.dtype != DType::float32) t = t.to(training_scalar_type(info.dtype));
    }
    return wrapped_[id] = t;
  }

  [[noreturn]] static void mismatch(const Op& op, const TensorInfo& info, std::size_t found) {
    throw std::invalid_argument(kWho + ": op '" + op.name + "': its operand '" + info.name + "' has " + std::to_string(found) +
                                " values, expected " + std::to_string(info.elements()));
  }

  at::Tensor tensor(const Op& op, TensorId id) {
    if (id < 0) return at::Tensor();
    auto it = values_.find(id);
    return it != values_.end() ? it->second : wrap(op, id);
  }

  OperandTensors operands(const Op& op) {
    // The aux operand is the loss's row weights; an update's step number is read on the host (restore()).
    return {tensor(op, op.input), tensor(op, op.indices), tensor(op, op.weight), tensor(op, op.bias),
            op.kind == OpKind::loss ? tensor(op, op.loss_row_weights()) : at::Tensor()};
  }

  at::Tensor gradient(std::size_t i) const {
    const at::Tensor& g = params_[i].grad();
    if (!g.defined())
      throw std::invalid_argument(kWho + ": op '" + graph_.ops[plan_.parameters[i].step_op].name +
                                  "': autograd gave its parameter no gradient (it does not reach the loss through recorded ops)");
    return g;
  }

  const OpGraph& graph_;
  const TrainingStepPlan& plan_;
  const TensorValues& inputs_;
  std::map<TensorId, at::Tensor> wrapped_;  // graph inputs, wrapped once
  std::map<TensorId, at::Tensor> values_;   // the parameters, this repeat's forward outputs and gradients
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::Adam> adam_;
  std::unique_ptr<torch::optim::SGD> sgd_;
  at::Tensor loss_;
};

// A row standing for a whole phase: its time, the FLOPs and minimum bytes of the graph's ops of that
// phase (what the same work costs in the graph's terms; autograd's own kernels differ in detail) and
// its check.
OpResult phase_row(const std::string& name, OpPhase phase, const OpGraph& graph, const cpu::TimingStats& stats, const PhaseCheck& check) {
  OpResult row;
  row.op = name;
  row.phase = phase;
  for (const Op& op : graph.ops)
    if (op.phase == phase) {
      row.flops += op.flops();
      row.min_bytes += op.min_bytes();
    }
  row.time_s = stats.median_s;
  row.bytes_by_level = {{"dram_min_bytes", row.min_bytes}};
  row.timing = stats.to_json();
  if (check.checked) row.verified = check.ok;
  row.verification = check.detail;
  return row;
}

}  // namespace

void run_training_step(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options, BackendResult& result,
                       TensorValues& outputs, const reference::Accumulation& accumulation) {
  if (options.warmup < 0 || options.repeats < 1)
    throw std::invalid_argument(kWho + ": warm-up must be >= 0 and repeats >= 1");
  // Every dtype: a half model's step in mixed precision (float32 master weights and loss, its forward
  // and autograd's backward in the half dtype, the loss scaled) as torch.amp runs one.
  const TrainingStepPlan plan = plan_training_step(graph, kWho);
  TrainingStep step(graph, plan, inputs);
  outputs = TensorValues{};

  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  std::vector<double> forward_s, loss_s, backward_s, optimizer_s;
  const int calls = options.warmup + options.repeats;
  for (int call = 0; call < calls; ++call) {
    step.restore();
    const auto t0 = Clock::now();
    step.forward();
    const auto t1 = Clock::now();
    step.loss();
    const auto t2 = Clock::now();
    step.backward();
    const auto t3 = Clock::now();
    if (call + 1 == calls) step.capture_activations(outputs);  // before the update, outside the timed phases
    const auto t4 = Clock::now();
    step.optimizer();
    const auto t5 = Clock::now();
    if (call < options.warmup) continue;
    forward_s.push_back(seconds(t0, t1));
    loss_s.push_back(seconds(t1, t2));
    backward_s.push_back(seconds(t2, t3));
    optimizer_s.push_back(seconds(t4, t5));
  }
  step.capture_updates(outputs);

  std::vector<std::size_t> optimizer_ops = plan.gradient_ops;
  for (const TrainedParameter& p : plan.parameters) optimizer_ops.push_back(p.step_op);
  std::sort(optimizer_ops.begin(), optimizer_ops.end());
  const Op& loss_op = graph.ops[plan.loss_op];
  std::vector<std::size_t> loss_ops = plan.loss_input_ops;
  loss_ops.push_back(plan.loss_op);
  const std::vector<OpResult> rows = {
      phase_row("torch.forward", OpPhase::forward, graph, cpu::summarise(forward_s, options.warmup),
                check_ops(graph, plan.forward_ops, inputs, outputs, "forward ops", accumulation)),
      phase_row("torch.loss (" + to_string(loss_op.loss) + ")", OpPhase::loss, graph, cpu::summarise(loss_s, options.warmup),
                check_ops(graph, loss_ops, inputs, outputs, plan.loss_input_ops.empty() ? "loss op" : "loss ops (the input's cast, the loss)", accumulation)),
      phase_row("torch.backward (autograd)", OpPhase::backward, graph, cpu::summarise(backward_s, options.warmup),
                check_gradients(graph, plan, inputs, outputs, accumulation)),
      phase_row("torch.optimizer (" + step.optimizer_name() + ")", OpPhase::optimizer, graph,
                cpu::summarise(optimizer_s, options.warmup),
                check_ops(graph, optimizer_ops, inputs, outputs, "optimizer-phase ops (torch's updates given its own gradients)", accumulation))};
  for (const OpResult& row : rows) {
    result.time_s += row.time_s;
    result.ops.push_back(row);
  }
}

}  // namespace tilesim::kernels::torch_peer
