// The simulated IPU's available memory proportion (models/ipu/planning/temporary_budget.hpp): the
// planner bounds each plan's temporaries by proportion x SRAM, a lower proportion never buys a plan with
// more temporaries (except where nothing fits its budget), the per-op field wins over the run-wide flag,
// and the report names the plan and the proportion.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <random>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/strict_json.hpp"
#include "tests/support/ipu_test_support.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/planning/temporary_budget.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using tilesim_test::bow;

namespace {

const double proportions[] = {0.02, 0.05, 0.1, 0.3, 0.6, 1.0};

OpShape random_shape(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> e(0, 15);
  return {std::int64_t{1} << (e(rng) % 13), std::int64_t{1} << (e(rng) % 10), std::int64_t{1} << e(rng)};
}

}  // namespace

TEST_CASE("the planner keeps a plan's temporaries within the proportion's budget and the whole plan within the SRAM", "[ipu][planner][unit]") {
  std::mt19937_64 rng(11);
  const std::int64_t sram = bow().chip.sram_bytes_per_tile;
  int over_budget = 0, within = 0;
  for (int trial = 0; trial < 120; ++trial) {
    OpGraph g;
    const Op& base = g.add_gather_scatter("op", trial % 2 ? OpKind::gather : OpKind::scatter_add, DType::float32, random_shape(rng));
    for (const double p : proportions) {
      Op op = base;
      op.available_memory_proportion = p;
      const OpPlan plan = plan_op(op, bow());
      const auto budget = static_cast<std::int64_t>(std::floor(p * static_cast<double>(sram)));
      INFO(plan.to_json().dump());
      CHECK(plan.available_memory_proportion == p);
      CHECK(plan.temporary_budget_bytes == budget);
      CHECK(plan.estimated_peak_tile_bytes <= sram);
      CHECK(plan.estimated_temporary_tile_bytes >= 0);
      bool any_within = false;
      for (const ipu::Split& s : candidate_splits(op, bow())) {
        const OpPlan other = estimate_plan(op, s, bow());
        if (other.estimated_peak_tile_bytes > sram) continue;
        const bool other_within = other.estimated_temporary_tile_bytes <= budget;
        any_within = any_within || other_within;
        // Within the budget: no plan within it ranks better. Over it: no plan fitting the SRAM ranks better.
        if (plan.temporary_budget_met ? other_within : true) CHECK(plan.objective_cycles <= other.objective_cycles);
      }
      CHECK(plan.temporary_budget_met == any_within);
      if (plan.temporary_budget_met) {
        CHECK(plan.estimated_temporary_tile_bytes <= budget);
        ++within;
      } else {
        ++over_budget;
      }
    }
  }
  // Both branches were exercised.
  CHECK(within > 0);
  CHECK(over_budget > 0);
}

TEST_CASE("a lower proportion chooses a plan with no more temporary bytes", "[ipu][planner][unit]") {
  std::mt19937_64 rng(12);
  int changed = 0;
  for (int trial = 0; trial < 150; ++trial) {
    OpGraph g;
    const Op& base = g.add_gather_scatter("op", trial % 2 ? OpKind::gather : OpKind::scatter_add, DType::float32, random_shape(rng));
    for (std::size_t i = 0; i + 1 < std::size(proportions); ++i) {
      Op lo_op = base, hi_op = base;
      lo_op.available_memory_proportion = proportions[i];
      hi_op.available_memory_proportion = proportions[i + 1];
      const OpPlan lo = plan_op(lo_op, bow()), hi = plan_op(hi_op, bow());
      INFO("lo " << lo.to_json().dump() << "\nhi " << hi.to_json().dump());
      if (lo.temporary_budget_met) {
        CHECK(lo.estimated_temporary_tile_bytes <= hi.estimated_temporary_tile_bytes);
        // The higher proportion's plan is never slower by the planner's ranking.
        CHECK(hi.objective_cycles <= lo.objective_cycles);
      } else {
        // Nothing fits the lower budget: poplibs' retry without a limit, the fastest plan that fits the SRAM.
        CHECK(lo.objective_cycles <= hi.objective_cycles);
      }
      changed += lo.split.row_blocks != hi.split.row_blocks || lo.split.column_blocks != hi.split.column_blocks ||
                 lo.split.index_groups != hi.split.index_groups;
    }
  }
  CHECK(changed > 0);  // the proportion does change plans
}

TEST_CASE("a matmul's plan respects the proportion too and an op without one uses the machine's", "[ipu][planner][unit]") {
  Op op;
  op.name = "mm";
  op.kind = OpKind::matmul;
  op.shape.num_inputs = 4096;
  op.shape.num_features = 512;
  op.shape.out_features = 256;
  const OpPlan dflt = plan_dense_op(op, {}, bow());
  CHECK(dflt.available_memory_proportion == bow().planner.memory_fraction);
  op.available_memory_proportion = 0.01;
  const OpPlan small = plan_dense_op(op, {}, bow());
  INFO(dflt.to_json().dump() << "\n" << small.to_json().dump());
  CHECK(small.available_memory_proportion == 0.01);
  if (small.temporary_budget_met) {
    CHECK(small.estimated_temporary_tile_bytes <= small.temporary_budget_bytes);
    CHECK(small.estimated_temporary_tile_bytes <= dflt.estimated_temporary_tile_bytes);
  } else {
    CHECK(small.objective_cycles <= dflt.objective_cycles);  // nothing fits: the fastest plan that fits the SRAM
  }
  // A budget no matmul plan can meet at 0.01 of the SRAM is still a plan: the run does not fail.
  CHECK(small.estimated_peak_tile_bytes <= bow().chip.sram_bytes_per_tile);
  // The plan's record in the report.
  const auto j = small.to_json();
  REQUIRE(j.contains("temporary_memory"));
  CHECK(j["temporary_memory"]["available_memory_proportion"] == 0.01);
  CHECK(j["temporary_memory"]["temporary_budget_bytes"] == small.temporary_budget_bytes);
}

TEST_CASE("an op's own available_memory_proportion wins over the run-wide one", "[workload][unit]") {
  const nlohmann::json doc = nlohmann::json::parse(R"({"name": "amp", "ops": [
      {"op": "gather", "num_inputs": 64, "num_features": 8, "num_outputs": 128, "available_memory_proportion": 0.1},
      {"op": "scatter_add", "num_inputs": 128, "num_features": 8, "num_outputs": 64}]})");
  workloads::Workload w = workloads::parse_workload(doc, "w.json");
  REQUIRE(w.ops[0].available_memory_proportion);
  CHECK(*w.ops[0].available_memory_proportion == 0.1);
  CHECK_FALSE(w.ops[1].available_memory_proportion);
  CHECK(workloads::to_json(w)["ops"][0]["available_memory_proportion"] == 0.1);
  // No run-wide proportion: the second op keeps the machine's default (0).
  CHECK(workloads::build_graph(w).ops[1].available_memory_proportion == 0);
  w.available_memory_proportion = 0.9;
  const OpGraph g = workloads::build_graph(w);
  CHECK(g.ops[0].available_memory_proportion == 0.1);
  CHECK(g.ops[1].available_memory_proportion == 0.9);
}

TEST_CASE("a model layer's available_memory_proportion covers its ops and their backward, over the run-wide one", "[workload][unit]") {
  const nlohmann::json doc = nlohmann::json::parse(R"({"name": "amp", "graph": {"preset": "cora"},
      "model": [{"layer": "gcn", "name": "conv1", "out": 16, "activation": "relu", "available_memory_proportion": 0.2},
                {"layer": "gcn", "name": "conv2", "out": 7}],
      "train": {"task": "node", "loss": "cross_entropy", "steps": 1, "optimizer": {"kind": "sgd", "lr": 0.1}}})");
  workloads::Workload w = workloads::parse_workload(doc, "w.json");
  CHECK(workloads::to_json(w)["model"][0]["available_memory_proportion"] == 0.2);
  CHECK_FALSE(workloads::to_json(w)["model"][1].contains("available_memory_proportion"));
  w.available_memory_proportion = 0.9;
  const OpGraph g = workloads::build_graph(w);
  int conv1_forward = 0, conv1_backward = 0;
  for (const Op& op : g.ops) {
    INFO(op.name);
    // The optimizer's update of conv1's parameters is the optimizer's op, not the layer's.
    const bool conv1 = op.name.rfind("conv1.", 0) == 0 && op.phase != OpPhase::optimizer;
    CHECK(op.available_memory_proportion == (conv1 ? 0.2 : 0.9));
    if (conv1) (op.phase == OpPhase::backward ? conv1_backward : conv1_forward) += 1;
  }
  CHECK(conv1_forward > 0);
  CHECK(conv1_backward > 0);
  const nlohmann::json bad = nlohmann::json::parse(
      R"({"name": "amp", "graph": {"preset": "cora"}, "model": [{"layer": "gcn", "out": 16, "available_memory_proportion": 0}]})");
  CHECK(tilesim_test::required_input_error_of([&] { workloads::parse_workload(bad, "w.json"); }) ==
        "w.json: model[0].available_memory_proportion: expected a number greater than 0 and at most 1, found 0");
}

TEST_CASE("an available_memory_proportion not above 0 and at most 1 is an error naming the op's key", "[workload][unit]") {
  for (const char* bad : {"0", "-0.5", "1.5", "\"0.3\"", "null"}) {
    const nlohmann::json doc = nlohmann::json::parse(
        std::string(R"({"name": "amp", "ops": [{"op": "gather", "num_inputs": 4, "num_features": 2, "num_outputs": 3, "available_memory_proportion": )") +
        bad + "}]}");
    INFO(bad);
    const std::string message = tilesim_test::required_input_error_of([&] { workloads::parse_workload(doc, "w.json"); });
    CHECK(message == "w.json: ops[0].available_memory_proportion: expected a number greater than 0 and at most 1, found " +
                         tilesim::describe_json(doc["ops"][0]["available_memory_proportion"]));
  }
}

TEST_CASE("tilesim run --available-memory-proportion: the report names each op's plan and proportion", "[cli]") {
  const auto dir = tilesim_test::scratch("amp_cli");
  tilesim_test::write_text(dir / "w.json", R"({"name": "amp", "ops": [
      {"op": "gather", "name": "g", "num_inputs": 4096, "num_features": 128, "num_outputs": 16384, "available_memory_proportion": 0.05},
      {"op": "scatter_add", "name": "s", "num_inputs": 16384, "num_features": 128, "num_outputs": 4096}]})");
  const auto r = tilesim_test::run_tilesim("run '" + (dir / "w.json").string() + "' --backends ipu --timing-only --out '" +
                                               (dir / "out").string() + "' --available-memory-proportion 0.9",
                                           dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(tilesim_test::slurp(dir / "out" / "report.json"));
  CHECK(report["options"]["available_memory_proportion"] == 0.9);
  const auto& ops = report["results"][0]["ops"];
  REQUIRE(ops.size() == 2);
  CHECK(ops[0]["plan"]["temporary_memory"]["available_memory_proportion"] == 0.05);  // the op's own wins
  CHECK(ops[1]["plan"]["temporary_memory"]["available_memory_proportion"] == 0.9);   // the run-wide one
  CHECK(ops[1]["plan"]["temporary_memory"]["temporary_budget_bytes"] == static_cast<std::int64_t>(0.9 * 638976));
  CHECK(r.out.find("ipu:bow g: proportion 0.05, plan ") != std::string::npos);
  CHECK(r.out.find("ipu:bow s: proportion 0.9, plan ") != std::string::npos);

  for (const char* bad : {"0", "1.5", "abc", "nan"}) {
    const auto e = tilesim_test::run_tilesim("run '" + (dir / "w.json").string() + "' --backends ipu --out '" +
                                                 (dir / "out2").string() + "' --available-memory-proportion " + bad,
                                             dir);
    INFO(bad << ": " << e.err);
    CHECK(e.exit_code == 2);
    CHECK(e.err.find("--available-memory-proportion: expected a number greater than 0 and at most 1") != std::string::npos);
  }
}
