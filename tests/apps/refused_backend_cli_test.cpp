// `tilesim run` comparing backends when one of them refuses the workload (it does not fit that
// machine): the others still run, report.json and the table carry the refused backend with its reason,
// and the exit code is still 3 (README.md, "Exit codes").
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

fs::path refused_dir() {
  static const fs::path dir = tilesim_test::scratch("refused_backend_cli_test");
  return dir;
}

// A gather whose 300000 x 1024 float32 table (1.2 GB) is more than one Bow IPU's SRAM (about 0.9 GB)
// but well within an A100's 40 GB: the same workload as the bad-input corpus's cli/does_not_fit case.
const char* kHugeGather = R"({"name": "huge_gather", "ops": [{"op": "gather", "num_inputs": 300000, "num_features": 1024, "num_outputs": 64}]})";

// `tilesim run` of the huge gather on `backends`, into `out`, emptied first.
tilesim_test::CliResult run_huge_gather(const std::string& backends, const fs::path& out) {
  const fs::path workload = tilesim_test::write_text(refused_dir() / "huge.json", kHugeGather);
  fs::remove_all(out);
  return tilesim_test::run_tilesim("run '" + workload.string() + "' --backends " + backends + " --out '" + out.string() + "'",
                                   refused_dir());
}

}  // namespace

TEST_CASE("run: a backend the workload does not fit is reported as refused and the others run, exit code 3", "[cli]") {
  const fs::path out = refused_dir() / "out_mixed";
  const auto r = run_huge_gather("ipu,gpu-model:a100-40gb", out);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 3);

  // The report is written, with the GPU model's numbers and the IPU's refusal.
  REQUIRE(fs::exists(out / "report.json"));
  const nlohmann::json report = nlohmann::json::parse(tilesim_test::slurp(out / "report.json"));
  REQUIRE(report.at("results").size() == 2);
  const nlohmann::json& gpu = report["results"][0];
  const nlohmann::json& ipu = report["results"][1];
  CHECK(gpu.at("backend") == "gpu-model:a100-40gb");
  CHECK(gpu.at("kind") == "modeled");
  CHECK(gpu.at("time_s").get<double>() > 0);
  CHECK(gpu.at("ops").size() == 1);
  CHECK_FALSE(gpu.contains("refused"));
  CHECK(ipu.at("backend") == "ipu:bow");
  CHECK(ipu.at("kind") == "simulated");
  CHECK(ipu.at("status") == "refused");
  CHECK_THAT(ipu.at("refused").get<std::string>(), Catch::Contains("does not fit on machine bow"));
  CHECK(ipu.at("time_s").is_null());
  CHECK(ipu.at("ops").empty());

  // The table has the GPU model's row and a line for the refusal; stderr says it as an error.
  CHECK_THAT(r.out, Catch::Contains("gpu-model:a100-40gb"));
  CHECK_THAT(r.out, Catch::Contains("ipu:bow: REFUSED, does not fit: op \"gather_0\""));
  CHECK_THAT(r.err, Catch::Contains("tilesim: error: ipu:bow refused the workload (the other backends ran"));
}

TEST_CASE("run: when every backend refuses the workload nothing is written and the refusal is the error, exit code 3", "[cli]") {
  const fs::path out = refused_dir() / "out_all_refused";
  const auto r = run_huge_gather("ipu:bow,ipu:mk2", out);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK_FALSE(fs::exists(out / "report.json"));
  CHECK_THAT(r.err, Catch::Contains("tilesim: error: op \"gather_0\""));
  CHECK_THAT(r.err, Catch::Contains("does not fit on machine bow"));
}
