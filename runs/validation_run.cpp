// The validation suites (runs/validation_run.hpp): the hydronet points through the models, the
// published suites through the run pipeline, the tables and what the caller writes.
#include "runs/validation_run.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "analysis/published_report.hpp"
#include "analysis/reference_data.hpp"
#include "analysis/validation_plots.hpp"
#include "analysis/validation_report.hpp"
#include "analysis/validation_tables.hpp"
#include "backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/heap_reuse.hpp"
#include "common/wall_clock.hpp"
#include "fitting/split.hpp"
#include "runs/published_run.hpp"
#include "workloads/published_suite.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::runs {

namespace {

namespace fs = std::filesystem;
using ValidationClock = std::chrono::steady_clock;
using analysis::ValidationPoint;

// Points done / total on stderr: one updating line on a terminal, a plain line per data set otherwise
// (so logs of CI runs stay readable).
class ValidationProgress {
 public:
  explicit ValidationProgress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) == 1) {}
  void point_done(const std::string& what) {
    ++done_;
    // A tenth of a second between redraws: often enough to look live, rare enough to cost nothing.
    if (!tty_ || (done_ != total_ && seconds_since(last_draw_) < 0.1)) return;
    last_draw_ = ValidationClock::now();
    std::cerr << "\rvalidate: " << done_ << "/" << total_ << " points (" << what << ")   " << std::flush;
  }
  void dataset_done(const std::string& what, std::size_t count, double wall_s) {
    std::ostringstream line;
    line << "validate: " << what << ": " << count << " points in " << std::fixed << std::setprecision(1) << wall_s << " s ("
         << done_ << "/" << total_ << " done)";
    if (tty_) std::cerr << "\r\033[K" << line.str() << "\n" << std::flush;
    else std::cerr << line.str() << "\n";
  }

 private:
  std::size_t total_, done_ = 0;
  bool tty_;
  ValidationClock::time_point last_draw_ = ValidationClock::now();
};

std::string point_shape_text(const OpShape& s) {
  return std::to_string(s.num_inputs) + "x" + std::to_string(s.num_features) + " -> " + std::to_string(s.num_outputs);
}

// "Bow IPU", "A100": how figure titles name a measured machine.
std::string figure_machine_label(const std::string& machine) {
  for (const auto& m : analysis::hydronet_machines())
    if (m.machine == machine) return m.short_label;
  return machine;
}

// The figures of one run: per (machine, op) predicted-vs-measured and the error map; per op measured on
// both machines, the speedup surface. Built here, since each is computed from the points and the
// report; the caller only renders them.
std::vector<analysis::GnuplotFigure> build_figures(const nlohmann::json& report, const std::vector<ValidationPoint>& points,
                                                   const std::vector<analysis::ModelInfo>& models) {
  std::vector<analysis::GnuplotFigure> figures;
  for (const auto& entry : report["results"]) {
    const std::string machine = entry["machine"], op = entry["op"];
    std::string kind = "predicted";
    for (const auto& m : models)
      if (m.machine == machine) kind = m.prediction_kind;
    const bool simulated = kind == to_string(ResultKind::simulated);
    std::vector<ValidationPoint> group;
    std::vector<analysis::ScatterPoint> scatter;
    for (const auto& p : points) {
      if (p.machine != machine || p.op != op) continue;
      group.push_back(p);
      scatter.push_back({p.measured_s * 1e6, p.predicted_s * 1e6, p.calibration, p.shape});
    }
    const auto& held = entry["splits"]["held_out"];
    std::ostringstream note;
    note << "held-out: median " << analysis::percent_text(held["median_ape_pct"]) << ", p90 " << analysis::percent_text(held["p90_ape_pct"]);
    if (held["pearson_log_r"].is_number())
      note << ", r(log t) = " << std::fixed << std::setprecision(3) << held["pearson_log_r"].get<double>();
    analysis::ScatterSpec spec;
    spec.stem = machine + "_" + op + "_predicted_vs_measured";
    spec.title = figure_machine_label(machine) + " " + op + ": " + kind + " vs measured";
    spec.x_label = simulated ? "measured time per op (µs)" : "measured time per call (µs)";
    spec.y_label = simulated ? "simulated time per op (µs)" : "modeled eager time per call (µs)";
    spec.note = note.str();
    figures.push_back(analysis::scatter_figure(spec, scatter));
    figures.push_back(analysis::error_map_figure(machine + "_" + op + "_error_map",
                                                 figure_machine_label(machine) + " " + op + ", " + kind +
                                                     ": error over the size grid",
                                                 group));
  }
  for (const auto& entry : report["speedup"]) {
    const std::string op = entry["op"], base = entry["baseline"], target = entry["target"];
    std::vector<analysis::ScatterPoint> scatter;
    for (const auto& p : analysis::speedup_points(points, op, base, target))
      scatter.push_back({p.measured, p.predicted, p.calibration, p.shape});
    const auto& held = entry["splits"]["held_out"];
    std::ostringstream note;
    if (held["correct_side_share"].is_number())
      note << "held-out: " << std::fixed << std::setprecision(1) << 100.0 * held["correct_side_share"].get<double>()
           << "% on the right side of 1x";
    analysis::ScatterSpec spec;
    spec.stem = "speedup_" + op + "_" + base + "_over_" + target;
    spec.title = op + " speedup of the " + figure_machine_label(target) + " over the " + figure_machine_label(base);
    spec.x_label = "measured " + figure_machine_label(base) + " time / " + figure_machine_label(target) + " time";
    spec.y_label = "predicted " + figure_machine_label(base) + " time / " + figure_machine_label(target) + " time";
    spec.speedup_quadrants = true;
    spec.note = note.str();
    figures.push_back(analysis::scatter_figure(spec, scatter));
  }
  return figures;
}

// Each measured machine's backend (the family's single-op model, its machine file read here) and how
// the report describes it.
struct HydronetModels {
  std::map<std::string, backends::SingleOpModel> predictors;
  std::vector<analysis::ModelInfo> models;
};

HydronetModels hydronet_models() {
  HydronetModels out;
  for (const analysis::SuiteMachine& m : analysis::hydronet_machines()) {
    const backends::BackendSpec spec = backends::parse_backend_list(m.backend).front();
    const backends::SingleOpModel& model = out.predictors[m.machine] = spec.descriptor->single_op_model(spec);
    const ResultKind kind = spec.descriptor->kind();
    backends::TimingSettings timing;
    timing.timing_only = true;
    out.models.push_back({m.machine, m.label + " (" + model.machine_name + ")",
                          to_string(kind) + (kind == ResultKind::modeled ? " (" + spec.mode + ")" : std::string()), m.model,
                          model.machine_file, spec.descriptor->row_mode(spec, timing), m.measurement});
  }
  return out;
}

// One measured point through its machine's model. A failing prediction names the point: the model's
// message alone does not say which of 3564 points failed.
ValidationPoint predict_point(const analysis::SuiteDataset& set, const analysis::MeasuredPoint& m, const backends::SingleOpModel& model) {
  const std::string what = set.machine + " " + set.op;
  ValidationPoint p;
  p.machine = set.machine;
  p.op = set.op;
  p.shape = m.shape;
  p.calibration = fitting::in_calibration_split(m.shape);
  p.measured_s = m.time_s;
  try {
    const backends::SingleOpPrediction predicted = model.predict(set.op, m.shape);
    p.predicted_s = predicted.time_s;
    p.index_seed = predicted.index_seed;
  } catch (const Error& e) {
    throw Error(e.code(), what + " " + point_shape_text(m.shape) + " (" + set.path + " line " + std::to_string(m.line) + "): " + e.what());
  }
  if (!(p.predicted_s > 0))
    throw Error(ExitCode::internal_error, "the " + set.machine + " model predicted " + std::to_string(p.predicted_s) + " s for " +
                                              what + " " + point_shape_text(m.shape) + "; a time must be positive");
  return p;
}

// The hydronet suite: every measured point through the models; returns the report (with where its
// files go) and leaves points.csv, the figures and the timings in `result`.
nlohmann::json run_hydronet_suite(const ValidationRequest& request, ValidationResult& result) {
  const auto run_start = ValidationClock::now();
  const auto datasets = analysis::suite_datasets("hydronet");

  // Everything that can fail on bad input fails before the long run: the data, gnuplot, the machines.
  std::vector<std::vector<analysis::MeasuredPoint>> measured;
  std::size_t total = 0;
  for (const auto& d : datasets) {
    measured.push_back(analysis::read_hydronet_csv(d.path, d.op));
    total += measured.back().size();
  }
  if (request.plots) {
    try {
      analysis::require_gnuplot();
    } catch (const Error& e) {
      throw Error(e.code(), std::string(e.what()) + "; or run `tilesim validate --no-plots`");
    }
  }
  const HydronetModels models = hydronet_models();
  create_output_directory(request.out_dir, "an output directory tilesim can create");

  ValidationProgress progress(total);
  std::vector<ValidationPoint> points;
  points.reserve(total);
  std::map<std::string, double> machine_wall_s;
  for (std::size_t d = 0; d < datasets.size(); ++d) {
    const auto& set = datasets[d];
    const auto t0 = ValidationClock::now();
    const std::string what = set.machine + " " + set.op;
    for (const auto& m : measured[d]) {
      points.push_back(predict_point(set, m, models.predictors.at(set.machine)));
      progress.point_done(what);
    }
    const double wall_s = seconds_since(t0);
    machine_wall_s[set.machine] += wall_s;
    progress.dataset_done(what, measured[d].size(), wall_s);
  }

  analysis::ReportInputs inputs;
  inputs.suite = "hydronet";
  inputs.data_dir = analysis::validation_data_dir();
  inputs.models = models.models;
  inputs.points = points;
  nlohmann::json report = analysis::build_validation_report(inputs);

  const fs::path out(request.out_dir);
  const std::string csv_path = (out / "points.csv").string();
  report["files"] = {{"validation_json", (out / "validation.json").string()}, {"points_csv", csv_path}, {"plots", nlohmann::json::array()}};
  if (request.plots) {
    result.figures = build_figures(report, points, models.models);
    result.plot_dir = (out / "plots").string();
  }
  result.files.push_back({csv_path, analysis::points_csv(points)});

  HydronetTiming timing;
  timing.points = points.size();
  timing.run_wall_s = seconds_since(run_start);
  for (const auto& m : models.models)
    timing.machines.emplace_back(m.machine + " " + m.prediction_kind.substr(0, m.prediction_kind.find(' ')), machine_wall_s[m.machine]);
  result.hydronet_timing = timing;
  return report;
}

// The published suites' reports, by suite name; a line on standard error per suite.
nlohmann::json run_published_suites(const std::vector<analysis::PublishedSuite>& published, const std::string& out_dir) {
  nlohmann::json suites_json = nlohmann::json::object();
  for (const auto& suite : published) {
    const auto t0 = ValidationClock::now();
    nlohmann::json r = run_published_suite(suite, out_dir);
    const auto& sum = r["summary"];
    // Formatted apart, so std::cerr keeps its own number format for whoever writes next in this process.
    std::ostringstream line;
    line << "validate: " << suite.name << " suite: " << sum["entries"].get<std::size_t>() << " published entries, "
         << sum["compared"].get<std::size_t>() << " predicted, " << sum["not_yet_comparable"].get<std::size_t>()
         << " not yet comparable, in " << std::fixed << std::setprecision(1) << seconds_since(t0) << " s\n";
    std::cerr << line.str();
    suites_json[suite.name] = std::move(r);
  }
  return suites_json;
}

// One table per suite: the tables as printed and, for markdown or latex, the document that is also
// written to validation.md / validation.tex (its path added to the report's files).
void add_tables(ValidationResult& result, analysis::TableFormat format, const std::string& out_dir) {
  const nlohmann::json& report = result.report;
  std::vector<analysis::Table> tables;
  if (report.contains("results")) tables.push_back(analysis::hydronet_table(report));
  if (report.contains("published_suites"))
    for (const auto& [name, r] : report["published_suites"].items())
      for (auto& t : analysis::published_tables(r)) tables.push_back(std::move(t));
  if (format != analysis::TableFormat::text) {
    const bool latex = format == analysis::TableFormat::latex;
    std::string rendered = latex ? "% tilesim validate --format latex: needs \\usepackage{booktabs}\n" : "## tilesim validate\n";
    for (const auto& t : tables) rendered += "\n" + analysis::render_table(t, format);
    const std::string path = (fs::path(out_dir) / (latex ? "validation.tex" : "validation.md")).string();
    result.report["files"][latex ? "validation_tex" : "validation_md"] = path;
    result.files.push_back({path, rendered});
    result.tables = rendered;
    return;
  }
  // Text: the hydronet suite as its compact table (held-out rows first), then the published ones.
  std::string text;
  if (report.contains("results")) text += analysis::format_validation_table(report) + "\n";
  for (std::size_t i = report.contains("results") ? 1 : 0; i < tables.size(); ++i) text += analysis::render_table(tables[i], format) + "\n";
  result.tables = text;
}

}  // namespace

ValidationResult validate(const ValidationRequest& request) {
  keep_freed_heap_for_reuse();  // the hydronet grids build and drop a program per point
  const std::vector<std::string> suites = analysis::suite_names();
  if (std::find(suites.begin(), suites.end(), request.suite) == suites.end())
    throw InputError("", "--suite", "one of: hydronet, layers, models, all", "\"" + request.suite + "\"");
  const analysis::TableFormat format = analysis::parse_table_format(request.format);
  const bool all = request.suite == "all";

  // The published suites' entries are read (and checked) before anything runs.
  std::vector<analysis::PublishedSuite> published;
  const std::string data_dir = analysis::validation_data_dir();
  for (const char* name : {"layers", "models"})
    if (all || request.suite == name)
      published.push_back(analysis::read_published_suite(analysis::published_suite_file(name, data_dir)));

  // Their backends first, so that each claims what it needs before the hydronet points run.
  make_published_backends(published);

  ValidationResult result;
  if (all || request.suite == "hydronet") {
    result.report = run_hydronet_suite(request, result);
  } else {
    create_output_directory(request.out_dir, "an output directory tilesim can create");
    result.report["files"] = {{"validation_json", (fs::path(request.out_dir) / "validation.json").string()}};
  }
  result.report["suite"] = request.suite;
  if (!published.empty()) result.report["published_suites"] = run_published_suites(published, request.out_dir);
  add_tables(result, format, request.out_dir);
  return result;
}

std::string hydronet_timing_text(const HydronetTiming& timing, double files_wall_s) {
  std::ostringstream line;
  line << "validate: " << timing.points << " points in " << std::fixed << std::setprecision(1) << timing.run_wall_s + files_wall_s
       << " s (";
  for (const auto& [what, wall_s] : timing.machines) line << what << " " << std::setprecision(2) << wall_s << " s, ";
  line << "files and plots " << std::setprecision(1) << files_wall_s << " s)\n";
  return line.str();
}

}  // namespace tilesim::runs
