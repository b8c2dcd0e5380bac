// Cutting a training step's op graph into pipeline stages by layer (analysis/stage_split.hpp): which
// stage each op belongs to, each stage's seconds per phase, the activations crossing each boundary and
// each stage's memory, on a lowered 3-layer GCN step with hand-counted sizes.
#include <catch2/catch.hpp>

#include "analysis/stage_split.hpp"
#include "workloads/workload.hpp"

using nlohmann::json;
using namespace tilesim;
using namespace tilesim::analysis;

namespace {

// GCN 8 -> 16 -> 16 -> 4 on 64 nodes, trained with Adam (two state rows per parameter element).
workloads::Lowered lowered_step() {
  const json w = {{"name", "s"},
                  {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 64}, {"num_edges", 256}}},
                  {"num_features", 8},
                  {"model", json::array({{{"layer", "gcn"}, {"name", "a"}, {"out", 16}, {"activation", "relu"}},
                                         {{"layer", "gcn"}, {"name", "b"}, {"out", 16}, {"activation", "relu"}},
                                         {{"layer", "gcn"}, {"name", "c"}, {"out", 4}}})},
                  {"train", {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}}}}}};
  return workloads::lower(workloads::parse_workload(w, "w.json"), true);
}

const std::vector<std::vector<std::string>> two_stages = {{"a", "b"}, {"c"}};

}  // namespace

TEST_CASE("stage split: ops follow their layer, the loss and optimizer steps follow their stage", "[scaling][unit]") {
  const auto l = lowered_step();
  const auto of = stage_of_ops(l.graph, two_stages);
  CHECK(of.at("a.lin") == 0);
  CHECK(of.at("b.aggregate") == 0);
  CHECK(of.at("c.lin") == 1);
  CHECK(of.at("loss") == 1);
  CHECK(of.at("loss.grad") == 1);
  CHECK(of.at("a.lin.grad.weight") == 0);
  CHECK(of.at("c.weight.step") == 1);
  CHECK(of.at("b.bias.step") == 0);
  for (const auto& [op, stage] : stage_of_ops(l.graph, {})) CHECK(stage == 0);

  // Rows of one second each: a stage's seconds count its ops by phase, the loss with the forward.
  BackendResult step;
  std::size_t forward_0 = 0, forward_1 = 0, backward_0 = 0, optimizer_1 = 0;
  for (const Op& op : l.graph.ops) {
    OpResult row = OpResult::for_op(op);
    row.time_s = 1;
    step.ops.push_back(row);
    const std::size_t s = of.at(op.name);
    if ((op.phase == OpPhase::forward || op.phase == OpPhase::loss) && s == 0) ++forward_0;
    if ((op.phase == OpPhase::forward || op.phase == OpPhase::loss) && s == 1) ++forward_1;
    if (op.phase == OpPhase::backward && s == 0) ++backward_0;
    if (op.phase == OpPhase::optimizer && s == 1) ++optimizer_1;
  }
  const auto seconds = stage_seconds(l.graph, step, of, 2);
  REQUIRE(seconds.size() == 2);
  CHECK(seconds[0].forward_s == static_cast<double>(forward_0));
  CHECK(seconds[1].forward_s == static_cast<double>(forward_1));
  CHECK(seconds[0].backward_s == static_cast<double>(backward_0));
  CHECK(seconds[1].optimizer_s == static_cast<double>(optimizer_1));
  CHECK(optimizer_1 == 2);  // c's weight and bias
  CHECK(seconds[1].forward_s > 0);
}

TEST_CASE("stage split: boundary activations and per-stage memory, by hand", "[scaling][unit]") {
  const auto l = lowered_step();
  const auto of = stage_of_ops(l.graph, two_stages);
  // Stage 0 hands stage 1 b's output: [64, 16] float32.
  const auto bytes = boundary_bytes(l.graph, of, 2);
  REQUIRE(bytes.size() == 1);
  CHECK(bytes[0] == 64 * 16 * 4);
  // Three stages: each hands on its layer's output.
  const auto three = boundary_bytes(l.graph, stage_of_ops(l.graph, {{"a"}, {"b"}, {"c"}}), 3);
  CHECK(three == std::vector<std::int64_t>{64 * 16 * 4, 64 * 16 * 4});

  const auto memory = stage_memory(l.graph, l.training, of, 2);
  REQUIRE(memory.size() == 2);
  // Stage 0: a (8 x 16 + 16) and b (16 x 16 + 16) in float32; stage 1: c (16 x 4 + 4).
  CHECK(memory[0].parameter_bytes == ((8 * 16 + 16) + (16 * 16 + 16)) * 4);
  CHECK(memory[1].parameter_bytes == (16 * 4 + 4) * 4);
  CHECK(memory[0].gradient_bytes == memory[0].parameter_bytes);
  CHECK(memory[0].optimizer_state_bytes == 2 * memory[0].parameter_bytes);  // Adam's m and v
  CHECK(memory[0].activation_bytes_per_micro_batch > 0);
  CHECK(memory[1].activation_bytes_per_micro_batch > 0);
}
