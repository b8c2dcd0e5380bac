// Eager PyTorch's execution model of an epoch on a GPU (models/gpu/host_input): the host's collation of
// each batch of graphs between the steps or behind them, Batch.to(device)'s copies, nothing for other
// loaders, synthetic data or a machine without the figures; and the machine files' "host_input"
// section. Expectations are derived from the shipped figures, none written down here.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/host_input.hpp"
#include "common/strict_json.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using Catch::Matchers::Contains;

namespace {

// Ten batches of 64 graphs and 200 kB each, 2 ms of eager step each.
EpochDriving gpu_graph_epoch() {
  EpochDriving run;
  run.micro_batches = 10;
  run.device_epoch_s = 10 * 2e-3;
  run.input_bytes_per_micro_batch = 200000;
  run.graphs_per_micro_batch = 64;
  return run;
}

}  // namespace

TEST_CASE("GPU host input: every shipped GPU states its figures with sources, derived machines inherit them", "[gpu][host][unit]") {
  for (const char* name : {"v100-16gb", "a100-40gb", "a100-80gb", "h100-sxm", "h200"}) {
    INFO(name);
    const GpuMachine m = load_gpu_machine(name);
    REQUIRE(m.host_input.has_value());
    for (const char* key : {"collate_per_batch_s", "collate_per_graph_s", "tensors_per_batch"}) {
      INFO(key);
      REQUIRE(m.provenance.has(std::string("host_input.") + key));
      CHECK_FALSE(m.provenance.figure(std::string("host_input.") + key).source.empty());
    }
    CHECK(m.host_input->collate_per_graph_s > 0);
    CHECK(m.host_input->tensors_per_batch >= 1);
  }
  CHECK(load_gpu_machine("a100-80gb").host_input->collate_per_graph_s == load_gpu_machine("a100-40gb").host_input->collate_per_graph_s);
  // A what-if machine sets one like any figure.
  CHECK(load_gpu_machine("v100-16gb{host_input.collate_per_graph_s=0.001}").host_input->collate_per_graph_s == 0.001);
}

TEST_CASE("GPU host input: a synchronous loader adds the collation and the copies to every step", "[gpu][host][unit]") {
  const GpuMachine m = load_gpu_machine("v100-16gb");
  const GpuMachine::HostInput& in = *m.host_input;
  const EpochDriving run = gpu_graph_epoch();
  const EpochExecution e = eager_epoch(m, run);
  const double collate = in.collate_per_batch_s + 64 * in.collate_per_graph_s;
  const double copy = static_cast<double>(in.tensors_per_batch) * m.eager.aten_call_s + 200000 / m.pcie_bytes_per_s;
  CHECK(e.batch_preparation_s_per_micro_batch == Approx(collate));
  CHECK_FALSE(e.batch_preparation_overlaps_compute);
  CHECK(e.batch_preparation_exposed_s == Approx(10 * collate));
  CHECK(e.host_link_s_per_micro_batch == Approx(copy));
  CHECK(e.host_link_exposed_s == Approx(10 * copy));
  CHECK(e.device_epoch_s == run.device_epoch_s);
  CHECK(e.epoch_s == Approx(run.device_epoch_s + 10 * (collate + copy)));
  CHECK(e.epoch_s > e.device_epoch_s);
  CHECK(e.host_calls == 0);
  CHECK_THAT(e.how, Contains("synchronous"));
  const nlohmann::json j = e.to_json();
  CHECK(j["batch_preparation"]["exposed_s"].get<double>() == Approx(10 * collate));

  // Twice the graphs per batch: the collation grows by the per-graph figure alone.
  EpochDriving twice = run;
  twice.graphs_per_micro_batch = 128;
  CHECK(eager_epoch(m, twice).batch_preparation_s_per_micro_batch - collate == Approx(64 * in.collate_per_graph_s));
}

TEST_CASE("GPU host input: an asynchronous loader hides the collation behind longer steps only", "[gpu][host][unit]") {
  const GpuMachine m = load_gpu_machine("v100-16gb");
  EpochDriving run = gpu_graph_epoch();
  run.asynchronous_loader = true;
  const double collate = eager_epoch(m, run).batch_preparation_s_per_micro_batch;
  // Steps longer than the collation hide it; the copies stay.
  run.device_epoch_s = 10 * (collate * 2);
  EpochExecution hidden = eager_epoch(m, run);
  CHECK(hidden.batch_preparation_overlaps_compute);
  CHECK(hidden.batch_preparation_exposed_s == 0);
  CHECK(hidden.epoch_s == Approx(run.device_epoch_s + hidden.host_link_exposed_s));
  // Steps of a quarter of it leave three quarters exposed.
  run.device_epoch_s = 10 * (collate / 4);
  CHECK(eager_epoch(m, run).batch_preparation_exposed_s == Approx(10 * collate * 0.75));
}

TEST_CASE("GPU host input: nothing is added for other loaders, synthetic data or a machine without the section", "[gpu][host][unit]") {
  const GpuMachine m = load_gpu_machine("v100-16gb");
  EpochDriving nodes = gpu_graph_epoch();
  nodes.graphs_per_micro_batch = 0;  // a neighbour or cluster loader
  EpochExecution e = eager_epoch(m, nodes);
  CHECK(e.epoch_s == nodes.device_epoch_s);
  CHECK_THAT(e.how, Contains("not priced here"));
  EpochDriving synthetic = gpu_graph_epoch();
  synthetic.synthetic_data = true;
  CHECK(eager_epoch(m, synthetic).epoch_s == synthetic.device_epoch_s);
  GpuMachine bare = m;
  bare.host_input.reset();
  e = eager_epoch(bare, gpu_graph_epoch());
  CHECK(e.epoch_s == gpu_graph_epoch().device_epoch_s);
  CHECK_THAT(e.how, Contains("no \"host_input\" section"));
}

TEST_CASE("GPU host input: a bad figure names the file and path", "[gpu][host][unit]") {
  const nlohmann::json good = load_json_file(load_gpu_machine("a100-40gb").file);
  nlohmann::json doc = good;
  doc["host_input"]["tensors_per_batch"]["value"] = -1;
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Contains("g.json: host_input.tensors_per_batch"));
  doc = good;
  doc["host_input"]["collate_per_grpah_s"] = doc["host_input"]["collate_per_graph_s"];
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Contains("host_input.collate_per_grpah_s") && Contains("unknown key"));
}
