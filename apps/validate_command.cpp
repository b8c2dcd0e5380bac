// tilesim validate: the suites through the models, in one process. hydronet: every measured point
// against the Bow IPU simulated (timing-only) and the A100 modeled (eager PyTorch calls), with
// points.csv and the plots; layers and models: published figures against the predictions of shipped
// workloads (runs/published_run.hpp). Writes validation.json (and validation.md / validation.tex with
// --format markdown / latex) and prints the tables, the hydronet held-out half as its headline.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include <unistd.h>

#include "analysis/gnuplot.hpp"
#include "analysis/published_report.hpp"
#include "analysis/reference_data.hpp"
#include "analysis/validation_plots.hpp"
#include "analysis/validation_report.hpp"
#include "analysis/validation_tables.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"
#include "backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/wall_clock.hpp"
#include "fitting/split.hpp"
#include "runs/published_run.hpp"
#include "workloads/published_suite.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using analysis::ValidationPoint;

// Points done / total on stderr: one updating line on a terminal, a plain line per data set otherwise
// (so logs of CI runs stay readable).
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) == 1) {}
  void point_done(const std::string& what) {
    ++done_;
    // A tenth of a second between redraws: often enough to look live, rare enough to cost nothing.
    if (!tty_ || (done_ != total_ && seconds_since(last_draw_) < 0.1)) return;
    last_draw_ = Clock::now();
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
  Clock::time_point last_draw_ = Clock::now();
};

std::string shape_text(const OpShape& s) {
  return std::to_string(s.num_inputs) + "x" + std::to_string(s.num_features) + " -> " + std::to_string(s.num_outputs);
}

// "Bow IPU", "A100": how figure titles name a measured machine.
std::string machine_label(const std::string& machine) {
  for (const auto& m : analysis::hydronet_machines())
    if (m.machine == machine) return m.short_label;
  return machine;
}

// The figures of one run: per (machine, op) predicted-vs-measured and the error map; per op measured on
// both machines, the speedup surface.
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
    spec.title = machine_label(machine) + " " + op + ": " + kind + " vs measured";
    spec.x_label = simulated ? "measured time per op (µs)" : "measured time per call (µs)";
    spec.y_label = simulated ? "simulated time per op (µs)" : "modeled eager time per call (µs)";
    spec.note = note.str();
    figures.push_back(analysis::scatter_figure(spec, scatter));
    figures.push_back(analysis::error_map_figure(machine + "_" + op + "_error_map",
                                                 machine_label(machine) + " " + op + ", " + kind +
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
    spec.title = op + " speedup of the " + machine_label(target) + " over the " + machine_label(base);
    spec.x_label = "measured " + machine_label(base) + " time / " + machine_label(target) + " time";
    spec.y_label = "predicted " + machine_label(base) + " time / " + machine_label(target) + " time";
    spec.speedup_quadrants = true;
    spec.note = note.str();
    figures.push_back(analysis::scatter_figure(spec, scatter));
  }
  return figures;
}

// The hydronet suite: every measured point through the models; writes points.csv and the plots and
// returns the report (files included). `summary` gets the line of timings for stderr.
nlohmann::json run_hydronet_suite(const ValidateArgs& args, const std::string& out_dir, std::string& summary) {
  const auto run_start = Clock::now();
  const auto datasets = analysis::suite_datasets("hydronet");

  // Everything that can fail on bad input fails before the long run: the data, gnuplot, the machines.
  std::vector<std::vector<analysis::MeasuredPoint>> measured;
  std::size_t total = 0;
  for (const auto& d : datasets) {
    measured.push_back(analysis::read_hydronet_csv(d.path, d.op));
    total += measured.back().size();
  }
  if (args.plots) {
    try {
      analysis::require_gnuplot();
    } catch (const Error& e) {
      throw Error(e.code(), std::string(e.what()) + "; or run `tilesim validate --no-plots`");
    }
  }
  // Each measured machine's backend (the family's single-op model, its machine file read here).
  std::map<std::string, backends::SingleOpModel> predictors;
  std::vector<analysis::ModelInfo> models;
  for (const analysis::SuiteMachine& m : analysis::hydronet_machines()) {
    const backends::BackendSpec spec = backends::parse_backend_list(m.backend).front();
    const backends::SingleOpModel& model = predictors[m.machine] = spec.descriptor->single_op_model(spec);
    const ResultKind kind = spec.descriptor->kind();
    backends::TimingSettings timing;
    timing.timing_only = true;
    models.push_back({m.machine, m.label + " (" + model.machine_name + ")",
                      to_string(kind) + (kind == ResultKind::modeled ? " (" + spec.mode + ")" : std::string()), m.model,
                      model.machine_file, spec.descriptor->row_mode(spec, timing), m.measurement});
  }

  create_output_directory(out_dir, "an output directory tilesim can create");

  Progress progress(total);
  std::vector<ValidationPoint> points;
  points.reserve(total);
  std::map<std::string, double> machine_wall_s;
  for (std::size_t d = 0; d < datasets.size(); ++d) {
    const auto& set = datasets[d];
    const auto t0 = Clock::now();
    const std::string what = set.machine + " " + set.op;
    for (const auto& m : measured[d]) {
      ValidationPoint p;
      p.machine = set.machine;
      p.op = set.op;
      p.shape = m.shape;
      p.calibration = fitting::in_calibration_split(m.shape);
      p.measured_s = m.time_s;
      try {
        const backends::SingleOpPrediction predicted = predictors.at(set.machine).predict(set.op, m.shape);
        p.predicted_s = predicted.time_s;
        p.index_seed = predicted.index_seed;
      } catch (const Error& e) {
        // Name the point: the model's message alone does not say which of 3564 points failed.
        throw Error(e.code(), what + " " + shape_text(m.shape) + " (" + set.path + " line " + std::to_string(m.line) +
                                  "): " + e.what());
      }
      if (!(p.predicted_s > 0))
        throw Error(ExitCode::internal_error, "the " + set.machine + " model predicted " + std::to_string(p.predicted_s) +
                                                  " s for " + what + " " + shape_text(m.shape) + "; a time must be positive");
      points.push_back(std::move(p));
      progress.point_done(what);
    }
    const double wall_s = seconds_since(t0);
    machine_wall_s[set.machine] += wall_s;
    progress.dataset_done(what, measured[d].size(), wall_s);
  }

  analysis::ReportInputs inputs;
  inputs.suite = "hydronet";
  inputs.data_dir = analysis::validation_data_dir();
  inputs.models = models;
  inputs.points = points;
  nlohmann::json report = analysis::build_validation_report(inputs);

  const fs::path out(out_dir);
  const std::string csv_path = (out / "points.csv").string();
  nlohmann::json files = {{"validation_json", (out / "validation.json").string()}, {"points_csv", csv_path}, {"plots", nlohmann::json::array()}};
  const auto plots_start = Clock::now();
  if (args.plots) {
    const auto figures = build_figures(report, points, models);
    const std::string plot_dir = (out / "plots").string();
    const auto rendered = render_figures(plot_dir, figures);
    for (const auto& r : rendered)
      files["plots"].push_back({{"svg", r.svg_path}, {"png", r.png_path}, {"script", r.script_path}, {"data", r.data_path}});
  }
  report["files"] = files;
  write_file_atomically(csv_path, analysis::points_csv(points));
  const double plots_wall_s = seconds_since(plots_start);

  std::ostringstream line;
  line << "validate: " << points.size() << " points in " << std::fixed << std::setprecision(1) << seconds_since(run_start) << " s (";
  for (const auto& m : models)
    line << m.machine << " " << m.prediction_kind.substr(0, m.prediction_kind.find(' ')) << " " << std::setprecision(2)
         << machine_wall_s[m.machine] << " s, ";
  line << "files and plots " << std::setprecision(1) << plots_wall_s << " s)\n";
  summary = line.str();
  return report;
}

}  // namespace

int validate_command(const ValidateArgs& args) {
  const std::vector<std::string> suites = analysis::suite_names();
  if (std::find(suites.begin(), suites.end(), args.suite) == suites.end())
    throw InputError("", "--suite", "one of: hydronet, layers, models, all", "\"" + args.suite + "\"");
  const analysis::TableFormat format = analysis::parse_table_format(args.format);
  const bool all = args.suite == "all";
  const std::string out_dir = args.out_dir.empty() ? "out/validation" : args.out_dir;

  // The published suites' entries are read (and checked) before anything runs.
  std::vector<analysis::PublishedSuite> published;
  const std::string data_dir = analysis::validation_data_dir();
  if (all || args.suite == "layers") published.push_back(analysis::read_published_suite(analysis::published_suite_file("layers", data_dir)));
  if (all || args.suite == "models") published.push_back(analysis::read_published_suite(analysis::published_suite_file("models", data_dir)));

  nlohmann::json report;
  std::string hydronet_summary;
  if (all || args.suite == "hydronet") {
    report = run_hydronet_suite(args, out_dir, hydronet_summary);
  } else {
    create_output_directory(out_dir, "an output directory tilesim can create");
    report["files"] = {{"validation_json", (fs::path(out_dir) / "validation.json").string()}};
  }
  report["suite"] = args.suite;
  std::cerr << hydronet_summary;

  if (!published.empty()) {
    nlohmann::json suites_json = nlohmann::json::object();
    for (const auto& suite : published) {
      const auto t0 = Clock::now();
      nlohmann::json r = runs::run_published_suite(suite, out_dir);
      const auto& sum = r["summary"];
      std::cerr << "validate: " << suite.name << " suite: " << sum["entries"].get<std::size_t>() << " published entries, "
                << sum["compared"].get<std::size_t>() << " predicted, " << sum["not_yet_comparable"].get<std::size_t>()
                << " not yet comparable, in " << std::fixed << std::setprecision(1) << seconds_since(t0) << " s\n";
      suites_json[suite.name] = std::move(r);
    }
    report["published_suites"] = std::move(suites_json);
  }

  // One table per suite.
  std::vector<analysis::Table> tables;
  if (report.contains("results")) tables.push_back(analysis::hydronet_table(report));
  if (report.contains("published_suites"))
    for (const auto& [name, r] : report["published_suites"].items())
      for (auto& t : analysis::published_tables(r)) tables.push_back(std::move(t));
  const fs::path out(out_dir);
  std::string rendered;
  if (format != analysis::TableFormat::text) {
    const bool latex = format == analysis::TableFormat::latex;
    rendered = latex ? "% tilesim validate --format latex: needs \\usepackage{booktabs}\n" : "## tilesim validate\n";
    for (const auto& t : tables) rendered += "\n" + analysis::render_table(t, format);
    const std::string path = (out / (latex ? "validation.tex" : "validation.md")).string();
    write_file_atomically(path, rendered);
    report["files"][latex ? "validation_tex" : "validation_md"] = path;
  }
  const std::string json_path = report["files"]["validation_json"];
  write_file_atomically(json_path, report.dump(2) + "\n");

  if (args.json) {
    std::cout << report.dump(2) << std::endl;
    return 0;
  }
  if (format != analysis::TableFormat::text) {
    std::cout << rendered;
  } else {
    if (report.contains("results")) std::cout << analysis::format_validation_table(report) << "\n";
    for (std::size_t i = report.contains("results") ? 1 : 0; i < tables.size(); ++i)
      std::cout << analysis::render_table(tables[i], format) << "\n";
  }
  std::cout << "wrote " << json_path << "\n";
  if (report["files"].contains("points_csv")) std::cout << "      " << report["files"]["points_csv"].get<std::string>() << "\n";
  for (const char* key : {"validation_md", "validation_tex"})
    if (report["files"].contains(key)) std::cout << "      " << report["files"][key].get<std::string>() << "\n";
  if (args.plots && report["files"].contains("plots"))
    std::cout << "      " << report["files"]["plots"].size() << " plots (SVG, PNG, gnuplot script and data) in " << (out / "plots").string() << "\n";
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_validate_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    ValidateArgs validate;
    bool validate_no_plots = false;
  };
  const auto o = std::make_shared<Options>();
  ValidateArgs& validate = o->validate;
  auto* validate_cmd = app.add_subcommand(
      "validate", "Run the validation suites through the models; write validation.json, points.csv and plots");
  validate_cmd->add_option("--suite", validate.suite,
                           "Validation suite: hydronet (measured single ops), layers, models (published figures) or all")
      ->capture_default_str();
  validate_cmd->add_option("--format", validate.format,
                           "Tables as text, markdown or latex (markdown and latex are also written to validation.md / validation.tex)")
      ->capture_default_str();
  validate_cmd->add_flag("--json", validate.json, "Print validation.json on stdout instead of the table");
  validate_cmd->add_option("--out", validate.out_dir, "Output directory (default out/validation/)")
      ->check(non_empty_path("a directory"));
  bool& validate_no_plots = o->validate_no_plots;
  validate_cmd->add_flag("--no-plots", validate_no_plots, "Skip the plots (no gnuplot needed)");
  commands.push_back({validate_cmd, [o] {
    o->validate.plots = !o->validate_no_plots;
    return validate_command(o->validate);
  }});
}

}  // namespace tilesim::cli
