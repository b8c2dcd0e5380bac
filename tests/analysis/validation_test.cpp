// Validation against the hydronet measurements: a fixed subset of the held-out half through the real
// models with error bounds, the indices the validation gives the simulator, the report built from the
// points, and `tilesim validate` end to end on a tiny suite.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

#include "analysis/reference_data.hpp"
#include "analysis/validation_report.hpp"
#include "fitting/error_metrics.hpp"
#include "fitting/split.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "workloads/validation_suite.hpp"
#include "workloads/workload.hpp"

namespace fs = std::filesystem;
using namespace tilesim;
using namespace tilesim::analysis;
using namespace tilesim::fitting;
using Catch::Matchers::Contains;

namespace {

fs::path validation_dir() {
  static const fs::path dir = tilesim_test::scratch("validation_test");
  return dir;
}

using tilesim_test::slurp;

std::string shipped_validation(const std::string& relative) {
  return std::string(TILESIM_SOURCE_DIR) + "/validation/hydronet-gnn/" + relative;
}

// The fixed subset: 12 held-out points of a file, evenly spaced through it (the files run over
// num_inputs, then num_features, then num_outputs, so the subset spans small and large sizes).
std::vector<MeasuredPoint> held_out_subset(const std::string& path, const std::string& op) {
  std::vector<MeasuredPoint> held;
  for (const auto& p : read_hydronet_csv(path, op))
    if (!in_calibration_split(p.shape)) held.push_back(p);
  std::vector<MeasuredPoint> subset;
  const std::size_t n = 12;
  for (std::size_t i = 0; i < n; ++i) subset.push_back(held[i * held.size() / n]);
  return subset;
}

struct SubsetRun {
  std::vector<ValidationPoint> points;
  ErrorSummary summary;
};

SubsetRun run_bow_subset(const std::string& op_name, OpKind kind) {
  static const ipu::IpuMachine bow = ipu::load_ipu_machine("bow");
  SubsetRun run;
  std::vector<double> predicted, measured;
  for (const auto& m : held_out_subset(shipped_validation("bow/" + op_name + ".csv"), op_name)) {
    OpGraph graph;
    const Op& op = graph.add_gather_scatter(op_name, kind, DType::float32, m.shape);
    const std::uint64_t seed = point_index_seed(m.shape);
    ValidationPoint p{"bow", op_name, m.shape, false, 0, m.time_s, seed};
    p.predicted_s = ipu::simulate_op_timing(op, point_indices(op, seed), bow).time_s;
    predicted.push_back(p.predicted_s);
    measured.push_back(p.measured_s);
    run.points.push_back(p);
  }
  run.summary = summarize_errors(predicted, measured, 3);
  return run;
}

SubsetRun run_a100_subset(const std::string& op_name, gpu::GpuOp op) {
  static const gpu::GpuMachine a100 = gpu::load_gpu_machine("a100-40gb");
  SubsetRun run;
  std::vector<double> predicted, measured;
  for (const auto& m : held_out_subset(shipped_validation("a100/" + op_name + ".csv"), op_name)) {
    ValidationPoint p{"a100", op_name, m.shape, false, 0, m.time_s, std::nullopt};
    p.predicted_s = gpu::predict(op, m.shape, DType::float32, a100, gpu::GpuMode::eager).time_s;
    predicted.push_back(p.predicted_s);
    measured.push_back(p.measured_s);
    run.points.push_back(p);
  }
  run.summary = summarize_errors(predicted, measured, 3);
  return run;
}

std::string describe(const ErrorSummary& s) {
  std::ostringstream text;
  text << "n " << s.count << ", median " << s.median_ape_pct << "%, p90 " << s.p90_ape_pct << "%, bias " << s.bias_pct
       << "%, r(log) " << (s.pearson_log_r ? *s.pearson_log_r : 0.0);
  return text.str();
}

using tilesim_test::CliResult;

CliResult tilesim_cli(const std::string& env, const std::string& args) {
  return tilesim_test::run_tilesim(args, validation_dir(), env);
}

// A copy of the suite holding the header and the first `rows` data rows of each shipped file.
fs::path tiny_suite(int rows) {
  const fs::path root = validation_dir() / ("tiny_suite_" + std::to_string(rows));
  for (const auto& set : suite_datasets("hydronet", std::string(TILESIM_SOURCE_DIR) + "/validation")) {
    const fs::path from(set.path);
    const fs::path to = root / "hydronet-gnn" / from.parent_path().filename() / from.filename();
    fs::create_directories(to.parent_path());
    std::ifstream in(from);
    std::ofstream out(to);
    std::string line;
    for (int i = 0; i <= rows && std::getline(in, line); ++i) out << line << "\n";
  }
  return root;
}

}  // namespace

TEST_CASE("validation indices are the ones `tilesim run` draws for the same seed", "[validation]") {
  for (OpKind kind : {OpKind::gather, OpKind::scatter_add}) {
    const OpShape shape{64, 16, 300};
    workloads::Workload w;
    w.name = "one_point";
    w.seed = point_index_seed(shape);
    w.ops.push_back({"p", kind, DType::float32, shape, {}, false, std::nullopt});
    const auto instance = workloads::instantiate(w);
    const Op& op = instance.graph.ops[0];
    CHECK(point_indices(op, w.seed) == instance.values.i32(op.indices));
  }
  CHECK(point_index_seed({16, 16, 32}) == 16000016000032ull);
  CHECK(point_index_seed({4096, 512, 32768}) == 4096000512032768ull);
}

// The Bow model is fitted on the calibration half (calibrate-model --ipu). On the whole held-out half it
// measures gather: median 11%, p90 28%, r(log) 0.97; scatter_add: median 7%, p90 27%, r(log) 0.99. This
// 12-point subset is harder for gather (it holds several small gathers near the switch to a two-stage
// lookup, the model's weakest region): gather median 17%, p90 36%, r(log) 0.97; scatter_add median 6%,
// p90 18%. The bounds hold the model near that, so a regression fails, and each point within a factor of two.
TEST_CASE("Bow IPU simulation against a fixed held-out subset of the hydronet data", "[validation][ipu]") {
  struct Bound {
    const char* name;
    OpKind kind;
    double median_pct, p90_pct, min_r;
  };
  for (const Bound& b : {Bound{"gather", OpKind::gather, 25.0, 45.0, 0.94}, Bound{"scatter_add", OpKind::scatter_add, 10.0, 25.0, 0.97}}) {
    const SubsetRun run = run_bow_subset(b.name, b.kind);
    INFO(b.name << ": " << describe(run.summary));
    CHECK(run.summary.count == 12);
    CHECK(run.summary.median_ape_pct < b.median_pct);
    CHECK(run.summary.p90_ape_pct < b.p90_pct);
    REQUIRE(run.summary.pearson_log_r.has_value());
    CHECK(*run.summary.pearson_log_r > b.min_r);
    for (const auto& p : run.points) {
      INFO(p.shape.num_inputs << "x" << p.shape.num_features << " -> " << p.shape.num_outputs << ": predicted "
                              << p.predicted_s << " s, measured " << p.measured_s << " s");
      CHECK(p.predicted_s > 0.5 * p.measured_s);
      CHECK(p.predicted_s < 2.0 * p.measured_s);
    }
  }
}

// The A100 eager model (models/gpu) is fitted on the calibration half; these are the held-out
// targets (median <= 5%, p90 <= 15%). On this subset it measures medians of 1.4-3.4% and p90s of
// 2.7-8.5% across the four ops.
TEST_CASE("A100 eager model against a fixed held-out subset of the hydronet data", "[validation][gpu]") {
  const std::pair<const char*, gpu::GpuOp> ops[] = {{"gather", gpu::GpuOp::gather},
                                                    {"scatter_add", gpu::GpuOp::scatter_add},
                                                    {"scatter_max", gpu::GpuOp::scatter_max},
                                                    {"scatter_min", gpu::GpuOp::scatter_min}};
  for (const auto& [name, op] : ops) {
    const SubsetRun run = run_a100_subset(name, op);
    INFO(name << ": " << describe(run.summary));
    CHECK(run.summary.count == 12);
    CHECK(run.summary.median_ape_pct <= 5.0);
    CHECK(run.summary.p90_ape_pct <= 15.0);
  }
}

TEST_CASE("the validation report: per (machine, op) and split, speedup surface, provenance", "[validation]") {
  ReportInputs in;
  in.suite = "hydronet";
  in.data_dir = "validation";
  in.models = {{"bow", "Bow", "simulated", "ipu", "bow.json", "timing-only", "cycles"},
               {"a100", "A100", "modeled (eager)", "gpu", "a100-40gb.json", "eager", "torch.utils.benchmark"}};
  // Four shapes, two per split; Bow measured 4 us, A100 measured 10 us everywhere.
  const OpShape shapes[] = {{16, 16, 32}, {16, 16, 64}, {32, 16, 64}, {32, 32, 64}};
  const double bow_pred[] = {2e-6, 4e-6, 6e-6, 12e-6};    // errors -50, 0, +50, +200 %
  const double a100_pred[] = {10e-6, 11e-6, 9e-6, 10e-6};  // errors 0, +10, -10, 0 %
  for (int i = 0; i < 4; ++i) {
    const bool cal = in_calibration_split(shapes[i]);
    in.points.push_back({"bow", "gather", shapes[i], cal, bow_pred[i], 4e-6, point_index_seed(shapes[i])});
    in.points.push_back({"a100", "gather", shapes[i], cal, a100_pred[i], 10e-6, std::nullopt});
  }
  REQUIRE(!in_calibration_split(shapes[0]));  // 4 + 4 + 5 is odd
  REQUIRE(in_calibration_split(shapes[1]));
  REQUIRE(!in_calibration_split(shapes[2]));
  REQUIRE(in_calibration_split(shapes[3]));

  const nlohmann::json report = build_validation_report(in);
  CHECK(report["headline_split"] == "held_out");
  REQUIRE(report["results"].size() == 2);
  const auto& bow = report["results"][0];
  CHECK(bow["machine"] == "bow");
  CHECK(bow["prediction_kind"] == "simulated");
  CHECK(bow["machine_file"] == "bow.json");
  CHECK(bow["splits"]["held_out"]["count"] == 2);
  CHECK(bow["splits"]["held_out"]["median_ape_pct"].get<double>() == Approx(50.0));  // -50 and +50
  CHECK(bow["splits"]["held_out"]["bias_pct"].get<double>() == Approx(0.0).margin(1e-9));
  CHECK(bow["splits"]["calibration"]["median_ape_pct"].get<double>() == Approx(100.0));  // 0 and +200
  CHECK(bow["splits"]["all"]["count"] == 4);
  CHECK(bow["splits"]["all"]["worst"][0]["error_pct"].get<double>() == Approx(200.0));
  CHECK(bow["splits"]["all"]["worst"][0]["split"] == "calibration");
  CHECK(bow["targets"]["met"] == false);
  // Measured times are all equal, so the correlation of log times is undefined: null, not NaN.
  CHECK(bow["splits"]["held_out"]["pearson_log_r"].is_null());
  CHECK(report["results"][1]["prediction_kind"] == "modeled (eager)");

  REQUIRE(report["speedup"].size() == 1);
  const auto& speedup = report["speedup"][0];
  CHECK(speedup["op"] == "gather");
  // Measured speedup 2.5 everywhere; predicted 5, 2.75, 1.5, 0.83: the last is on the wrong side.
  CHECK(speedup["splits"]["all"]["correct_side_share"].get<double>() == Approx(0.75));
  CHECK(speedup["splits"]["held_out"]["correct_side_share"].get<double>() == Approx(1.0));
  CHECK(speedup["splits"]["calibration"]["correct_side_share"].get<double>() == Approx(0.5));

  const std::string csv = points_csv(in.points);
  CHECK(csv.rfind("machine,op,num_inputs,num_features,num_outputs,split,index_seed,predicted_s,measured_s,error_pct\n", 0) == 0);
  CHECK_THAT(csv, Contains("bow,gather,16,16,32,held_out,16000016000032,2e-06,4e-06,-50.0000\n"));
  CHECK_THAT(csv, Contains("a100,gather,16,16,64,calibration,,1.1e-05,1e-05,10.0000\n"));

  const std::string table = format_validation_table(report);
  CHECK_THAT(table, Contains("held-out") && Contains("MISSED") && Contains("right side of 1x"));
}

// `--suite all` in one process: the hydronet points run on a Bow first, and a whole-model entry on a
// Pod16 after them, whose engine needs more tiles than the Bow points' (the engine is elaborated once).
TEST_CASE("tilesim validate --suite all runs Bow points and then a Pod16 entry in one process", "[validate][cli][slow]") {
  const fs::path suite = tiny_suite(2);
  const fs::path source = fs::path(TILESIM_SOURCE_DIR) / "validation";
  fs::create_directories(suite / "layers");
  fs::copy_file(source / "layers" / "entries.json", suite / "layers" / "entries.json", fs::copy_options::overwrite_existing);
  fs::copy(source / "layers" / "workloads", suite / "layers" / "workloads",
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  nlohmann::json models = nlohmann::json::parse(slurp(source / "whole-model" / "entries.json"));
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& e : models["entries"])
    if (e["id"] == "poptorch-schnet2-qm9-ipu8") kept.push_back(e);
  REQUIRE(kept.size() == 1);
  REQUIRE(kept[0]["prediction"]["backend"] == "ipu:pod16");
  models["entries"] = kept;
  fs::create_directories(suite / "whole-model");
  fs::copy(source / "whole-model" / "workloads", suite / "whole-model" / "workloads",
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  std::ofstream(suite / "whole-model" / "entries.json") << models.dump(2);

  const fs::path out = validation_dir() / "validate_all_out";
  const CliResult r = tilesim_cli("TILESIM_VALIDATION_DIR=" + suite.string(), "validate --suite all --no-plots --out " + out.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(slurp(out / "validation.json"));
  CHECK(report["results"].size() == 6);  // the hydronet points ran
  const auto& entry = report["published_suites"]["whole-model"]["entries"][0];
  CHECK(entry["status"] == "compared");
  CHECK(entry["prediction"]["value"].get<double>() > 0);
}

TEST_CASE("tilesim validate end to end on a tiny copy of the suite", "[validate][cli][slow]") {
  const fs::path suite = tiny_suite(4);
  const fs::path out = validation_dir() / "validate_out";
  const std::string env = "TILESIM_VALIDATION_DIR=" + suite.string();
  const CliResult r = tilesim_cli(env, "validate --suite hydronet --out " + out.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("held-out") && Contains("bow") && Contains("scatter_max") && Contains("validation.json"));
  CHECK_THAT(r.err, Contains("24 points"));

  const auto report = nlohmann::json::parse(slurp(out / "validation.json"));
  CHECK(report["results"].size() == 6);
  CHECK(report["speedup"].size() == 2);
  for (const auto& entry : report["results"]) {
    CHECK(entry["splits"]["all"]["count"] == 4);
    CHECK(entry["splits"]["held_out"]["count"] == 2);  // rows alternate between the halves
  }
  CHECK(report["models"][0]["prediction_kind"] == "simulated");
  CHECK(report["models"][1]["prediction_kind"] == "modeled (eager)");
  CHECK(report["models"][1]["mode"] == "eager");
  CHECK(report["files"]["plots"].size() == 14);  // 6 x (predicted vs measured, error map) + 2 speedups
  for (const auto& plot : report["files"]["plots"]) {
    CHECK(fs::file_size(plot["png"].get<std::string>()) > 5000);
    CHECK(fs::exists(plot["script"].get<std::string>()));
  }

  // points.csv: a header and one line per point.
  const std::string csv = slurp(out / "points.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 25);

  // --json prints validation.json itself; --no-plots needs no gnuplot.
  const CliResult j = tilesim_cli(env + " TILESIM_GNUPLOT=/nonexistent/gnuplot", "validate --suite hydronet --json --no-plots --out " + out.string());
  INFO(j.err);
  REQUIRE(j.exit_code == 0);
  const auto printed = nlohmann::json::parse(j.out);
  CHECK(printed["results"] == report["results"]);
  CHECK(printed["files"]["plots"].empty());
}

TEST_CASE("tilesim validate rejects bad input before running anything", "[validate][cli]") {
  const CliResult unknown = tilesim_cli("", "validate --suite nope --out " + (validation_dir() / "x").string());
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Contains("hydronet") && Contains("nope"));

  const fs::path empty = validation_dir() / "empty_suite";
  fs::create_directories(empty);
  const CliResult missing = tilesim_cli("TILESIM_VALIDATION_DIR=" + empty.string(), "validate --suite hydronet --out " + (validation_dir() / "y").string());
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Contains("gather.csv"));

  const CliResult no_gnuplot = tilesim_cli("TILESIM_VALIDATION_DIR=" + tiny_suite(2).string() + " TILESIM_GNUPLOT=/nonexistent/gnuplot",
                                           "validate --suite hydronet --out " + (validation_dir() / "z").string());
  CHECK(no_gnuplot.exit_code == 2);
  CHECK_THAT(no_gnuplot.err, Contains("gnuplot-nox") && Contains("--no-plots"));
}
