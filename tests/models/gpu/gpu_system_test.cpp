// GPU systems (models/gpu/gpu_system.hpp): the shipped DGX A100 file with every figure sourced, its GPU
// the device file's, `gpu-model:dgx-a100` alone running as one A100, a derived system, and the errors.
#include <catch2/catch.hpp>

#include "backends/registry.hpp"
#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_system.hpp"
#include "tests/support/test_support.hpp"

using nlohmann::json;
using namespace tilesim;
using Catch::Matchers::Contains;
using tilesim_test::required_input_error_of;
using tilesim_test::TempDir;

TEST_CASE("GPU systems: the DGX A100 file, its sources and its GPU", "[gpu][machine][unit]") {
  CHECK(gpu::shipped_gpu_systems() == std::vector<std::string>{"dgx-a100"});
  const auto machines = gpu::shipped_gpu_machines();
  CHECK(std::find(machines.begin(), machines.end(), "dgx-a100") == machines.end());  // single GPUs only

  const gpu::GpuSystem dgx = gpu::load_gpu_system("dgx-a100");
  CHECK(dgx.name == "dgx-a100");
  CHECK(dgx.num_gpus == 8);
  CHECK(dgx.gpus_per_node == 8);
  CHECK(dgx.num_nodes() == 1);
  CHECK(dgx.nvlink_bytes_per_s == 300e9);            // 600 GB/s bidirectional per GPU
  CHECK(dgx.network_bytes_per_s_per_node == 200e9);  // 8 x 200 Gb/s HDR
  CHECK(dgx.device.name == "a100-40gb");
  CHECK(dgx.device.memory_bytes == gpu::load_gpu_machine("a100-40gb").memory_bytes);
  for (const auto& f : dgx.provenance.figures()) {
    INFO(f.path);
    CHECK(!f.source.empty());
    // What is not the vendor's is marked as an assumption.
    if (f.path.find("latency") != std::string::npos) CHECK(f.source.rfind("assumption: ", 0) == 0);
  }
  CHECK(dgx.provenance.figures().size() == 6);

  // `gpu-model:dgx-a100` alone is one of its GPUs: the same predictions as the device file's.
  const gpu::GpuMachine one = gpu::load_gpu_machine("dgx-a100");
  CHECK(one.name == "a100-40gb");
  CHECK(one.sm_count == 108);
  CHECK_THAT(one.description, Contains("one GPU of dgx-a100 (8 GPUs)"));

  // As a system view: 8 GPUs of one node, NVLink inside it.
  const auto view = backends::system_view(backends::parse_backend_list("gpu-model:dgx-a100").front());
  CHECK(view->devices() == 8);
  CHECK(view->devices_per_machine() == 8);
  CHECK(view->device_memory_bytes() == one.memory_bytes);
  // A ring all-reduce of 1 MB over 4 GPUs: 2 x 3/4 x 1e6 / 300e9 + 6 steps of NVLink latency.
  const backends::LinkTime t = view->allreduce({1000000}, 4, AllreduceAlgorithm::ring);
  CHECK(t.time_s == Approx(1.5e6 / 300e9 + 6 * dgx.nvlink_step_latency_s));
  CHECK(t.kind == ResultKind::modeled);
  // A single GPU is a system of one.
  CHECK(backends::system_view(backends::parse_backend_list("gpu-model:h100-sxm").front())->devices() == 1);
}

TEST_CASE("GPU systems: a derived system of two nodes, and the errors", "[gpu][machine][unit]") {
  TempDir dir("gpu-system");
  const std::string shipped = gpu::gpu_machine_dir() + "/dgx-a100.json";
  dir.write("a100-40gb.json", tilesim_test::slurp(gpu::gpu_machine_dir() + "/a100-40gb.json"));
  // Two DGX A100 nodes: the hierarchical all-reduce crosses InfiniBand between them.
  const std::string two = dir.write("two.json", json{{"base", shipped},
                                                     {"name", "dgx-a100-x2"},
                                                     {"description", "two DGX A100 nodes"},
                                                     {"system", {{"num_gpus", {{"value", 16}, {"source", "assumption: two nodes"}}}}}}
                                                    .dump());
  const gpu::GpuSystem s = gpu::load_gpu_system(two);
  CHECK(s.num_gpus == 16);
  CHECK(s.num_nodes() == 2);
  CHECK(s.nvlink_bytes_per_s == 300e9);  // inherited
  const auto view = backends::system_view(backends::parse_backend_list("gpu-model:" + two).front());
  CHECK(view->devices() == 16);
  // 8 ranks per node over 2 nodes: reduce-scatter and all-gather over NVLink, 25 GB/s per GPU between.
  const double B = 8e6;
  const double inside = 7.0 / 8 * B / 300e9 + 7 * s.nvlink_step_latency_s;
  const double across = 2.0 * 1 / 2 * (B / 8) / 25e9 + 2 * s.network_step_latency_s;
  CHECK(view->allreduce({8000000}, 16, AllreduceAlgorithm::hierarchical).time_s == Approx(2 * inside + across));

  const std::string odd = dir.write("odd.json", json{{"base", shipped},
                                                     {"name", "odd"},
                                                     {"description", "not whole nodes"},
                                                     {"system", {{"num_gpus", {{"value", 12}, {"source", "x"}}}}}}
                                                    .dump());
  CHECK(required_input_error_of([&] { gpu::load_gpu_system(odd); }) ==
        odd + ": system.num_gpus.value: expected a multiple of gpus_per_node (8: whole nodes), found 12");
  json doc = json::parse(tilesim_test::slurp(shipped));
  doc["device_file"] = "missing.json";
  const std::string missing = dir.write("missing-device.json", doc.dump());
  CHECK_THAT(required_input_error_of([&] { gpu::load_gpu_system(missing); }),
             Contains(missing + ": device_file: expected a GPU machine file (path relative to this file), found \"missing.json\""));
  doc["device_file"] = "two.json";
  const std::string nested = dir.write("nested.json", doc.dump());
  CHECK(required_input_error_of([&] { gpu::load_gpu_system(nested); }) ==
        nested + ": device_file: expected a single-GPU machine file, found \"two.json\", itself a system file");
  CHECK_THAT(required_input_error_of([&] { gpu::load_gpu_system("dgx-h100"); }), Contains("unknown GPU system \"dgx-h100\": expected one of dgx-a100"));
  CHECK_THAT(required_input_error_of([&] { gpu::load_gpu_system("a100-40gb"); }), Contains("expected a GPU system file"));
}
