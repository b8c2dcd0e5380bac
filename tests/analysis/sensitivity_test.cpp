// Machine-figure sensitivity (analysis/sensitivity.hpp, sensitivity_figure.hpp): ratios against each
// figure's first value, the other figures held, over a synthetic crossed sweep whose times follow a
// known formula; the figures' data and the tornado's order; errors for results that are no machine sweep.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "analysis/sensitivity.hpp"
#include "analysis/sensitivity_figure.hpp"
#include "analysis/workload_results.hpp"
#include "common/error.hpp"
#include "results/workload_sweep_columns.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::analysis;
using Catch::Matchers::Contains;

namespace {

// time = 10 / clock_factor + sync / 100 + features / 1000 on each point: clock halves the first term,
// sync adds linearly.
std::vector<ResultRow> synthetic_machine_sweep() {
  std::vector<ResultRow> rows;
  int line = 2;
  for (const std::int64_t features : {16, 64})
    for (const double clock : {0.5, 1.0, 2.0})
      for (const double sync : {100.0, 300.0}) {
        ResultRow r;
        r.op = "gather";
        r.shape = {256, features, 2048};
        const std::string overrides = "{chip.sync_cycles=" + std::to_string(static_cast<int>(sync)) +
                                      ";chip.tile_clock_hz*=" + (clock == 0.5 ? "0.5" : clock == 1.0 ? "1" : "2") + "}";
        r.backend = "ipu:bow" + overrides;
        r.machine = "bow" + overrides;
        r.time_s = 10.0 / clock + sync / 100.0 + static_cast<double>(features) / 1000.0;
        r.line = line++;
        rows.push_back(r);
      }
  ResultRow plain;  // the base machine itself: no figure to place it by, left out
  plain.op = "gather";
  plain.backend = plain.machine = "bow";
  plain.time_s = 1.0;
  rows.push_back(plain);
  return rows;
}

std::string sensitivity_error(const std::vector<ResultRow>& rows) {
  try {
    machine_sensitivity(rows, "r.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sensitivity: each figure against its first value, the other figures held, median and range over points", "[analysis][unit]") {
  const auto curves = machine_sensitivity(synthetic_machine_sweep(), "r.csv");
  REQUIRE(curves.size() == 2);
  const SensitivityCurve& sync = curves[0];
  const SensitivityCurve& clock = curves[1];
  CHECK(sync.backend == "ipu:bow");
  CHECK(sync.figure == "chip.sync_cycles");
  CHECK_FALSE(sync.scale);
  CHECK(sync.values == std::vector<double>{100, 300});
  CHECK(clock.figure == "chip.tile_clock_hz");
  CHECK(clock.scale);
  CHECK(clock.values == std::vector<double>{0.5, 1, 2});
  // Four groups per clock value (2 feature sizes x 2 sync settings); each ratio from the formula.
  CHECK(clock.groups == std::vector<std::size_t>{4, 4, 4});
  CHECK(clock.median_ratio[0] == Approx(1.0));
  std::vector<double> at_2;
  for (const double f : {16.0, 64.0})
    for (const double s : {100.0, 300.0}) at_2.push_back((5.0 + s / 100 + f / 1000) / (20.0 + s / 100 + f / 1000));
  CHECK(clock.min_ratio[2] == Approx(*std::min_element(at_2.begin(), at_2.end())));
  CHECK(clock.max_ratio[2] == Approx(*std::max_element(at_2.begin(), at_2.end())));
  CHECK(clock.median_ratio[2] < clock.median_ratio[1]);
  CHECK(sync.median_ratio[1] > 1.0);

  const auto figures = sensitivity_figures(curves);
  REQUIRE(figures.size() == 3);  // two line figures, one tornado
  CHECK(figures[0].stem == "sensitivity_chip.sync_cycles");
  CHECK(figures[1].stem == "sensitivity_chip.tile_clock_hz");
  CHECK(figures[2].stem == "tornado_ipu_bow");
  // The clock spans more time than the sync cost: the tornado puts it on top (the highest position).
  std::istringstream tornado(figures[2].data);
  std::map<std::string, std::string> at_position;  // "1" -> its line
  for (std::string line; std::getline(tornado, line);)
    if (!line.empty() && line[0] != '#') at_position[line.substr(0, line.find(' '))] = line;
  CHECK_THAT(at_position["1"], Contains("chip.tile_clock_hz"));
  CHECK_THAT(at_position["0"], Contains("chip.sync_cycles"));
  CHECK_THAT(sensitivity_table(curves), Contains("chip.tile_clock_hz"));
}

TEST_CASE("sensitivity: results that are not a machine sweep are said to be so", "[analysis][unit]") {
  ResultRow plain;
  plain.op = "gather";
  plain.backend = plain.machine = "bow";
  plain.time_s = 1.0;
  CHECK_THAT(sensitivity_error({plain}), Contains("r.csv: expected rows of a sweep over machine figures"));
  ResultRow one = plain;
  one.machine = "bow{chip.sync_cycles=100}";
  CHECK_THAT(sensitivity_error({one}), Contains("found no figure that varies"));
  ResultRow broken = plain;
  broken.machine = "bow{chip.sync_cycles}";
  broken.line = 7;
  CHECK_THAT(sensitivity_error({broken}), Contains("r.csv: line 7, column machine: expected a what-if machine name"));
}

TEST_CASE("sensitivity: a workload sweep's points across what-if machines, placed by their axis cells", "[analysis][unit]") {
  // Two widths on two exchange bandwidths: twice the bandwidth takes 0.8 of the time at width 16 and
  // 0.6 at width 64; the points are told apart by their axis cell, not by sizes (a workload has none).
  std::vector<std::string> columns = workload_sweep_leading_columns();
  columns.push_back("model[*].out");
  columns.push_back(workload_sweep_status_column());
  std::string csv;
  for (std::size_t i = 0; i < columns.size(); ++i) csv += (i ? "," : "") + columns[i];
  csv += "\n";
  int point = 0;
  for (const int width : {16, 64})
    for (const char* scale : {"1", "2"}) {
      const bool doubled = std::string(scale) == "2";
      const double time_s = doubled ? (width == 16 ? 0.8 : 0.6) : 1.0;
      std::map<std::string, std::string> cells = {
          {"workload", "gcn"}, {"backend", std::string("ipu:bow{chip.exchange_bytes_per_cycle*=") + scale + "}"}, {"kind", "simulated"},
          {"verified", "timing-only"}, {"point", std::to_string(point)}, {"run", "training"}, {"total_time_s", std::to_string(time_s)},
          {"model[*].out", std::to_string(width)}, {"status", "ok"}};
      for (std::size_t i = 0; i < columns.size(); ++i) csv += (i ? "," : "") + csv_field(cells[columns[i]]);
      csv += "\n";
    }
  const tilesim_test::TempDir dir("sensitivity-workload");
  const std::string path = dir.write("results.csv", csv);
  const std::vector<SensitivityCurve> curves = machine_sensitivity(read_speedup_rows(path), path);
  REQUIRE(curves.size() == 1);
  CHECK(curves[0].op == "gcn");
  CHECK(curves[0].figure == "chip.exchange_bytes_per_cycle");
  REQUIRE(curves[0].groups == std::vector<std::size_t>{2, 2});  // both widths compared at each value
  CHECK(curves[0].median_ratio[1] == Approx(0.7));
  CHECK(curves[0].min_ratio[1] == Approx(0.6));
  CHECK(curves[0].max_ratio[1] == Approx(0.8));
}
