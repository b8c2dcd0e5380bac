// tilesim plot surface RESULTS.csv --baseline B --target T [--average-over num_features] [--ops ...]
// [--out DIR] [--range R]: per op, T's speedup over B as a heat map and a 3D surface over (num_inputs x
// num_outputs), in SVG, PNG and PDF with the gnuplot script and data beside them. B and T are backends
// of the results or hydronet reference measurements; several of each give one panel per pair on one
// colour scale (modelled and measured side by side).
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "analysis/gnuplot.hpp"
#include "analysis/results_table.hpp"
#include "analysis/speedup.hpp"
#include "analysis/surface_figures.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "analysis/op_selection.hpp"
#include "apps/render_figures.hpp"
#include "common/error.hpp"

namespace tilesim::cli {


namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

}  // namespace

int plot_surface_command(const SurfaceArgs& args) {
  if (args.baselines.empty() || args.targets.empty())
    throw InputError("", args.baselines.empty() ? "--baseline" : "--target", "at least one backend or reference", "none");
  if (!args.average_over.empty() && args.average_over != "num_features")
    throw InputError("", "--average-over", "num_features (the axes are num_inputs and num_outputs)", "\"" + args.average_over + "\"");
  if (args.range != 0 && !(args.range >= 1.5 && args.range <= 1e6))
    throw InputError("", "--range", "a number in [1.5, 1e6] (the colour scale runs from 1/range to range)", std::to_string(args.range));
  const std::size_t pairs = args.baselines.size() * args.targets.size();
  if (pairs > 1 && args.average_over.empty())
    throw InputError("", "--average-over",
                     "num_features when several baselines or targets are compared (one panel per pair, each averaged over "
                     "the feature sizes)",
                     "no --average-over with " + std::to_string(pairs) + " pairs");
  if (pairs > 6) throw InputError("", "--baseline/--target", "at most 6 (target, baseline) pairs in one figure", std::to_string(pairs));

  const auto rows = analysis::read_results_csv(args.results);
  const auto ops = analysis::ops_to_draw(rows, args.ops);
  if (ops.empty()) throw InputError(args.results, "", "rows with an op (gather or scatter_add)", "none");
  std::vector<analysis::TimeSeries> baselines, targets;
  for (const auto& b : args.baselines) baselines.push_back(analysis::resolve_series(rows, args.results, b, ops));
  for (const auto& t : args.targets) targets.push_back(analysis::resolve_series(rows, args.results, t, ops));
  analysis::require_gnuplot();

  const std::string out_dir = plots_dir(args.out_dir, args.results);
  std::vector<std::string> target_slugs, baseline_slugs;
  for (const auto& t : args.targets) target_slugs.push_back(file_slug(t));
  for (const auto& b : args.baselines) baseline_slugs.push_back(file_slug(b));
  const std::string pair_slug = join(target_slugs, "_") + "_over_" + join(baseline_slugs, "_") +
                                (args.average_over.empty() ? "" : "_mean");

  std::vector<analysis::GnuplotFigure> figures;
  std::vector<std::string> summaries;
  for (const auto& op : ops) {
    analysis::SurfaceFigureSpec spec;
    spec.baseline_label = join(args.baselines, ", ");
    spec.target_label = join(args.targets, ", ");
    std::set<std::int64_t> features;
    for (const auto& t : targets) {
      for (const auto& b : baselines) {
        const auto points = analysis::paired_speedups(b, t, op);
        if (points.empty())
          throw InputError("", "--baseline/--target",
                           "points of " + op + " that both " + t.label + " and " + b.label + " have (same sizes, dtype)",
                           "none in common");
        for (const auto& p : points) features.insert(p.id.shape.num_features);
        const auto stats = analysis::summarize_speedups(points);
        summaries.push_back(op + ": " + t.name + " over " + b.name + ": median " + analysis::format_speedup(stats.median) +
                            "x over " + std::to_string(stats.count) + " points; crossover " + stats.crossover.text);
        if (args.average_over.empty()) {
          for (const auto& g : analysis::grids_per_feature(points)) spec.panels.push_back({g.slice, g});
        } else {
          spec.panels.push_back({pairs > 1 ? t.label + "\nover " + b.label : "", analysis::grid_averaged_over_features(points)});
        }
      }
    }
    const std::string feature_range =
        features.size() > 1 ? std::to_string(*features.begin()) + "-" + std::to_string(*features.rbegin())
                            : std::to_string(*features.begin());
    if (pairs == 1) {
      spec.title = op + ": speedup of " + targets[0].label + "\nover " + baselines[0].label;
      spec.subtitle = args.average_over.empty() ? "one panel per num_features; black line: 1×"
                                                : (features.size() > 1 ? "geometric mean over num_features " + feature_range
                                                                       : "num_features = " + feature_range) +
                                                      "; black line: 1×";
    } else {
      spec.title = op + ": speedups on one colour scale";
      spec.subtitle = (features.size() > 1 ? "geometric mean over num_features " + feature_range
                                           : "num_features = " + feature_range) +
                      "; black line: 1×";
    }
    spec.range = args.range > 0 ? args.range : analysis::surface_colour_range(spec.panels);
    spec.stem = "speedup_" + op + "_" + pair_slug + "_heatmap";
    figures.push_back(analysis::speedup_heatmap_figure(spec));
    spec.stem = "speedup_" + op + "_" + pair_slug + "_surface3d";
    figures.push_back(analysis::speedup_surface3d_figure(spec));
  }
  for (const auto& s : summaries) std::cout << s << "\n";
  render_and_list(out_dir, figures);
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_plot_surface_command(CLI::App& plot_cmd, std::vector<Command>& commands) {
  const auto args = std::make_shared<SurfaceArgs>();
  SurfaceArgs& surface = *args;
  auto* surface_cmd = plot_cmd.add_subcommand(
      "surface", "Heat map and 3D surface of the target's speedup over the baseline over (num_inputs x num_outputs)");
  surface_cmd->add_option("results", surface.results, "results.csv written by tilesim sweep")->required();
  surface_cmd->add_option("--baseline", surface.baselines,
                          "Backend of the results, or a hydronet reference CSV file or directory (repeatable)")
      ->required();
  surface_cmd->add_option("--target", surface.targets, "Backend of the results, or a hydronet reference (repeatable)")->required();
  surface_cmd->add_option("--average-over", surface.average_over, "num_features: one panel of geometric-mean speedups");
  surface_cmd->add_option("--ops", surface.ops, "Comma-separated ops (default: every op of the results)");
  surface_cmd->add_option("--out", surface.out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  surface_cmd->add_option("--range", surface.range, "Colour scale from 1/R to R (default: from the data)")->check(number_in(1.5, 1e6));
  commands.push_back({surface_cmd, [args] { return plot_surface_command(*args); }});
}

}  // namespace tilesim::cli
