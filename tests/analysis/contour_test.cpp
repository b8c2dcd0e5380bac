// Iso-performance maps over two machine figures (analysis/contour.hpp, contour_figure.hpp): the
// reference cell at 1, medians over the points two cells share, the other figures held at the base
// machine's setting (or their smallest), a hole where a cell shares no point, and the errors for a
// figure no row sets, x equal to y and results that sweep no two figures; then `tilesim plot contour`
// on a 3x3 sweep over SRAM and exchange bandwidth, end to end.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/contour.hpp"
#include "analysis/contour_figure.hpp"
#include "common/error.hpp"
#include "tests/support/results_support.hpp"
#include "tests/support/test_support.hpp"

using tilesim::InputError;
using tilesim::analysis::ContourMap;
using tilesim::analysis::ResultRow;
using Catch::Matchers::Contains;

namespace {

// One row on ipu:bow with overrides `figures` ("chip.a*=2;chip.b*=1") at the point with `num_features`.
ResultRow contour_test_row(const std::string& figures, std::int64_t num_features, std::optional<double> time_s,
                           const std::string& op = "gather") {
  ResultRow r;
  r.op = op;
  r.shape = {256, num_features, 2048};
  r.backend = "ipu:bow{" + figures + "}";
  r.machine = "bow{" + figures + "}";
  r.kind = "simulated";
  r.time_s = time_s;
  r.verified = time_s ? "timing-only" : "does-not-fit";
  return r;
}

const std::string contour_test_x = "chip.sram_bytes_per_tile", contour_test_y = "chip.exchange_bytes_per_cycle";

std::string contour_test_setting(double x, double y, const std::string& more = "") {
  char text[128];
  std::snprintf(text, sizeof text, "chip.sram_bytes_per_tile*=%g;chip.exchange_bytes_per_cycle*=%g", x, y);
  return text + more;
}

// A 3x3 grid over scales 0.5, 1, 2 at two points; time = (16 or 64 features: 1 or 3) / (x * sqrt(y)).
std::vector<ResultRow> contour_test_grid(const std::string& more = "", double factor = 1) {
  std::vector<ResultRow> rows;
  for (double y : {0.5, 1.0, 2.0})
    for (double x : {0.5, 1.0, 2.0}) {
      rows.push_back(contour_test_row(contour_test_setting(x, y, more), 16, factor * 1.0 / (x * std::sqrt(y))));
      rows.push_back(contour_test_row(contour_test_setting(x, y, more), 64, factor * 3.0 / (x * std::sqrt(y))));
    }
  return rows;
}

std::string contour_test_error(const std::vector<ResultRow>& rows, const std::string& x, const std::string& y) {
  try {
    tilesim::analysis::contour_maps(rows, "r.csv", x, y);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("contour: the reference cell is 1 and every cell the time relative to it", "[contour][unit]") {
  const auto maps = tilesim::analysis::contour_maps(contour_test_grid(), "r.csv", contour_test_x, contour_test_y);
  REQUIRE(maps.size() == 1);
  const ContourMap& m = maps[0];
  CHECK(m.backend == "ipu:bow");
  CHECK(m.op == "gather");
  CHECK(m.x_scale);
  CHECK(m.y_scale);
  CHECK(m.x_values == std::vector<double>{0.5, 1, 2});
  CHECK(m.y_values == std::vector<double>{0.5, 1, 2});
  CHECK(m.x_reference == 1);
  CHECK(m.y_reference == 1);
  CHECK(m.points == 2);
  CHECK(m.held.empty());
  CHECK(*m.relative_time[1][1] == Approx(1.0));
  CHECK(*m.relative_time[1][0] == Approx(2.0));       // half the SRAM: twice the time
  CHECK(*m.relative_time[2][2] == Approx(0.5 / std::sqrt(2.0)));
  CHECK(m.shared_points[0][0] == 2);

  const std::string table = tilesim::analysis::contour_table(maps);
  CHECK_THAT(table, Contains("ipu:bow gather: simulated time / time at chip.sram_bytes_per_tile 1, chip.exchange_bytes_per_cycle 1"));
  CHECK_THAT(table, Contains("no other figure varies"));
  CHECK_THAT(table, Contains("2.000"));
  const auto figures = tilesim::analysis::contour_figures(maps);
  REQUIRE(figures.size() == 1);
  CHECK(figures[0].stem == "contour_ipu_bow_gather_sram_bytes_per_tile_x_exchange_bytes_per_cycle");
  CHECK(figures[0].pdf);
  CHECK_THAT(figures[0].body, Contains("time / time at the reference"));
  CHECK_THAT(figures[0].body, Contains("title \"1x\""));  // the 1x iso-line crosses the grid
  CHECK_THAT(figures[0].body, Contains("set logscale x 2"));  // 0.5 to 2: 4x
  CHECK_THAT(figures[0].data, Contains("# the iso-line at 1x"));
  CHECK_THAT(figures[0].data, Contains("\n\n0.5 1 "));  // a blank line before each scan line after the first
}

TEST_CASE("contour: a cell's value is the median over the points it shares with the reference", "[contour][unit]") {
  auto rows = contour_test_grid();
  // A third point where the cell (2, 2) is 10x its usual ratio: the median over three is the usual.
  rows.push_back(contour_test_row(contour_test_setting(1, 1), 256, 1.0));
  rows.push_back(contour_test_row(contour_test_setting(2, 2), 256, 10.0));
  // A point only (0.5, 0.5) ran: it shares none with the reference and changes nothing.
  rows.push_back(contour_test_row(contour_test_setting(0.5, 0.5), 1024, 100.0));
  const auto m = tilesim::analysis::contour_maps(rows, "r.csv", contour_test_x, contour_test_y).at(0);
  CHECK(m.points == 4);
  CHECK(m.shared_points[2][2] == 3);
  CHECK(*m.relative_time[2][2] == Approx(0.5 / std::sqrt(2.0)));
  CHECK(m.shared_points[0][0] == 2);
  CHECK(*m.relative_time[0][0] == Approx(2.0 * std::sqrt(2.0)));
}

TEST_CASE("contour: other figures are held at the base's scale of 1, else at their smallest value", "[contour][unit]") {
  auto rows = contour_test_grid(";chip.num_tiles*=1");
  for (const auto& r : contour_test_grid(";chip.num_tiles*=2", 100)) rows.push_back(r);
  const auto m = tilesim::analysis::contour_maps(rows, "r.csv", contour_test_x, contour_test_y).at(0);
  CHECK(m.held == std::vector<std::string>{"chip.num_tiles*=1"});
  CHECK(*m.relative_time[1][0] == Approx(2.0));  // the rows at 2 tiles (100x slower) never mix in

  auto set_rows = contour_test_grid(";chip.tile_clock_hz=1.5e9", 100);
  for (const auto& r : contour_test_grid(";chip.tile_clock_hz=1.2e9")) set_rows.push_back(r);
  const auto held = tilesim::analysis::contour_maps(set_rows, "r.csv", contour_test_x, contour_test_y).at(0);
  CHECK(held.held == std::vector<std::string>{"chip.tile_clock_hz=1.2e+09"});
  CHECK_THAT(tilesim::analysis::contour_table({held}), Contains("held: chip.tile_clock_hz=1.2e+09"));
}

TEST_CASE("contour: a cell that shares no point with the reference is a hole, drawn and listed", "[contour][unit]") {
  auto rows = contour_test_grid();
  for (auto& r : rows)
    if (r.backend == "ipu:bow{" + contour_test_setting(0.5, 2) + "}") r.time_s.reset();  // does not fit
  const auto maps = tilesim::analysis::contour_maps(rows, "r.csv", contour_test_x, contour_test_y);
  const ContourMap& m = maps.at(0);
  CHECK_FALSE(m.relative_time[2][0].has_value());
  CHECK(m.shared_points[2][0] == 0);
  CHECK(m.relative_time[2][1].has_value());
  CHECK_THAT(tilesim::analysis::contour_table(maps), Contains("holes, no point shared with the reference cell (x, y): (0.5, 2)"));
  CHECK_THAT(tilesim::analysis::contour_figures(maps).at(0).data, Contains("0.5 2 0.353553391 0.707106781 1.41421356 2.82842712 NaN 0"));
}

TEST_CASE("contour: a figure no row sets, x equal to y and no group sweeping both are errors naming the results", "[contour][unit]") {
  const auto rows = contour_test_grid();
  CHECK_THAT(contour_test_error(rows, "chip.num_tiles", contour_test_y), Contains("r.csv: --x: expected a figure the sweep's what-if machines set"));
  CHECK_THAT(contour_test_error(rows, contour_test_x, "chip.sram"), Contains("no row that sets chip.sram"));
  CHECK_THAT(contour_test_error(rows, contour_test_x, contour_test_x), Contains("r.csv: --x, --y: expected two different machine figures"));
  // One value of y: a line, not a map.
  std::vector<ResultRow> line;
  for (double x : {0.5, 1.0, 2.0}) line.push_back(contour_test_row(contour_test_setting(x, 1), 16, 1.0 / x));
  CHECK_THAT(contour_test_error(line, contour_test_x, contour_test_y), Contains("r.csv: expected a backend and op with at least two values"));
}

TEST_CASE("tilesim plot contour: a 3x3 sweep over SRAM and exchange bandwidth", "[contour][cli][slow]") {
  namespace fs = tilesim_test::fs;
  const fs::path dir = tilesim_test::scratch("contour_cli_test");
  const fs::path out = tilesim_test::run_sram_exchange_sweep(dir, R"(["gather"])");

  const fs::path plots = dir / "plots";
  const std::string results = (out / "results.csv").string();
  const auto plot = tilesim_test::run_tilesim("plot contour " + results + " --x chip.sram_bytes_per_tile --y chip.exchange_bytes_per_cycle --out " +
                                                  plots.string(), dir);
  INFO(plot.err);
  REQUIRE(plot.exit_code == 0);
  CHECK(tilesim_test::figure_problem(plots, "contour_ipu_bow_gather_sram_bytes_per_tile_x_exchange_bytes_per_cycle") == "");
  CHECK_THAT(plot.out, Contains("ipu:bow gather: simulated time / time at chip.sram_bytes_per_tile 1, chip.exchange_bytes_per_cycle 1"));
  CHECK_THAT(plot.out, Contains("1.000"));

  const auto same = tilesim_test::run_tilesim("plot contour " + results + " --x chip.num_tiles --y chip.num_tiles --out " + plots.string(), dir);
  CHECK(same.exit_code == static_cast<int>(tilesim::ExitCode::bad_input));
  CHECK_THAT(same.err, Contains("two different machine figures"));
}
