// tilesim plot throughput RESULTS.csv [--out DIR]: a batch-size sweep's throughput versus batch size,
// one line per backend, log-log, in SVG, PNG and PDF with the gnuplot script and data beside them.
#include <filesystem>
#include <iostream>

#include "analysis/gnuplot.hpp"
#include "analysis/throughput_figure.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"

namespace tilesim::cli {

int plot_throughput_command(const ThroughputPlotArgs& args) {
  namespace fs = std::filesystem;
  const auto rows = analysis::read_throughput_csv(args.results);
  analysis::require_gnuplot();
  const std::string out_dir = args.out_dir.empty() ? (fs::path(args.results).parent_path() / "plots").string() : args.out_dir;
  for (const auto& r : render_figures(out_dir, {analysis::throughput_figure(rows)}))
    std::cout << "  " << r.pdf_path << "  (also .svg, .png; script " << fs::path(r.script_path).filename().string() << ", data "
              << fs::path(r.data_path).filename().string() << ")\n";
  return 0;
}

}  // namespace tilesim::cli
