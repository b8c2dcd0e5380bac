// `tilesim run` on workloads with a loader: every batch on the simulated IPU (padded to one shape) and
// the CPU kernels (exact shapes), the first batch's losses agreeing, the report's throughput, padding,
// host sampling and bound; padding versus packing on molecules; --batches; and the errors.
#include <map>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

using json = nlohmann::json;
using Catch::Matchers::Contains;
using tilesim_test::run_tilesim;
using tilesim_test::TempDir;

namespace {

json neighbor_workload() {
  return {{"name", "mb_cli"},
          {"seed", 1},
          {"graph", {{"preset", "cora"}}},
          {"model", json::array({{{"layer", "sage"}, {"name", "conv1"}, {"out", 16}, {"activation", "relu"}},
                                 {{"layer", "sage"}, {"name", "conv2"}, {"out", 7}}})},
          {"train", {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.1}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}}},
          {"loader", {{"kind", "neighbor"}, {"batch_size", 64}, {"fanouts", {10, 5}}}}};
}

json molecules_workload(const std::string& packing) {
  json loader = {{"kind", "graphs"},
                 {"dataset", {{"kind", "qm9"}, {"num_graphs", 96}}},
                 {"fixed_size", {{"num_nodes", 470}, {"num_edges", 13500}, {"num_graphs", 33}}},
                 {"batches", 3}};
  if (packing == "pad") loader["batch_size"] = 16;
  else loader["packing"] = packing;
  return {{"name", "mb_" + packing},
          {"seed", 2},
          {"model", json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 16}, {"activation", "relu"}},
                                 {{"layer", "gin"}, {"name", "g2"}, {"out", 2}}})},
          {"train", {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}}},
          {"loader", loader}};
}

}  // namespace

TEST_CASE("run: a neighbour-sampled epoch on the simulated IPU and the CPU, padding neutral and reported", "[loader][cli][slow]") {
  TempDir dir("mb-cli");
  const std::string w = dir.write("w.json", neighbor_workload().dump());
  const auto r = run_tilesim("run " + w + " --backends ipu:bow,cpu --warmup 0 --repeats 1 --out " + dir.path("out"), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("outputs agree across backends"));
  CHECK_THAT(r.out, Contains("seed_nodes/s"));
  const json report = json::parse(tilesim_test::slurp(dir.path("out/report.json")));
  const json& loader = report["loader"];
  const std::int64_t batches = loader["batches_per_epoch"];
  CHECK(batches == (271 + 63) / 64);  // 10% of Cora's 2,708 nodes, 64 seeds per batch
  CHECK(report["options"]["batches"] == batches);  // one epoch by default
  CHECK(loader["sampling_s"]["total"].get<double>() > 0);
  CHECK(loader["fixed_shape"]["loss_rows"] == 64);
  REQUIRE(report["results"].size() == 2);
  const json& ipu = report["results"][0]["minibatch"];
  const json& cpu = report["results"][1]["minibatch"];
  for (const json* m : {&ipu, &cpu}) {
    CHECK((*m)["batches"] == batches);
    CHECK((*m)["per_batch"].size() == static_cast<std::size_t>(batches));
    CHECK((*m)["all_batches_verified"] == true);
    CHECK((*m)["step_time_s"]["min"].get<double>() <= (*m)["step_time_s"]["median"].get<double>());
    CHECK((*m)["step_time_s"]["median"].get<double>() <= (*m)["step_time_s"]["max"].get<double>());
    CHECK((*m)["throughput"]["unit"] == "seed_nodes_per_s");
    CHECK((*m)["real_work"]["seed_nodes"] == 271);
    CHECK((*m)["host_vs_device"]["overlapped_s"].get<double>() <= (*m)["host_vs_device"]["serial_s"].get<double>());
    CHECK((*m)["loss"].size() == static_cast<std::size_t>(batches));
  }
  // The IPU's batches are padded to one shape (the last batch has fewer seeds); the CPU's are not.
  CHECK(ipu["padding"]["edges"].get<std::int64_t>() > 0);
  CHECK(ipu["padding"]["edge_share"].get<double>() > 0);
  CHECK(cpu["padding"]["edges"] == 0);
  CHECK(ipu["peak_tile_bytes"]["bytes"].get<std::int64_t>() > 0);
  // Padding is neutral: the same first loss from the padded and the exact step.
  REQUIRE(report["loss_agreement"].size() == 1);
  CHECK(report["loss_agreement"][0]["first_batch_equal"] == true);
  CHECK(ipu["loss"][0].get<double>() == Approx(cpu["loss"][0].get<double>()).epsilon(1e-4));
}

TEST_CASE("run: packing molecules wastes less of the fixed shape than padding batches of them", "[loader][cli][slow]") {
  TempDir dir("mb-pack");
  json shares, graphs_per_s;
  for (const std::string packing : {"pad", "lpfhp"}) {
    const std::string w = dir.write(packing + ".json", molecules_workload(packing).dump());
    const auto r = run_tilesim("run " + w + " --backends ipu:bow,cpu --warmup 0 --repeats 1 --out " + dir.path(packing), dir.dir());
    INFO(packing << ": " << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json report = json::parse(tilesim_test::slurp(dir.path(packing + "/report.json")));
    const json& ipu = report["results"][0]["minibatch"];
    CHECK(ipu["throughput"]["unit"] == "graphs_per_s");
    CHECK(ipu["all_batches_verified"] == true);
    CHECK(report["loss_agreement"][0]["first_batch_equal"] == true);
    shares[packing] = ipu["padding"]["node_share"];
    graphs_per_s[packing] = ipu["throughput"]["value"];
  }
  INFO("padding share " << shares.dump() << ", graphs/s " << graphs_per_s.dump());
  CHECK(shares["lpfhp"].get<double>() < shares["pad"].get<double>());
  CHECK(graphs_per_s["lpfhp"].get<double>() > graphs_per_s["pad"].get<double>());
}

TEST_CASE("run: --batches sets the batches of a loader, and is refused without one", "[loader][cli]") {
  TempDir dir("mb-batches");
  const std::string w = dir.write("w.json", neighbor_workload().dump());
  auto r = run_tilesim("run " + w + " --backends cpu --batches 2 --warmup 0 --repeats 1 --out " + dir.path("out"), dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json report = json::parse(tilesim_test::slurp(dir.path("out/report.json")));
  CHECK(report["results"][0]["minibatch"]["batches"] == 2);
  CHECK(report["results"][0]["minibatch"]["epoch_time_from"].get<std::string>().find("2 of 5") != std::string::npos);
  r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu --batches 2 --out " + dir.path("o2"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("loader"));
  r = run_tilesim("run " + w + " --backends cpu --steps 2 --out " + dir.path("o3"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--batches"));
  r = run_tilesim("run " + w + " --backends cpu --batches 0 --out " + dir.path("o4"), dir.dir());
  CHECK(r.exit_code == 2);
  r = run_tilesim("run " + w + " --backends ipu --trace " + dir.path("t.json") + " --out " + dir.path("o5"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--trace"));
}

TEST_CASE("run: a loader's fixed size that a batch exceeds exits 2 naming loader.fixed_size", "[loader][cli]") {
  TempDir dir("mb-small");
  json w = molecules_workload("pad");
  w["loader"]["fixed_size"] = {{"num_nodes", 100}, {"num_edges", 900}, {"num_graphs", 17}};
  const auto r = run_tilesim("run " + dir.write("w.json", w.dump()) + " --backends ipu:bow --out " + dir.path("out"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("loader.fixed_size"));
}

TEST_CASE("fit: the largest neighbour batch whose inference and training steps fit one Bow, and why the next does not",
          "[loader][cli][slow]") {
  TempDir dir("mb-fit");
  json w = neighbor_workload();
  w["graph"] = {{"preset", "pubmed"}};
  w["model"][1]["out"] = 3;
  w["train"]["train_fraction"] = 0.5;
  const auto r = run_tilesim("fit " + dir.write("w.json", w.dump()) + " --backend ipu:bow --json", dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json fit = json::parse(r.out);
  CHECK(fit["knob"] == "batch_size");
  for (const char* step : {"inference", "training"}) {
    INFO(step);
    const json& s = fit[step];
    REQUIRE(s["largest_fitting"].is_number());
    // Bisection ends with the boundary pinned: the next value up does not fit, and says why.
    CHECK(s["smallest_failing"].get<std::int64_t>() == s["largest_fitting"].get<std::int64_t>() + 1);
    CHECK_THAT(s["why_it_does_not_fit"].get<std::string>(), Contains("does not fit"));
    CHECK(s["peak_tile_bytes"].get<std::int64_t>() <= 638976);  // a Bow tile's SRAM
    CHECK(s["peak_at_op"].get<std::string>().size() > 0);
  }
  // A training step keeps activations, gradients and optimizer state beside the forward ops: at the same
  // batch its busiest tile holds at least what inference's does. (The largest fitting batches themselves
  // need not be ordered: near the boundary the sampled batch's own aggregation plan, not the small live
  // tensors spread round the chip, decides, and it does not grow monotonically with the batch size.)
  const std::int64_t batch = fit["inference"]["largest_fitting"].get<std::int64_t>();
  std::map<bool, std::int64_t> peak;
  for (const bool train : {true, false}) {
    json at = w;
    at["loader"]["batch_size"] = batch;
    if (!train) at.erase("train");
    const auto run = run_tilesim("run " + dir.write(train ? "train.json" : "infer.json", at.dump()) +
                                     " --backends ipu:bow --batches 1 --timing-only --json --out " + dir.path(train ? "t" : "i"),
                                 dir.dir());
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    peak[train] = json::parse(run.out)["results"][0]["minibatch"]["peak_tile_bytes"]["bytes"].get<std::int64_t>();
  }
  CHECK(peak[true] >= peak[false]);
  CHECK(peak[false] <= 638976);
  // Only an IPU backend answers; a workload without a loader is refused.
  auto bad = run_tilesim("fit " + dir.path("w.json") + " --backend cpu", dir.dir());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("--backend"));
  bad = run_tilesim("fit workloads/examples/gcn_cora_train.json", dir.dir());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("loader"));
}

TEST_CASE("sweep: batch size as the axis, one row per size and backend, and the throughput plot", "[loader][cli][slow]") {
  TempDir dir("mb-sweep");
  dir.write("w.json", neighbor_workload().dump());
  const json sweep = {{"name", "bs"},
                      {"workload", "w.json"},
                      {"batch_sizes", {16, 64, 256}},
                      {"backends", {"ipu:bow", "gpu-model:a100-40gb:eager"}},
                      {"batches", 2}};
  const std::string file = dir.write("sweep.json", sweep.dump());
  const auto r = run_tilesim("sweep " + file + " --out " + dir.path("out"), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = tilesim_test::data_lines(dir.path("out/results.csv"));
  REQUIRE(lines.size() == 6);
  CHECK(lines[0].rfind("mb_cli,batch_size,16,ipu:bow,simulated,2,", 0) == 0);
  CHECK(lines[5].rfind("mb_cli,batch_size,256,gpu-model:a100-40gb:eager,modeled,2,", 0) == 0);
  for (const auto& line : lines) CHECK(line.substr(line.size() - 3) == ",ok");
  // A second run into the same folder needs --overwrite; --resume is refused.
  auto again = run_tilesim("sweep " + file + " --out " + dir.path("out"), dir.dir());
  CHECK(again.exit_code == 2);
  again = run_tilesim("sweep " + file + " --resume --out " + dir.path("out"), dir.dir());
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Contains("--resume"));

  const auto plot = run_tilesim("plot throughput " + dir.path("out/results.csv"), dir.dir());
  INFO(plot.err);
  REQUIRE(plot.exit_code == 0);
  CHECK(tilesim_test::is_pdf(tilesim_test::slurp(dir.path("out/plots/throughput_mb_cli.pdf"))));
  const std::string data = tilesim_test::slurp(dir.path("out/plots/throughput_mb_cli.dat"));
  CHECK_THAT(data, Contains("# ipu:bow (simulated)"));
  CHECK_THAT(data, Contains("# gpu-model:a100-40gb:eager (modeled)"));
  // An op sweep's results.csv is not a batch-size sweep's.
  const auto wrong = run_tilesim("plot throughput " + file, dir.dir());
  CHECK(wrong.exit_code == 2);
}

// The shipped mini-batch examples that build in seconds, a batch or two each on the simulated IPU, the
// CPU kernels and the GPU model in eager mode (the ogbn-products- and Reddit-shaped ones build graphs of
// 10^8 edges, minutes and gigabytes of host memory: their runs are in the README and the docs).
TEST_CASE("every quick mini-batch example runs with verified outputs, the padded and exact first losses agreeing",
          "[loader][cli][slow]") {
  // One batch each (the packed forms share the padded ones' code and shape; the unit and CLI tests above
  // run several batches of smaller workloads).
  for (const std::string name : {"sage_pubmed_neighbor", "gin_qm9_packed", "schnet_qm9_pad"}) {
    INFO(name);
    TempDir dir("mb-ex-" + name);
    const auto r = run_tilesim("run workloads/examples/" + name + ".json --batches 1 --backends ipu:bow,cpu,gpu-model:a100-40gb:eager "
                               "--warmup 0 --repeats 1 --json --out " + dir.path("out"),
                               dir.dir());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json report = json::parse(r.out);
    REQUIRE(report["results"].size() == 3);
    for (const json& b : report["results"]) {
      INFO(b["backend"]);
      const json& m = b["minibatch"];
      CHECK(m["batches"] == 1);
      CHECK(m["step_time_s"]["median"].get<double>() > 0);
      CHECK(m["throughput"]["value"].get<double>() > 0);
      if (b["kind"] != "modeled") {
        CHECK(m["all_batches_verified"] == true);
        CHECK(m["loss"][0].is_number());
      }
    }
    CHECK(report["loss_agreement"][0]["first_batch_equal"] == true);
  }
}
