#include "workloads/training/training_step.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "common/error.hpp"
#include "workloads/random_streams.hpp"
#include "workloads/training/autodiff.hpp"

namespace tilesim::workloads::training {

namespace {

using layers::InputFill;

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

// `count` distinct nodes of [0, n), ascending (the order x[train_mask] keeps): a partial Fisher-Yates
// shuffle on the stream "train.mask", written out so that every standard library draws the same set.
std::vector<std::int32_t> draw_training_nodes(std::uint64_t seed, std::int64_t n, std::int64_t count) {
  std::vector<std::int32_t> order(sz(n));
  for (std::int64_t i = 0; i < n; ++i) order[sz(i)] = static_cast<std::int32_t>(i);
  auto engine = streams::named_engine(seed, "train.mask");
  for (std::int64_t i = 0; i < count; ++i) {
    const auto j = i + std::min<std::int64_t>(n - i - 1, static_cast<std::int64_t>(streams::unit(engine) * static_cast<double>(n - i)));
    std::swap(order[sz(i)], order[sz(j)]);
  }
  order.resize(sz(count));
  std::sort(order.begin(), order.end());
  return order;
}

// Groups a run of ops [first, end) under one name and phase, for the report's per-layer totals.
void add_group(OpGraph& g, const std::string& name, const std::string& kind, std::size_t first, OpPhase phase) {
  if (g.ops.size() > first) g.groups.push_back({name, kind, first, g.ops.size() - first, phase});
}

// The optimizer views a parameter as [M, F]: a 1-D bias is one row.
std::int64_t last_dim(const TensorInfo& t) { return t.shape.back(); }

std::int64_t training_node_count(std::int64_t n, double train_fraction) {
  return std::min(n, std::max<std::int64_t>(1, std::llround(train_fraction * static_cast<double>(n))));
}

// The rows a training step's loss is over: a node task's training mask gathered from the last layer's
// rows (every row when the mask holds them all, unless a loader gives the rows: then always gathered,
// so that a fixed-size batch keeps one shape), or a graph task's rows pooled per graph.
struct Readout {
  TensorId predictions = -1;
  std::vector<std::int32_t> rows;  // the loss rows' positions among the rows drawn (empty: all of them)
  std::int64_t drawn_rows = 0;     // the rows labels and targets are drawn for: nodes, or graphs
};

Readout lower_readout(layers::Lowering& l, TensorId logits, const TrainSpec& spec, std::uint64_t seed, const std::string& spec_path,
                      const GivenReadout* given) {
  OpGraph& g = l.graph();
  const std::int64_t n = g.tensor(logits).shape.at(0);
  const std::size_t first = g.ops.size();
  Readout r{logits, {}, n};
  if (spec.task == TrainSpec::Task::node && given) {
    // Always gathered, even when the rows are every node, so that a fixed-size batch keeps one shape.
    const TensorId mask = l.given_i32("train.mask", given->rows);
    r.predictions = l.op(layers::gather("readout.mask", g, logits, mask));
    add_group(g, "readout", "mask", first, OpPhase::forward);
  } else if (spec.task == TrainSpec::Task::node) {
    const std::int64_t count = training_node_count(n, spec.train_fraction);
    if (count < n) {
      r.rows = draw_training_nodes(seed, n, count);
      const TensorId mask = l.given_i32("train.mask", r.rows);
      r.predictions = l.op(layers::gather("readout.mask", g, logits, mask));
      add_group(g, "readout", "mask", first, OpPhase::forward);
    }
  } else if (spec.model_pools) {
    // The model's pool layer made the graph rows; its readout MLP, if any, ran on them.
    r.drawn_rows = n;
  } else {
    if (!layers::batches_graphs(l, n))
      throw InputError(l.source_file, spec_path + ".task",
                       "\"node\", or a graph source that batches several graphs (\"molecules\") for \"graph\"",
                       "\"graph\" on a single graph");
    r.drawn_rows = l.edges().num_graphs;
    const auto reduce = spec.pool == TrainSpec::Pool::add ? layers::PoolReduce::add : layers::PoolReduce::mean;
    r.predictions = layers::pool_by_graph(l, logits, reduce, "readout.pool", "train.batch");
    add_group(g, "readout", "pool_" + to_string(spec.pool), first, OpPhase::forward);
  }
  return r;
}

// The loss's labels (cross entropy) or targets (mse), drawn for every row the readout drew from so
// that the mask selects them (a different train_fraction keeps each node's label), or keyed by the
// given readout's rows; its row weights when given.
void add_labels(layers::Lowering& l, Op& loss, const Readout& readout, std::uint64_t seed, const GivenReadout* given) {
  const std::int64_t m = loss.shape.num_inputs, c = loss.shape.num_features, drawn_rows = readout.drawn_rows;
  const std::vector<std::int32_t>& rows = readout.rows;
  auto pick = [&](auto all, std::int64_t width) {
    if (rows.empty()) return all;
    decltype(all) kept;
    for (std::int32_t r : rows)
      kept.insert(kept.end(), all.begin() + r * width, all.begin() + (r + 1) * width);
    return kept;
  };
  if (given) {
    if (given->keys.size() != sz(m) || (!given->weights.empty() && given->weights.size() != sz(m)))
      throw std::logic_error("training: a given readout's keys or weights do not match its loss rows");
    if (loss.loss == LossFn::cross_entropy) {
      const streams::KeyedStream labels(seed, "train.labels");
      std::vector<std::int32_t> y(sz(m));
      for (std::size_t i = 0; i < y.size(); ++i) y[i] = labels.uniform_index(given->keys[i], c);
      loss.indices = l.given_i32("train.labels", std::move(y));
    } else {
      const streams::KeyedStream targets(seed, "train.targets");
      std::vector<float> t(sz(m * c));
      for (std::size_t i = 0; i < given->keys.size(); ++i) targets.standard_normal(given->keys[i], c, t.data() + i * sz(c));
      loss.weight = l.given_f32("train.targets", {m, c}, std::move(t), DType::float32);
    }
    if (!given->weights.empty()) loss.set_loss_row_weights(l.given_f32("train.loss_weights", {m}, given->weights, DType::float32));
  } else if (loss.loss == LossFn::cross_entropy) {
    auto engine = streams::named_engine(seed, "train.labels");
    loss.indices = l.given_i32("train.labels", pick(streams::uniform_indices(engine, drawn_rows, c), 1));
  } else {
    auto engine = streams::named_engine(seed, "train.targets");
    loss.weight = l.given_f32("train.targets", {m, c}, pick(streams::standard_normal(engine, drawn_rows * c), c), DType::float32);
  }
}

// The optimizer's update of each parameter (fills[position] for each of `param_fills`, in that order)
// from its gradient in `grads`: GAT's block-diagonal attention vectors masked to their blocks first,
// float32 state rows and Adam's step number added as inputs; each slot recorded in `layout`.
void append_updates(layers::Lowering& l, const std::vector<InputFill>& fills, const std::vector<std::size_t>& param_fills,
                    const std::map<TensorId, TensorId>& grads, const OptimizerSpec& optimizer, TrainingLayout& layout) {
  OpGraph& g = l.graph();
  const std::size_t first = g.ops.size();
  const std::int64_t state_rows = optimizer.state_rows();
  // The optimizer's tensors are float32 whatever the model's dtype (master weights, their state, Adam's t).
  // The optimizer's state, Adam's step number and the attention masks stay on the device between steps.
  if (optimizer.kind == OptimizerSpec::Kind::adam) {
    layout.step = l.given_f32("train.step", {1, 1}, {1.0f}, DType::float32);
    l.keep_on_device(layout.step);
  }
  for (const std::size_t position : param_fills) {
    // Read out now: given_f32 below appends to fills, which may move its elements.
    const TensorId param = fills[position].tensor;
    const bool block_diagonal = fills[position].kind == InputFill::Kind::block_diagonal;
    const std::int64_t block_rows = fills[position].block_rows;
    const TensorInfo info = g.tensor(param);
    auto it = grads.find(param);
    if (it == grads.end())
      throw std::logic_error("training: parameter '" + info.name + "' does not reach the loss (a lowering defect)");
    ParameterSlot slot;
    slot.param = param;
    slot.grad = it->second;
    const std::int64_t cols = last_dim(info), p_rows = info.elements() / cols;
    if (block_diagonal && info.shape.at(1) > 1) {
      // Only the diagonal blocks are parameters (att[h, :] at rows h*C.., column h).
      std::vector<float> mask(sz(info.elements()), 0.0f);
      const std::int64_t heads = info.shape.at(1);
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t k = 0; k < block_rows; ++k) mask[sz((h * block_rows + k) * heads + h)] = 1.0f;
      const TensorId mask_t = l.given_f32(info.name + ".blocks", info.shape, std::move(mask), info.dtype);
      l.keep_on_device(mask_t);
      Op masked = layers::binary(info.name + ".grad_blocks", g, BinaryFn::multiply, slot.grad, mask_t);
      masked.dtype = info.dtype;
      masked.phase = OpPhase::optimizer;
      slot.grad = g.add_op(masked);
    }
    Op step;
    step.name = info.name + ".step";
    step.kind = OpKind::optimizer_step;
    step.dtype = info.dtype;
    step.phase = OpPhase::optimizer;
    step.optimizer = optimizer;
    step.input = slot.param;
    step.weight = slot.grad;
    step.shape.num_inputs = p_rows;
    step.shape.num_features = cols;
    if (state_rows > 0) {
      slot.state = l.given_f32(info.name + ".state", {state_rows, info.elements()},
                               std::vector<float>(sz(state_rows * info.elements()), 0.0f), info.dtype);
      l.keep_on_device(slot.state);
      step.set_optimizer_state(slot.state);
    }
    step.set_step_number(layout.step);
    slot.update = g.add_op(step);
    layout.parameters.push_back(slot);
  }
  add_group(g, "optimizer", to_string(optimizer.kind), first, OpPhase::optimizer);
}

}  // namespace

std::vector<std::int32_t> training_nodes(std::uint64_t seed, std::int64_t n, double train_fraction) {
  return draw_training_nodes(seed, n, training_node_count(n, train_fraction));
}

TrainingLayout lower_training_step(layers::Lowering& l, const std::vector<InputFill>& fills,
                                   const std::vector<layers::LayerSpec>& model, std::int64_t num_features,
                                   const TrainSpec& spec, std::uint64_t seed, const std::string& spec_path,
                                   const GivenReadout* given) {
  OpGraph& g = l.graph();
  const std::size_t first_fill = fills.size();
  // Mixed precision for a half model, as PyTorch's AMP and PopTorch's half training do it: float32 master
  // weights cast to the model dtype where the forward reads them, the loss in float32, and static loss
  // scaling of the backward pass. A float32 model's step has none of these ops.
  const bool mixed = is_half_dtype(l.value_dtype);
  const double loss_scale = spec.loss_scale.value_or(1.0);
  if (!mixed && loss_scale != 1)
    throw std::logic_error("training: a loss scale of " + std::to_string(loss_scale) + " for a float32 model");
  if (mixed) l.master_dtype = kMasterWeightDType;
  l.training = true;  // the layers' dropout applies
  const TensorId logits = layers::lower_model(l, model, num_features);
  const std::int64_t c = g.tensor(logits).shape.at(1);

  // The readout: the rows the loss is over.
  const Readout readout = lower_readout(l, logits, spec, seed, spec_path, given);
  const TensorId predictions = readout.predictions;
  const std::size_t forward_end = g.ops.size();
  const std::int64_t m = g.tensor(predictions).shape.at(0);
  // The loss reads float32 predictions (autocast runs losses in float32): a half model's are cast first.
  const std::size_t loss_first = g.ops.size();
  TensorId loss_input = predictions;
  if (mixed) {
    Op cast;
    cast.name = "loss.input_cast";
    cast.kind = OpKind::cast;
    cast.dtype = kMasterWeightDType;
    cast.phase = OpPhase::loss;
    cast.input = predictions;
    cast.scalar = 1.0f;
    cast.shape.num_inputs = m;
    cast.shape.num_features = c;
    loss_input = g.add_op(cast);
  }

  // The loss, in float32 over the readout's rows, with its labels or targets (add_labels).
  Op loss;
  loss.name = "loss";
  loss.kind = OpKind::loss;
  loss.loss = spec.loss;
  loss.phase = OpPhase::loss;
  loss.dtype = DType::float32;
  loss.input = loss_input;
  loss.shape.num_inputs = m;
  loss.shape.num_features = c;
  add_labels(l, loss, readout, seed, given);
  TrainingLayout layout;
  layout.steps = spec.steps;
  layout.loss_scale = loss_scale;
  g.recompute_activations = spec.recompute;
  layout.loss = g.add_op(loss);
  Op loss_grad = loss;
  loss_grad.name = "loss.grad";
  loss_grad.kind = OpKind::loss_grad;
  loss_grad.grad_of = "loss";
  TensorId seed_grad = g.add_op(loss_grad);
  if (mixed) {
    // Static loss scaling: the float32 gradient times the scale, cast to the model dtype (the backward of
    // the predictions' cast, with the scale folded in: exact, a power of two), so that small gradients
    // stay in the half format's range through the backward pass.
    Op scaled;
    scaled.name = "loss.grad.scaled_cast";
    scaled.kind = OpKind::cast;
    scaled.dtype = l.value_dtype;
    scaled.phase = OpPhase::loss;
    scaled.grad_of = "loss";
    scaled.input = seed_grad;
    scaled.scalar = static_cast<float>(loss_scale);
    scaled.shape.num_inputs = m;
    scaled.shape.num_features = c;
    seed_grad = g.add_op(scaled);
  }
  add_group(g, "loss", to_string(spec.loss), loss_first, OpPhase::loss);

  // The parameters: the model's uniform and block-diagonal inputs. Held by position in `fills`, not by
  // address: the state and mask inputs added below grow `fills` (the Lowering appends to it), which may
  // move its elements.
  std::set<TensorId> params;
  std::vector<std::size_t> param_fills;
  for (std::size_t i = first_fill; i < fills.size(); ++i)
    if (fills[i].kind == InputFill::Kind::uniform || fills[i].kind == InputFill::Kind::block_diagonal) {
      params.insert(fills[i].tensor);
      param_fills.push_back(i);
    }
  // Each master weight's gradient is its half gradient cast back to float32 and unscaled (1 / scale,
  // folded into that cast).
  const std::map<TensorId, TensorId> grads = append_backward(g, forward_end, predictions, seed_grad, params, 1.0 / loss_scale);

  // One update per parameter, in the order the model created them.
  append_updates(l, fills, param_fills, grads, spec.optimizer, layout);
  return layout;
}

void advance_step(const TrainingLayout& layout, const TensorValues& outputs, TensorValues& inputs) {
  for (const ParameterSlot& slot : layout.parameters) {
    const std::vector<float>& update = outputs.f32(slot.update);
    std::vector<float>& param = inputs.mutable_f32(slot.param);
    if (update.size() < param.size()) throw std::logic_error("advance_step: an update is smaller than its parameter");
    std::copy(update.begin(), update.begin() + static_cast<std::ptrdiff_t>(param.size()), param.begin());
    if (slot.state >= 0) {
      std::vector<float>& state = inputs.mutable_f32(slot.state);
      if (update.size() != param.size() + state.size()) throw std::logic_error("advance_step: an update does not hold its state");
      std::copy(update.begin() + static_cast<std::ptrdiff_t>(param.size()), update.end(), state.begin());
    }
  }
  if (layout.step >= 0) inputs.mutable_f32(layout.step)[0] += 1.0f;
}

}  // namespace tilesim::workloads::training
