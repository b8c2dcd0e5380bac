#include "kernels/torch/training_graph.hpp"

#include <map>
#include <stdexcept>

#include "ir/op_operands.hpp"

namespace tilesim::kernels::torch_peer {
namespace {

[[noreturn]] void refuse(const std::string& who, const Op& op, const std::string& what) {
  throw std::invalid_argument(who + ": op '" + op.name + "': " + what);
}

// The forward kinds the peer records through autograd (autograd_ops.cpp).
bool recordable(const Op& op) {
  switch (op.kind) {
    case OpKind::gather:
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max:
    case OpKind::degree_count:
    case OpKind::unary:
    case OpKind::binary:
    case OpKind::cast: return true;
    case OpKind::matmul:
    case OpKind::segment_matmul: return !op.transpose_input && !op.transpose_weight;
    default: return false;
  }
}

}  // namespace

bool is_training_graph(const OpGraph& graph) {
  for (const Op& op : graph.ops)
    if (is_training_kind(op.kind)) return true;
  return false;
}

TrainingStepPlan plan_training_step(const OpGraph& graph, const std::string& who) {
  TrainingStepPlan plan;
  std::map<TensorId, std::size_t> producer;  // output tensor -> the op writing it
  bool has_loss = false;
  for (std::size_t k = 0; k < graph.ops.size(); ++k) {
    const Op& op = graph.ops[k];
    producer[op.output] = k;
    if (op.kind == OpKind::loss) {
      if (has_loss) refuse(who, op, "a second loss op; a training step has one");
      plan.loss_op = k;
      has_loss = true;
    } else if (op.kind == OpKind::loss_grad || op.phase == OpPhase::backward) {
      plan.replaced_ops.push_back(k);
    } else if (op.phase == OpPhase::loss && op.kind == OpKind::cast) {
      // Before the loss: the predictions' cast to float32, recorded. After it: the loss gradient's
      // scaled cast to the model dtype, which autograd's backward of loss * scale stands for.
      if (!has_loss) {
        plan.loss_input_ops.push_back(k);
        plan.model_dtype = op.input_dtype;
      } else {
        auto it = producer.find(op.input);
        if (it == producer.end() || graph.ops[it->second].kind != OpKind::loss_grad)
          refuse(who, op, "a cast after the loss that does not read the loss gradient");
        plan.loss_scale = op.cast_scale();
        plan.replaced_ops.push_back(k);
      }
    } else if (op.kind == OpKind::optimizer_step) {
      const OptimizerStepOperands operands = optimizer_step_operands(op);
      TrainedParameter p;
      p.step_op = k;
      p.param = operands.param;
      p.state = operands.state;
      if (producer.count(operands.param) != 0)
        refuse(who, op, "its parameter is computed by another op, not a graph input autograd can treat as a leaf");
      if (op.optimizer.kind == OptimizerSpec::Kind::adam && operands.step_number < 0) refuse(who, op, "Adam without its step-number tensor");
      if (op.optimizer.state_rows() > 0 && operands.state < 0) refuse(who, op, "its optimizer keeps state, but the op reads none");
      plan.parameters.push_back(p);
    } else if (op.phase == OpPhase::optimizer) {
      plan.gradient_ops.push_back(k);
    } else if (op.phase == OpPhase::forward) {
      if (!recordable(op))
        refuse(who, op, to_string(op.kind) + (op.kind == OpKind::matmul || op.kind == OpKind::segment_matmul ? " (transposed)" : "") +
                            " in the forward pass, which the peer does not record through autograd");
      plan.forward_ops.push_back(k);
    } else {
      refuse(who, op, "a " + to_string(op.kind) + " op in phase " + to_string(op.phase) + ", which a training step does not hold");
    }
  }
  if (!has_loss) throw std::invalid_argument(who + ": a training step without a loss op");
  // Autograd differentiates the loss as recorded, with its row weights: a loss_grad weighing the rows
  // otherwise would not be the gradient the peer's autograd stands for.
  const Op& loss = graph.ops[plan.loss_op];
  for (std::size_t k : plan.replaced_ops) {
    const Op& op = graph.ops[k];
    if (op.kind == OpKind::loss_grad && op.loss_row_weights() != loss.loss_row_weights())
      refuse(who, op, "its row weights differ from those of the loss op '" + loss.name + "', whose gradient autograd computes");
  }

  // Each update's gradient operand, traced back through the gradient ops (which read one gradient and
  // otherwise graph inputs, such as the block mask) to the tensor the backward pass produced.
  auto is_replaced = [&](TensorId t) {
    auto it = producer.find(t);
    return it != producer.end() && (graph.ops[it->second].phase == OpPhase::backward || graph.ops[it->second].kind == OpKind::loss_grad);
  };
  for (TrainedParameter& p : plan.parameters) {
    TensorId t = optimizer_step_operands(graph.ops[p.step_op]).grad;
    while (!is_replaced(t)) {
      auto it = producer.find(t);
      if (it == producer.end()) refuse(who, graph.ops[p.step_op], "its gradient is a graph input, not the backward pass's output");
      const Op& g = graph.ops[it->second];
      if (g.kind == OpKind::optimizer_step || g.phase != OpPhase::optimizer)
        refuse(who, g, "an op between a gradient and its update that is not a gradient op of the optimizer phase");
      TensorId next = -1;
      int produced_operands = 0;
      for (TensorId operand : {g.input, g.weight, g.bias})
        if (operand >= 0 && producer.count(operand) != 0) {
          next = operand;
          ++produced_operands;
        }
      if (produced_operands != 1) refuse(who, g, "a gradient op must read exactly one gradient (and otherwise graph inputs)");
      t = next;
    }
    p.grad = t;
  }
  return plan;
}

}  // namespace tilesim::kernels::torch_peer
