// The GPU model's eager mode from recorded call sequences (models/gpu/eager_calls.hpp) and its
// back-to-back timeline (models/gpu/eager_timeline.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "models/gpu/eager_calls.hpp"
#include "models/gpu/eager_timeline.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "workloads/layers/layers.hpp"

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
