#pragma once
// One small training step per differentiable op kind (and per unary and binary function, and per shape
// of binary's other operand, and a matmul under each loss weighted by row): parameters -> the op -> an
// mse loss against fixed targets (or a weighted mse or cross entropy), its gradient,
// the backward pass the autodiff appends, and a plain SGD update per parameter. The reference checks
// each backward against finite differences of the loss (tests/workloads/op_backward_test.cpp); the torch-cpu peer runs
// the same steps with libtorch's autograd and checks the graph's gradients against it
// (tests/torch/torch_backend_test.cpp). Values sit on a 1/8 grid, away from every kink (relu and
// leaky_relu at 0, the "or zero" functions at 0, the cosine cutoff at its cutoff) and without ties in
// a max, so central differences see the derivative the backward computes.
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/training/autodiff.hpp"

namespace tilesim_test {

struct OpBackwardCase {
  std::string name;
  tilesim::OpGraph graph;
  tilesim::TensorValues values;
  tilesim::TensorId loss = -1;
  std::size_t forward_end = 0;  // ops [0, forward_end): the forward op and the loss
  std::vector<std::pair<tilesim::TensorId, tilesim::TensorId>> grads;  // parameter, its gradient
};

namespace op_backward_detail {

using namespace tilesim;

// The loss a case ends in: mse against fixed targets unless told otherwise; row weights when given.
struct LossChoice {
  LossFn fn = LossFn::mse;
  std::vector<std::int32_t> labels;  // cross_entropy, one per row
  std::vector<float> row_weights;    // empty: unweighted
};

// n values k/8 + 1/16 for distinct integers k in [lo, hi) (no zero, no ties), shuffled.
inline std::vector<float> distinct_values(std::size_t n, unsigned seed, int lo = -24, int hi = 24) {
  std::vector<int> ks;
  for (int k = lo; k < hi; ++k) ks.push_back(k);
  std::mt19937 rng(seed);
  std::shuffle(ks.begin(), ks.end(), rng);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(ks[i % ks.size()]) / 8.0f + 1.0f / 16;
  return v;
}

class Builder {
 public:
  explicit Builder(std::string name) { c_.name = std::move(name); }
  TensorId param(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> v) {
    const TensorId t = c_.graph.add_tensor({name, std::move(shape), DType::float32});
    c_.values.set_f32(t, std::move(v));
    params_.insert(t);
    return t;
  }
  TensorId indices(const std::string& name, std::vector<std::int32_t> v) {
    const TensorId t = c_.graph.add_tensor({name, {static_cast<std::int64_t>(v.size())}, DType::int32});
    c_.values.set_i32(t, std::move(v));
    return t;
  }
  OpGraph& graph() { return c_.graph; }

  // The forward op `y` ends the forward pass: the loss (mse against targets unless `choice` says
  // otherwise), its gradient, the backward and the updates.
  OpBackwardCase finish(Op forward, const LossChoice& choice = {}) {
    OpGraph& g = c_.graph;
    const TensorId y = g.add_op(std::move(forward));
    const std::int64_t rows = g.tensor(y).shape.at(0), cols = g.tensor(y).shape.at(1);
    Op loss;
    loss.name = "loss";
    loss.kind = OpKind::loss;
    loss.loss = choice.fn;
    loss.phase = OpPhase::loss;
    loss.input = y;
    if (choice.fn == LossFn::cross_entropy) {
      loss.indices = indices("labels", choice.labels);
    } else {
      loss.weight = g.add_tensor({"targets", {rows, cols}, DType::float32});
      c_.values.set_f32(loss.weight, distinct_values(static_cast<std::size_t>(rows * cols), 99, -8, 8));
    }
    if (!choice.row_weights.empty()) {
      loss.aux = g.add_tensor({"row weights", {rows}, DType::float32});
      c_.values.set_f32(loss.aux, choice.row_weights);
    }
    loss.shape.num_inputs = rows;
    loss.shape.num_features = cols;
    c_.loss = g.add_op(loss);
    c_.forward_end = g.ops.size();
    Op seed = loss;
    seed.name = "loss.grad";
    seed.kind = OpKind::loss_grad;
    seed.phase = OpPhase::backward;
    const TensorId seed_grad = g.add_op(seed);
    const auto grads = workloads::training::append_backward(g, c_.forward_end - 1, y, seed_grad, params_);
    for (const TensorId p : params_) {
      const TensorId grad = grads.at(p);
      c_.grads.emplace_back(p, grad);
      const TensorInfo info = g.tensor(p);
      Op step;
      step.name = info.name + ".step";
      step.kind = OpKind::optimizer_step;
      step.phase = OpPhase::optimizer;
      step.optimizer.kind = OptimizerSpec::Kind::sgd;
      step.optimizer.lr = 0.1;
      step.input = p;
      step.weight = grad;
      step.shape.num_features = info.shape.back();
      step.shape.num_inputs = info.elements() / step.shape.num_features;
      g.add_op(step);
    }
    return std::move(c_);
  }

 private:
  OpBackwardCase c_;
  std::set<TensorId> params_;
};

}  // namespace op_backward_detail

inline std::vector<OpBackwardCase> op_backward_cases() {
  using namespace tilesim;
  using op_backward_detail::Builder;
  using op_backward_detail::distinct_values;
  namespace L = workloads::layers;
  std::vector<OpBackwardCase> out;
  // Indices with repeats; output row 3 of the scatters receives nothing.
  const std::vector<std::int32_t> to_rows = {0, 2, 1, 0, 2, 2, 4};
  {
    Builder b("gather");
    const TensorId table = b.param("table", {5, 3}, distinct_values(15, 1));
    const TensorId idx = b.indices("idx", {4, 0, 4, 2, 1, 4, 0});
    out.push_back(b.finish(L::gather("gather", b.graph(), table, idx)));
  }
  for (const OpKind kind : {OpKind::scatter_add, OpKind::scatter_mean, OpKind::scatter_max}) {
    Builder b(to_string(kind));
    const TensorId src = b.param("src", {7, 3}, distinct_values(21, 2));
    const TensorId idx = b.indices("idx", to_rows);
    out.push_back(b.finish(L::scatter(to_string(kind), b.graph(), kind, src, idx, 5)));
  }
  {
    Builder b("matmul");
    const TensorId x = b.param("x", {4, 3}, distinct_values(12, 3));
    const TensorId w = b.param("w", {3, 2}, distinct_values(6, 4));
    const TensorId bias = b.param("bias", {2}, distinct_values(2, 5));
    out.push_back(b.finish(L::matmul("matmul", b.graph(), x, w, bias)));
  }
  {
    // RGCN's per-relation weights: 3 segments over 6 rows, the middle one empty.
    Builder b("segment_matmul");
    const TensorId x = b.param("x", {6, 3}, distinct_values(18, 9));
    const TensorId offsets = b.indices("offsets", {0, 2, 2, 6});
    const TensorId w = b.param("w", {3, 3, 2}, distinct_values(18, 10));
    out.push_back(b.finish(L::segment_matmul("segment_matmul", b.graph(), x, offsets, w)));
  }
  // A matmul under each loss weighted by row (general positive weights: every row's gradient counts).
  for (const LossFn fn : {LossFn::mse, LossFn::cross_entropy}) {
    Builder b("matmul, weighted " + to_string(fn));
    const TensorId x = b.param("x", {4, 3}, distinct_values(12, 11));
    const TensorId w = b.param("w", {3, 3}, distinct_values(9, 12));
    op_backward_detail::LossChoice loss;
    loss.fn = fn;
    loss.labels = {2, 0, 1, 1};
    loss.row_weights = {0.5f, 2.0f, 0.75f, 1.25f};
    out.push_back(b.finish(L::matmul("matmul", b.graph(), x, w, -1), loss));
  }
  {
    // A cast with a factor (mixed precision's conversions and loss scaling): its backward is the cast back
    // times the same factor.
    Builder b("cast");
    const TensorId x = b.param("x", {4, 3}, distinct_values(12, 13));
    Op cast;
    cast.name = "cast";
    cast.kind = OpKind::cast;
    cast.input = x;
    cast.scalar = 1.5f;
    cast.shape.num_inputs = 4;
    cast.shape.num_features = 3;
    out.push_back(b.finish(cast));
  }
  struct UnaryCase {
    UnaryFn fn;
    float scalar;
    int lo, hi;  // the inputs' range in eighths
  };
  for (const UnaryCase u : {UnaryCase{UnaryFn::relu, 0, -24, 24}, UnaryCase{UnaryFn::leaky_relu, 0.2f, -24, 24},
                            UnaryCase{UnaryFn::shifted_softplus, 0, -24, 24}, UnaryCase{UnaryFn::exp, 0, -12, 12},
                            UnaryCase{UnaryFn::scale, 1.5f, -24, 24}, UnaryCase{UnaryFn::rsqrt_or_zero, 0, 2, 40},
                            UnaryCase{UnaryFn::reciprocal_or_zero, 0, 4, 40}, UnaryCase{UnaryFn::cosine_cutoff, 2.0f, 0, 28},
                            UnaryCase{UnaryFn::sigmoid, 0, -24, 24}, UnaryCase{UnaryFn::softplus, 0, -24, 24},
                            UnaryCase{UnaryFn::sqrt, 0, 2, 40}, UnaryCase{UnaryFn::log, 0, 2, 40},
                            UnaryCase{UnaryFn::clamp_min, 0.5f, -24, 24}}) {
    Builder b("unary " + to_string(u.fn));
    const TensorId x = b.param("x", {4, 3}, distinct_values(12, 6, u.lo, u.hi));
    out.push_back(b.finish(L::unary("unary", b.graph(), u.fn, x, u.scalar)));
  }
  struct OtherShape {
    std::string name;
    std::int64_t rows, groups;
  };
  for (const BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide}) {
    for (const OtherShape& o : {OtherShape{"same shape", 4, 6}, OtherShape{"per row", 4, 1}, OtherShape{"per group", 4, 2},
                                OtherShape{"one row", 1, 6}}) {
      Builder b("binary " + to_string(fn) + ", other " + o.name);
      const TensorId x = b.param("x", {4, 6}, distinct_values(24, 7));
      // A divisor away from zero.
      const TensorId other = b.param("other", {o.rows, o.groups}, distinct_values(static_cast<std::size_t>(o.rows * o.groups), 8,
                                                                               fn == BinaryFn::divide ? 6 : -24, 24));
      out.push_back(b.finish(L::binary("binary", b.graph(), fn, x, other)));
    }
  }
  return out;
}

}  // namespace tilesim_test
