#include "runs/published_run.hpp"

#include <filesystem>
#include <optional>

#include "analysis/published_report.hpp"
#include "backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "runs/run.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs {

namespace {

namespace fs = std::filesystem;
using analysis::PublishedEntry;
using analysis::PublishedPrediction;

// The entry's report quantity: a loader run's step, epoch or throughput; a scaling run's step, epoch or
// throughput (its "scaling" entry: several devices, one step of every replica); a training run's median
// step or last step's phase; a forward pass's time. A rate is the epoch's items over the epoch time, in
// the loader's unit (graphs, nodes or seed nodes per second), and must be the quantity asked for.
double report_quantity(const nlohmann::json& report, const nlohmann::json& result, const std::string& quantity,
                       const std::string& what) {
  const auto number = [&](const nlohmann::json& v) {
    if (!v.is_number()) throw Error(ExitCode::internal_error, what + ": the run's report has no number for " + quantity);
    return v.get<double>();
  };
  const auto rate = [&](const nlohmann::json& throughput) {
    const std::string unit = throughput.value("unit", std::string());
    if (unit != quantity)
      throw InputError("", what, "a report quantity in the run's throughput unit (" + unit + ")", "\"" + quantity + "\"");
    return number(throughput.value("value", nlohmann::json()));
  };
  const bool is_rate = quantity == "graphs_per_s" || quantity == "nodes_per_s" || quantity == "seed_nodes_per_s";
  const nlohmann::json* scaling = nullptr;
  if (result.contains("scaling_role") && report.contains("scaling") && report["scaling"].is_array() && !report["scaling"].empty())
    scaling = &report["scaling"][0];
  if (scaling) {
    const auto& sc = *scaling;
    if (quantity == "step_time_s") return number(sc["step"]["time_s"]);
    if (quantity == "epoch_time_s" && sc.contains("execution")) return number(sc["execution"]["epoch_time_s"]);
    if (is_rate) return rate(sc["throughput"]);
  } else if (result.contains("minibatch")) {
    const auto& mb = result["minibatch"];
    if (quantity == "step_time_s") return number(mb["step_time_s"]["median"]);
    if (quantity == "epoch_time_s") return number(mb["epoch_time_s"]);
    if (is_rate) return rate(mb["throughput"]);
  } else if (result.contains("training")) {
    const auto& t = result["training"];
    if (quantity == "step_time_s") return number(t["median_step_time_s"]);
    if (quantity == "forward_s") return number(t["last_step"]["forward_s"]);
    if (quantity == "backward_s") return number(t["last_step"]["backward_s"]);
  } else if (quantity == "step_time_s" || quantity == "forward_s") {
    return number(result["time_s"]);
  }
  throw InputError("", what, "a report quantity this run gives (a loader run: step_time_s, epoch_time_s and its throughput unit, "
                   "graphs_per_s, nodes_per_s or seed_nodes_per_s; a scaling run: step_time_s, epoch_time_s with an execution "
                   "model, and its throughput unit; a training run: step_time_s, forward_s, backward_s; a forward pass: "
                   "step_time_s, forward_s)", "\"" + quantity + "\"");
}

PublishedPrediction predict(const PublishedEntry& e, const std::string& suite, const std::string& out_dir) {
  const analysis::PredictionRecipe& r = *e.prediction;
  const std::string what = suite + " entry " + e.id;
  RunRequest request;
  request.workload_file = r.workload;
  request.backends_text = r.backend;
  request.timing_only = true;  // the published figures are times; no values are needed
  request.warmup = 0;
  request.repeats = 1;
  request.progress = false;
  const std::string run_dir = (fs::path(out_dir) / "runs" / suite / e.id).string();
  request.ready = [&] { create_output_directory(run_dir, "a directory the entry's report can be written to"); };
  RunResult run;
  try {
    request.backends = backends::parse_backend_list(r.backend);
    request.workload = workloads::load_workload(r.workload);
    run = runs::run(std::move(request));
  } catch (const Error& err) {
    throw Error(err.code(), what + " (" + r.workload + " on " + r.backend + "): " + err.what());
  }
  if (run.exit_code() != 0) throw Error(ExitCode::internal_error, what + ": `tilesim run` exited " + std::to_string(run.exit_code()));
  PublishedPrediction p;
  p.report_path = (fs::path(run_dir) / "report.json").string();
  write_file_atomically(p.report_path, run.report.dump(2) + "\n");
  const nlohmann::json& report = run.report;
  const nlohmann::json& result = report.at("results").at(0);
  p.report_value = report_quantity(report, result, r.quantity, what);
  p.kind = analysis::prediction_label(result.value("kind", std::string()), backends::parse_backend_list(r.backend).front().mode);
  const double converted = analysis::is_rate_unit(e.published.unit) ? p.report_value : p.report_value / analysis::seconds_per_unit(e.published.unit);
  p.value = converted * r.scale;
  if (!(p.value > 0))
    throw Error(ExitCode::internal_error, what + ": the prediction is " + std::to_string(p.value) + "; a time or rate must be positive");
  return p;
}

}  // namespace

nlohmann::json run_published_suite(const analysis::PublishedSuite& suite, const std::string& out_dir) {
  std::vector<std::optional<PublishedPrediction>> predictions;
  for (const auto& e : suite.entries) {
    if (e.prediction) predictions.push_back(predict(e, suite.name, out_dir));
    else predictions.push_back(std::nullopt);
  }
  return analysis::build_published_report(suite, predictions);
}

void make_published_backends(const std::vector<analysis::PublishedSuite>& suites) {
  for (const auto& suite : suites)
    for (const auto& e : suite.entries) {
      if (!e.prediction) continue;
      try {
        for (const auto& spec : backends::parse_backend_list(e.prediction->backend)) spec.descriptor->make(spec);
      } catch (const Error& err) {
        throw Error(err.code(), suite.name + " entry " + e.id + " (" + e.prediction->backend + "): " + err.what());
      }
    }
}

}  // namespace tilesim::runs
