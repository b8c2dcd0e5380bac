// The simulated IPU in float16: a table too large for the tiles in float32 fits in float16; and its side
// of mixed precision: the cast op between float32 and float16 (scaled or not)
// runs verified, bit for bit as the reference rounds it, whether the input's linear layout matches the
// output's or has to be exchanged into it; a bfloat16 side is refused; and a float16 training step of a
// GCN runs verified with the loss curve of the CPU's.
#include <catch2/catch.hpp>

#include <vector>

#include "kernels/cpu/cpu_backend.hpp"
#include "common/error.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/planning/plan.hpp"
#include "tests/support/cast_cases.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/training/training_step.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;

TEST_CASE("ipu cast: float32 <-> float16, scaled or not, verified and rounded once as the reference", "[ipu][half][unit]") {
  ipu::IpuBackend bow(ipu::load_ipu_machine("bow"), "ipu:bow");
  // 3 x 5 spreads over few tiles, differently at 2 and 4 bytes per element (the input is exchanged);
  // 3000 x 64 covers every tile at either size (read in place).
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{3, 5}, {3000, 64}}) {
    for (const auto& [from, to] : {std::pair{DType::float32, DType::float16}, {DType::float16, DType::float32}}) {
      for (const float scale : {1.0f, 1024.0f, 1.0f / 1024.0f}) {
        INFO(rows << " x " << cols << ", " << to_string(from) << " -> " << to_string(to) << ", scale " << scale);
        tilesim_test::OpCase c = tilesim_test::cast_case(from, to, scale, rows, cols);
        const BackendResult r = bow.run(c.graph, c.values, tilesim_test::single_call());
        REQUIRE(r.ops.size() == 1);
        INFO(r.ops[0].verification);
        CHECK(r.ops[0].verified == true);
        const std::vector<float>& in = c.values.f32(c.op().input);
        const std::vector<float>& out = bow.outputs().f32(c.op().output);
        REQUIRE(out.size() == in.size());
        std::size_t exact = 0;
        for (std::size_t i = 0; i < in.size(); ++i) exact += out[i] == round_to(to, static_cast<float>(static_cast<double>(scale) * in[i])) ? 1 : 0;
        CHECK(exact == in.size());
        CHECK(r.ops[0].cycles.value_or(0) > 0);
      }
    }
  }
  tilesim_test::OpCase bf = tilesim_test::cast_case(DType::bfloat16, DType::float32, 1.0f, 4, 8);
  CHECK_THROWS_WITH(bow.run(bf.graph, bf.values, tilesim_test::single_call()), Catch::Contains("its input is bfloat16"));
}

TEST_CASE("ipu half training: a float16 GCN step runs verified on the simulated IPU, its losses the CPU's", "[ipu][half][training][unit]") {
  const nlohmann::json doc = {
      {"name", "mixed"},
      {"seed", 5},
      {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 60}, {"num_edges", 300}}},
      {"num_features", 12},
      {"dtype", "float16"},
      {"model", nlohmann::json::array({{{"layer", "gcn"}, {"name", "conv1"}, {"out", 16}, {"activation", "relu"}},
                                       {{"layer", "gcn"}, {"name", "conv2"}, {"out", 4}}})},
      {"train", {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}}}};
  const workloads::Instance s = workloads::instantiate(workloads::parse_workload(doc, "w.json"));
  std::size_t casts = 0;
  for (const Op& op : s.graph.ops) casts += op.kind == OpKind::cast ? 1 : 0;
  CHECK(casts > 0);
  ipu::IpuBackend bow(ipu::load_ipu_machine("bow"), "ipu:bow");
  kernels::cpu::CpuBackend cpu;
  TensorValues on_ipu = s.values, on_cpu = s.values;
  std::vector<double> ipu_losses, cpu_losses;
  for (int step = 0; step < 3; ++step) {
    const BackendResult r = bow.run(s.graph, on_ipu, tilesim_test::single_call());
    for (const OpResult& row : r.ops) {
      INFO("step " << step + 1 << " op " << row.op << ": " << row.verification);
      CHECK(row.verified == true);
    }
    cpu.run(s.graph, on_cpu, tilesim_test::single_call());
    ipu_losses.push_back(bow.outputs().f32(s.training.loss).at(0));
    cpu_losses.push_back(cpu.outputs().f32(s.training.loss).at(0));
    workloads::training::advance_step(s.training, bow.outputs(), on_ipu);
    workloads::training::advance_step(s.training, cpu.outputs(), on_cpu);
  }
  for (std::size_t k = 0; k < ipu_losses.size(); ++k) {
    INFO("step " << k + 1 << ": ipu " << ipu_losses[k] << ", cpu " << cpu_losses[k]);
    CHECK(ipu_losses[k] == Approx(cpu_losses[k]).epsilon(0.01));
  }
  CHECK(ipu_losses.back() < ipu_losses.front());
}

TEST_CASE("ipu float16: a gather whose table does not fit one Bow in float32 fits in float16", "[ipu][half][unit]") {
  // 1,000,000 x 256: 1.02 GB in float32, more than the Bow's 1472 x 624 KiB; 512 MB in float16.
  const ipu::IpuMachine bow = ipu::load_ipu_machine("bow");
  OpGraph g32, g16;
  g32.add_gather_scatter("g", OpKind::gather, DType::float32, {1000000, 256, 4096});
  g16.add_gather_scatter("g", OpKind::gather, DType::float16, {1000000, 256, 4096});
  CHECK_THROWS_AS(ipu::plan_op(g32.ops.front(), bow), PlanError);
  const ipu::OpPlan p = ipu::plan_op(g16.ops.front(), bow);
  CHECK(p.estimated_peak_tile_bytes <= bow.chip.sram_bytes_per_tile);
  CHECK(p.estimated_cycles > 0);
}
