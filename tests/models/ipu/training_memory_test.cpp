// A training step's memory on the simulated IPU (models/ipu/planning/step_memory): the tensors live
// across each op (activations kept for the backward, parameters, gradients, optimizer state) count
// against the tiles' SRAM beside the op's own plan, so a model whose inference fits one IPU can have a
// training step that does not (exit 3 naming recompute); recomputation lowers the live bytes by
// re-running the forward ops the backward reads, whose cycles it charges again.
#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/planning/step_memory.hpp"
#include "tests/support/ipu_test_support.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using json = nlohmann::json;
using Catch::Matchers::Contains;
using tilesim_test::bow;

namespace {

// A 4-layer GAT on a generated graph with many edges per node: each layer's gathered features
// [E, H] and attention weights are what the backward keeps (their product's gradient reads both), four
// layers' at once. Only the first layer has several heads.
json gat_workload(std::int64_t nodes, std::int64_t edges, std::int64_t hidden, bool train, bool recompute) {
  json model = json::array();
  for (int l = 1; l <= 4; ++l)
    model.push_back({{"layer", "gat"}, {"name", "conv" + std::to_string(l)}, {"out", l == 1 ? hidden / 4 : l == 4 ? 4 : hidden}, {"heads", l == 1 ? 4 : 1}, {"activation", "relu"}});
  json w = {{"name", "deep_gat"},
            {"seed", 1},
            {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", nodes}, {"num_edges", edges}}},
            {"num_features", hidden},
            {"model", model}};
  if (train)
    w["train"] = {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}, {"recompute", recompute}};
  return w;
}

OpGraph lowered(const json& w) { return workloads::lower(workloads::parse_workload(w, "w.json")).graph; }

}  // namespace

TEST_CASE("a model whose inference fits one IPU but whose training step does not, and recompute", "[ipu][training][unit]") {
  const std::int64_t nodes = 20000, edges = 700000, hidden = 32;
  IpuBackend ipu(bow(), "ipu:bow");
  // Inference: every op fits with what is live beside it.
  const OpGraph inference = lowered(gat_workload(nodes, edges, hidden, false, false));
  CHECK_NOTHROW(ipu.prepare(inference));
  // Training keeps every layer's messages for the backward: the step does not fit, and says what to try.
  const OpGraph step = lowered(gat_workload(nodes, edges, hidden, true, false));
  try {
    ipu.prepare(step);
    FAIL("the training step was planned although its live activations exceed the SRAM");
  } catch (const PlanError& e) {
    const std::string m = e.what();
    CHECK(e.code() == ExitCode::does_not_fit);
    CHECK_THAT(m, Contains("training step") && Contains("bytes") && Contains("kept for the backward"));
    CHECK_THAT(m, Contains("\"recompute\": true") && Contains("smaller batch") && Contains("more IPUs"));
    CHECK_THAT(m, Contains("the largest live tensors"));
  }
  const StepMemory kept = ipu.plan_memory(step);
  CHECK(kept.peak_tile_bytes() > bow().chip.sram_bytes_per_tile);
  CHECK(kept.recomputed.empty());
  // More than inference needs at its busiest op.
  CHECK(kept.peak_tile_bytes() > ipu.plan_memory(inference).peak_tile_bytes());

  // Recomputation: the gathers are re-run in the backward from the (smaller) node tables, and the step fits.
  const OpGraph recomputing = lowered(gat_workload(nodes, edges, hidden, true, true));
  REQUIRE(recomputing.recompute_activations);
  const StepMemory recomputed = ipu.plan_memory(recomputing);
  CHECK(recomputed.peak_tile_bytes() < kept.peak_tile_bytes());
  CHECK_FALSE(recomputed.recomputed.empty());
  CHECK_NOTHROW(ipu.prepare(recomputing));
  // Every re-run op is a forward op, re-run before a backward op that reads what it makes.
  for (std::size_t r = 0; r < recomputed.recomputed.size(); ++r) {
    const Op& op = recomputing.ops[recomputed.recomputed[r]];
    CHECK(op.phase == OpPhase::forward);
    CHECK(recomputing.ops[recomputed.recomputed_before[r]].phase == OpPhase::backward);
    CHECK(recomputed.recomputed_before[r] > recomputed.recomputed[r]);
  }
}

TEST_CASE("recompute charges each re-run op's cycles to the backward op it precedes", "[ipu][training][unit]") {
  // A small step that fits either way: the recomputing run costs more by exactly the re-run ops' cycles.
  const auto run = [](bool recompute) {
    const auto w = workloads::parse_workload(gat_workload(60, 300, 8, true, recompute), "w.json");
    const workloads::Instance s = workloads::instantiate(w);
    IpuBackend ipu(bow(), "ipu:bow");
    RunOptions options;
    options.timing_only = true;
    return std::make_pair(ipu.run(s.graph, s.values, options), s.graph);
  };
  const auto [kept, graph] = run(false);
  const auto [recomputing, recompute_graph] = run(true);
  REQUIRE(kept.ops.size() == recomputing.ops.size());
  std::int64_t charged = 0, rerun = 0;
  for (std::size_t k = 0; k < kept.ops.size(); ++k) {
    const auto& row = recomputing.ops[k];
    if (!row.plan.contains("recomputed_before_this_op")) {
      CHECK(*row.cycles == *kept.ops[k].cycles);
      continue;
    }
    CHECK(recompute_graph.ops[k].phase == OpPhase::backward);
    for (const auto& r : row.plan["recomputed_before_this_op"]) {
      rerun += r["cycles"].get<std::int64_t>();
      const auto first = std::find_if(kept.ops.begin(), kept.ops.end(), [&](const OpResult& o) { return o.op == r["op"]; });
      REQUIRE(first != kept.ops.end());
      CHECK(*first->cycles == r["cycles"].get<std::int64_t>());
    }
    charged += *row.cycles - *kept.ops[k].cycles;
  }
  CHECK(rerun > 0);
  CHECK(charged == rerun);
  CHECK(*recomputing.cycles == *kept.cycles + rerun);
  CHECK(recomputing.host["recompute"]["cycles"] == rerun);
  // The peak is no higher; on so small a graph every tensor fits a few tiles and they spread round the
  // chip, so the op's own buffers make the peak either way. What recompute drops shows in the live spans:
  // the activations are not kept from the forward pass to the backward.
  CHECK(recomputing.host["peak_tile_bytes_with_live_tensors"].get<std::int64_t>() <=
        kept.host["peak_tile_bytes_with_live_tensors"].get<std::int64_t>());
  const auto live_op_slots = [](const StepMemory& m) {
    std::size_t slots = 0;
    for (const auto& spans : m.live)
      for (const LiveInterval& i : spans) slots += i.last - i.first + 1;
    return slots;
  };
  IpuBackend ipu(bow(), "ipu:bow");
  CHECK(live_op_slots(ipu.plan_memory(recompute_graph)) < live_op_slots(ipu.plan_memory(graph)));
}

namespace {

// Thousands of tiny independent gathers, each table and index tensor a few hundred bytes.
json tiny_gathers(int count) {
  json ops = json::array();
  for (int i = 0; i < count; ++i)
    ops.push_back({{"op", "gather"}, {"name", "gather_" + std::to_string(i)}, {"num_inputs", 16}, {"num_features", 4}, {"num_outputs", 32}});
  return {{"name", "tiny_gathers"}, {"seed", 1}, {"ops", ops}};
}

}  // namespace

TEST_CASE("thousands of tiny ops fit: small live tensors spread round the chip as the framework maps them", "[ipu][memory][unit]") {
  // 2,600 ops' inputs, live from the start, were each charged a whole share on tile 0
  // ("gather_2599.indices 0.125 KiB"), about 800 KiB: exit 3 for under 1 MiB of data on a 900 MiB chip.
  IpuBackend ipu(bow(), "ipu:bow");
  const OpGraph graph = lowered(tiny_gathers(2600));
  REQUIRE(graph.ops.size() == 2600);
  CHECK_NOTHROW(ipu.prepare(graph));
  const StepMemory memory = ipu.plan_memory(graph);
  // Live beside the first op: every other op's table and indices, one after another round the tiles.
  // Each takes one tile (its share) and 2 x 2599 of them wrap round 1472 tiles three or four times.
  std::int64_t largest_share = 0, live_shares = 0;
  for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
    const bool operand_of_first = static_cast<TensorId>(t) == graph.ops[0].input || static_cast<TensorId>(t) == graph.ops[0].indices;
    const bool an_input = std::none_of(graph.ops.begin(), graph.ops.end(), [&](const Op& o) { return o.output == static_cast<TensorId>(t); });
    if (!an_input || operand_of_first) continue;
    const auto& info = graph.tensors[t];
    const std::int64_t share = linear_tile_bytes(info.elements(), dtype_bytes(info.dtype), bow());
    largest_share = std::max(largest_share, share);
    live_shares += share;
  }
  CHECK(memory.ops[0].live_tile_bytes >= live_shares / bow().chip.num_tiles);
  CHECK(memory.ops[0].live_tile_bytes <= 5 * (largest_share + 64));  // a few buffers, not 5,198 of them
  CHECK(memory.ops[0].live_tile_bytes < bow().chip.sram_bytes_per_tile / 64);
}

TEST_CASE("live tensors over every tile put a share on each, whatever tile their mapping starts on", "[ipu][memory][unit]") {
  // The training step of the GAT above is refused on the bytes its live activations put on one tile; the
  // rotation moves where each mapping starts, not what a tensor spread over the whole chip puts per tile.
  IpuBackend ipu(bow(), "ipu:bow");
  const OpGraph graph = lowered(gat_workload(20000, 700000, 32, true, false));
  const StepMemory memory = ipu.plan_memory(graph);
  const OpMemory& peak = memory.ops[memory.peak_op];
  std::int64_t whole_chip_shares = 0;
  for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
    const Op& op = graph.ops[memory.peak_op];
    const auto id = static_cast<TensorId>(t);
    if (id == op.output || id == op.input || id == op.indices || id == op.weight || id == op.bias || id == op.aux) continue;
    const auto& info = graph.tensors[t];
    const bool live = std::any_of(memory.live[t].begin(), memory.live[t].end(), [&](const LiveInterval& i) { return i.contains(memory.peak_op); });
    if (live && linear_layout(info.elements(), dtype_bytes(info.dtype), bow()).tiles_used == bow().chip.num_tiles)
      whole_chip_shares += linear_tile_bytes(info.elements(), dtype_bytes(info.dtype), bow());
  }
  CHECK(whole_chip_shares > 0);
  CHECK(peak.live_tile_bytes >= whole_chip_shares);
}
