#pragma once
// The validation suites as a library: what `tilesim validate` and the Python module's tilesim.validate
// compute. hydronet: every measured point against the backend each measured machine names (the Bow IPU
// simulated timing-only, the A100 modeled eager), with the error tables and the figures to draw;
// layers and models: published figures against the predictions of shipped workloads
// (runs/published_run.hpp). The result holds validation.json's content, the tables as printed and
// the files and figures for the caller to write: nothing here writes them or prints the tables, so
// the command and Python keep one set of files through one writer (apps/result_files.hpp). Only the
// published suites' per-entry reports are written here, under the output folder, as their runs
// always were; progress goes to standard error.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/gnuplot.hpp"

namespace tilesim::runs {

struct ValidationRequest {
  std::string suite = "all";     // hydronet | layers | models | all (checked here, named as --suite)
  std::string out_dir;           // the folder of validation.json and the suites' files (created here)
  bool plots = true;             // hydronet: its figures (gnuplot is checked before anything runs)
  std::string format = "text";   // text | markdown | latex (checked here, named as --format)
};

// A file of the answer: its path under the output folder and its whole text.
struct ValidationFile {
  std::string path;
  std::string text;
};

// What the hydronet suite took, for its line on standard error. The line also counts the time its
// files and plots took to write, so the writer gives it once they are written (hydronet_timing_text).
struct HydronetTiming {
  std::size_t points = 0;
  double run_wall_s = 0;  // reading the data, predicting every point, the report
  // Per measured machine, "bow simulated" and the like with the seconds its points took.
  std::vector<std::pair<std::string, double>> machines;
};

struct ValidationResult {
  // validation.json's content; report["files"] names where each file goes (validation.json,
  // points.csv, validation.md / .tex; "plots" is filled by whoever renders `figures`).
  nlohmann::json report;
  std::string tables;                  // the tables as printed: text, or the markdown / latex document
  std::vector<ValidationFile> files;   // points.csv, validation.md / .tex, in writing order
  std::vector<analysis::GnuplotFigure> figures;  // hydronet with plots on: to render into plot_dir
  std::string plot_dir;
  std::optional<HydronetTiming> hydronet_timing;  // with the hydronet suite
};

// Throws InputError for an unknown suite or format, missing or bad measured data, published entries
// that do not read, gnuplot missing when plots are asked for, or an output folder that cannot be
// made; a point whose prediction fails names the point.
ValidationResult validate(const ValidationRequest& request);

// The hydronet suite's line on standard error ("validate: 3564 points in 5.6 s (bow simulated 4.10 s,
// ..., files and plots 1.2 s)"), `files_wall_s` being what writing its files and plots took.
std::string hydronet_timing_text(const HydronetTiming& timing, double files_wall_s);

}  // namespace tilesim::runs
