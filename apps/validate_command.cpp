// tilesim validate: the suites through the models, in one process (runs/validation_run.hpp computes
// them). hydronet: every measured point against the Bow IPU simulated (timing-only) and the A100
// modeled (eager PyTorch calls), with points.csv and the plots; layers and models: published figures
// against the predictions of shipped workloads (runs/published_run.hpp). Writes validation.json (and
// validation.md / validation.tex with --format markdown / latex) and prints the tables, the hydronet
// held-out half as its headline.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"
#include "apps/result_files.hpp"
#include "common/atomic_file.hpp"
#include "common/wall_clock.hpp"
#include "runs/validation_run.hpp"

namespace tilesim::cli {

void write_validation_files(runs::ValidationResult& result) {
  nlohmann::json& files = result.report["files"];
  const auto start = std::chrono::steady_clock::now();
  if (!result.figures.empty())
    for (const auto& r : render_figures(result.plot_dir, result.figures))
      files["plots"].push_back({{"svg", r.svg_path}, {"png", r.png_path}, {"script", r.script_path}, {"data", r.data_path}});
  for (const auto& f : result.files) write_file_atomically(f.path, f.text);
  if (result.hydronet_timing) std::cerr << runs::hydronet_timing_text(*result.hydronet_timing, seconds_since(start));
  write_file_atomically(files["validation_json"].get<std::string>(), result.report.dump(2) + "\n");
}

int validate_command(const ValidateArgs& args) {
  runs::ValidationRequest request;
  request.suite = args.suite;
  request.out_dir = args.out_dir.empty() ? "out/validation" : args.out_dir;
  request.plots = args.plots;
  request.format = args.format;
  runs::ValidationResult result = runs::validate(request);
  write_validation_files(result);
  const nlohmann::json& report = result.report;

  if (args.json) {
    std::cout << report.dump(2) << std::endl;
    return 0;
  }
  std::cout << result.tables;
  const nlohmann::json& files = report["files"];
  std::cout << "wrote " << files["validation_json"].get<std::string>() << "\n";
  if (files.contains("points_csv")) std::cout << "      " << files["points_csv"].get<std::string>() << "\n";
  for (const char* key : {"validation_md", "validation_tex"})
    if (files.contains(key)) std::cout << "      " << files[key].get<std::string>() << "\n";
  if (args.plots && files.contains("plots"))
    std::cout << "      " << files["plots"].size() << " plots (SVG, PNG, gnuplot script and data) in "
              << (std::filesystem::path(request.out_dir) / "plots").string() << "\n";
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
