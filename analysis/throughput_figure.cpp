#include "analysis/throughput_figure.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/plot_text.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"

namespace tilesim::analysis {

namespace {

const char* const expected_header =
    "workload,knob,batch_size,backend,kind,batches,batches_per_epoch,step_min_s,step_median_s,step_max_s,epoch_time_s,"
    "throughput_unit,throughput_per_s,nodes_per_s,edges_per_s,node_padding_share,edge_padding_share,"
    "host_sampling_s_per_batch,bound,peak_tile_bytes,verified,status";

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  for (std::string cell; std::getline(s, cell, ',');) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

}  // namespace

std::vector<ThroughputRow> read_throughput_csv(const std::string& path) {
  std::istringstream in(read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes}, "a batch-size sweep's results.csv"));
  std::string line;
  if (!std::getline(in, line) || line != expected_header)
    throw InputError(path, "line 1", "the header of a batch-size sweep's results.csv (tilesim sweep on a sweep file with a \"workload\")",
                     line.substr(0, 80));
  const std::size_t columns = split(expected_header).size();
  std::vector<ThroughputRow> rows;
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const auto cells = split(line);
    const std::string where = "line " + std::to_string(n);
    if (cells.size() != columns)
      throw InputError(path, where, std::to_string(columns) + " comma-separated cells", std::to_string(cells.size()));
    ThroughputRow r;
    r.workload = cells[0];
    r.knob = cells[1];
    r.backend = cells[3];
    r.kind = cells[4];
    r.unit = cells[11];
    r.bound = cells[18];
    r.status = cells[21];
    try {
      r.batch_size = std::stoll(cells[2]);
      if (r.status == "ok") {
        r.throughput_per_s = std::stod(cells[12]);
        r.edge_padding_share = std::stod(cells[16]);
      }
    } catch (const std::exception&) {
      throw InputError(path, where, "numbers in batch_size, throughput_per_s and edge_padding_share", line.substr(0, 80));
    }
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(path, "", "at least one row", "a header only");
  return rows;
}

GnuplotFigure throughput_figure(const std::vector<ThroughputRow>& rows) {
  // Backends in the order the sweep ran them.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ThroughputRow*>> by_backend;
  for (const auto& r : rows) {
    if (!by_backend.count(r.backend)) order.push_back(r.backend);
    by_backend[r.backend].push_back(&r);
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
  fig.description = "throughput of " + first.workload + " versus " + first.knob + ", one line per backend";
  fig.width_px = 560;
  fig.height_px = 380;
  fig.pdf = true;

  std::ostringstream data, plot;
  double lo = INFINITY, hi = 0;
  std::size_t index = 0;
  for (std::size_t b = 0; b < order.size(); ++b) {
    const auto& list = by_backend[order[b]];
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
