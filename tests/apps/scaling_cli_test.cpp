// `tilesim run` on workloads with a "parallel" section: replicas (2 and 4) and a 2-stage pipeline of 2
// micro-batches on the DGX A100 model and the simulated Bow-2000, the report's "scaling" fields present
// and consistent (the parts add up to the step, efficiency at most 1, the bubble share of equal stages),
// `tilesim plot scaling` on the reports, and the errors of a system too small or a backend without one.
#include <cmath>
#include <map>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

using json = nlohmann::json;
using Catch::Matchers::Contains;
using tilesim_test::run_tilesim;
using tilesim_test::TempDir;

namespace {

// Two GCN layers of equal width on a small random graph, so that a pipeline's two stages are equal.
json workload(const std::string& name, json parallel, bool train) {
  json w = {{"name", name},
            {"seed", 3},
            {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 512}, {"num_edges", 4096}}},
            {"num_features", 16},
            {"model", json::array({{{"layer", "gcn"}, {"name", "a"}, {"out", 16}, {"activation", "relu"}},
                                   {{"layer", "gcn"}, {"name", "b"}, {"out", 16}, {"activation", "relu"}}})},
            {"parallel", std::move(parallel)}};
  if (train) w["train"] = {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}}}};
  return w;
}

json run_report(const TempDir& dir, const std::string& name, const json& w) {
  const std::string path = dir.write(name + ".json", w.dump());
  const auto r = run_tilesim("run " + path + " --backends gpu-model:dgx-a100,ipu:bow-2000 --timing-only --out " + dir.path(name), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("scaling:") && Contains("efficiency"));
  return json::parse(tilesim_test::slurp(dir.path(name + "/report.json")));
}

// Every entry: the backends, the parts of the step adding up to it, labelled kinds, a throughput,
// per-device memory, and an efficiency in (0, 1].
void check_common(const json& report, std::int64_t devices) {
  REQUIRE(report["scaling"].size() == 2);
  CHECK(report["results"].size() == 2);
  CHECK(report["workload"].contains("parallel"));
  for (const json& e : report["scaling"]) {
    INFO(e["backend"]);
    CHECK(e["devices_used"] == devices);
    const json& step = e["step"];
    const double parts = step["compute_s"].get<double>() + step["collective_s"].get<double>() + step["bubble_s"].get<double>() +
                         step["halo_exchange_s"].get<double>();
    CHECK(step["time_s"].get<double>() == Approx(parts).epsilon(1e-12));
    CHECK(step["compute_s"].get<double>() > 0);
    const std::string compute_kind = e["backend"] == "ipu:bow-2000" ? "simulated" : "modeled";
    CHECK(step["kinds"]["compute"] == compute_kind);
    CHECK(e["throughput"]["value"].get<double>() > 0);
    CHECK(e["throughput"]["unit"] == "nodes_per_s");
    REQUIRE(e["scaling_efficiency"].is_number());
    CHECK(e["scaling_efficiency"].get<double>() > 0);
    CHECK(e["scaling_efficiency"].get<double>() <= 1.0 + 1e-12);
    // Throughput is the step's work over its time, or on a backend with an execution model (the IPU's) the
    // epoch's items over its epoch time, the step's rate beside; efficiency against one device's throughput.
    const double step_rate = e["throughput"]["items_per_step"].get<double>() / step["time_s"].get<double>();
    if (e.contains("execution")) {
      CHECK(e["throughput"]["device_only_value"].get<double>() == Approx(step_rate));
      CHECK(e["throughput"]["value"].get<double>() ==
            Approx(e["execution"]["epoch_items"].get<double>() / e["execution"]["epoch_time_s"].get<double>()));
    } else {
      CHECK(e["throughput"]["value"].get<double>() == Approx(step_rate));
    }
    CHECK(e["scaling_efficiency"].get<double>() ==
          Approx(e["throughput"]["value"].get<double>() / (static_cast<double>(devices) * e["one_device"]["throughput"].get<double>())));
    REQUIRE(!e["memory_per_device"].empty());
    for (const json& m : e["memory_per_device"]) {
      // GCN(16, 16)'s weight and bias, in float32.
      CHECK(m["parameter_bytes"].get<std::int64_t>() % ((16 * 16 + 16) * 4) == 0);
      CHECK(m["parameter_bytes"].get<std::int64_t>() > 0);
      CHECK(m["total_bytes"].get<std::int64_t>() >= m["parameter_bytes"].get<std::int64_t>());
    }
  }
}

}  // namespace

TEST_CASE("run: replicas on the DGX A100 model and the simulated Bow-2000 add an all-reduce of the gradients", "[scaling][cli]") {
  TempDir dir("scaling-replicas");
  std::map<std::int64_t, json> by_replicas;
  for (std::int64_t replicas : {2, 4}) {
    const std::string name = "replicas_r" + std::to_string(replicas);
    const json report = run_report(dir, name, workload(name, {{"replicas", replicas}}, true));
    check_common(report, replicas);
    for (const json& e : report["scaling"]) {
      INFO(e["backend"]);
      REQUIRE(e.contains("allreduce"));
      CHECK(e["step"]["collective_s"].get<double>() > 0);
      CHECK(e["step"]["bubble_s"] == 0);
      // Four float32 parameter tensors of GCN(16, 16) twice: (16 x 16 + 16) x 2 x 4 bytes.
      CHECK(e["allreduce"]["detail"]["bytes_per_replica"] == 2176);
      const std::string link_kind = e["backend"] == "ipu:bow-2000" ? "simulated" : "modeled";
      CHECK(e["allreduce"]["kind"] == link_kind);
      CHECK(e["allreduce"]["closed_form_s"].get<double>() > 0);
      // Each replica runs its own copy of the same graph: N devices' throughput is N times the step's work.
      CHECK(e["throughput"]["items_per_step"] == 512 * replicas);
    }
    by_replicas[replicas] = report;
  }
  // More replicas: more work per step and a longer all-reduce (the ring's steps grow with R).
  for (std::size_t b = 0; b < 2; ++b) {
    const json& two = by_replicas[2]["scaling"][b];
    const json& four = by_replicas[4]["scaling"][b];
    CHECK(four["step"]["collective_s"].get<double>() > two["step"]["collective_s"].get<double>());
    CHECK(four["throughput"]["value"].get<double>() > two["throughput"]["value"].get<double>());
  }

  // The plot: throughput versus chips, one line per system.
  const auto plot = run_tilesim("plot scaling " + dir.path("replicas_r2/report.json") + " " + dir.path("replicas_r4/report.json") + " --out " + dir.path("plots"),
                                dir.dir());
  INFO(plot.out << plot.err);
  REQUIRE(plot.exit_code == 0);
  const std::string data = tilesim_test::slurp(dir.path("plots/scaling_throughput.dat"));
  CHECK_THAT(data, Contains("# gpu-model:dgx-a100 (modeled)") && Contains("# ipu:bow-2000 (simulated)"));
  CHECK(tilesim_test::slurp(dir.path("plots/scaling_throughput.gp")).find("chips") != std::string::npos);
}

namespace {

// A 2-stage, 2-micro-batch training pipeline under `schedule` on both systems, and its figure.
void check_pipeline(const std::string& schedule) {
  TempDir dir("scaling-pipeline-" + schedule);
  const json stages = json::array({json::array({"a"}), json::array({"b"})});
  const json report = run_report(dir, schedule, workload(schedule, {{"pipeline", {{"stages", stages}, {"micro_batches", 2}, {"schedule", schedule}}}}, true));
  check_common(report, 2);
  for (const json& e : report["scaling"]) {
    INFO(e["backend"] << " " << schedule);
    const json& p = e["pipeline"];
    CHECK(p["stages"] == 2);
    CHECK(p["micro_batches"] == 2);
    CHECK(p["schedule"] == schedule);
    CHECK(p["equal_stage_bubble_share"].get<double>() == Approx(1.0 / 3));
    CHECK(p["bubble_share"].get<double>() == Approx(p["bubble_s"].get<double>() / p["makespan_s"].get<double>()));
    // The stages are nearly equal (the same layer; the last adds the loss, the first needs no input
    // gradient), so the bubble is near (S-1)/(M+S-1); the IPU's lockstep cycles wait for the slower stage.
    CHECK(p["bubble_share"].get<double>() > 0.2);
    CHECK(p["bubble_share"].get<double>() < 0.5);
    CHECK(e["step"]["bubble_s"].get<double>() == Approx(p["bubble_s"].get<double>()));
    CHECK(e["step"]["collective_s"] == 0);
    CHECK(p["stage_backward_s"][0].get<double>() > 0);
    // Stage 0 hands stage 1 one micro-batch's [nodes, 16] float32 activations.
    CHECK(p["boundary_bytes"][0].get<std::int64_t>() > 0);
    CHECK(p["boundary_bytes"][0].get<std::int64_t>() % (16 * 4) == 0);
    REQUIRE(e["memory_per_device"].size() == 2);
    // GPipe keeps both micro-batches on each stage; 1F1B (the modeled schedule) at most S - s.
    const json in_flight = schedule == "gpipe" ? json::array({2, 2}) : json::array({2, 1});
    CHECK(p["peak_in_flight"] == in_flight);
    CHECK(e["memory_per_device"][1]["micro_batches_in_flight"] == in_flight[1]);
  }
  const auto plot = run_tilesim("plot scaling " + dir.path(schedule + "/report.json") + " --out " + dir.path("plots"), dir.dir());
  INFO(plot.out << plot.err);
  REQUIRE(plot.exit_code == 0);
  CHECK_THAT(tilesim_test::slurp(dir.path("plots/scaling_pipeline.dat")), Contains("2 stages, " + schedule));
}

}  // namespace

TEST_CASE("run: a 2-stage GPipe pipeline of 2 micro-batches reports its bubble and memory per stage", "[scaling][cli]") {
  check_pipeline("gpipe");
}

TEST_CASE("run: a 2-stage 1F1B pipeline of 2 micro-batches keeps fewer micro-batches in flight", "[scaling][cli]") {
  check_pipeline("1f1b");
}

TEST_CASE("run: an inference pipeline of equal stages has the bubble (S-1)/(M+S-1), modeled and simulated", "[scaling][cli]") {
  TempDir dir("scaling-inference");
  const json stages = json::array({json::array({"a"}), json::array({"b"})});
  // Inference on the modeled DGX: two equal stages, so the bubble is (S-1)/(M+S-1) but for the transfer.
  const std::string w = dir.write("inference.json", workload("inference", {{"pipeline", {{"stages", stages}, {"micro_batches", 2}}}}, false).dump());
  const auto r = run_tilesim("run " + w + " --backends gpu-model:dgx-a100 --out " + dir.path("inference"), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json e = json::parse(tilesim_test::slurp(dir.path("inference/report.json")))["scaling"][0];
  CHECK(e["pipeline"]["bubble_share"].get<double>() == Approx(1.0 / 3).epsilon(0.05));
  CHECK(e["pipeline"]["stage_forward_s"][0].get<double>() == Approx(e["pipeline"]["stage_forward_s"][1].get<double>()).epsilon(0.01));
  CHECK(e["pipeline"]["peak_in_flight"] == json::array({1, 1}));
  // The simulated IPU runs the forwards alone in lockstep: M + S - 1 = 3 cycles of which each stage is busy
  // in 2, so the bubble is a third but for the transfers and syncs, which it adds.
  const auto ipu = run_tilesim("run " + w + " --backends ipu:bow-2000 --timing-only --out " + dir.path("inference-ipu"), dir.dir());
  INFO(ipu.out << ipu.err);
  REQUIRE(ipu.exit_code == 0);
  const json i = json::parse(tilesim_test::slurp(dir.path("inference-ipu/report.json")))["scaling"][0];
  CHECK(i["pipeline"]["bubble_share"].get<double>() >= 1.0 / 3 - 1e-9);
  CHECK(i["pipeline"]["bubble_share"].get<double>() < 0.5);
  CHECK(i["pipeline"]["peak_in_flight"] == json::array({1, 1}));
  CHECK(i["step"]["bubble_s"].get<double>() > 0);
}

TEST_CASE("run: METIS partitions on the CPU cluster model add each layer's halo exchange", "[scaling][cli]") {
  TempDir dir("scaling-partitions");
  // The whole graph over 4 nodes (DistGNN), and the same with each node sampling its own batches.
  json whole = workload("parts_whole", {{"partitions", 4}}, true);
  json sampled = workload("parts_sampled", {{"partitions", 4}}, true);
  sampled["loader"] = {{"kind", "neighbor"}, {"batch_size", 64}, {"fanouts", {5, 5}}};
  for (const json* w : {&whole, &sampled}) {
    const std::string name = (*w)["name"];
    const std::string path = dir.write(name + ".json", w->dump());
    const auto r = run_tilesim("run " + path + " --backends cpu-model:spr-cluster --out " + dir.path(name), dir.dir());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json e = json::parse(tilesim_test::slurp(dir.path(name + "/report.json")))["scaling"][0];
    CHECK(e["devices_used"] == 4);
    CHECK(e["devices_in_system"] == 8);
    const json& step = e["step"];
    CHECK(step["time_s"].get<double>() ==
          Approx(step["compute_s"].get<double>() + step["collective_s"].get<double>() + step["halo_exchange_s"].get<double>()));
    CHECK(step["halo_exchange_s"].get<double>() > 0);
    CHECK(step["collective_s"].get<double>() > 0);  // the 4 nodes' gradients
    CHECK(step["kinds"]["compute"] == "modeled");
    CHECK(e["scaling_efficiency"].get<double>() > 0);
    CHECK(e["scaling_efficiency"].get<double>() <= 1.0);
    // Two layers: the first exchanged forward only, the second forward and its gradients back.
    const json& layers = e["halo_exchange"]["layers"];
    REQUIRE(layers.size() == 2);
    CHECK(layers[0]["exchanges"] == 1);
    CHECK(layers[1]["exchanges"] == 2);
    CHECK(layers[0]["row_bytes"] == 16 * 4);
  }
  const json e = json::parse(tilesim_test::slurp(dir.path("parts_whole/report.json")))["scaling"][0];
  std::int64_t owned = 0, edges = 0;
  for (const json& part : e["halo_exchange"]["partitions"]) {
    owned += part["owned_nodes"].get<std::int64_t>();
    edges += part["local_edges"].get<std::int64_t>() + part["cut_edges"].get<std::int64_t>();
    CHECK(part["halo_nodes"].get<std::int64_t>() > 0);
  }
  CHECK(owned == 512);   // every node owned once
  CHECK(edges == 4096);  // every edge in the partition of its destination
  CHECK(e["throughput"]["items_per_step"] == 512);
}

TEST_CASE("run: inference replicas sum no gradients", "[scaling][cli]") {
  TempDir dir("scaling-inference-replicas");
  const json inference = run_report(dir, "inf", workload("inf", {{"replicas", 2}}, false));
  check_common(inference, 2);
  for (const json& e : inference["scaling"]) {
    CHECK(e["step"]["collective_s"] == 0);
    CHECK(e["allreduce"]["per_step"] == "none: inference trains no parameters");
    CHECK(e["memory_per_device"][0]["gradient_bytes"] == 0);
  }
}

TEST_CASE("run: a parallel section larger than the system, or a backend without one, is refused", "[scaling][cli]") {
  TempDir dir("scaling-errors");
  const std::string w = dir.write("w.json", workload("big", {{"replicas", 16}}, true).dump());
  const auto big = run_tilesim("run " + w + " --backends gpu-model:dgx-a100 --out " + dir.path("out"), dir.dir());
  CHECK(big.exit_code == 2);
  CHECK_THAT(big.err, Contains("w.json: parallel: expected at most 8 devices (replicas x stages x partitions) on gpu-model:dgx-a100 (8 GPUs") &&
                          Contains("found 16 (16 replicas (ring all-reduce))"));
  const auto cpu = run_tilesim("run " + w + " --backends cpu --out " + dir.path("out"), dir.dir());
  CHECK(cpu.exit_code == 2);
  CHECK_THAT(cpu.err, Contains("--backends: expected backends of systems") && Contains("found cpu"));
  const auto not_scaling = run_tilesim("plot scaling " + dir.write("r.json", R"({"workload": {"name": "x"}, "results": []})") + " --out " + dir.path("p"),
                                       dir.dir());
  CHECK(not_scaling.exit_code == 2);
  CHECK_THAT(not_scaling.err, Contains("r.json: scaling: expected the report of a workload with a \"parallel\" section"));
}

// Throughput counts the epoch, not the batches that ran: a step of R x A packed batches carries the
// epoch's mean batch R x A times (the loader's plan of every pack), and a mini-batch run's rate is the
// epoch's graphs over the epoch's time. It used to count whichever graphs the first R x A packs held.
TEST_CASE("run: a loader's throughput counts the epoch's items over the epoch's time, replicas or not", "[scaling][cli]") {
  TempDir dir("scaling-epoch");
  json w = {{"name", "packed"},
            {"seed", 2},
            {"model", json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 16}, {"activation", "relu"}},
                                   {{"layer", "gin"}, {"name", "g2"}, {"out", 2}}})},
            {"train", {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}}},
            {"loader", {{"kind", "graphs"},
                        {"dataset", {{"kind", "qm9"}, {"num_graphs", 96}}},
                        {"fixed_size", {{"num_nodes", 120}, {"num_edges", 2400}, {"num_graphs", 9}}},
                        {"packing", "lpfhp"}}}};
  // One device, two batches of the epoch run: the rate is still the epoch's.
  const auto one = run_tilesim("run " + dir.write("one.json", w.dump()) + " --backends ipu:bow,gpu-model:a100-40gb:eager --batches 2 "
                               "--timing-only --json --out " + dir.path("one"), dir.dir());
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  for (const json& b : json::parse(one.out)["results"]) {
    INFO(b["backend"]);
    const json& m = b["minibatch"];
    CHECK(m["throughput"]["epoch_items"] == 96);  // every graph of the dataset once
    CHECK_THAT(m["throughput"]["counts"].get<std::string>(), Contains("the epoch's 96 graphs"));
    CHECK(m["throughput"]["value"].get<double>() == Approx(96.0 / m["epoch_time_s"].get<double>()));
  }
  // Two replicas with two micro-batches each: four packs per step.
  w["parallel"] = {{"replicas", 2}, {"gradient_accumulation", 2}};
  const json report = run_report(dir, "replicas", w);
  for (const json& e : report["scaling"]) {
    INFO(e["backend"]);
    const json& t = e["throughput"];
    REQUIRE(t.contains("epoch"));
    CHECK(t["epoch"]["items"] == 96);
    const double batches = t["epoch"]["batches"].get<double>();
    CHECK(batches >= 96.0 / 9);  // at most 9 graphs per pack
    CHECK(t["items_per_step"].get<double>() == Approx(96.0 / batches * 4));
    const double step_rate = t["items_per_step"].get<double>() / e["step"]["time_s"].get<double>();
    // The IPU's execution model prices the epoch (its steps, host calls and host I/O); the step's rate is beside.
    if (e.contains("execution")) {
      CHECK(t["device_only_value"].get<double>() == Approx(step_rate));
      CHECK(t["value"].get<double>() == Approx(96.0 / e["execution"]["epoch_time_s"].get<double>()));
    } else {
      CHECK(t["value"].get<double>() == Approx(step_rate));
    }
    CHECK_THAT(t["counts"].get<std::string>(), Contains("mean batch") && Contains("4 batches of one step"));
  }
}

// The packed-QM9 SchNet of graphcore-research/hydronet-gnn's configs/qm9_packed.yml on 1 to 64 IPUs
// (workloads/examples/hydronet_qm9/): each file the same model and loader with its replica count, and
// the one-IPU and Pod16 runs report the epoch's graphs per second, the Pod16's from 16 replicas.
TEST_CASE("the shipped hydronet packed-QM9 SchNet examples: one file per IPU count, each counting the training split's epoch",
          "[scaling][cli][slow]") {
  TempDir dir("hydronet-qm9");
  const std::string folder = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/hydronet_qm9/";
  json first;
  for (int replicas : {1, 2, 4, 8, 16, 32, 64}) {
    INFO(replicas);
    json w = json::parse(tilesim_test::slurp(folder + "schnet_r" + std::to_string(replicas) + ".json"));
    CHECK(w["parallel"]["replicas"] == replicas);
    CHECK(w["parallel"]["gradient_accumulation"] == 2);
    CHECK(w["loader"]["batches"] == 2 * replicas);  // one optimizer step of every replica
    w.erase("name");
    w.erase("parallel");
    w["loader"].erase("batches");
    if (replicas == 1) first = w;
    CHECK(w == first);  // the same model, training and loader in every file
  }
  REQUIRE(first["model"].size() == 6);  // 4 interaction blocks, then PyG SchNet's readout lin1 (100 -> 50) and lin2 (50 -> 1)
  CHECK(first["model"][4]["layer"] == "linear");
  CHECK(first["model"][4]["out"] == 50);
  CHECK(first["model"][5]["out"] == 1);
  CHECK(first["loader"]["fixed_size"]["num_nodes"] == 16 * 36);  // 16 packs of at most 36 atoms
  CHECK(first["loader"]["fixed_size"]["num_edges"] == 16 * 36 * 28);  // 28 neighbours per atom
  double one_ipu = 0;
  for (const auto& [replicas, machine] : std::vector<std::pair<int, std::string>>{{1, "ipu:bow"}, {16, "ipu:pod16"}}) {
    const std::string out = dir.path("r" + std::to_string(replicas));
    const auto r = run_tilesim("run " + folder + "schnet_r" + std::to_string(replicas) + ".json --backends " + machine +
                                   " --timing-only --out " + out,
                               dir.dir());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json e = json::parse(tilesim_test::slurp(out + "/report.json"))["scaling"].at(0);
    const json& t = e["throughput"];
    CHECK(t["unit"] == "graphs_per_s");
    CHECK(t["epoch"]["items"] == 104665);  // QM9's training split, 0.8 of 130,831
    CHECK(e["devices_used"] == replicas);
    // The config's PopTorch options: 4 device iterations of 2 micro-batches a call, the asynchronous loader.
    CHECK(e["execution"]["micro_batches_per_host_call"] == 8);
    CHECK(e["execution"]["host_link"]["overlaps_compute"] == true);
    CHECK(e["execution"]["input_bytes_per_micro_batch"].get<std::int64_t>() > 0);
    if (replicas == 1) one_ipu = t["value"].get<double>();
    else CHECK(t["value"].get<double>() > 8 * one_ipu);
  }
}

// The same SchNet under hydronet-gnn's scaling sweep (sweeps/qm9_packed_scaling.yml,
// workloads/examples/hydronet_qm9_scaling/): 64 / R device iterations, padded molecules, the synchronous
// loader and PopART's unmerged all-reduces, one per gradient tensor.
TEST_CASE("the shipped hydronet scaling-sweep SchNet examples: one all-reduce per gradient tensor, 128 micro-batches a host call in all",
          "[scaling][cli][slow]") {
  TempDir dir("hydronet-qm9-scaling");
  const std::string folder = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/hydronet_qm9_scaling/";
  for (int replicas : {1, 2, 4, 8, 16, 32, 64}) {
    INFO(replicas);
    const json w = json::parse(tilesim_test::slurp(folder + "schnet_r" + std::to_string(replicas) + ".json"));
    CHECK(w["parallel"]["replicas"] == replicas);
    CHECK(w["parallel"]["merge_allreduce"] == false);
    CHECK(w["loader"]["device_iterations"].get<int>() * replicas == 64);
    CHECK(w["loader"]["asynchronous"] == false);
    CHECK(w["loader"]["fixed_size"]["num_nodes"] == 16 * 32);  // 16 molecules padded to 32 atoms each
  }
  json merged;
  for (const bool merge : {false, true}) {
    json w = json::parse(tilesim_test::slurp(folder + "schnet_r16.json"));
    w["parallel"]["merge_allreduce"] = merge;
    const std::string file = dir.path(merge ? "merged.json" : "per_tensor.json");
    tilesim_test::write_text(file, w.dump());
    const std::string out = dir.path(merge ? "merged" : "per_tensor");
    const auto r = run_tilesim("run " + file + " --backends ipu:pod16 --timing-only --out " + out, dir.dir());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json e = json::parse(tilesim_test::slurp(out + "/report.json"))["scaling"].at(0);
    CHECK(e["execution"]["micro_batches_per_host_call"] == 8);  // 4 device iterations of 2 micro-batches
    CHECK(e["execution"]["host_link"]["overlaps_compute"] == false);
    const json& detail = e["allreduce"]["detail"];
    if (merge) {
      CHECK(detail["collectives"] == 1);
      merged = e;
      continue;
    }
    // 4 blocks x 9 tensors (the filter MLP's 2 weights and 2 biases, CFConv's lin1 weight, lin2 weight and
    // bias, the block's lin weight and bias) + the readout's lin1 and lin2 weights and biases.
    CHECK(detail["collectives"] == 40);
    std::int64_t counted = 0;
    for (const auto& s : detail["sizes"]) counted += s["collectives"].get<std::int64_t>();
    CHECK(counted == 40);
  }
  // Same compute, more collective time: each of the 40 pays the all-reduce's fixed steps.
  const json per_tensor = json::parse(tilesim_test::slurp(dir.path("per_tensor") + "/report.json"))["scaling"].at(0);
  CHECK(per_tensor["step"]["compute_s"].get<double>() == Approx(merged["step"]["compute_s"].get<double>()));
  CHECK(per_tensor["step"]["collective_s"].get<double>() > 2 * merged["step"]["collective_s"].get<double>());
  CHECK(per_tensor["scaling_efficiency"].get<double>() < merged["scaling_efficiency"].get<double>());
}
