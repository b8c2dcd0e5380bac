#include "analysis/throughput_figure.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/plot_text.hpp"
#include "analysis/results_table.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"
#include "results/workload_sweep_columns.hpp"

namespace tilesim::analysis {

namespace {

// The cells a figure reads, by column name: a batch-size sweep's file and a workload sweep's (which
// adds columns, one per axis among them) alike.
const std::vector<std::string> throughput_columns_read = {
    "workload", "knob", "batch_size", "backend", "kind", "throughput_unit", "throughput_per_s", "edge_padding_share", "bound", "status"};

// The axis columns of a workload sweep's header: those that are neither the sweep's own nor status.
std::vector<std::size_t> axis_column_indices(const std::vector<std::string>& header) {
  const auto& leading = workload_sweep_leading_columns();
  std::vector<std::size_t> axes;
  for (std::size_t i = 0; i < header.size(); ++i)
    if (std::find(leading.begin(), leading.end(), header[i]) == leading.end() && header[i] != workload_sweep_status_column())
      axes.push_back(i);
  return axes;
}

}  // namespace

std::vector<ThroughputRow> read_throughput_csv(const std::string& path) {
  std::istringstream in(read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes}, "a batch-size sweep's results.csv"));
  std::string line;
  const std::string expected = "the header of a batch-size or workload sweep's results.csv (tilesim sweep on a sweep file with a \"workload\")";
  if (!std::getline(in, line)) throw InputError(path, "line 1", expected, "an empty file");
  const std::vector<std::string> header = split_csv_record(line, path, 1);
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at.emplace(header[i], i);
  for (const std::string& c : throughput_columns_read)
    if (!at.count(c)) throw InputError(path, "line 1", expected, line.substr(0, 80));
  const std::vector<std::size_t> axes = axis_column_indices(header);
  std::vector<ThroughputRow> rows;
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const auto cells = split_csv_record(line, path, n);
    const std::string where = "line " + std::to_string(n);
    if (cells.size() != header.size())
      throw InputError(path, where, std::to_string(header.size()) + " comma-separated cells", std::to_string(cells.size()));
    // A point without a loader has no batch size to draw against.
    if (cells[at["batch_size"]].empty()) continue;
    ThroughputRow r;
    r.workload = cells[at["workload"]];
    r.knob = cells[at["knob"]];
    r.backend = cells[at["backend"]];
    r.kind = cells[at["kind"]];
    r.unit = cells[at["throughput_unit"]];
    r.bound = cells[at["bound"]];
    r.status = cells[at["status"]];
    // One line per backend and combination of the other axes; the batch knob's own axis is the x axis.
    r.series = r.backend;
    for (const std::size_t a : axes)
      if (header[a] != "loader." + r.knob) r.series += " " + header[a] + "=" + cells[a];
    try {
      r.batch_size = std::stoll(cells[at["batch_size"]]);
      if (r.status == "ok") {
        r.throughput_per_s = std::stod(cells[at["throughput_per_s"]]);
        r.edge_padding_share = std::stod(cells[at["edge_padding_share"]]);
      }
    } catch (const std::exception&) {
      throw InputError(path, where, "numbers in batch_size, throughput_per_s and edge_padding_share", line.substr(0, 80));
    }
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(path, "", "at least one row with a batch size (a point whose workload has a loader)", "none");
  return rows;
}

GnuplotFigure throughput_figure(const std::vector<ThroughputRow>& rows) {
  // Lines (backends, each with the values of a workload sweep's other axes) in the order the sweep ran them.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ThroughputRow*>> by_series;
  for (const auto& r : rows) {
    const std::string& series = r.series.empty() ? r.backend : r.series;
    if (!by_series.count(series)) order.push_back(series);
    by_series[series].push_back(&r);
  }
  GnuplotFigure fig;
  const ThroughputRow& first = rows.front();
  std::string unit = first.unit;
  for (const std::string suffix : {"_per_s"})
    if (unit.size() > suffix.size() && unit.compare(unit.size() - suffix.size(), suffix.size(), suffix) == 0) unit.resize(unit.size() - suffix.size());
  std::string stem = "throughput_" + first.workload;
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  fig.stem = stem;
  fig.description = "throughput of " + first.workload + " versus " + first.knob + ", one line per backend (and value of the sweep's other axes)";
  fig.width_px = 560;
  fig.height_px = 380;
  fig.pdf = true;

  std::ostringstream data, plot;
  double lo = INFINITY, hi = 0;
  std::size_t index = 0;
  for (std::size_t b = 0; b < order.size(); ++b) {
    const auto& list = by_series[order[b]];
    std::ostringstream block;
    std::vector<std::int64_t> refused;
    for (const ThroughputRow* r : list) {
      if (r->status != "ok" || !(r->throughput_per_s > 0)) {
        refused.push_back(r->batch_size);
        continue;
      }
      block << r->batch_size << " " << short_number(r->throughput_per_s) << " " << short_number(r->edge_padding_share) << "\n";
      lo = std::min(lo, r->throughput_per_s);
      hi = std::max(hi, r->throughput_per_s);
    }
    std::string title = order[b] + " (" + list.front()->kind + ")";
    if (!refused.empty()) {
      title += ", does not fit at " + std::to_string(refused.front()) + (refused.size() > 1 ? "+" : "");
    }
    if (block.str().empty()) continue;
    if (index) data << "\n\n";
    data << "# " << order[b] << " (" << list.front()->kind << "): " << first.knob << " " << first.unit << " edge_padding_share\n" << block.str();
    plot << (index ? ", \\\n     " : "plot ") << "datafile index " << index << " using 1:2 with linespoints lw 1.5 pt 7 ps 0.6 lc rgb \""
         << kSeriesColours[b % (sizeof kSeriesColours / sizeof *kSeriesColours)] << "\" title " << gp_quoted(title);
    ++index;
  }
  fig.data = data.str();
  std::ostringstream body;
  body << "set title " << gp_quoted(first.workload + ": throughput versus " + first.knob) << "\n"
       << "set xlabel " << gp_quoted(first.knob) << "\n"
       << "set ylabel " << gp_quoted(unit + " per second") << "\n"
       << "set logscale x 2\nset logscale y 10\n"
       << "set format x \"%g\"\n"
       << "set format y \"%.0s%c\"\n"
       << "set grid xtics ytics lc rgb \"#dddddd\" lw 0.5\n"
       << "set key outside bottom center horizontal maxrows 3 samplen 1.5\n";
  if (hi > 0) body << "set yrange [" << short_number(lo / 1.5) << ":" << short_number(hi * 1.5) << "]\n";
  body << (index ? plot.str() : "plot NaN notitle") << "\n";
  fig.body = body.str();
  return fig;
}

}  // namespace tilesim::analysis
