// `tilesim run` with the IPU's execution model (models/ipu/host_execution, docs/workload-format.md "How
// the framework drives the device"): a loader run on ipu:bow with 1 and 4 device iterations, with and
// without synthetic data, and a replicated run on ipu:bow-2000. The report's "execution" object: host calls
// per epoch from the loader's batches, the call cost and the input bytes crossing the host link, the epoch
// as the sum of its terms, the throughput over it, and the figures of the steps alone beside. A GPU model
// backend keeps its epoch of steps. Every expectation comes from the report's own machine figures.
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

using json = nlohmann::json;
using Catch::Matchers::Contains;
using tilesim_test::run_tilesim;
using tilesim_test::TempDir;

namespace {

// 96 QM9-shaped molecules packed into batches of at most 120 atoms (a dozen batches an epoch).
json execution_workload(std::int64_t device_iterations, bool synthetic_data) {
  return {{"name", "exec"},
          {"seed", 2},
          {"model", json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 16}, {"activation", "relu"}},
                                 {{"layer", "gin"}, {"name", "g2"}, {"out", 2}}})},
          {"train", {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}}},
          {"loader", {{"kind", "graphs"},
                      {"dataset", {{"kind", "qm9"}, {"num_graphs", 96}}},
                      {"fixed_size", {{"num_nodes", 120}, {"num_edges", 2400}, {"num_graphs", 9}}},
                      {"packing", "lpfhp"},
                      {"device_iterations", device_iterations},
                      {"synthetic_data", synthetic_data}}}};
}

json run_execution_report(const TempDir& dir, const std::string& name, const json& w, const std::string& backends) {
  const auto r = run_tilesim("run " + dir.write(name + ".json", w.dump()) + " --backends " + backends +
                                 " --batches 1 --timing-only --out " + dir.path(name),
                             dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(tilesim_test::slurp(dir.path(name + "/report.json")));
}

double machine_figure(const json& result, const std::string& key) {
  return result["machine_provenance"]["figures"]["host"][key]["value"].get<double>();
}

// The epoch is its terms' sum; the throughput the epoch's items over it.
void check_execution_sums(const json& e, const json& throughput) {
  const double sum = e["device_only_epoch_time_s"].get<double>() + e["host_calls_s"].get<double>() +
                     e["host_link"]["exposed_s"].get<double>() + e["stream_copy"]["total_s"].get<double>() +
                     e["epoch_fixed_s"].get<double>();
  CHECK(e["epoch_time_s"].get<double>() == Approx(sum));
  CHECK(e["host_calls_s"].get<double>() == Approx(e["host_calls_per_epoch"].get<double>() * e["host_call_s"].get<double>()));
  CHECK(throughput["device_only_value"].get<double>() > throughput["value"].get<double>());
}

}  // namespace

TEST_CASE("run: the IPU's loader epoch counts PopTorch's host calls and host-link transfers", "[execution][cli]") {
  TempDir dir("execution-loader");
  std::map<std::string, json> ipu;
  for (const auto& [name, iterations, synthetic] :
       std::vector<std::tuple<std::string, std::int64_t, bool>>{{"d1", 1, false}, {"d4", 4, false}, {"d4_synthetic", 4, true}}) {
    INFO(name);
    const json report = run_execution_report(dir, name, execution_workload(iterations, synthetic), "ipu:bow,gpu-model:a100-40gb:eager");
    // The options are echoed in the resolved workload.
    CHECK(report["workload"]["loader"]["device_iterations"] == iterations);
    CHECK(report["workload"]["loader"]["synthetic_data"] == synthetic);
    CHECK(report["workload"]["loader"]["asynchronous"] == false);
    const std::int64_t batches = report["loader"]["batches_per_epoch"];
    REQUIRE(report["results"].size() == 2);
    const json& result = report["results"][0];
    const json& m = result["minibatch"];
    REQUIRE(m.contains("execution"));
    const json& e = m["execution"];
    CHECK(e["host_calls_per_epoch"] == (batches + iterations - 1) / iterations);
    CHECK(e["micro_batches_per_host_call"] == iterations);
    CHECK(e["host_call_s"].get<double>() == machine_figure(result, "host_call_s"));
    CHECK(e["epoch_time_s"].get<double>() == m["epoch_time_s"].get<double>());
    CHECK(e["device_only_epoch_time_s"].get<double>() == m["device_only_epoch_time_s"].get<double>());
    check_execution_sums(e, m["throughput"]);
    CHECK(m["throughput"]["value"].get<double>() == Approx(96.0 / m["epoch_time_s"].get<double>()));
    CHECK(m["throughput"]["graphs_per_s"].get<double>() == m["throughput"]["value"].get<double>());
    CHECK(m["throughput"]["device_only_value"].get<double>() == Approx(96.0 / m["device_only_epoch_time_s"].get<double>()));
    // One IPU in use: its host link to itself, the synchronous loader's transfers serial.
    CHECK(e["host_link"]["devices_sharing"] == 1);
    CHECK(e["host_link"]["bytes_per_s_per_device"].get<double>() == Approx(machine_figure(result, "host_link_bits_per_s") / 8));
    CHECK(e["host_link"]["overlaps_compute"] == false);
    CHECK_THAT(e["figures"]["host_call_s"]["source"].get<std::string>(), Contains("assumed"));
    // The GPU model's eager mode adds the host's collation and copy of each batch of graphs to its steps
    // (models/gpu/host_input.hpp); synthetic data leaves the steps alone.
    const json& gpu = report["results"][1]["minibatch"];
    REQUIRE(gpu.contains("execution"));
    const json& ge = gpu["execution"];
    CHECK(ge["epoch_time_s"].get<double>() == gpu["epoch_time_s"].get<double>());
    CHECK(ge["epoch_time_s"].get<double>() == Approx(gpu["device_only_epoch_time_s"].get<double>() +
                                                     ge["batch_preparation"]["exposed_s"].get<double>() +
                                                     ge["host_link"]["exposed_s"].get<double>()));
    if (synthetic) {
      CHECK(ge["batch_preparation"]["exposed_s"].get<double>() == 0);
      CHECK(gpu["epoch_time_s"].get<double>() == gpu["device_only_epoch_time_s"].get<double>());
    } else {
      CHECK(ge["batch_preparation"]["exposed_s"].get<double>() > 0);
      CHECK(ge["host_link"]["exposed_s"].get<double>() > 0);
    }
    CHECK(gpu["throughput"]["value"].get<double>() == Approx(96.0 / gpu["epoch_time_s"].get<double>()));
    ipu[name] = m;
  }
  const json& d1 = ipu["d1"]["execution"];
  const json& d4 = ipu["d4"]["execution"];
  const json& synthetic = ipu["d4_synthetic"]["execution"];
  // The same steps; fewer host calls with more device iterations, a shorter epoch by their cost.
  CHECK(d4["device_only_epoch_time_s"].get<double>() == d1["device_only_epoch_time_s"].get<double>());
  CHECK(d4["host_calls_per_epoch"].get<std::int64_t>() < d1["host_calls_per_epoch"].get<std::int64_t>());
  CHECK(d4["epoch_time_s"].get<double>() < d1["epoch_time_s"].get<double>());
  CHECK(d1["epoch_time_s"].get<double>() - d4["epoch_time_s"].get<double>() ==
        Approx((d1["host_calls_per_epoch"].get<double>() - d4["host_calls_per_epoch"].get<double>()) * d1["host_call_s"].get<double>()));
  CHECK(ipu["d4"]["throughput"]["value"].get<double>() > ipu["d1"]["throughput"]["value"].get<double>());
  // Real inputs cross the host link (at least the padded batch's node features); synthetic ones do not.
  CHECK(d4["input_bytes_per_micro_batch"].get<std::int64_t>() > 120 * 11 * 4);
  CHECK(d4["host_link"]["time_per_micro_batch_s"].get<double>() > 0);
  CHECK(d4["host_link"]["exposed_s"].get<double>() > 0);
  CHECK(d4["stream_copy"]["total_s"].get<double>() > 0);
  CHECK(synthetic["input_bytes_per_micro_batch"] == 0);
  CHECK(synthetic["host_link"]["exposed_s"].get<double>() == 0);
  CHECK(synthetic["stream_copy"]["total_s"].get<double>() == 0);
  CHECK(synthetic["host_calls_per_epoch"] == d4["host_calls_per_epoch"]);
  CHECK(synthetic["epoch_time_s"].get<double>() < d4["epoch_time_s"].get<double>());
}

TEST_CASE("run: a replicated IPU step's epoch shares the host link among the IPUs behind it", "[execution][cli]") {
  TempDir dir("execution-replicas");
  json w = execution_workload(2, false);
  w["loader"]["asynchronous"] = true;
  w["parallel"] = {{"replicas", 2}, {"gradient_accumulation", 2}};
  const auto r = run_tilesim("run " + dir.write("r2.json", w.dump()) + " --backends ipu:bow-2000 --timing-only --out " + dir.path("r2"), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("host calls"));
  const json report = json::parse(tilesim_test::slurp(dir.path("r2/report.json")));
  const json& entry = report["scaling"].at(0);
  REQUIRE(entry.contains("execution"));
  const json& e = entry["execution"];
  const json& t = entry["throughput"];
  const double batches = t["epoch"]["batches"].get<double>();
  // R x A batches a step, D steps a call.
  CHECK(e["steps_per_epoch"].get<double>() == Approx(batches / 4));
  CHECK(e["micro_batches_per_host_call"] == 4);
  CHECK(e["host_calls_per_epoch"] == static_cast<std::int64_t>(std::ceil(batches / 8 - 1e-9)));
  CHECK(e["device_only_epoch_time_s"].get<double>() == Approx(e["steps_per_epoch"].get<double>() * entry["step"]["time_s"].get<double>()));
  // Two IPUs of the Bow-2000 in use share its host link; the asynchronous loader overlaps it.
  CHECK(e["host_link"]["devices_sharing"] == 2);
  CHECK(e["host_link"]["overlaps_compute"] == true);
  check_execution_sums(e, t);
  CHECK(t["value"].get<double>() == Approx(e["epoch_items"].get<double>() / e["epoch_time_s"].get<double>()));
  CHECK(t["device_only_value"].get<double>() == Approx(t["items_per_step"].get<double>() / entry["step"]["time_s"].get<double>()));
  // The one-IPU baseline is priced alike: efficiency compares the two epochs' throughputs.
  REQUIRE(entry["one_device"]["execution_epoch_time_s"].is_number());
  CHECK(entry["scaling_efficiency"].get<double>() ==
        Approx(t["value"].get<double>() / (2 * entry["one_device"]["throughput"].get<double>())));
  CHECK(entry["device_only_scaling_efficiency"].is_number());
}
