// The GPU model's eager mode from recorded call sequences (models/gpu/eager_calls.hpp) and its
// back-to-back timeline (models/gpu/eager_timeline.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "models/gpu/eager_calls.hpp"
#include "models/gpu/eager_timeline.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/workload.hpp"
#include "workloads/training/autodiff.hpp"

using namespace tilesim;
using namespace tilesim::gpu;

namespace {

nlohmann::json calls_doc() { return load_json_file(eager_record_dir() + "/aten_calls.json"); }
nlohmann::json layers_doc() { return load_json_file(eager_record_dir() + "/pyg_layers.json"); }

OpGraph schnet_block_graph(std::int64_t nodes, std::int64_t features, std::int64_t edges) {
  OpGraph g;
  std::vector<workloads::layers::InputFill> fills;
  workloads::layers::lower_schnet_block(g, fills, "schnet_block_0", nodes, features, edges, 7);
  return g;
}

}  // namespace

TEST_CASE("every forward op signature has a recorded eager sequence that starts with a Python-level call", "[unit]") {
  const EagerRecord& r = eager_record();
  CHECK(r.recorded_with.find("libtorch") != std::string::npos);
  for (const Op& probe : eager_probe_ops()) {
    INFO(probe.name);
    const RecordedSequence* seq = recorded_sequence(probe);
    REQUIRE(seq != nullptr);
    CHECK(seq->calls.front().depth == 0);
    CHECK(seq->kernel_calls() >= 1);  // every one of these ops launches at least one kernel
    CHECK_FALSE(seq->python.empty());
  }
  // Training kinds and pyg_lib's segment matmul have none.
  Op seg;
  seg.kind = OpKind::segment_matmul;
  CHECK(recorded_sequence(seg) == nullptr);
  Op grad;
  grad.kind = OpKind::matmul;
  grad.transpose_input = true;
  CHECK(eager_signature(grad).empty());
}

TEST_CASE("each kernel model launches as many kernels as the recorded sequence has kernel-launching calls", "[unit]") {
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  for (const Op& probe : eager_probe_ops()) {
    // torch_scatter's max is its own CUDA extension (six kernels), not the ATen scatter_reduce_ PyG
    // falls back to without it, which is what libtorch can record.
    if (probe.kind == OpKind::scatter_max) continue;
    INFO(probe.name);
    const GpuPrediction p = predict_op(probe, a100, GpuMode::kernel);
    CHECK(static_cast<int>(p.kernels.size()) == recorded_sequence(probe)->kernel_calls());
  }
}

TEST_CASE("recorded sequences: the known decompositions of PyG's calls", "[unit]") {
  auto ops_of = [](const std::string& sig) {
    std::vector<std::string> top;
    for (const auto& c : eager_record().sequences.at(sig).calls)
      if (c.depth == 0) top.push_back(c.op);
    return top;
  };
  // F.linear with a bias is one addmm under aten::linear; CFConv's cutoff is five elementwise calls;
  // torch_scatter's sum is a broadcast (two views), zeros and scatter_add_.
  CHECK(ops_of("matmul+bias") == std::vector<std::string>{"aten::linear"});
  const auto& linear = eager_record().sequences.at("matmul+bias").calls;
  CHECK(std::any_of(linear.begin(), linear.end(), [](const RecordedCall& c) { return c.op == "aten::addmm" && c.depth == 1; }));
  CHECK(eager_record().sequences.at("unary:cosine_cutoff").kernel_calls() == 5);
  CHECK(ops_of("scatter_add") == std::vector<std::string>{"aten::view", "aten::expand_as", "aten::zeros", "aten::scatter_add_"});
  CHECK(eager_record().sequences.at("scatter_add").view_calls() == 2);
  CHECK(ops_of("binary:multiply:per_row") == std::vector<std::string>{"aten::view", "aten::mul"});
}

TEST_CASE("an op's eager host time is its recorded calls' floors", "[unit]") {
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  Op mul = eager_probe_ops().front();
  for (const Op& p : eager_probe_ops())
    if (p.name == "binary:multiply:per_row") mul = p;
  const GpuPrediction e = predict_op(mul, a100, GpuMode::eager);
  CHECK(e.host_floor_s == Approx(a100.eager.aten_call_s + a100.eager.aten_view_call_s));
  CHECK(e.aten_calls.size() == 2);  // view, mul
  CHECK(e.aten_calls.at(0)["op"] == "aten::view");
  CHECK(e.aten_calls.at(0)["shapes"].at(0).at(0) == mul.shape.num_inputs);
  // The fitted floors stay where the whole call was measured (hydronet's gather).
  Op gather = eager_probe_ops().front();
  REQUIRE(gather.kind == OpKind::gather);
  CHECK(predict_op(gather, a100, GpuMode::eager).host_floor_s == Approx(a100.calibration.host_gather_s));
}

TEST_CASE("the eager record reader rejects bad files with the file and JSON path", "[unit]") {
  nlohmann::json calls = calls_doc(), layers = layers_doc();
  nlohmann::json extra = calls;
  extra["signatures"]["gather"]["calls"][0]["kernel"] = true;
  CHECK_THROWS_WITH(parse_eager_record(extra, "c.json", layers, "l.json"),
                    Catch::Contains("c.json") && Catch::Contains("signatures.gather.calls[0]") && Catch::Contains("kernel"));
  nlohmann::json nested = calls;
  nested["signatures"]["gather"]["calls"][0]["depth"] = 1;
  CHECK_THROWS_WITH(parse_eager_record(nested, "c.json", layers, "l.json"), Catch::Contains("depth-0"));
  nlohmann::json bad_layers = layers;
  bad_layers["layers"]["gcn"]["module_calls"] = -1;
  CHECK_THROWS_WITH(parse_eager_record(calls, "c.json", bad_layers, "l.json"),
                    Catch::Contains("l.json") && Catch::Contains("layers.gcn.module_calls"));
  nlohmann::json no_source = layers;
  no_source["layers"]["gcn"].erase("source");
  CHECK_THROWS_AS(parse_eager_record(calls, "c.json", no_source, "l.json"), InputError);
}

TEST_CASE("every group kind a layer lowers to has its PyG module structure in pyg_layers.json", "[unit]") {
  using namespace tilesim::workloads::layers;
  const auto& layers = eager_record().layers;
  std::vector<LayerSpec> specs;
  for (const char* name : {"gcn", "sage", "gin", "gat", "schnet", "rgcn", "linear", "pool", "film", "cgconv"}) {
    const auto kind = layer_kind_from_string(name);
    REQUIRE(kind.has_value());
    LayerSpec spec;
    spec.kind = *kind;
    specs.push_back(spec);
  }
  LayerSpec gin_linear;
  gin_linear.kind = LayerKind::gin;
  gin_linear.gin_nn = GinNn::linear;
  specs.push_back(gin_linear);
  for (const LayerSpec& spec : specs) {
    INFO(group_kind(spec));
    CHECK(layers.count(group_kind(spec)) == 1);
  }
  CHECK(group_kind(gin_linear) == "gin_linear");
  // One Linear inside GINConv is 2 module calls where the MLP's Sequential is 5; a bare Linear propagates nothing.
  CHECK(layers.at("gin_linear").module_calls == 2);
  CHECK(layers.at("gin").module_calls == 5);
  CHECK(layers.at("linear").propagate_calls == 0);
  CHECK(layers.at("pool").module_calls == 0);  // global_mean_pool is a function
}

TEST_CASE("eager timeline: back-to-back stretches take the larger of host and device, a waiting call adds both", "[unit]") {
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  OpGraph g;
  for (int i = 0; i < 4; ++i) {
    Op op;
    op.name = "op" + std::to_string(i);
    op.kind = OpKind::unary;
    g.ops.push_back(op);
  }
  std::vector<GpuPrediction> p(4);
  p[0].host_floor_s = 10e-6, p[0].kernel_s = 2e-6;
  p[1].host_floor_s = 10e-6, p[1].kernel_s = 30e-6;  // stretch 1: host 20, device 32 -> 32
  p[2].host_floor_s = 5e-6, p[2].kernel_s = 7e-6, p[2].host_waits_for_device = true;  // 12
  p[3].host_floor_s = 9e-6, p[3].kernel_s = 1e-6;     // stretch 2: 9
  const EagerTimeline t = eager_timeline(g, p, a100);
  CHECK(t.total_s == Approx(32e-6 + 12e-6 + 9e-6));
  double sum = 0;
  for (double s : t.op_time_s) sum += s;
  CHECK(sum == Approx(t.total_s));
  CHECK(t.op_time_s[1] == Approx(30e-6));  // a device-bound stretch charges each op its kernels
  CHECK(t.op_time_s[3] == Approx(9e-6));   // a host-bound one its host time
}

TEST_CASE("schnet_block on the A100 in eager mode runs the recorded sequence with PyG's Python and autograd", "[unit]") {
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  GpuModelBackend eager(a100, GpuMode::eager, "gpu-model:a100-40gb:eager");
  const OpGraph small = schnet_block_graph(64, 32, 256);
  const BackendResult r = eager.run(small, {}, {});
  const auto& e = r.host.at("eager");
  REQUIRE(e.at("layers").size() == 1);
  CHECK(e.at("layers")[0]["module_calls"] == 10);
  CHECK(e.at("layers")[0]["propagate_calls"] == 1);
  // A small block is host bound: its time is the host's, which is more than the ops' own floors (the
  // layer's Python and autograd's bookkeeping come on top).
  CHECK(e.at("bound") == "host");
  CHECK(r.time_s == Approx(e.at("host_s").get<double>()));
  double floors = 0, sum = 0;
  for (const auto& row : r.ops) {
    floors += row.plan.at("host_floor_s").get<double>();
    sum += row.time_s;
  }
  CHECK(sum == Approx(r.time_s));
  const double python = 10 * a100.eager.module_call_s + a100.eager.propagate_call_s;
  CHECK(e.at("host_s").get<double>() > floors + python);  // + autograd on every op downstream of a weight
  // Every matmul row names the recorded F.linear call and its sizes.
  for (const auto& row : r.ops)
    if (row.op_kind == OpKind::matmul) CHECK(row.plan.at("aten_calls").at(0)["op"] == "aten::linear");
  // A large block is device bound, and the kernel mode is the device time.
  GpuModelBackend kernel(a100, GpuMode::kernel, "gpu-model:a100-40gb");
  const OpGraph large = schnet_block_graph(4096, 512, 32768);
  const BackendResult big = eager.run(large, {}, {});
  CHECK(big.host.at("eager").at("bound") == "device");
  CHECK(big.time_s == Approx(kernel.run(large, {}, {}).time_s));
}

namespace {

// The probe op as a one-op graph over real tensors, then tilesim's backward of it (workloads/training)
// with every float operand requiring grad, as the recorder runs it.
int lowered_backward_kernels(const Op& probe, const GpuMachine& m) {
  namespace layers = tilesim::workloads::layers;
  OpGraph g;
  const OpShape& s = probe.shape;
  const TensorId x = g.add_tensor({"x", {s.num_inputs, s.num_features}, DType::float32});
  std::set<TensorId> requires_grad = {x};
  TensorId out = -1;
  switch (probe.kind) {
    case OpKind::gather: {
      const TensorId idx = g.add_tensor({"idx", {s.num_outputs}, DType::int32});
      out = g.add_op(layers::gather("op", g, x, idx));
      break;
    }
    case OpKind::scatter_add:
    case OpKind::scatter_mean: {
      const TensorId idx = g.add_tensor({"idx", {s.num_inputs}, DType::int32});
      out = g.add_op(layers::scatter("op", g, probe.kind, x, idx, s.num_outputs));
      break;
    }
    case OpKind::matmul: {
      const TensorId w = g.add_tensor({"w", {s.num_features, s.out_features}, DType::float32});
      const TensorId b = probe.bias >= 0 ? g.add_tensor({"b", {s.out_features}, DType::float32}) : TensorId{-1};
      requires_grad.insert(w);
      if (b >= 0) requires_grad.insert(b);
      out = g.add_op(layers::matmul("op", g, x, w, b));
      break;
    }
    case OpKind::unary: out = g.add_op(layers::unary("op", g, probe.unary, x, probe.scalar)); break;
    case OpKind::binary: {
      const TensorId other = g.add_tensor({"other", {s.other_rows, s.other_groups}, DType::float32});
      requires_grad.insert(other);
      out = g.add_op(layers::binary("op", g, probe.binary, x, other));
      break;
    }
    default: FAIL("no lowered backward for " << probe.name);
  }
  const std::size_t forward_end = g.ops.size();
  const TensorId grad = g.add_tensor({"grad", g.tensor(out).shape, DType::float32});
  workloads::training::append_backward(g, forward_end, out, grad, requires_grad);
  int kernels = 0;
  for (std::size_t i = forward_end; i < g.ops.size(); ++i) kernels += static_cast<int>(predict_op(g.ops[i], m, GpuMode::kernel).kernels.size());
  return kernels;
}

}  // namespace

TEST_CASE("tilesim's lowered backward of each op launches as many kernels as autograd's recorded backward", "[unit]") {
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  // Where tilesim's backward lowering (workloads/training/autodiff.cpp) knowingly differs from what
  // PyTorch 1.13's autograd runs, by this many kernels (lowered - recorded):
  //  - divide: the divisor's gradient is -sum(g * out) / o, reusing the forward's quotient and reducing
  //    before dividing (3 kernels with the sum); autograd computes -g * ((x / o) / o) (4, then the sum);
  //  - scatter_mean: the op graph keeps no count tensor from the forward, so the backward recounts
  //    (degree: 3 kernels, the reciprocal's 3, the scaling 1, the gather 1); torch_scatter's mean saved
  //    its count, and autograd runs DivBackward0's div and ScatterAddBackward0's gather;
  //  - clamp_min: ClampMinBackward0 copies its one-element 0 to the gradient's type before the where; the
  //    model prices the mask and the select, not that one-element launch.
  const std::map<std::string, int> known = {{"scatter_mean", 6},
                                            {"unary:clamp_min", -1},
                                            {"binary:divide:row", -1},
                                            {"binary:divide:same", -1},
                                            {"binary:divide:per_row", -1},
                                            {"binary:divide:per_group", -1}};
  int compared = 0;
  for (const Op& probe : eager_probe_ops()) {
    const RecordedSequence* seq = recorded_sequence(probe);
    if (seq->backward.empty()) continue;
    INFO(probe.name);
    CHECK(seq->backward_nodes() >= 1);
    const auto it = known.find(probe.name);
    CHECK(lowered_backward_kernels(probe, a100) - seq->backward_kernels() == (it == known.end() ? 0 : it->second));
    ++compared;
  }
  CHECK(compared == 31);  // 16 binaries, 10 unaries, gather, scatter_add, scatter_mean, matmul with and without bias
}

TEST_CASE("eager-nograd: the same calls without autograd's bookkeeping, and no training step", "[unit]") {
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  GpuModelBackend grad(a100, GpuMode::eager, "gpu-model:a100-40gb:eager", true);
  GpuModelBackend nograd(a100, GpuMode::eager, "gpu-model:a100-40gb:eager-nograd", false);
  const OpGraph g = schnet_block_graph(64, 32, 256);
  const BackendResult a = grad.run(g, {}, {}), b = nograd.run(g, {}, {});
  CHECK(b.host.at("eager").at("grad_mode") == false);
  // 14 of the block's calls read a parameter or what came from one (see the host-bound case above).
  CHECK(a.time_s - b.time_s == Approx(14 * a100.eager.autograd_node_s));
  OpGraph step = g;
  step.ops.back().phase = OpPhase::backward;
  CHECK_THROWS_WITH(nograd.prepare(step), Catch::Contains("needs grad mode") && Catch::Contains(":eager"));
  CHECK_NOTHROW(grad.prepare(step));
}

TEST_CASE("eager training step: each recorded forward and loss call is a backward node, charged once to its gradient's first op", "[unit]") {
  GpuMachine m = load_gpu_machine("a100-40gb");
  const nlohmann::json doc = {
      {"name", "nodes"},
      {"seed", 3},
      {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 60}, {"num_edges", 300}}},
      {"num_features", 12},
      {"model", nlohmann::json::array({{{"layer", "gcn"}, {"name", "conv1"}, {"out", 16}, {"activation", "relu"}},
                                       {{"layer", "gcn"}, {"name", "conv2"}, {"out", 4}}})},
      {"train", {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}}}};
  const OpGraph g = workloads::build_graph(workloads::parse_workload(doc, "w.json"));
  std::vector<GpuPrediction> p;
  const auto steps = foreach_steps(g);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    p.push_back(predict_op(g.ops[i], m, GpuMode::eager, steps.count(i) ? &steps.at(i) : nullptr));
  // The forward calls that record history: every kernel-launching call of an op reading a parameter or
  // what came from one. Counted here from the forward timeline's own autograd charge.
  m.eager.autograd_backward_node_s = 0;
  const EagerTimeline without = eager_timeline(g, p, m);
  const double forward_nodes = (without.host_s - eager_timeline(g, p, [&] {
                                                   GpuMachine n = m;
                                                   n.eager.autograd_node_s = 0;
                                                   return n;
                                                 }()).host_s) /
                               m.eager.autograd_node_s;
  m.eager.autograd_backward_node_s = 1e-3;
  const EagerTimeline with = eager_timeline(g, p, m);
  // Forward nodes plus cross entropy's two (log_softmax, nll_loss), with row weights five.
  const Op& loss = *std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.kind == OpKind::loss; });
  const int loss_nodes = loss.aux >= 0 ? 5 : 2;
  CHECK(with.backward_nodes == Approx(forward_nodes));
  CHECK(with.backward_nodes > loss_nodes);
  CHECK(with.host_s - without.host_s == Approx(with.backward_nodes * 1e-3));
  // Each forward op's nodes land on one backward op of its gradient (the first in graph order).
  std::set<std::string> charged;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const double extra = with.op_host_s[i] - without.op_host_s[i];
    if (extra == 0) continue;
    REQUIRE(g.ops[i].phase != OpPhase::forward);
    CHECK(charged.insert(g.ops[i].grad_of).second);
  }
  CHECK(charged.count("loss") == 1);
  // The report says which stack the step stands for, and counts the nodes.
  GpuModelBackend backend(load_gpu_machine("v100-16gb"), GpuMode::eager, "gpu-model:v100-16gb:eager", true);
  backend.prepare(g);
  const BackendResult r = backend.run(g, {}, {});
  CHECK(r.host.at("framework").at("pytorch") == "1.8.1");
  CHECK(r.host.at("framework").at("optimizer") == "per_parameter_loop");
  CHECK(r.host.at("framework").at("zero_grad") == "fill");
  CHECK(r.host.at("eager").at("backward_nodes") == with.backward_nodes);
}
