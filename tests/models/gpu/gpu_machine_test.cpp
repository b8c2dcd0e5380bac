// GPU machine files (models/gpu/gpu_machine.hpp): the shipped files load with every figure and its
// source, the fit carried over from the A100 file says so, and bad files are rejected naming the file
// and JSON path.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/gpu_model_cases.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using namespace tilesim_test::gpu_cases;
namespace fs = std::filesystem;

namespace {

// Every figure of a machine as resolved (its file merged with its bases): an object of exactly "value"
// (a number) and a non-empty "source".
void check_every_figure_has_a_source(const nlohmann::json& doc) {
  for (const char* section : {"chip", "peak_flops_per_s", "software", "kernels", "gemm", "eager_host_floor_s"}) {
    REQUIRE(doc.contains(section));
    for (const auto& [key, figure] : doc[section].items()) {
      INFO(section << "." << key);
      CHECK(figure.size() == 2);
      CHECK(figure["value"].is_number());
      CHECK(!figure["source"].get<std::string>().empty());
    }
  }
  // The software stack's figures are words, each with its source too.
  REQUIRE(doc.contains("framework"));
  for (const char* key : {"pytorch", "host_cpu", "optimizer", "zero_grad"}) {
    INFO("framework." << key);
    CHECK(doc["framework"][key]["value"].is_string());
    CHECK(!doc["framework"][key]["source"].get<std::string>().empty());
  }
}

}  // namespace

TEST_CASE("GPU machine files load with every figure and its source", "[gpu][machine][unit]") {
  const auto names = shipped_gpu_machines();
  CHECK(std::set<std::string>(names.begin(), names.end()) ==
        std::set<std::string>{"a100-40gb", "a100-80gb", "h100-sxm", "h200", "v100-16gb"});
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  for (const auto& name : names) {
    INFO(name);
    const auto m = load_gpu_machine(name);
    CHECK(m.name == name);
    check_every_figure_has_a_source(m.provenance.figures_json());
    CHECK(m.index_bytes == 8);
    CHECK(m.max_threads_per_sm == 2048);
    if (name == "a100-40gb") {
      CHECK(m.fit_carried_over_from.empty());
      for (const auto& f : calibration_figures()) {
        INFO(f.key);
        const std::string source = m.provenance.figure(std::string(f.section) + "." + f.key).source;
        CHECK_THAT(source, Catch::Contains("tilesim calibrate-model --gpu a100-40gb"));
        // The zero-fill floor is set from the gather floor, not fitted (no data calls torch.zeros alone).
        if (std::string(f.key) != "zero_fill") CHECK_THAT(source, Catch::Contains("calibration half") && Catch::Contains("a89c2e4"));
      }
    } else {
      // The fit carries over: same fitted figures, own vendor figures, and the sources say so. A file
      // deriving from a100-40gb inherits the fitted figures from its file, sources and all; a file that
      // copies them (fit_carried_over_from, stated there or in a base) says "carried over".
      for (const auto& f : calibration_figures()) {
        INFO(f.key);
        CHECK(m.calibration.*(f.member) == a100.calibration.*(f.member));
        const std::string path = std::string(f.section) + "." + f.key;
        const MachineFigure& figure = m.provenance.figure(path);
        if (figure.file == a100.file) {
          CHECK(m.fit_carried_over_from.empty());
          CHECK(figure.source == a100.provenance.figure(path).source);
        } else {
          CHECK(m.fit_carried_over_from == "a100-40gb");
          CHECK_THAT(figure.source, Catch::StartsWith("carried over from the a100-40gb fit"));
        }
      }
    }
  }
  CHECK(a100.sm_count == 108);
  CHECK(a100.hbm_bytes_per_s == 1.555e12);
  CHECK(a100.l2_bytes == 40 * 1024 * 1024);
  CHECK(load_gpu_machine("a100-80gb").hbm_bytes_per_s == 2.039e12);
  CHECK(load_gpu_machine("h100-sxm").sm_count == 132);
  CHECK(load_gpu_machine("h100-sxm").hbm_bytes_per_s == 3.35e12);
  CHECK(load_gpu_machine("h200").hbm_bytes_per_s == 4.8e12);
  CHECK(load_gpu_machine("v100-16gb").sm_count == 80);
  CHECK(load_gpu_machine("v100-16gb").hbm_bytes_per_s == 9e11);
  // The zero-fill floor is not fitted: it follows the gather floor.
  CHECK(a100.calibration.host_zero_fill_s == a100.calibration.host_gather_s);
}

TEST_CASE("bad GPU machine files are rejected naming the file and JSON path", "[gpu][machine][unit]") {
  const auto good = load_json_file(load_gpu_machine("a100-40gb").file);
  auto doc = good;
  doc["chip"]["sm_count"] = 108;  // a bare number: no source
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("g.json: chip.sm_count"));
  doc = good;
  doc["chip"]["hbm_bytes_per_s"].erase("source");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"),
                    Catch::Contains("g.json: chip.hbm_bytes_per_s.source") && Catch::Contains("required"));
  doc = good;
  doc["kernels"]["dram_eficiency"] = {{"value", 0.9}, {"source", "typo"}};
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("kernels.dram_eficiency") && Catch::Contains("unknown key"));
  doc = good;
  doc["kernels"]["dram_efficiency"]["value"] = 1.2;  // no kernel beats the vendor peak
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("kernels.dram_efficiency.value"));
  doc = good;
  doc["eager_host_floor_s"]["gather"]["value"] = "8.8us";
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("eager_host_floor_s.gather.value") && Catch::Contains("\"8.8us\""));
  doc = good;
  doc["gemm"].erase("efficiency");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("g.json: gemm.efficiency") && Catch::Contains("required"));
  doc = good;
  doc["gemm"]["grouped_tile_rows"]["value"] = 0;
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("gemm.grouped_tile_rows.value"));
  doc = good;
  doc["eager_host_floor_s"].erase("aten_call");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("eager_host_floor_s.aten_call"));
  doc = good;
  doc.erase("peak_flops_per_s");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("peak_flops_per_s"));
  CHECK_THROWS_AS(load_gpu_machine("a100"), InputError);
  CHECK_THROWS_WITH(load_gpu_machine("a100"), Catch::Contains("a100-40gb, a100-80gb, h100-sxm, h200, v100-16gb"));
  const fs::path file = gpu_dir() / "broken.json";
  std::ofstream(file) << "{\"name\": \"x\",}";
  CHECK_THROWS_WITH(load_gpu_machine(file.string()), Catch::Contains(file.string()));
}
