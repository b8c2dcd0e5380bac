// The cpu-model backend's described CPU node: its machine file (strict, every figure sourced), the
// derived peaks, the per-op roofline against hand-computed times, and `tilesim run` of a training
// workload on cpu-model:spr-2s and cpu-model:spr-cluster.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "models/cpu/node/cpu_node.hpp"
#include "models/cpu/node/cpu_node_backend.hpp"
#include "models/cpu/node/cpu_op_model.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::cpu_model;
using json = nlohmann::json;
using Catch::Matchers::Contains;

namespace {

json figure(double value) { return {{"value", value}, {"source", "test figure"}}; }

// Round figures: 2 sockets x 10 cores at 1 GHz; 2 x 4 channels x 8 bytes x 1e9 transfers/s = 64 GB/s
// peak, half of it sustained; fp32 20 x 2 x 16 x 2 x 1e9 = 1.28e12 FLOP/s, fp16 twice that, AMX
// 20 x 1000 x 1e9 = 2e13 FLOP/s; 10 us per op.
json round_node_json() {
  return {{"name", "round"},
          {"description", "a node of round figures"},
          {"node", {{"sockets", figure(2)}, {"cores_per_socket", figure(10)}, {"base_clock_hz", figure(1e9)},
                    {"memory_bytes", figure(1e12)}}},
          {"memory", {{"channels_per_socket", figure(4)}, {"transfers_per_s", figure(1e9)}, {"bytes_per_transfer", figure(8)},
                      {"stream_fraction", figure(0.5)}}},
          {"vector", {{"fma_units_per_core", figure(2)}, {"fp32_lanes_per_fma", figure(16)}, {"fp16_lanes_per_fma", figure(32)}}},
          {"matrix", {{"amx_bf16_flops_per_cycle_per_core", figure(1000)}}},
          {"software", {{"per_op_overhead_s", figure(1e-5)}}}};
}

Op matmul_op(std::int64_t m, std::int64_t k, std::int64_t n, DType dtype) {
  Op op;
  op.name = "mm";
  op.kind = OpKind::matmul;
  op.dtype = dtype;
  op.shape.num_inputs = m;
  op.shape.num_features = k;
  op.shape.out_features = n;
  return op;
}

}  // namespace

TEST_CASE("cpu node: the derived peaks are the products of the file's figures", "[cpu_model][formula]") {
  const CpuNode n = parse_cpu_node(round_node_json(), "round.json");
  CHECK(n.cores() == 20);
  CHECK(n.peak_dram_bytes_per_s() == Approx(64e9));
  CHECK(n.stream_bytes_per_s() == Approx(32e9));
  CHECK(n.fp32_vector_flops_per_s() == Approx(1.28e12));
  CHECK(n.fp16_vector_flops_per_s() == Approx(2.56e12));
  CHECK(n.bf16_amx_flops_per_s() == Approx(2e13));
  CHECK(n.provenance.figure("memory.stream_fraction").source == "test figure");
  CHECK(n.derived_json()["stream_bytes_per_s"]["value"].get<double>() == Approx(32e9));
}

TEST_CASE("cpu node: spr-2s carries the Xeon 8480+ figures the issue names, each sourced", "[cpu_model][unit]") {
  const CpuNode n = load_cpu_node("spr-2s");
  CHECK(n.cores() == 112);
  // 8 channels of DDR5-4800 per socket: 307.2 GB/s per socket peak (Intel's product brief figure).
  CHECK(n.peak_dram_bytes_per_s() / static_cast<double>(n.sockets) == Approx(307.2e9));
  // AVX-512 FP32: cores x 2 FMA units x 16 lanes x 2 x 2.0 GHz.
  CHECK(n.fp32_vector_flops_per_s() == Approx(112.0 * 2 * 16 * 2 * 2.0e9));
  CHECK(n.stream_bytes_per_s() < n.peak_dram_bytes_per_s());
  for (const MachineFigure& f : n.provenance.figures()) {
    INFO(f.path);
    CHECK(f.source.size() > 20);
    // A figure that is not a vendor's says it is an assumption.
    if (f.path == "memory.stream_fraction" || f.path == "software.per_op_overhead_s" || f.path == "node.memory_bytes")
      CHECK_THAT(f.source, Contains("assumption:"));
  }
}

TEST_CASE("cpu node: bad machine files are InputErrors naming the file and JSON path", "[cpu_model][unit]") {
  const json good = round_node_json();
  json doc = good;
  doc["memory"]["colour"] = figure(1);
  CHECK_THROWS_WITH(parse_cpu_node(doc, "n.json"), Contains("n.json: memory.colour") && Contains("unknown key"));
  doc = good;
  doc["node"]["cores_per_socket"].erase("source");
  CHECK_THROWS_WITH(parse_cpu_node(doc, "n.json"), Contains("n.json: node.cores_per_socket.source") && Contains("required"));
  doc = good;
  doc["memory"]["stream_fraction"]["value"] = 0;
  CHECK_THROWS_WITH(parse_cpu_node(doc, "n.json"), Contains("n.json: memory.stream_fraction.value"));
  doc = good;
  doc["node"]["base_clock_hz"]["value"] = -2e9;
  CHECK_THROWS_WITH(parse_cpu_node(doc, "n.json"), Contains("n.json: node.base_clock_hz.value"));
  doc = good;
  doc["memory"]["stream_fraction"]["value"] = 1.2;  // no memory sustains more than its wire rate
  CHECK_THROWS_WITH(parse_cpu_node(doc, "n.json"), Contains("memory.stream_fraction.value"));
  doc = good;
  doc["vector"]["fma_units_per_core"] = 2;  // a bare number: no source
  CHECK_THROWS_WITH(parse_cpu_node(doc, "n.json"), Contains("n.json: vector.fma_units_per_core") && Contains("source"));
  doc = good;
  doc.erase("matrix");
  CHECK_THROWS_WITH(parse_cpu_node(doc, "n.json"), Contains("n.json: matrix"));
  CHECK_THROWS_AS(load_cpu_node("spr-3s"), InputError);
  CHECK_THROWS_WITH(load_cpu_node("spr-3s"), Contains("unknown CPU node \"spr-3s\""));
}

TEST_CASE("cpu node: each op is max(bytes / stream, FLOPs / unit peak) + overhead", "[cpu_model][formula]") {
  const CpuNode n = parse_cpu_node(round_node_json(), "round.json");
  SECTION("a gather is memory-bound: indices, the distinct rows read and the rows written") {
    Op op;
    op.name = "g";
    op.kind = OpKind::gather;
    op.shape = {1000, 64, 100000};
    const double bytes = 100000.0 * 4 + 1000.0 * 64 * 4 + 100000.0 * 64 * 4;
    const CpuOpPrediction p = predict_cpu_op(op, n);
    CHECK(p.bytes == Approx(bytes));
    CHECK(p.flops == 0);
    CHECK(p.bound == "memory");
    CHECK(p.time_s == Approx(bytes / 32e9 + 1e-5));
  }
  SECTION("a float32 matmul on the AVX-512 units is compute-bound at 1024^3") {
    const CpuOpPrediction p = predict_cpu_op(matmul_op(1024, 1024, 1024, DType::float32), n);
    CHECK(p.unit == "AVX-512");
    CHECK(p.bound == "compute");
    CHECK(p.time_s == Approx(2.0 * 1024 * 1024 * 1024 / 1.28e12 + 1e-5));
  }
  SECTION("the same product in bfloat16 runs on AMX and becomes memory-bound") {
    const CpuOpPrediction p = predict_cpu_op(matmul_op(1024, 1024, 1024, DType::bfloat16), n);
    CHECK(p.unit == "AMX");
    CHECK(p.compute_s == Approx(2.0 * 1024 * 1024 * 1024 / 2e13));
    CHECK(p.bound == "memory");
    CHECK(p.time_s == Approx(3.0 * 1024 * 1024 * 2 / 32e9 + 1e-5));
  }
  SECTION("float16 products on AVX-512-FP16; element-wise float16 work on the float32 lanes") {
    CHECK(predict_cpu_op(matmul_op(1024, 1024, 1024, DType::float16), n).compute_s ==
          Approx(2.0 * 1024 * 1024 * 1024 / 2.56e12));
    Op relu;
    relu.name = "r";
    relu.kind = OpKind::unary;
    relu.dtype = DType::float16;
    relu.shape.num_inputs = 1 << 20;
    relu.shape.num_features = 8;
    const CpuOpPrediction p = predict_cpu_op(relu, n);
    CHECK(p.unit == "AVX-512");
    CHECK(p.time_s == Approx(2.0 * (1 << 20) * 8 * 2 / 32e9 + 1e-5));
  }
  SECTION("an Adam step reads parameter, gradient, two state rows and the step; writes three rows") {
    Op adam;
    adam.name = "w.step";
    adam.kind = OpKind::optimizer_step;
    adam.optimizer.kind = OptimizerSpec::Kind::adam;
    adam.phase = OpPhase::optimizer;
    adam.aux = 1;
    adam.shape.num_inputs = 1000;
    adam.shape.num_features = 64;
    const double bytes = 28.0 * 64000 + 4;
    const CpuOpPrediction p = predict_cpu_op(adam, n);
    CHECK(p.bytes == Approx(bytes));
    CHECK(p.time_s == Approx(std::max(bytes / 32e9, adam.flops() / 1.28e12) + 1e-5));
  }
  SECTION("an int32 op is refused") {
    Op op = matmul_op(4, 4, 4, DType::int32);
    CHECK_THROWS_AS(predict_cpu_op(op, n), std::invalid_argument);
  }
}

TEST_CASE("cpu-model: tilesim run of a training workload gives modeled op and phase times", "[cpu_model][cli]") {
  tilesim_test::TempDir dir("cpu-model-cli");
  const auto r = tilesim_test::run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu-model:spr-2s,cpu-model:spr-cluster "
                                           "--steps 2 --out " + dir.path("out"),
                                           dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("cpu-model:spr-2s: median step"));
  const json report = json::parse(tilesim_test::slurp(dir.path("out/report.json")));
  REQUIRE(report["results"].size() == 2);
  const json& node = report["results"][0];
  CHECK(node["backend"] == "cpu-model:spr-2s");
  CHECK(node["kind"] == "modeled");
  CHECK(node["machine"] == "spr-2s");
  const CpuNode spr = load_cpu_node("spr-2s");
  bool saw_backward = false, saw_optimizer = false;
  for (const json& op : node["ops"]) {
    INFO(op["op"]);
    CHECK(op["verified"].is_null());
    // Every row is the roofline of the op's own bytes and FLOPs, plus the overhead.
    const double bytes = op["min_bytes"].get<double>();
    CHECK(op["time_s"].get<double>() >= bytes / spr.stream_bytes_per_s() + spr.per_op_overhead_s - 1e-15);
    CHECK(op["plan"]["memory_s"].get<double>() == Approx(bytes / spr.stream_bytes_per_s()));
    saw_backward = saw_backward || op["op"].get<std::string>().find(".grad") != std::string::npos;
    saw_optimizer = saw_optimizer || op["op"].get<std::string>().find(".step") != std::string::npos;
  }
  CHECK(saw_backward);
  CHECK(saw_optimizer);
  const json& t = node["training"];
  REQUIRE(t["loss"].size() == 2);
  CHECK(t["loss"][0].is_null());
  for (const char* phase : {"forward_s", "loss_s", "backward_s", "optimizer_s"}) CHECK(t["last_step"][phase].get<double>() > 0);
  CHECK(report["results"][0]["machine_provenance"]["figures"]["node"]["cores_per_socket"]["value"] == 56);
  // The cluster alone runs as one of its nodes: the same step, the cluster's figures beside the node's.
  const json& cluster = report["results"][1];
  CHECK(cluster["machine"] == "spr-cluster (one spr-2s node)");
  CHECK(cluster["time_s"].get<double>() == Approx(node["time_s"].get<double>()));
  CHECK(cluster["machine_provenance"]["figures"]["cluster"]["nodes"]["value"] == 8);

  const auto bad = tilesim_test::run_tilesim("run workloads/examples/small.json --backends cpu-model:spr-3s --out " + dir.path("bad"), dir.dir());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("spr-3s"));
}
