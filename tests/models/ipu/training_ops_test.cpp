// The simulated IPU on the op kinds a training step adds: transposed matmuls, unary_grad,
// optimizer_step, sum_to, loss and loss_grad. Each runs functionally on small and odd shapes and its
// output must pass the reference's verification and equal the CPU kernels' within the reference's
// bound; cycles must be positive and grow with the work; the planner's estimate must track the
// simulated cycles and bound the program's memory; timing-only runs give the functional cycles.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "common/integer_math.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/planning/training_plan.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/tensor_io.hpp"
#include "tests/support/ipu_test_support.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using tilesim_test::bow;
using tilesim_test::uniform_indices;

namespace {

using Problem = tilesim_test::GraphProblem;

Op training_op(OpKind kind, OpShape shape) {
  Op op;
  op.name = "op";
  op.kind = kind;
  op.shape = shape;
  op.phase = OpPhase::backward;
  return op;
}

struct TrainingRan {
  BackendResult result;
  std::vector<float> out;
};

// Runs the problem's op on the simulated IPU and the CPU kernels: the IPU's output must pass the
// reference's check and equal the CPU's within the reference's bound, and a timing-only run must give
// the same cycles.
TrainingRan run_and_compare(const Problem& p) {
  IpuBackend ipu(bow(), "ipu:bow");
  kernels::cpu::CpuBackend cpu;
  RunOptions quick;
  quick.warmup = 0;
  quick.repeats = 1;
  TrainingRan r;
  r.result = ipu.run(p.graph, p.values, quick);
  REQUIRE(r.result.ops.size() == 1);
  INFO(r.result.ops[0].verification);
  CHECK(r.result.ops[0].verified == true);
  r.out = ipu.outputs().f32(p.op().output);
  CHECK(reference::verify(p.op(), p.values, r.out).ok);
  cpu.run(p.graph, p.values, quick);
  const auto agreement = reference::compare_outputs(p.op(), p.values, r.out, cpu.outputs().f32(p.op().output));
  INFO(agreement.detail);
  CHECK(agreement.equal);
  RunOptions timing = quick;
  timing.timing_only = true;
  CHECK(*ipu.run(p.graph, p.values, timing).ops[0].cycles == *r.result.ops[0].cycles);
  CHECK(*r.result.ops[0].cycles > 0);
  return r;
}

// The planner's estimate against the engine: cycles within `tolerance` of the simulated ones, and the
// plan's peak tile bytes at least what the program puts on its busiest tile.
void check_plan_tracks_program(const Problem& p, sim::Cycles simulated, double tolerance = 0.2) {
  const OpPlan plan = plan_op(p.op(), p.op().indices >= 0 ? p.values.i32(p.op().indices) : std::vector<std::int32_t>{}, bow());
  INFO(to_string(p.op().kind) << " " << plan.to_json().dump());
  CHECK(std::abs(static_cast<double>(plan.estimated_cycles) - static_cast<double>(simulated)) <=
        tolerance * static_cast<double>(simulated));
  const OpProgram program = build_op_program(p.op(), plan, p.op().indices >= 0 ? p.values.i32(p.op().indices) : std::vector<std::int32_t>{}, bow());
  const auto bytes = program.program.bytes_per_tile(bow().chip.num_tiles);
  CHECK(*std::max_element(bytes.begin(), bytes.end()) <= plan.estimated_peak_tile_bytes);
}

Problem matmul_problem(std::int64_t M, std::int64_t K, std::int64_t N, bool transpose_input, bool transpose_weight) {
  Problem p;
  Op op = training_op(OpKind::matmul, {M, K, 0, N});
  op.transpose_input = transpose_input;
  op.transpose_weight = transpose_weight;
  op.input = transpose_input ? p.add_input("x", {K, M}, 1) : p.add_input("x", {M, K}, 1);
  op.weight = transpose_weight ? p.add_input("w", {N, K}, 2) : p.add_input("w", {K, N}, 2);
  p.graph.add_op(op);
  return p;
}

Problem unary_grad_problem(UnaryFn fn, std::int64_t rows, std::int64_t cols) {
  Problem p;
  Op op = training_op(OpKind::unary_grad, {rows, cols});
  op.input = p.add_input("x", {rows, cols}, 11);
  op.weight = p.add_input("grad", {rows, cols}, 12);
  auto& x = p.values.mutable_f32(op.input);
  if (fn == UnaryFn::cosine_cutoff || fn == UnaryFn::rsqrt_or_zero)
    for (auto& v : x) v = std::abs(v) * 4.0f;  // distances and degrees, some beyond the cutoff
  x[0] = 0.0f;  // the kinks and masked points
  op.unary = fn;
  op.scalar = fn == UnaryFn::cosine_cutoff ? 6.0f : fn == UnaryFn::leaky_relu ? 0.2f : 1.5f;
  p.graph.add_op(op);
  return p;
}

Problem optimizer_problem(OptimizerSpec spec, std::int64_t rows, std::int64_t cols) {
  Problem p;
  Op op = training_op(OpKind::optimizer_step, {rows, cols});
  op.phase = OpPhase::optimizer;
  op.optimizer = spec;
  op.input = p.add_input("param", {rows, cols}, 21);
  op.weight = p.add_input("grad", {rows, cols}, 22);
  if (spec.state_rows() > 0) {
    op.bias = p.add_input("state", {spec.state_rows(), rows * cols}, 23);
    // Adam's second moment is a running mean of squares: never negative.
    if (spec.kind == OptimizerSpec::Kind::adam) {
      auto& s = p.values.mutable_f32(op.bias);
      for (std::size_t i = static_cast<std::size_t>(rows * cols); i < s.size(); ++i) s[i] = s[i] * s[i];
    }
  }
  if (spec.kind == OptimizerSpec::Kind::adam) {
    op.aux = p.graph.add_tensor({"step", {1, 1}, DType::float32});
    p.values.set_f32(op.aux, {3.0f});
  }
  p.graph.add_op(op);
  return p;
}

Problem sum_to_problem(std::int64_t rows, std::int64_t cols, std::int64_t other_rows, std::int64_t groups) {
  Problem p;
  Op op = training_op(OpKind::sum_to, {rows, cols});
  op.shape.other_rows = other_rows;
  op.shape.other_groups = groups;
  op.input = p.add_input("x", {rows, cols}, 31);
  p.graph.add_op(op);
  return p;
}

Problem loss_problem(OpKind kind, LossFn fn, std::int64_t rows, std::int64_t classes) {
  Problem p;
  Op op = training_op(kind, {rows, classes});
  op.phase = OpPhase::loss;
  op.loss = fn;
  op.input = p.add_input("logits", {rows, classes}, 41);
  if (fn == LossFn::cross_entropy) op.indices = p.add_indices("labels", uniform_indices(rows, classes, 42));
  else op.weight = p.add_input("targets", {rows, classes}, 43);
  p.graph.add_op(op);
  return p;
}

// The loss problem with row weights (Op::aux): `weights` [rows].
Problem weighted_loss_problem(OpKind kind, LossFn fn, std::int64_t rows, std::int64_t classes, std::vector<float> weights) {
  Problem p = loss_problem(kind, fn, rows, classes);
  Op op = p.op();
  p.graph.ops.clear();
  op.aux = p.graph.add_tensor({"row weights", {rows}, DType::float32});
  p.values.set_f32(op.aux, std::move(weights));
  p.graph.add_op(op);
  return p;
}

// Weights 0.5 to 1.5 with every fourth row (from the first) 0: padding among real rows.
std::vector<float> some_zero_weights(std::int64_t rows) {
  std::vector<float> w(static_cast<std::size_t>(rows));
  for (std::size_t r = 0; r < w.size(); ++r) w[r] = r % 4 == 0 ? 0.0f : 0.5f + 0.25f * static_cast<float>(r % 5);
  return w;
}

// A problem's rows (each `cols` wide) whose weight is 1, as a problem of the unweighted op over them.
Problem kept_rows_problem(const Problem& padded, const std::vector<float>& weights) {
  const Op& op = padded.op();
  const std::int64_t C = op.shape.num_features;
  std::vector<float> x, t;
  std::vector<std::int32_t> labels;
  for (std::size_t r = 0; r < weights.size(); ++r) {
    if (weights[r] != 1.0f) continue;
    const auto row = [&](const std::vector<float>& v) {
      return std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(r) * C, v.begin() + static_cast<std::ptrdiff_t>(r + 1) * C);
    };
    const std::vector<float> xr = row(padded.values.f32(op.input));
    x.insert(x.end(), xr.begin(), xr.end());
    if (op.loss == LossFn::cross_entropy) labels.push_back(padded.values.i32(op.indices)[r]);
    else {
      const std::vector<float> tr = row(padded.values.f32(op.weight));
      t.insert(t.end(), tr.begin(), tr.end());
    }
  }
  const std::int64_t M = static_cast<std::int64_t>(x.size()) / C;
  Problem p;
  Op kept = training_op(op.kind, {M, C});
  kept.phase = OpPhase::loss;
  kept.loss = op.loss;
  kept.input = p.graph.add_tensor({"logits", {M, C}, DType::float32});
  p.values.set_f32(kept.input, x);
  if (op.loss == LossFn::cross_entropy) kept.indices = p.add_indices("labels", labels);
  else {
    kept.weight = p.graph.add_tensor({"targets", {M, C}, DType::float32});
    p.values.set_f32(kept.weight, t);
  }
  p.graph.add_op(kept);
  return p;
}

OptimizerSpec sgd_spec(double momentum, double weight_decay) {
  OptimizerSpec s;
  s.kind = OptimizerSpec::Kind::sgd;
  s.lr = 0.05;
  s.momentum = momentum;
  s.weight_decay = weight_decay;
  return s;
}

OptimizerSpec adam_spec(double weight_decay) {
  OptimizerSpec s;
  s.kind = OptimizerSpec::Kind::adam;
  s.lr = 0.01;
  s.weight_decay = weight_decay;
  return s;
}

}  // namespace

TEST_CASE("training codelet costs add up the poplibs vertices they are composed of", "[ipu][training][formula]") {
  const auto& c = bow().codelets;
  const std::int64_t v = c.elementwise_elements_per_vector;
  // g * f'(x): BinaryOp1D's prologue, then per vector the derivative (as f) and the multiply.
  CHECK(unary_grad_worker_cycles(UnaryFn::relu, 5 * v, c) ==
        c.binary_prologue_worker_cycles + 5 * (c.unary_relu_worker_cycles_per_vector + c.binary_add_subtract_multiply_worker_cycles_per_vector));
  CHECK(unary_grad_worker_cycles(UnaryFn::cosine_cutoff, 100, c) > unary_grad_worker_cycles(UnaryFn::exp, 100, c));
  CHECK(scaled_add_worker_cycles(5 * v, c) == c.scaled_add_prologue_worker_cycles + 5 * c.scaled_add_worker_cycles_per_vector);
  // SGD: one ScaledAdd, plus one for weight decay and one for momentum.
  const sim::Cycles one = scaled_add_worker_cycles(100, c);
  CHECK(optimizer_worker_cycles(sgd_spec(0, 0), 100, c) == one);
  CHECK(optimizer_worker_cycles(sgd_spec(0.9, 5e-4), 100, c) == 3 * one);
  // Adam: two moment updates, a square, a sqrt, the denominator, a divide and the step; decay adds one.
  CHECK(optimizer_worker_cycles(adam_spec(5e-4), 100, c) - optimizer_worker_cycles(adam_spec(0), 100, c) == one);
  CHECK(optimizer_worker_cycles(adam_spec(0), 100, c) > optimizer_worker_cycles(sgd_spec(0.9, 5e-4), 100, c));
  CHECK(optimizer_worker_cycles(adam_spec(0), 1000, c) > optimizer_worker_cycles(adam_spec(0), 100, c));
  CHECK(transpose_worker_cycles(0, c) == 0);
  CHECK(transpose_worker_cycles(12, c) == c.transpose_prologue_worker_cycles + 12 * c.transpose_worker_cycles_per_element);
  for (bool gradient : {false, true}) {
    INFO("gradient " << gradient);
    CHECK(cross_entropy_rows_worker_cycles(0, 7, gradient, c) == 0);
    CHECK(cross_entropy_rows_worker_cycles(4, 7, gradient, c) > cross_entropy_rows_worker_cycles(2, 7, gradient, c));
    CHECK(cross_entropy_rows_worker_cycles(2, 40, gradient, c) > cross_entropy_rows_worker_cycles(2, 7, gradient, c));
    CHECK(mse_worker_cycles(100, gradient, c) > mse_worker_cycles(10, gradient, c));
  }
  // The loss needs its log once per row; the gradient scales every element.
  CHECK(cross_entropy_rows_worker_cycles(1, 64, true, c) > cross_entropy_rows_worker_cycles(1, 64, false, c));
  // Row weights: a multiply per row, and forward the weights' sum beside the losses; the weighted mean
  // a multiply, a divide and a select on one element.
  CHECK(loss_weight_worker_cycles(0, false, c) == 0);
  CHECK(loss_weight_worker_cycles(37, true, c) == binary_worker_cycles(BinaryFn::multiply, 37, c));
  CHECK(loss_weight_worker_cycles(37, false, c) == binary_worker_cycles(BinaryFn::multiply, 37, c) + reduce_worker_cycles(1, 37, c));
  CHECK(weighted_mean_worker_cycles(c) ==
        binary_worker_cycles(BinaryFn::multiply, 1, c) + binary_worker_cycles(BinaryFn::divide, 1, c) + select_worker_cycles(1, c));
  // mse's rows on a tile: 10 elements of 4-wide rows from element 6 touch rows 1 to 3 and start rows 2
  // and 3; at most 4 rows for 10 elements anywhere (2 + 4 + 4), 1 for one element.
  CHECK(rows_touched({6, 16}, 4).begin == 1);
  CHECK(rows_touched({6, 16}, 4).end == 4);
  CHECK(rows_starting({6, 16}, 4).begin == 2);
  CHECK(rows_starting({6, 16}, 4).end == 4);
  CHECK(rows_starting({5, 7}, 4).empty());
  CHECK(rows_spanned(10, 4) == 4);
  CHECK(rows_spanned(1, 4) == 1);
  CHECK(rows_spanned(8, 1) == 8);
}

TEST_CASE("transposed matmuls equal x^T g and g W^T for every split, on the IPU and the CPU", "[ipu][training][unit]") {
  struct Shape {
    std::int64_t M, K, N;
  };
  for (const Shape& s : {Shape{37, 20, 10}, Shape{1, 1, 1}, Shape{5, 301, 3}, Shape{130, 7, 33}}) {
    for (const auto& [ti, tw] : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
      INFO(s.M << "x" << s.K << "x" << s.N << " transpose input " << ti << " weight " << tw);
      const Problem p = matmul_problem(s.M, s.K, s.N, ti, tw);
      const TrainingRan ran = run_and_compare(p);
      // Every split the planner might pick, with the engine's cycles the same in both modes.
      for (const ipu::Split& split : {ipu::Split{1, 1, 1, 1}, ipu::Split{8, 1, 1, 1}, ipu::Split{1, 4, 1, 1}, ipu::Split{1, 1, 1, 4}, ipu::Split{4, 2, 1, 3}}) {
        INFO("split " << split.row_blocks << "x" << split.column_blocks << "x" << split.k_blocks);
        const OpPlan plan = estimate_matmul(s.M, s.K, s.N, false, split, bow().chip.num_tiles, bow(), {ti, tw});
        const OpProgram prog = build_op_program(p.op(), plan, {}, bow());
        auto& engine = engine_for(bow());
        engine.load(prog.program, bow().chip, sim::Mode::functional);
        write_pieces(engine, prog.input, p.values.f32(p.op().input), prog.input_width);
        write_pieces(engine, prog.weight, p.values.f32(p.op().weight), 1);
        const auto cycles = engine.run().total_cycles;
        std::vector<float> out(static_cast<std::size_t>(s.M * s.N), std::nanf(""));
        read_pieces(engine, prog.output, out, prog.output_width);
        CHECK(reference::verify(p.op(), p.values, out).ok);
        engine.load(prog.program, bow().chip, sim::Mode::timing_only);
        CHECK(engine.run().total_cycles == cycles);
      }
      if (s.M > 1) check_plan_tracks_program(p, *ran.result.ops[0].cycles, 0.25);
    }
  }
}

TEST_CASE("a transposed operand costs the plain matmul plus the transposes on the tiles", "[ipu][training][unit]") {
  const ipu::Split split{4, 2, 1, 2};
  const OpPlan plain = estimate_matmul(256, 512, 64, false, split, bow().chip.num_tiles, bow());
  const OpPlan transposed = estimate_matmul(256, 512, 64, false, split, bow().chip.num_tiles, bow(), {true, false});
  // The same blocks move; the tiles transpose theirs before the AMP vertex and hold both copies.
  const std::int64_t block = plain.rows_per_block * plain.k_per_block;
  const sim::Cycles transpose = bow().chip.worker_contexts *
                                    transpose_worker_cycles(ceil_div(block, bow().chip.worker_contexts), bow().codelets) +
                                bow().codelets.supervisor_cycles;
  CHECK(transposed.estimated_cycles == plain.estimated_cycles + transpose);
  CHECK(transposed.estimated_peak_tile_bytes > plain.estimated_peak_tile_bytes);
  // And the simulated program pays it too.
  const sim::Cycles plain_run = simulate_op_timing(matmul_problem(256, 512, 64, false, false).op(), {}, bow()).stats.total_cycles;
  const sim::Cycles transposed_run = simulate_op_timing(matmul_problem(256, 512, 64, true, false).op(), {}, bow()).stats.total_cycles;
  CHECK(transposed_run > plain_run);
}

TEST_CASE("unary_grad multiplies the gradient by each function's derivative", "[ipu][training][unit]") {
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min}) {
    for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{123, 7}, {1, 1}}) {
      INFO(to_string(fn) << " [" << rows << ", " << cols << "]");
      const Problem p = unary_grad_problem(fn, rows, cols);
      const TrainingRan ran = run_and_compare(p);
      // Read where they lie: the input and its gradient share the linear layout.
      CHECK(*ran.result.ops[0].exchange_bytes == 0);
      check_plan_tracks_program(p, *ran.result.ops[0].cycles, 0.0);
    }
    // Written directly from the derivative: relu passes the gradient where x > 0.
    if (fn == UnaryFn::relu) {
      const Problem p = unary_grad_problem(fn, 50, 3);
      const TrainingRan ran = run_and_compare(p);
      const auto& x = p.values.f32(p.op().input);
      const auto& g = p.values.f32(p.op().weight);
      for (std::size_t i = 0; i < x.size(); ++i) CHECK(ran.out[i] == (x[i] > 0 ? g[i] : 0.0f));
    }
  }
}

TEST_CASE("optimizer_step updates parameters and state as torch.optim does, over one and many tiles", "[ipu][training][unit]") {
  for (const OptimizerSpec& spec : {sgd_spec(0, 0), sgd_spec(0.9, 5e-4), adam_spec(0), adam_spec(5e-4)}) {
    for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {37, 3}, {1, 16}, {2500, 5}}) {
      INFO(to_string(spec.kind) << " momentum " << spec.momentum << " wd " << spec.weight_decay << " [" << rows << ", " << cols << "]");
      const Problem p = optimizer_problem(spec, rows, cols);
      const TrainingRan ran = run_and_compare(p);
      REQUIRE(static_cast<std::int64_t>(ran.out.size()) == (1 + spec.state_rows()) * rows * cols);
      // The parameter moved against its gradient's sign where the gradient dominates (no momentum, no state).
      if (spec.kind == OptimizerSpec::Kind::sgd && spec.momentum == 0) {
        const auto& w = p.values.f32(p.op().input);
        const auto& g = p.values.f32(p.op().weight);
        for (std::size_t i = 0; i < w.size(); ++i)
          if (g[i] != 0) CHECK((ran.out[i] - w[i]) * g[i] < 0);
      }
      // Only Adam's step number moves, and only when the parameter spans several tiles.
      const bool spans = rows * cols > linear_layout(rows * cols, 4, bow()).elements_per_tile;
      CHECK((*ran.result.ops[0].exchange_bytes > 0) == (spec.kind == OptimizerSpec::Kind::adam && spans));
      check_plan_tracks_program(p, *ran.result.ops[0].cycles, 0.05);
    }
  }
}

TEST_CASE("sum_to sums rows and columns across tiles, in one or two stages", "[ipu][training][unit]") {
  struct Case {
    std::int64_t rows, cols, other_rows, groups;
  };
  for (const Case& k : {Case{2708, 16, 1, 16}, Case{7, 3, 1, 3}, Case{1, 5, 1, 5}, Case{300, 8, 1, 2}, Case{13264, 1, 13264, 1},
                        Case{500, 12, 500, 3}, Case{41, 1433, 41, 1}, Case{3, 4, 1, 1}, Case{100000, 4, 1, 4}}) {
    INFO("[" << k.rows << ", " << k.cols << "] to [" << k.other_rows << ", " << k.groups << "]");
    const Problem p = sum_to_problem(k.rows, k.cols, k.other_rows, k.groups);
    const TrainingRan ran = run_and_compare(p);
    // Written out directly: each output the sum of the elements broadcast from it.
    const auto& x = p.values.f32(p.op().input);
    std::vector<double> want(static_cast<std::size_t>(k.other_rows * k.groups), 0.0);
    for (std::int64_t r = 0; r < k.rows; ++r)
      for (std::int64_t c = 0; c < k.cols; ++c)
        want[static_cast<std::size_t>((k.other_rows == 1 ? 0 : r) * k.groups + c / (k.cols / k.groups))] +=
            x[static_cast<std::size_t>(r * k.cols + c)];
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(std::abs(ran.out[i] - want[i]) <= 1e-4 * (1 + std::abs(want[i])));
    check_plan_tracks_program(p, *ran.result.ops[0].cycles, 0.2);
  }
  // A column sum over every tile is summed in groups first: no tile receives all 1472 partials.
  const Problem wide = sum_to_problem(100000, 4, 1, 4);
  const LinearLayout in = linear_layout(400000, 4, bow());
  const auto schedule = plan_reduction(sum_to_partials(wide.op(), in), linear_layout(4, 4, bow()), false, bow());
  CHECK(schedule.two_stages());
  CHECK(schedule.fan_in < in.tiles_used);
  // A row sum whose rows lie within tiles needs no groups.
  const Problem rows = sum_to_problem(13264, 16, 13264, 1);
  CHECK_FALSE(plan_reduction(sum_to_partials(rows.op(), linear_layout(13264 * 16, 4, bow())), linear_layout(13264, 4, bow()), false, bow())
                  .two_stages());
}

TEST_CASE("cross entropy and mse losses and their gradients on row blocks and in place", "[ipu][training][unit]") {
  struct Case {
    LossFn fn;
    std::int64_t rows, classes;
  };
  for (const Case& k : {Case{LossFn::cross_entropy, 141, 7}, Case{LossFn::cross_entropy, 1, 1}, Case{LossFn::cross_entropy, 3001, 40},
                        Case{LossFn::cross_entropy, 2, 9}, Case{LossFn::mse, 50, 3}, Case{LossFn::mse, 1, 1}, Case{LossFn::mse, 4000, 7}}) {
    for (OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
      INFO(to_string(kind) << " " << to_string(k.fn) << " [" << k.rows << ", " << k.classes << "]");
      const Problem p = loss_problem(kind, k.fn, k.rows, k.classes);
      const TrainingRan ran = run_and_compare(p);
      if (kind == OpKind::loss) {
        REQUIRE(ran.out.size() == 1);
        CHECK(ran.out[0] >= 0);
      } else if (k.fn == LossFn::cross_entropy) {
        // Each row of softmax minus one-hot sums to zero.
        for (std::int64_t r = 0; r < k.rows; ++r) {
          double sum = 0;
          for (std::int64_t c = 0; c < k.classes; ++c) sum += ran.out[static_cast<std::size_t>(r * k.classes + c)];
          CHECK(std::abs(sum) <= 1e-6);
        }
      }
      check_plan_tracks_program(p, *ran.result.ops[0].cycles, 0.2);
    }
  }
}

TEST_CASE("weighted cross entropy and mse: the row weights beside their rows, verified, planned, and 0 for an all-zero batch",
          "[ipu][training][unit]") {
  struct Case {
    LossFn fn;
    std::int64_t rows, classes;
  };
  // mse [30, 100]: rows wider than a tile's share of the linear layout, so some tiles hold no row's
  // start and count no weight.
  for (const Case& k : {Case{LossFn::cross_entropy, 141, 7}, Case{LossFn::cross_entropy, 1, 1}, Case{LossFn::cross_entropy, 3001, 40},
                        Case{LossFn::mse, 50, 3}, Case{LossFn::mse, 1, 1}, Case{LossFn::mse, 4000, 7}, Case{LossFn::mse, 30, 100}}) {
    for (OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
      INFO(to_string(kind) << " " << to_string(k.fn) << " [" << k.rows << ", " << k.classes << "]");
      std::vector<float> w = some_zero_weights(k.rows);
      if (k.rows == 1) w = {0.75f};
      const Problem p = weighted_loss_problem(kind, k.fn, k.rows, k.classes, w);
      const TrainingRan ran = run_and_compare(p);
      if (kind == OpKind::loss_grad) {
        // A padding row has no gradient at all.
        for (std::int64_t r = 0; r < k.rows; ++r)
          if (w[static_cast<std::size_t>(r)] == 0.0f)
            for (std::int64_t c = 0; c < k.classes; ++c) CHECK(ran.out[static_cast<std::size_t>(r * k.classes + c)] == 0.0f);
      }
      check_plan_tracks_program(p, *ran.result.ops[0].cycles, 0.2);
      // The weights cost cycles: more than the same loss without them.
      auto cycles = [](const Problem& q) {
        const auto indices = q.op().indices >= 0 ? q.values.i32(q.op().indices) : std::vector<std::int32_t>{};
        return simulate_op_timing(q.op(), indices, bow()).stats.total_cycles;
      };
      CHECK(cycles(p) > cycles(loss_problem(kind, k.fn, k.rows, k.classes)));
      // All weights 0: exactly 0 everywhere.
      const Problem none = weighted_loss_problem(kind, k.fn, k.rows, k.classes, std::vector<float>(static_cast<std::size_t>(k.rows), 0.0f));
      const TrainingRan zero = run_and_compare(none);
      CHECK(std::all_of(zero.out.begin(), zero.out.end(), [](float v) { return v == 0.0f; }));
    }
  }
}

TEST_CASE("a batch padded with weight-0 rows has the unpadded batch's loss and gradient on the IPU", "[ipu][training][unit]") {
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    const std::int64_t rows = 300, classes = 9;
    std::vector<float> mask(static_cast<std::size_t>(rows), 1.0f);
    for (std::size_t r = 0; r < mask.size(); r += 5) mask[r] = 0.0f;
    for (std::size_t r = 250; r < mask.size(); ++r) mask[r] = 0.0f;  // the padded tail
    for (OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
      INFO(to_string(kind) << " " << to_string(fn));
      const Problem padded = weighted_loss_problem(kind, fn, rows, classes, mask);
      const Problem kept = kept_rows_problem(padded, mask);
      const TrainingRan a = run_and_compare(padded), b = run_and_compare(kept);
      if (kind == OpKind::loss) {
        // The tiles' partial sums round at other places (the rows sit on other tiles), so the padded
        // loss passes the unpadded op's own reference check rather than matching its bits.
        CHECK(reference::verify(kept.op(), kept.values, a.out).ok);
        continue;
      }
      // Row by row the same arithmetic: d w_r / sum w with w_r = 1 and sum w = the kept count.
      std::size_t k = 0;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < classes; ++c) {
          const float got = a.out[static_cast<std::size_t>(r * classes + c)];
          if (mask[static_cast<std::size_t>(r)] == 0.0f) CHECK(got == 0.0f);
          else CHECK(got == b.out[k++]);
        }
      CHECK(k == b.out.size());
    }
  }
}

TEST_CASE("training op cycles grow with the work", "[ipu][training][unit]") {
  auto cycles = [](const Problem& p) { return simulate_op_timing(p.op(), p.op().indices >= 0 ? p.values.i32(p.op().indices) : std::vector<std::int32_t>{}, bow()).stats.total_cycles; };
  CHECK(cycles(matmul_problem(4096, 2708, 16, true, false)) > cycles(matmul_problem(512, 2708, 16, true, false)));
  CHECK(cycles(matmul_problem(2708, 16, 1433, false, true)) > cycles(matmul_problem(2708, 16, 64, false, true)));
  CHECK(cycles(unary_grad_problem(UnaryFn::relu, 200000, 16)) > cycles(unary_grad_problem(UnaryFn::relu, 20000, 16)));
  CHECK(cycles(unary_grad_problem(UnaryFn::exp, 20000, 16)) > cycles(unary_grad_problem(UnaryFn::relu, 20000, 16)));
  CHECK(cycles(optimizer_problem(adam_spec(0), 100000, 16)) > cycles(optimizer_problem(adam_spec(0), 1000, 16)));
  CHECK(cycles(optimizer_problem(adam_spec(0), 100000, 16)) > cycles(optimizer_problem(sgd_spec(0, 0), 100000, 16)));
  CHECK(cycles(sum_to_problem(200000, 16, 1, 16)) > cycles(sum_to_problem(2000, 16, 1, 16)));
  CHECK(cycles(sum_to_problem(200000, 16, 200000, 1)) > cycles(sum_to_problem(2000, 16, 2000, 1)));
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse})
    for (OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
      INFO(to_string(kind) << " " << to_string(fn));
      CHECK(cycles(loss_problem(kind, fn, 50000, 40)) > cycles(loss_problem(kind, fn, 500, 40)));
    }
}

TEST_CASE("segment_matmul's backward forms per segment, with an empty and a one-row segment, on the IPU and the CPU",
          "[ipu][training][unit]") {
  // 4 segments over 45 rows: 30 rows, none, 1 row, 14 rows.
  const std::vector<std::int32_t> offsets = {0, 30, 30, 31, 45};
  const std::int64_t M = 45, S = 4;
  struct Shape {
    std::int64_t K, N;
  };
  for (const Shape& sh : {Shape{6, 5}, Shape{33, 2}, Shape{1, 17}}) {
    for (const bool weight_gradient : {false, true}) {
      INFO("K " << sh.K << " N " << sh.N << (weight_gradient ? " weight's gradient" : " input's gradient"));
      Problem p;
      const TensorId x = p.add_input("x", {M, sh.K}, 3);
      const TensorId off = p.graph.add_tensor({"offsets", {S + 1}, DType::int32});
      p.values.set_i32(off, offsets);
      namespace layers = workloads::layers;
      p.graph.add_op(weight_gradient ? layers::segment_matmul_weight_grad("op", p.graph, x, off, p.add_input("g", {M, sh.N}, 4))  // [S * K, N]
                                     : layers::segment_matmul_input_grad("op", p.graph, x, off, p.add_input("w", {S, sh.N, sh.K}, 5)));
      const TrainingRan ran = run_and_compare(p);
      if (weight_gradient) {
        // The empty segment's block is exactly zero.
        for (std::int64_t e = sh.K * sh.N; e < 2 * sh.K * sh.N; ++e) CHECK(ran.out[static_cast<std::size_t>(e)] == 0.0f);
      }
      check_plan_tracks_program(p, *ran.result.ops[0].cycles, 0.25);
    }
  }
}
