// tilesim plot surface RESULTS.csv --baseline B --target T [--x COLUMN] [--y COLUMN]
// [--average-over num_features|all|COLUMNS] [--ops ...] [--out DIR] [--range R]: per op, T's speedup over
// B as a heat map and a 3D surface over two columns of the results, (num_inputs x num_outputs) unless
// --x and --y name others (any numeric column that identifies a point: a size, a workload sweep's axis,
// a what-if machine figure), in SVG, PNG and PDF with the gnuplot script and data beside them. B and T
// are backends of the results or hydronet reference measurements; several of each give one panel per
// pair on one colour scale (modelled and measured side by side).
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "analysis/gnuplot.hpp"
#include "analysis/plot_text.hpp"
#include "analysis/results_table.hpp"
#include "analysis/speedup.hpp"
#include "analysis/speedup_axes.hpp"
#include "analysis/surface_figures.hpp"
#include "analysis/workload_results.hpp"
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

bool default_surface_axes(const SurfaceArgs& args) { return args.x_column == "num_inputs" && args.y_column == "num_outputs"; }

// The checks of the options alone, before any file is read. Returns the number of (target, baseline) pairs.
std::size_t checked_surface_pairs(const SurfaceArgs& args) {
  if (args.baselines.empty() || args.targets.empty())
    throw InputError("", args.baselines.empty() ? "--baseline" : "--target", "at least one backend or reference", "none");
  if (args.x_column.empty() || args.y_column.empty())
    throw InputError("", args.x_column.empty() ? "--x" : "--y", "a column of the results", "an empty name");
  if (args.x_column == args.y_column)
    throw InputError("", "--x, --y", "two different columns", "\"" + args.x_column + "\" twice");
  const bool default_axes = default_surface_axes(args);
  if (default_axes && !args.average_over.empty() && args.average_over != "num_features" && args.average_over != "all")
    throw InputError("", "--average-over",
                     "num_features or all (the axes are num_inputs and num_outputs; with --x and --y, all or the columns to "
                     "average over)",
                     "\"" + args.average_over + "\"");
  if (!default_axes) {
    const auto columns = analysis::split_list(args.average_over);
    for (const auto& c : columns)
      if (c == args.x_column || c == args.y_column || (c == "all" && columns.size() > 1))
        throw InputError("", "--average-over", "all, or columns other than --x and --y (comma-separated)", "\"" + args.average_over + "\"");
  }
  if (args.range != 0 && !(args.range >= 1.5 && args.range <= 1e6))
    throw InputError("", "--range", "a number in [1.5, 1e6] (the colour scale runs from 1/range to range)", std::to_string(args.range));
  const std::size_t pairs = args.baselines.size() * args.targets.size();
  if (pairs > 1 && args.average_over.empty())
    throw InputError("", "--average-over",
                     std::string(default_axes ? "num_features" : "all") +
                         " when several baselines or targets are compared (one panel per pair, each averaged over "
                         "the other columns)",
                     "no --average-over with " + std::to_string(pairs) + " pairs");
  if (pairs > 6) throw InputError("", "--baseline/--target", "at most 6 (target, baseline) pairs in one figure", std::to_string(pairs));
  return pairs;
}

// --average-over as the axes take it.
analysis::SurfaceAxes surface_axes_of(const SurfaceArgs& args) {
  analysis::SurfaceAxes axes;
  axes.x = args.x_column;
  axes.y = args.y_column;
  axes.average_all = args.average_over == "all";
  if (!axes.average_all) axes.average_over = analysis::split_list(args.average_over);
  return axes;
}

// A backend or reference; with other axes than the defaults, also the base backend of what-if machines
// (ipu:bow for ipu:bow{chip.sram_bytes_per_tile*=2}), whose figures are then columns of its points.
analysis::TimeSeries surface_series(const std::vector<analysis::ResultRow>& rows, const SurfaceArgs& args, const std::string& spec,
                                    const std::vector<std::string>& ops) {
  const bool named = std::any_of(rows.begin(), rows.end(), [&](const analysis::ResultRow& r) { return r.backend == spec; });
  if (!named && !default_surface_axes(args))
    if (auto family = analysis::what_if_family_series(rows, spec, args.results)) return *family;
  return analysis::resolve_series(rows, args.results, spec, ops);
}

// The target's speedups over the baseline at the points both have; bad input when they share none
// (`alike` says what a shared point has in common).
std::vector<analysis::SpeedupSample> paired_or_refused(const analysis::TimeSeries& b, const analysis::TimeSeries& t, const std::string& op,
                                                      const std::string& alike) {
  auto points = analysis::paired_speedups(b, t, op);
  if (points.empty())
    throw InputError("", "--baseline/--target", "points of " + op + " that both " + t.label + " and " + b.label + " have (" + alike + ")",
                     "none in common");
  return points;
}

// The figures' spec for one op over (num_inputs x num_outputs), as the surfaces always were drawn.
analysis::SurfaceFigureSpec default_surface_spec(const std::string& op, const SurfaceArgs& args,
                                                 const std::vector<analysis::TimeSeries>& baselines,
                                                 const std::vector<analysis::TimeSeries>& targets, std::vector<std::string>& summaries) {
  const std::size_t pairs = baselines.size() * targets.size();
  analysis::SurfaceFigureSpec spec;
  spec.baseline_label = join(args.baselines, ", ");
  spec.target_label = join(args.targets, ", ");
  std::set<std::int64_t> features;
  for (const auto& t : targets) {
    for (const auto& b : baselines) {
      const auto points = paired_or_refused(b, t, op, "same sizes, dtype");
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
  return spec;
}

// The figures' spec for one op over --x and --y: per pair the grids of analysis/speedup_axes.hpp, one
// panel per combination of the other varying columns not averaged over (one per pair when several).
analysis::SurfaceFigureSpec axes_surface_spec(const std::string& op, const SurfaceArgs& args, const analysis::SurfaceAxes& axes,
                                              const std::vector<analysis::ResultRow>& rows,
                                              const std::vector<analysis::TimeSeries>& baselines,
                                              const std::vector<analysis::TimeSeries>& targets, std::vector<std::string>& summaries) {
  constexpr std::size_t max_panels = 12;  // beyond, a panel is too small to read
  const std::size_t pairs = baselines.size() * targets.size();
  analysis::SurfaceFigureSpec spec;
  spec.baseline_label = join(args.baselines, ", ");
  spec.target_label = join(args.targets, ", ");
  spec.x_title = analysis::axis_title(rows, args.results, axes.x);
  spec.y_title = analysis::axis_title(rows, args.results, axes.y);
  std::vector<std::string> first_panels;
  std::string first_slice;
  for (const auto& t : targets) {
    for (const auto& b : baselines) {
      const auto points = paired_or_refused(b, t, op, "every column but the backend alike");
      const std::string pair = t.name + " over " + b.name;
      analysis::require_axis_values(points, args.results, axes.x, "--x", pair);
      analysis::require_axis_values(points, args.results, axes.y, "--y", pair);
      const auto stats = analysis::summarize_speedups(points);
      summaries.push_back(op + ": " + pair + ": median " + analysis::format_speedup(stats.median) + "x over " +
                          std::to_string(stats.count) + " points; crossover " + stats.crossover.text);
      const auto grids = analysis::speedup_grids(points, axes);
      const auto panels = analysis::panel_columns(points, axes);
      if (pairs > 1 && grids.size() > 1)
        throw InputError("", "--average-over",
                         "all, or every column that varies besides --x and --y, when several baselines or targets are compared "
                         "(one panel per pair; " + join(panels, ", ") + " would split it)",
                         "\"" + args.average_over + "\"");
      if (grids.size() > max_panels)
        throw InputError("", "--average-over",
                         "all, or some of the columns that split the surface into one panel per value (" + join(panels, ", ") +
                             "): at most " + std::to_string(max_panels) + " panels",
                         args.average_over.empty() ? std::to_string(grids.size()) + " panels without --average-over"
                                                   : std::to_string(grids.size()) + " panels with \"" + args.average_over + "\"");
      if (spec.panels.empty()) {
        first_panels = panels;
        first_slice = grids.front().slice;
      }
      if (pairs > 1) spec.panels.push_back({t.label + "\nover " + b.label, grids.front()});
      else if (grids.size() == 1) spec.panels.push_back({"", grids.front()});
      else
        for (const auto& g : grids) spec.panels.push_back({g.slice, g});
    }
  }
  if (pairs == 1) {
    spec.title = op + ": speedup of " + targets[0].label + "\nover " + baselines[0].label;
    spec.subtitle = (spec.panels.size() > 1 ? "one panel per " + join(first_panels, ", ") : first_slice) + "; black line: 1×";
  } else {
    spec.title = op + ": speedups on one colour scale";
    spec.subtitle = first_slice + "; black line: 1×";
  }
  return spec;
}

}  // namespace

int plot_surface_command(const SurfaceArgs& args) {
  checked_surface_pairs(args);
  bool workload_sweep = false;
  const auto rows = analysis::read_speedup_rows(args.results, &workload_sweep);
  std::vector<std::string> ops;
  if (workload_sweep) {
    // A workload sweep's rows have no op: its figures go by the sweep (analysis/workload_results.hpp).
    if (!args.ops.empty())
      throw InputError("", "--ops", "no --ops with a workload sweep's results (one figure per sweep)", "\"" + args.ops + "\"");
    if (rows.empty()) throw InputError(args.results, "", "at least one row", "none");
    ops.push_back(rows.front().op);
  } else {
    ops = analysis::ops_to_draw(rows, args.ops);
    if (ops.empty()) throw InputError(args.results, "", "rows with an op (gather or scatter_add)", "none");
  }
  const bool default_axes = default_surface_axes(args);
  const analysis::SurfaceAxes axes = surface_axes_of(args);
  // An op sweep always has the sizes; any other column is checked, naming the file and the row.
  if (!default_axes || workload_sweep) {
    analysis::require_axis_column(rows, args.results, axes.x, "--x");
    analysis::require_axis_column(rows, args.results, axes.y, "--y");
    for (const auto& c : axes.average_over) analysis::require_known_column(rows, args.results, c, "--average-over");
  }
  std::vector<analysis::TimeSeries> baselines, targets;
  for (const auto& b : args.baselines) baselines.push_back(surface_series(rows, args, b, ops));
  for (const auto& t : args.targets) targets.push_back(surface_series(rows, args, t, ops));
  analysis::require_gnuplot();

  const std::string out_dir = plots_dir(args.out_dir, args.results);
  std::vector<std::string> target_slugs, baseline_slugs;
  for (const auto& t : args.targets) target_slugs.push_back(file_slug(t));
  for (const auto& b : args.baselines) baseline_slugs.push_back(file_slug(b));
  const std::string pair_slug = join(target_slugs, "_") + "_over_" + join(baseline_slugs, "_") +
                                (args.average_over.empty() ? "" : "_mean");
  // Other axes than the defaults are named in the file names, so that surfaces over several pairs of
  // columns sit side by side; the defaults keep the names they always had.
  const std::string axes_slug = default_axes ? "" : "_x-" + axes.x + "_y-" + axes.y;

  std::vector<analysis::GnuplotFigure> figures;
  std::vector<std::string> summaries;
  for (const auto& op : ops) {
    analysis::SurfaceFigureSpec spec = default_axes ? default_surface_spec(op, args, baselines, targets, summaries)
                                                    : axes_surface_spec(op, args, axes, rows, baselines, targets, summaries);
    spec.range = args.range > 0 ? args.range : analysis::surface_colour_range(spec.panels);
    spec.stem = analysis::figure_stem("speedup_", op + "_" + pair_slug + axes_slug + "_heatmap");
    figures.push_back(analysis::speedup_heatmap_figure(spec));
    spec.stem = analysis::figure_stem("speedup_", op + "_" + pair_slug + axes_slug + "_surface3d");
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
      "surface", "Heat map and 3D surface of the target's speedup over the baseline over two columns (num_inputs x num_outputs)");
  surface_cmd->add_option("results", surface.results, "results.csv written by tilesim sweep (an op sweep's or a workload sweep's)")
      ->required();
  surface_cmd->add_option("--baseline", surface.baselines,
                          "Backend of the results, or a hydronet reference CSV file or directory (repeatable)")
      ->required();
  surface_cmd->add_option("--target", surface.targets, "Backend of the results, or a hydronet reference (repeatable)")->required();
  surface_cmd->add_option("--x", surface.x_column,
                          "Column across: a numeric column that identifies a point (num_features, a workload sweep's axis such as "
                          "loader.batch_size, a what-if machine figure; default num_inputs)");
  surface_cmd->add_option("--y", surface.y_column, "Column up, as --x (default num_outputs)");
  surface_cmd->add_option("--average-over", surface.average_over,
                          "num_features: one panel of geometric-mean speedups; with --x/--y, all (every other column) or "
                          "comma-separated columns to average over");
  surface_cmd->add_option("--ops", surface.ops, "Comma-separated ops (default: every op of the results)");
  surface_cmd->add_option("--out", surface.out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  surface_cmd->add_option("--range", surface.range, "Colour scale from 1/R to R (default: from the data)")->check(number_in(1.5, 1e6));
  commands.push_back({surface_cmd, [args] { return plot_surface_command(*args); }});
}

}  // namespace tilesim::cli
