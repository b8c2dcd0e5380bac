// torch-cpu in half dtypes: casts between every pair of value dtypes, a bfloat16 model trained in mixed
// precision, and the accumulation probe that tells how this libtorch sums half products.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "ir/op_graph.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference_ops.hpp"
#include "ir/tensor_values.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/torch/accumulation_probe.hpp"
#include "kernels/torch/torch_backend.hpp"
#include "kernels/torch/torch_ops.hpp"
#include "kernels/torch/training_checks.hpp"
#include "kernels/torch/training_graph.hpp"
#include "tests/support/cpu_op_cases.hpp"
#include "tests/support/dtype_cases.hpp"
#include "tests/support/random_inputs.hpp"
#include "tests/torch/torch_test_support.hpp"

using namespace tilesim;
namespace cpu = tilesim::kernels::cpu;
namespace peer = tilesim::kernels::torch_peer;
namespace reference = tilesim::reference;
using nlohmann::json;
using namespace tilesim_torch_test;

TEST_CASE("torch-cpu casts between every pair of value dtypes, scaled or not, as the reference does", "[torch][mixed_precision][unit]") {
  const DType dtypes[] = {DType::float32, DType::float16, DType::bfloat16};
  std::mt19937 rng(4);
  for (const DType from : dtypes)
    for (const DType to : dtypes)
      for (const float scale : {1.0f, 1024.0f, 0x1p-10f}) {
        INFO(to_string(from) << " -> " << to_string(to) << " x " << scale);
        OpGraph graph;
        std::vector<float> x = random_values(3000, rng, -70.0f, 70.0f);
        for (float& v : x) v = round_to(from, v * 1e-3f);
        const TensorId in = graph.add_tensor({"x", {300, 10}, from});
        Op op;
        op.name = "cast";
        op.kind = OpKind::cast;
        op.dtype = to;
        op.input = in;
        op.scalar = scale;
        op.shape = {300, 10, 0};
        graph.add_op(op);
        TensorValues inputs;
        inputs.set_f32(in, x, from);
        auto backend = peer::make_backend();
        const BackendResult r = backend->run(graph, inputs, once());
        INFO(r.ops.at(0).verification);
        CHECK(r.ops.at(0).verified == true);  // exactly the float32 product rounded once
      }
}

TEST_CASE("torch-cpu trains a bfloat16 model in mixed precision, verified, and refuses float16 (no CPU mm in this libtorch) as bad input",
          "[torch][mixed_precision][training][unit]") {
  for (const auto& [name, s32] : training_cases()) {
    if (name != "gcn" && name != "molecules") continue;
    INFO(name);
    // Whether libtorch keeps this host's bfloat16 partial sums in bfloat16 or float32, the forward
    // check follows what the backend's probe found (kernels/torch/accumulation_probe.hpp).
    json doc = training_workload({{"generator", "erdos_renyi"}, {"num_nodes", 200}, {"num_edges", 800}}, 24,
                                 json::array({{{"layer", "gcn"}, {"name", "c1"}, {"out", 16}, {"activation", "relu"}},
                                              {{"layer", "gcn"}, {"name", "c2"}, {"out", 4}}}),
                                 {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5},
                                  {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 5e-4}}}, {"loss_scale", 256}});
    if (name == "molecules")
      doc = training_workload({{"generator", "molecules"}, {"num_graphs", 24}, {"min_nodes", 8}, {"max_nodes", 10}}, 16,
                              json::array({{{"layer", "schnet"}, {"name", "i1"}, {"filters", 16}, {"num_gaussians", 20}, {"cutoff", 4.0}},
                                           {{"layer", "gin"}, {"name", "g2"}, {"out", 8}}}),
                              {{"task", "graph"}, {"loss", "mse"}, {"pool", "mean"}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}}}});
    doc["dtype"] = "bfloat16";
    const workloads::Instance s = workloads::instantiate(workloads::parse_workload(doc, "h.json"));
    auto torch_backend = peer::make_backend();
    const BackendResult result = torch_backend->run(s.graph, s.values, once());
    REQUIRE(result.ops.size() == 4);
    // The gradients are held to 32 u where libtorch adds bfloat16 products in float32, and compared
    // but not checked where it keeps the partial sums in bfloat16 (training_checks.hpp).
    const bool in_dtype = peer::host_accumulation().accumulation.bfloat16 == reference::DotAccumulation::in_dtype;
    for (const OpResult& row : result.ops) {
      INFO(row.op << ": " << row.verification);
      if (row.phase == OpPhase::backward && in_dtype) CHECK_FALSE(row.verified.has_value());
      else CHECK(row.verified == true);
    }
    CHECK_THAT(result.ops[1].verification, Catch::Contains("the input's cast, the loss"));
    CHECK_THAT(result.ops[2].verification, Catch::Contains(in_dtype ? "not checked" : "32 u(bfloat16)"));
    // The loss beside the cpu backend's (each rounds its own half forward pass).
    cpu::CpuBackend cpu_backend;
    cpu_backend.run(s.graph, s.values, once());
    const double ours = cpu_backend.outputs().f32(s.training.loss).at(0), theirs = torch_backend->computed_outputs()->f32(s.training.loss).at(0);
    CHECK(std::fabs(ours - theirs) <= 8 * unit_roundoff(DType::bfloat16) * std::max(1.0, std::fabs(ours)));
    // Each update is float32 (the master weights) and moved the parameter.
    for (const auto& slot : s.training.parameters) {
      CHECK(torch_backend->computed_outputs()->dtype(slot.update) == DType::float32);
      const std::size_t p = s.values.f32(slot.param).size();
      const std::vector<float>& update = torch_backend->computed_outputs()->f32(slot.update);
      CHECK(std::vector<float>(update.begin(), update.begin() + static_cast<std::ptrdiff_t>(p)) != s.values.f32(slot.param));
    }
    if (name != "gcn") continue;
    doc["dtype"] = "float16";
    const workloads::Instance h = workloads::instantiate(workloads::parse_workload(doc, "h.json"));
    try {
      peer::make_backend()->run(h.graph, h.values, once());
      FAIL("a float16 training step ran on a libtorch without a float16 CPU mm");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("backend torch-cpu: op 'c1.lin' (matmul, a float16 training step): libtorch") &&
                               Catch::Contains("has no float16 CPU kernel"));
    }
  }
}

TEST_CASE("torch-cpu's accumulation probe tells float32 accumulators from partial sums in the dtype", "[torch][half][unit]") {
  // The classification alone, on made-up outputs: the exact values rounded once are float32
  // accumulation; values summed in the dtype step by step are not.
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    INFO(to_string(dtype));
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<double> exact;
    std::vector<float> once, stepwise;
    for (int out = 0; out < 512; ++out) {
      double e = 0;
      float s = 0;
      for (int p = 0; p < 128; ++p) {
        const float a = round_to(dtype, d(rng)), b = round_to(dtype, d(rng));
        e += static_cast<double>(a) * b;
        s = round_to(dtype, s + a * b);
      }
      exact.push_back(e);
      once.push_back(round_to(dtype, static_cast<float>(e)));
      stepwise.push_back(s);
    }
    const peer::ProbeOutcome f32 = peer::classify_accumulation(dtype, exact, once, "a test");
    CHECK(f32.accumulation == reference::DotAccumulation::float32);
    CHECK(f32.differing == 0);
    CHECK_THAT(f32.detail, Catch::Contains("float32 accumulators") && Catch::Contains("0 of 512 outputs"));
    const peer::ProbeOutcome in_dtype = peer::classify_accumulation(dtype, exact, stepwise, "a test");
    CHECK(in_dtype.accumulation == reference::DotAccumulation::in_dtype);
    CHECK(in_dtype.differing > 512 / 10);
    CHECK_THAT(in_dtype.detail, Catch::Contains("partial sums in " + to_string(dtype)));
  }
  // This host's libtorch: bfloat16 mm runs (one way or the other), float16 mm does not in 1.13.
  const peer::HostAccumulation& host = peer::host_accumulation();
  INFO(host.bfloat16.detail);
  CHECK(host.bfloat16.ran);
  CHECK(host.bfloat16.outputs == 2 * 64 * 64);
  CHECK(host.accumulation.bfloat16 == host.bfloat16.accumulation);
  INFO(host.float16.detail);
  if (!host.float16.ran) CHECK_THAT(host.float16.detail, Catch::Contains("not probed") && Catch::Contains("float16"));
}

TEST_CASE("torch-cpu's bfloat16 matmuls verify under the probed accumulation, say it, and agree with the cpu backend",
          "[torch][half][backend][unit]") {
  tilesim_test::OpCase c = tilesim_test::matmul_case(200, 300, 16, true, 21);
  tilesim_test::convert_to_dtype(c.graph, c.values, DType::bfloat16);
  auto torch_backend = peer::make_backend();
  const BackendResult result = torch_backend->run(c.graph, c.values, once());
  REQUIRE(result.ops.size() == 1);
  INFO(result.ops[0].verification);
  CHECK(result.ops[0].verified == true);
  const nlohmann::json& probe = result.host.at("half_matmul_accumulation").at("bfloat16");
  const bool in_dtype = torch_backend->accumulation().bfloat16 == reference::DotAccumulation::in_dtype;
  CHECK(probe.at("partial_sums_in") == (in_dtype ? "bfloat16" : "float32"));
  CHECK_THAT(probe.at("probe").get<std::string>(), Catch::Contains("at::mm_out and at::addmm_out"));
  if (in_dtype) CHECK_THAT(result.ops[0].verification, Catch::Contains("partial sums in bfloat16"));
  cpu::CpuBackend cpu_backend;
  cpu_backend.run(c.graph, c.values, once());
  const Op& op = c.op();
  const reference::Agreement agreement = reference::compare_outputs(op, c.values, cpu_backend.outputs().f32(op.output),
                                                                    torch_backend->computed_outputs()->f32(op.output),
                                                                    cpu_backend.accumulation(), torch_backend->accumulation());
  INFO(agreement.detail);
  CHECK(agreement.equal);
}
