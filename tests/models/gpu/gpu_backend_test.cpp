// The gpu-model backend (models/gpu/gpu_backend.hpp): `tilesim run` with it reports modeled times, and
// it runs a chained graph from shapes alone.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/gpu_model_cases.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using namespace tilesim_test::gpu_cases;
namespace fs = std::filesystem;

namespace {

using tilesim_test::CliResult;

}  // namespace

TEST_CASE("tilesim run with the gpu-model backend reports modeled times", "[gpu][cli]") {
  const std::string small = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/small.json";
  const fs::path out = gpu_dir() / "run";
  auto r = tilesim_cli("run " + small + " --backends gpu-model:a100-40gb:eager,gpu-model:h100-sxm --json --out " + out.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  REQUIRE(report["results"].size() == 2);
  const auto& eager = report["results"][0];
  CHECK(eager["backend"] == "gpu-model:a100-40gb:eager");
  CHECK(eager["kind"] == "modeled");
  CHECK(eager["machine"] == "a100-40gb");
  CHECK(eager["host"]["mode"] == "eager");
  CHECK_THAT(eager["host"]["machine_file"].get<std::string>(), Catch::EndsWith("models/gpu/machines/a100-40gb.json"));
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  REQUIRE(eager["ops"].size() == 2);
  // small.json's ops are tiny: both sit on their eager host floors.
  CHECK(eager["ops"][0]["time_s"].get<double>() == Approx(a100.calibration.host_gather_s));
  CHECK(eager["ops"][1]["time_s"].get<double>() == Approx(a100.calibration.host_scatter_add_s));
  for (const auto& op : eager["ops"]) {
    CHECK(op["verified"].is_null());
    CHECK(op["verification"] == "modeled: no outputs computed");
    CHECK(op["bytes_by_level"].contains("hbm_bytes"));
    CHECK(op["min_bytes"].get<std::int64_t>() > 0);
  }
  CHECK(eager["ops"][1]["flops"].get<double>() == 32.0 * 16);
  const auto& kernel = report["results"][1];
  CHECK(kernel["backend"] == "gpu-model:h100-sxm");
  CHECK(kernel["host"]["mode"] == "kernel");
  CHECK(kernel["ops"][0]["time_s"].get<double>() < eager["ops"][0]["time_s"].get<double>());

  auto bad = tilesim_cli("run " + small + " --backends gpu-model:a100 --out " + out.string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("unknown GPU machine \"a100\""));
  bad = tilesim_cli("run " + small + " --backends gpu-model: --out " + out.string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--backends") && Catch::Contains("gpu-model:MACHINE"));
  bad = tilesim_cli("run " + small + " --backends gpu-model:a100-40gb,gpu-model:a100-40gb:kernel --out " + out.string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("each backend once"));

  auto machines = tilesim_cli("machines");
  CHECK(machines.exit_code == 0);
  CHECK_THAT(machines.out, Catch::Contains("gpu-model:a100-40gb") && Catch::Contains("gpu-model:h200"));
}

TEST_CASE("the gpu-model backend runs a chained graph from shapes alone", "[gpu][model][ops][unit]") {
  // linear -> relu -> gather -> scatter_mean: every op after the first reads an earlier output.
  OpGraph graph;
  const TensorId x = graph.add_tensor({"x", {100, 32}, DType::float32});
  const TensorId w = graph.add_tensor({"w", {32, 16}, DType::float32});
  const TensorId src = graph.add_tensor({"src", {400}, DType::int32});
  const TensorId dst = graph.add_tensor({"dst", {400}, DType::int32});
  namespace layers = tilesim::workloads::layers;
  const TensorId h = graph.add_op(layers::matmul("lin", graph, x, w, -1));
  const TensorId a = graph.add_op(layers::unary("act", graph, UnaryFn::relu, h));
  const TensorId msg = graph.add_op(layers::gather("gather", graph, a, src));
  graph.add_op(layers::scatter("aggregate", graph, OpKind::scatter_mean, msg, dst, 100));

  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    GpuModelBackend backend(load_gpu_machine("a100-40gb"), mode, "gpu-model:a100-40gb");
    backend.prepare(graph);
    const BackendResult r = backend.run(graph, TensorValues{}, RunOptions{});
    CHECK(r.kind == ResultKind::modeled);
    REQUIRE(r.ops.size() == 4);
    double total = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      INFO(r.ops[i].op);
      CHECK(r.ops[i].op_kind == graph.ops[i].kind);
      const GpuPrediction alone = predict_op(graph.ops[i], backend.machine(), mode);
      if (mode == GpuMode::kernel) {
        CHECK(r.ops[i].time_s == alone.time_s);
      } else {
        // In a graph an eager op's host side is its own floor plus autograd's bookkeeping once it
        // reads a parameter (here every op from the linear on): models/gpu/eager_timeline.hpp.
        const double host = r.ops[i].plan["eager_host_s"].get<double>();
        CHECK(host == Approx(alone.host_floor_s + alone.python_kernel_calls * backend.machine().eager.autograd_node_s));
      }
      CHECK(r.ops[i].plan["mode"] == to_string(mode));
      CHECK(!r.ops[i].plan["call"].get<std::string>().empty());
      total += r.ops[i].time_s;
    }
    CHECK(r.time_s == Approx(total));
    if (mode == GpuMode::eager) {
      const auto& e = r.host["eager"];
      CHECK(r.time_s == Approx(std::max(e["host_s"].get<double>(), e["device_s"].get<double>())));
    }
  }
}
