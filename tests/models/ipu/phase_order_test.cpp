// The simulated IPU's programs under a shuffled order of each phase's tiles (sim/phase_order.hpp): a
// GCN training step and a GAT forward pass, run functionally, compute the same values in the same
// cycles whatever order the engine starts their tiles and runs their work in. A program that leaned
// on an order the BSP rule leaves open (two tiles' work, or same-instant arrivals, in program order)
// would show here.
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "models/ipu/ipu_backend.hpp"
#include "sim/engine.hpp"
#include "tests/support/ipu_test_support.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;

namespace {

struct OrderedRun {
  BackendResult result;
  TensorValues outputs;
};

OrderedRun run_in_engine_order(const workloads::Instance& instance) {
  ipu::IpuBackend backend(tilesim_test::bow(), "ipu:bow");
  backend.prepare(instance.graph);
  RunOptions options;
  options.repeats = 1;
  options.warmup = 0;
  OrderedRun r;
  r.result = backend.run(instance.graph, instance.values, options);
  r.outputs = *backend.computed_outputs();
  return r;
}

}  // namespace

TEST_CASE("ipu: programs give the same values and cycles under a seeded shuffle of each phase's tile order",
          "[ipu][sim][unit][slow]") {
  struct RestoreOrder {
    ~RestoreOrder() { sim::Engine::shuffle_same_instant_order(std::nullopt); }
  } restore;
  for (const std::string example : {"gcn_cora_train", "gat_cora"}) {
    INFO(example);
    const workloads::Workload workload =
        workloads::load_workload(std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/" + example + ".json");
    const workloads::Instance instance = workloads::instantiate(workload);
    sim::Engine::shuffle_same_instant_order(std::nullopt);
    const OrderedRun in_order = run_in_engine_order(instance);
    for (const std::uint64_t seed : {11u, 12u}) {
      INFO("seed " << seed);
      sim::Engine::shuffle_same_instant_order(seed);
      const OrderedRun shuffled = run_in_engine_order(instance);
      REQUIRE(shuffled.result.ops.size() == in_order.result.ops.size());
      for (std::size_t k = 0; k < shuffled.result.ops.size(); ++k) {
        INFO("op " << in_order.result.ops[k].op);
        CHECK(shuffled.result.ops[k].cycles == in_order.result.ops[k].cycles);
        CHECK(shuffled.result.ops[k].verified == in_order.result.ops[k].verified);
      }
      for (const Op& op : instance.graph.ops) {
        INFO("output of " << op.name);
        REQUIRE(shuffled.outputs.has(op.output) == in_order.outputs.has(op.output));
        if (in_order.outputs.has(op.output) && instance.graph.tensors[static_cast<std::size_t>(op.output)].dtype != DType::int32)
          CHECK(shuffled.outputs.f32(op.output) == in_order.outputs.f32(op.output));
      }
    }
  }
}
