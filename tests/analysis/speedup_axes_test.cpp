// Speedup surfaces over any two columns (analysis/speedup_axes.hpp, workload_results.hpp): the default
// columns give the panels they always did, other sizes and a workload sweep's axes give the speedups
// worked out by hand, a what-if family's machine figures are columns, and a bad column is named with
// the file and the columns it could be.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "analysis/speedup.hpp"
#include "analysis/speedup_axes.hpp"
#include "analysis/surface_figures.hpp"
#include "analysis/workload_results.hpp"
#include "common/error.hpp"
#include "tests/support/results_support.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::analysis;
using Catch::Matchers::Contains;

namespace {

// The IPU's speedups over the CPU in the hand-written op sweep (results_support.hpp).
std::vector<SpeedupSample> axes_test_op_samples(const std::vector<ResultRow>& rows) {
  return paired_speedups(series_from_rows(rows, "cpu", "r.csv"), series_from_rows(rows, "ipu:bow", "r.csv"), "gather");
}

// The cell of `g` at column values (x, y); fails the test when the grid has no such values.
std::optional<double> axes_test_cell(const SpeedupGrid& g, double x, double y) {
  const auto i = std::find(g.xs.begin(), g.xs.end(), x), j = std::find(g.ys.begin(), g.ys.end(), y);
  REQUIRE(i != g.xs.end());
  REQUIRE(j != g.ys.end());
  return g.speedup[static_cast<std::size_t>(i - g.xs.begin())][static_cast<std::size_t>(j - g.ys.begin())];
}

}  // namespace

TEST_CASE("surface axes: the default columns give the panels they always did", "[analysis][speedup][unit]") {
  tilesim_test::TempDir dir("surface-axes-default");
  const auto rows = read_speedup_rows(dir.write("results.csv", tilesim_test::surface_test_op_results()));
  const auto points = axes_test_op_samples(rows);
  REQUIRE(points.size() == 8);
  // One panel per num_features over (num_inputs x num_outputs), each speedup as it is, log axes.
  const auto per_feature = grids_per_feature(points);
  REQUIRE(per_feature.size() == 2);
  CHECK(per_feature[0].slice == "num_features = 16");
  CHECK(per_feature[1].slice == "num_features = 64");
  CHECK(per_feature[0].xs == std::vector<double>{16, 256});
  CHECK(per_feature[0].ys == std::vector<double>{32, 512});
  CHECK((per_feature[0].x_log && per_feature[0].y_log));  // the defaults stay log, whatever their span
  CHECK(*axes_test_cell(per_feature[0], 16, 32) == 2);
  CHECK(*axes_test_cell(per_feature[0], 256, 32) == 8);
  CHECK(*axes_test_cell(per_feature[1], 16, 512) == 0.25);
  // The same through the general grids with the default axes.
  const auto general = speedup_grids(points, SurfaceAxes{});
  REQUIRE(general.size() == per_feature.size());
  for (std::size_t p = 0; p < general.size(); ++p) {
    CHECK(general[p].slice == per_feature[p].slice);
    CHECK(general[p].speedup == per_feature[p].speedup);
  }
  const SpeedupGrid mean = grid_averaged_over_features(points);
  CHECK(mean.slice == "geometric mean over num_features 16-64");
  CHECK(*axes_test_cell(mean, 16, 32) == Approx(1.0));   // 2 and 0.5
  CHECK(*axes_test_cell(mean, 256, 32) == Approx(4.0));  // 8 and 2

  // The figure's data and script read as they always did: sizes as integers, cells edged at geometric
  // midpoints, log axes, the axis titles with "(rows)".
  SurfaceFigureSpec spec;
  spec.stem = "default_axes";
  spec.title = "gather";
  for (const auto& g : per_feature) spec.panels.push_back({g.slice, g});
  spec.range = surface_colour_range(spec.panels);
  CHECK(spec.range == 10);
  const GnuplotFigure heat = speedup_heatmap_figure(spec);
  CHECK_THAT(heat.data, Contains("#   cells: num_inputs num_outputs x_low x_high y_low y_high log10_speedup speedup label label_rgb\n") &&
                            Contains("\n16 32 4 64 8 128 0.301029996 2 \"2.00\" 0\n") &&
                            Contains("\n256 32 64 1024 8 128 0.903089987 8 \"8.00\" 16777215\n"));
  CHECK_THAT(heat.body, Contains("set logscale xy 2\n") && Contains("num\\\\_inputs (rows)") && Contains("num\\\\_outputs (rows)") &&
                            Contains("set xtics (\"16\" 16, \"256\" 256)"));
  const GnuplotFigure surface = speedup_surface3d_figure(spec);
  CHECK_THAT(surface.data, Contains("#   surface: num_inputs num_outputs log10_speedup (NaN: no point), one block per num_inputs\n"));
  CHECK_THAT(surface.body, Contains("set logscale xy 2\n") && Contains("set xrange [16:256]"));
  CHECK_THAT(surface.data, Contains("\n16 32 0\n16 512 0\n\n256 32 0\n256 512 0\n"));  // the 1x plane's corners
}

TEST_CASE("surface axes: num_features across, num_outputs up, the speedups averaged over num_inputs", "[analysis][speedup][unit]") {
  tilesim_test::TempDir dir("surface-axes-features");
  const std::string csv = dir.write("results.csv", tilesim_test::surface_test_op_results());
  const auto rows = read_speedup_rows(csv);
  const auto points = axes_test_op_samples(rows);
  SurfaceAxes axes;
  axes.x = "num_features";
  axes.y = "num_outputs";
  CHECK(varying_columns(points, axes.x, axes.y) == std::vector<std::string>{"num_inputs"});
  // Without averaging: one panel per num_inputs, each speedup as it is.
  auto grids = speedup_grids(points, axes);
  REQUIRE(grids.size() == 2);
  CHECK(grids[0].slice == "num_inputs = 16");
  CHECK(grids[1].slice == "num_inputs = 256");
  CHECK(*axes_test_cell(grids[0], 16, 32) == 2);
  CHECK(*axes_test_cell(grids[0], 64, 32) == 0.5);
  CHECK(*axes_test_cell(grids[1], 16, 32) == 8);
  CHECK(*axes_test_cell(grids[1], 64, 512) == 0.25);
  // Averaged: the geometric means worked out in results_support.hpp.
  axes.average_all = true;
  grids = speedup_grids(points, axes);
  REQUIRE(grids.size() == 1);
  const SpeedupGrid& g = grids.front();
  CHECK(g.slice == "geometric mean over num_inputs 16-256");
  CHECK(*axes_test_cell(g, 16, 32) == Approx(4.0));
  CHECK(*axes_test_cell(g, 16, 512) == Approx(1.0));
  CHECK(*axes_test_cell(g, 64, 32) == Approx(1.0));
  CHECK(*axes_test_cell(g, 64, 512) == Approx(0.25));
  // num_features spans 4x: linear; num_outputs 16x: log.
  CHECK_FALSE(g.x_log);
  CHECK(g.y_log);
  axes.average_all = false;
  axes.average_over = {"num_inputs"};
  CHECK(speedup_grids(points, axes).size() == 1);
  CHECK(panel_columns(points, axes).empty());

  // The figure names its columns and draws only num_outputs log, cells edged at arithmetic midpoints.
  SurfaceFigureSpec spec;
  spec.stem = "features_outputs";
  spec.title = "gather";
  spec.x_title = "num_features";
  spec.y_title = "num_outputs";
  spec.panels.push_back({"", g});
  spec.range = surface_colour_range(spec.panels);
  const GnuplotFigure heat = speedup_heatmap_figure(spec);
  CHECK_THAT(heat.data, Contains("#   cells: num_features num_outputs x_low") && Contains("\n16 32 -8 40 8 128 0.602059991 4 \"4.00\"") &&
                            Contains("\n64 512 40 88 128 2048 -0.602059991 0.25 \"0.25\""));
  CHECK_THAT(heat.body, Contains("set logscale y 2\n") && !Contains("set logscale xy") && Contains("num\\\\_features\" offset") &&
                            Contains("num\\\\_outputs (rows)"));
  // The 1x contour runs through the two 1x cells' centres, in column values on the linear axis.
  const auto contour = unit_contour(g);
  REQUIRE(contour.size() == 1);
  CHECK(std::min(contour[0].x0, contour[0].x1) == Approx(16));
  CHECK(std::max(contour[0].x0, contour[0].x1) == Approx(64));
}

TEST_CASE("surface axes: a missing or non-numeric column is named with the file and the columns it could be", "[analysis][speedup][unit]") {
  tilesim_test::TempDir dir("surface-axes-missing");
  const std::string csv = dir.write("results.csv", tilesim_test::surface_test_op_results());
  const auto rows = read_speedup_rows(csv);
  CHECK(numeric_point_columns(rows, csv) == std::vector<std::string>{"num_inputs", "num_features", "num_outputs"});
  CHECK_THAT(tilesim_test::required_input_error_of([&] { require_axis_column(rows, csv, "batch", "--x"); }),
             Contains(csv + ": --x: expected a column of the results that identifies a point") &&
                 Contains("(num_inputs, num_features, num_outputs)") && Contains("found no column \"batch\""));
  // A column of the run's results is in the file, but says nothing of the point.
  CHECK_THAT(tilesim_test::required_input_error_of([&] { require_axis_column(rows, csv, "time_s", "--y"); }),
             Contains("--y: expected") && Contains("\"time_s\", a column of the run's results"));
  CHECK_THAT(tilesim_test::required_input_error_of([&] { require_known_column(rows, csv, "batch", "--average-over"); }),
             Contains("--average-over") && Contains("dtype") && Contains("\"batch\""));
  require_axis_column(rows, csv, "num_features", "--x");
  // A text cell: the file and line, the column and the cell.
  const std::string workload_csv = dir.write("workload/results.csv", tilesim_test::surface_test_workload_results());
  const auto workload_rows = read_speedup_rows(workload_csv);
  CHECK_THAT(tilesim_test::required_input_error_of([&] { require_axis_column(workload_rows, workload_csv, "knob", "--x"); }),
             Contains(workload_csv + ":2: --x: expected a number in column knob in every row") &&
                 Contains("batch_size, loader.batch_size, model[*].out") && Contains("found \"batch_size\""));
  // The default axes on a workload sweep: it has no sizes.
  CHECK_THAT(tilesim_test::required_input_error_of([&] { require_axis_column(workload_rows, workload_csv, "num_inputs", "--x"); }),
             Contains("found no column \"num_inputs\""));
}

TEST_CASE("surface axes: a workload sweep's axis columns, its rows paired on every axis", "[analysis][speedup][unit]") {
  tilesim_test::TempDir dir("surface-axes-workload");
  const std::string csv = dir.write("sage/results.csv", tilesim_test::surface_test_workload_results());
  bool workload_sweep = false;
  const auto rows = read_speedup_rows(csv, &workload_sweep);
  CHECK(workload_sweep);
  REQUIRE(rows.size() == 10);
  CHECK(rows.front().op == "sage_small");  // the figures go by the workload's name
  CHECK(rows.front().point_columns.at("loader.batch_size") == "64");
  CHECK_FALSE(rows.front().point_columns.count("point"));
  CHECK_FALSE(rows[8].time_s);  // the IPU does not fit at batch size 4096
  const TimeSeries ipu = series_from_rows(rows, "ipu:bow", csv), a100 = series_from_rows(rows, "gpu-model:a100-40gb:eager", csv);
  CHECK(ipu.label == "Bow IPU (simulated)");
  const auto points = paired_speedups(a100, ipu, "sage_small");
  REQUIRE(points.size() == 4);
  SurfaceAxes axes;
  axes.x = "loader.batch_size";
  axes.y = "model[*].out";
  // batch_size moves with loader.batch_size, and knob, run and workload never vary: nothing splits panels.
  CHECK(varying_columns(points, axes.x, axes.y).empty());
  const auto grids = speedup_grids(points, axes);
  REQUIRE(grids.size() == 1);
  const SpeedupGrid& g = grids.front();
  CHECK(g.slice == "one point per cell");
  CHECK(g.xs == std::vector<double>{64, 1024});
  CHECK(g.ys == std::vector<double>{16, 256});
  CHECK((g.x_log && g.y_log));  // both span 16x
  CHECK(*axes_test_cell(g, 64, 16) == 2);
  CHECK(*axes_test_cell(g, 64, 256) == 0.5);
  CHECK(*axes_test_cell(g, 1024, 16) == 4);
  CHECK(*axes_test_cell(g, 1024, 256) == 1);
  require_axis_column(rows, csv, "model[*].out", "--y");
  CHECK(axis_title(rows, csv, "loader.batch_size") == "loader.batch_size");
}

TEST_CASE("surface axes: a what-if family's machine figures are columns, each machine paired with the baseline's point",
          "[analysis][speedup][unit]") {
  std::vector<ResultRow> rows;
  for (const double scale : {0.5, 1.0, 2.0})
    for (const std::int64_t out : {32, 512}) {
      ResultRow ipu;
      ipu.op = "gather";
      ipu.shape = {256, 16, out};
      char figures[64];
      std::snprintf(figures, sizeof figures, "{chip.sram_bytes_per_tile*=%g}", scale);
      ipu.backend = std::string("ipu:bow") + figures;
      ipu.machine = std::string("bow") + figures;
      ipu.kind = "simulated";
      ipu.time_s = 1e-5 / (scale * (out == 32 ? 2 : 1));  // speedup over the CPU: scale x (2 at 32 outputs)
      ipu.verified = "timing-only";
      rows.push_back(ipu);
    }
  for (const std::int64_t out : {32, 512}) {
    ResultRow cpu;
    cpu.op = "gather";
    cpu.shape = {256, 16, out};
    cpu.backend = "cpu";
    cpu.kind = "measured";
    cpu.time_s = 1e-5;
    cpu.verified = "yes";
    rows.push_back(cpu);
  }
  CHECK_FALSE(what_if_family_series(rows, "cpu", "r.csv"));
  const auto family = what_if_family_series(rows, "ipu:bow", "r.csv");
  REQUIRE(family);
  CHECK(family->name == "ipu:bow");
  CHECK(family->label == "Bow IPU (simulated), what-if machines");
  const auto points = paired_speedups(series_from_rows(rows, "cpu", "r.csv"), *family, "gather");
  REQUIRE(points.size() == 6);  // each CPU point with each of the three machines
  SurfaceAxes axes;
  axes.x = "chip.sram_bytes_per_tile";
  axes.y = "num_outputs";
  const auto grids = speedup_grids(points, axes);
  REQUIRE(grids.size() == 1);
  const SpeedupGrid& g = grids.front();
  CHECK(g.xs == std::vector<double>{0.5, 1, 2});
  CHECK_FALSE(g.x_log);  // a span of 4
  CHECK(*axes_test_cell(g, 0.5, 32) == 1);
  CHECK(*axes_test_cell(g, 2, 32) == 4);
  CHECK(*axes_test_cell(g, 2, 512) == 2);
  require_axis_column(rows, "r.csv", "chip.sram_bytes_per_tile", "--x");
  CHECK(axis_title(rows, "r.csv", "chip.sram_bytes_per_tile") == "chip.sram_bytes_per_tile (× base)");
  CHECK(numeric_point_columns(rows, "r.csv").back() == "chip.sram_bytes_per_tile");
  // A plain series has no figure: the samples are named as lacking it.
  const auto plain = paired_speedups(series_from_rows(rows, "cpu", "r.csv"), series_from_rows(rows, "cpu", "r.csv"), "gather");
  CHECK_THAT(tilesim_test::required_input_error_of([&] { require_axis_values(plain, "r.csv", axes.x, "--x", "cpu over cpu"); }),
             Contains("--x: expected a number in chip.sram_bytes_per_tile at every point of cpu over cpu") && Contains("2 of 2 points"));
}

TEST_CASE("surface axes: log scale only for positive values spanning more than 8x", "[analysis][speedup][unit]") {
  CHECK(log_axis_fits({16, 4096}));
  CHECK_FALSE(log_axis_fits({16, 128}));  // 8x: linear
  CHECK(log_axis_fits({1, 9}));
  CHECK_FALSE(log_axis_fits({0, 100}));
  CHECK_FALSE(log_axis_fits({-1, 100}));
  CHECK_FALSE(log_axis_fits({5}));
  CHECK(csv_finite_number("64") == 64.0);
  CHECK(csv_finite_number("1e-05") == 1e-5);
  CHECK_FALSE(csv_finite_number("[10,5]"));
  CHECK_FALSE(csv_finite_number(""));
  CHECK_FALSE(csv_finite_number("nan"));
}
