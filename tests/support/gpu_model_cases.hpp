#pragma once
// What the tests of the analytic GPU model (tests/models/gpu/) share: their scratch folder and the
// tilesim command run in it, a machine with round figures for hand-computed times, and one op of a kind
// (forward, or of a training step) over fresh graph-input tensors, built through OpGraph::add_op.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ir/op_graph.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/test_support.hpp"

namespace tilesim_test::gpu_cases {

using namespace tilesim;
using namespace tilesim::gpu;
namespace fs = std::filesystem;

inline fs::path gpu_dir() {
  static const fs::path dir = tilesim_test::scratch("gpu_test");
  return dir;
}

inline CliResult tilesim_cli(const std::string& args) { return tilesim_test::run_tilesim(args, gpu_dir()); }

// A machine with round calibration figures, so expected times can be worked out by hand.
inline GpuMachine round_machine() {
  GpuMachine m = load_gpu_machine("a100-40gb");
  m.sm_count = 100;
  m.sm_clock_hz = 1e9;            // 1e11 SM cycles per second
  m.max_threads_per_sm = 2000;    // 200,000 resident threads
  m.hbm_bytes_per_s = 2e12;
  m.l2_bytes = 40'000'000;
  m.l2_bytes_per_s = 8e12;
  m.fp32_flops_per_s = 2e13;
  m.index_bytes = 8;
  m.same_address_atomic_add_s = 1e-8;
  auto& c = m.calibration;
  c.host_gather_s = 9e-6;
  c.host_scatter_add_s = 25e-6;
  c.host_scatter_max_min_s = 44e-6;
  c.host_zero_fill_s = 9e-6;
  c.launch_latency_s = 2e-6;
  c.dram_efficiency = 0.5;    // 1e12 B/s achieved
  c.l2_efficiency = 0.25;     // 2e12 B/s achieved
  c.gather_elements_per_sm_cycle = 1.0;      // 1e11 elements/s
  c.atomic_add_elements_per_sm_cycle = 2.0;  // 2e11 /s
  c.atomic_cas_elements_per_sm_cycle = 0.5;  // 5e10 /s
  c.contended_cas_retries_per_sm_cycle = 4;  // 4e11 /s
  m.pcie_bytes_per_s = 1e10;
  m.gemm.efficiency = 0.5;  // a tile runs at 2e13 / 100 SMs x 0.5 = 1e11 FLOP/s on its SM
  m.gemm.cublas_tile_rows = 128;
  m.gemm.cublas_tile_cols = 64;
  m.gemm.grouped_tile_rows = 128;
  m.gemm.grouped_tile_cols = 64;
  m.gemm.split_k_min_depth = 256;
  m.eager.aten_call_s = 5e-6;
  m.eager.segment_matmul_call_s = 30e-6;
  m.eager.segment_matmul_per_segment_s = 1e-6;
  m.eager.optimizer_step_call_s = 100e-6;
  m.eager.optimizer_per_parameter_s = 10e-6;
  m.eager.autograd_backward_node_s = 7e-6;
  // PyTorch 2.x's torch.optim defaults: foreach updates, zero_grad(set_to_none=True). The shipped files
  // describe 1.x stacks; the per-parameter loop has its own test.
  m.framework.optimizer = GpuMachine::Framework::Optimizer::foreach;
  m.framework.zero_grad_fills = false;
  return m;
}

inline OpShape shape(std::int64_t ni, std::int64_t nf, std::int64_t no) { return OpShape{ni, nf, no}; }

inline double time_of(GpuOp op, const OpShape& s, const GpuMachine& m, GpuMode mode) {
  return predict(op, s, DType::float32, m, mode).time_s;
}

// ---- Ops of the kinds beyond the calibrated gather/scatter (predict_op).

// One op of `kind` over fresh graph-input tensors, built through OpGraph::add_op so its shapes are
// those the workloads produce.
struct OneOp {
  OpGraph graph;
  const Op& op() const { return graph.ops.back(); }
};

inline OneOp make_op(OpKind kind, OpShape s, bool bias = false, UnaryFn fn = UnaryFn::relu) {
  OneOp g;
  Op op;
  op.name = "op";
  op.kind = kind;
  op.shape = s;
  op.unary = fn;
  const auto f32 = [&](std::vector<std::int64_t> shape) { return g.graph.add_tensor({"t", shape, DType::float32}); };
  const auto i32 = [&](std::vector<std::int64_t> shape) { return g.graph.add_tensor({"i", shape, DType::int32}); };
  switch (kind) {
    case OpKind::gather: op.input = f32({s.num_inputs, s.num_features}); op.indices = i32({s.num_outputs}); break;
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max: op.input = f32({s.num_inputs, s.num_features}); op.indices = i32({s.num_inputs}); break;
    case OpKind::degree_count: op.indices = i32({s.num_inputs}); break;
    case OpKind::matmul:
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.num_features, s.out_features});
      if (bias) op.bias = f32({s.out_features});
      break;
    case OpKind::segment_matmul:
      op.input = f32({s.num_inputs, s.num_features});
      op.indices = i32({s.num_segments + 1});
      op.weight = f32({s.num_segments, s.num_features, s.out_features});
      break;
    case OpKind::unary: op.input = f32({s.num_inputs, s.num_features}); break;
    case OpKind::binary:
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.other_rows, s.other_groups});
      break;
    default: FAIL("no GPU model case for " << to_string(kind));
  }
  g.graph.add_op(op);
  return g;
}

inline OpShape dense(std::int64_t rows, std::int64_t features, std::int64_t out_features = 0, std::int64_t segments = 0) {
  OpShape s;
  s.num_inputs = rows;
  s.num_features = features;
  s.out_features = out_features;
  s.num_segments = segments;
  return s;
}

// ---- Ops of the kinds of a training step.

// A training-step op over fresh graph-input tensors: `op` gives the kind, shape and settings
// (transposes, function, loss, optimizer); its operands are made here.
inline OneOp make_training_op(Op op) {
  OneOp g;
  if (op.name.empty()) op.name = "op";
  const auto f32 = [&](std::vector<std::int64_t> shape) { return g.graph.add_tensor({"t", shape, DType::float32}); };
  const OpShape& s = op.shape;
  switch (op.kind) {
    case OpKind::matmul:
      op.input = op.transpose_input ? f32({s.num_features, s.num_inputs}) : f32({s.num_inputs, s.num_features});
      op.weight = op.transpose_weight ? f32({s.out_features, s.num_features}) : f32({s.num_features, s.out_features});
      break;
    case OpKind::segment_matmul:  // the backward forms (ir/op_graph.hpp)
      op.input = f32({s.num_inputs, s.num_features});
      op.indices = g.graph.add_tensor({"offsets", {s.num_segments + 1}, DType::int32});
      op.weight = op.transpose_input ? f32({s.num_inputs, s.out_features}) : f32({s.num_segments, s.out_features, s.num_features});
      op.phase = OpPhase::backward;
      break;
    case OpKind::unary_grad:
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.num_inputs, s.num_features});
      op.phase = OpPhase::backward;
      break;
    case OpKind::sum_to:
      op.input = f32({s.num_inputs, s.num_features});
      op.phase = OpPhase::backward;
      break;
    case OpKind::loss:
    case OpKind::loss_grad:
      op.input = f32({s.num_inputs, s.num_features});
      if (op.loss == LossFn::cross_entropy)
        op.indices = g.graph.add_tensor({"labels", {s.num_inputs}, DType::int32});
      else
        op.weight = f32({s.num_inputs, s.num_features});
      if (op.aux >= 0) op.aux = f32({s.num_inputs});  // row weights, asked for by any aux >= 0
      op.phase = OpPhase::loss;
      break;
    case OpKind::optimizer_step: {
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.num_inputs, s.num_features});
      if (op.optimizer.state_rows() > 0) op.bias = f32({op.optimizer.state_rows(), s.num_inputs * s.num_features});
      if (op.optimizer.kind == OptimizerSpec::Kind::adam) op.aux = f32({1, 1});
      op.phase = OpPhase::optimizer;
      break;
    }
    default: FAIL("not a training-step kind: " << to_string(op.kind));
  }
  g.graph.add_op(op);
  return g;
}

inline Op training_op(OpKind kind, std::int64_t rows, std::int64_t features) {
  Op op;
  op.kind = kind;
  op.shape.num_inputs = rows;
  op.shape.num_features = features;
  return op;
}

inline Op transposed_matmul(std::int64_t m, std::int64_t k, std::int64_t n, bool transpose_input) {
  Op op = training_op(OpKind::matmul, m, k);
  op.shape.out_features = n;
  op.transpose_input = transpose_input;
  op.transpose_weight = !transpose_input;
  op.phase = OpPhase::backward;
  return op;
}

inline Op unary_grad_op(UnaryFn fn, std::int64_t rows, std::int64_t features) {
  Op op = training_op(OpKind::unary_grad, rows, features);
  op.unary = fn;
  return op;
}

inline Op sum_to_op(std::int64_t rows, std::int64_t features, std::int64_t other_rows, std::int64_t other_groups) {
  Op op = training_op(OpKind::sum_to, rows, features);
  op.shape.other_rows = other_rows;
  op.shape.other_groups = other_groups;
  return op;
}

inline Op loss_op(OpKind kind, LossFn fn, std::int64_t rows, std::int64_t classes, bool weighted = false) {
  Op op = training_op(kind, rows, classes);
  op.loss = fn;
  if (weighted) op.aux = 0;  // make_training_op adds the row weights' tensor
  return op;
}

inline OptimizerSpec adam(double weight_decay) {
  OptimizerSpec o;
  o.kind = OptimizerSpec::Kind::adam;
  o.weight_decay = weight_decay;
  return o;
}

inline OptimizerSpec sgd(double momentum, double weight_decay) {
  OptimizerSpec o;
  o.momentum = momentum;
  o.weight_decay = weight_decay;
  return o;
}

inline Op step_op(const OptimizerSpec& o, std::int64_t rows, std::int64_t features) {
  Op op = training_op(OpKind::optimizer_step, rows, features);
  op.optimizer = o;
  return op;
}

}  // namespace tilesim_test::gpu_cases
