// The analysis library: the hydronet CSV reader on a fixture and on the shipped files (each split
// 297 / 297), and gnuplot output that is a real PNG and well-formed SVG.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <catch2/catch.hpp>

#include "analysis/gnuplot.hpp"
#include "analysis/reference_data.hpp"
#include "analysis/validation_plots.hpp"
#include "analysis/validation_report.hpp"
#include "common/error.hpp"
#include "fitting/split.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/validation_suite.hpp"

namespace fs = std::filesystem;
using namespace tilesim;
using namespace tilesim::analysis;
using namespace tilesim::fitting;
using Catch::Matchers::Contains;

namespace {

fs::path scratch_dir() {
  static const fs::path dir = tilesim_test::scratch("analysis_test");
  return dir;
}

fs::path write_file(const std::string& name, const std::string& text) {
  return tilesim_test::write_text(scratch_dir() / name, text);
}

using tilesim_test::input_error_of;
using tilesim_test::slurp;
using tilesim_test::well_formed_xml;

std::string shipped(const std::string& relative) {
  return std::string(TILESIM_SOURCE_DIR) + "/validation/hydronet-gnn/" + relative;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// The hydronet CSV reader

TEST_CASE("hydronet CSV reader: both formats on a fixture", "[analysis][validation]") {
  const auto bow = write_file("bow.csv",
                              ",num_inputs,num_features,num_outputs,cycles,time (\xCE\xBCs),effective bandwidth (GiB/s)\n"
                              "0,16.0,32.0,64.0,1850.0,1.0,7.6\n"
                              "0,4096.0,512.0,32768.0,3700.0,2.0,1.0\n");
  const auto points = read_hydronet_csv(bow.string(), "gather");
  REQUIRE(points.size() == 2);
  CHECK(points[0].op == "gather");
  CHECK(points[0].shape.num_inputs == 16);
  CHECK(points[0].shape.num_features == 32);
  CHECK(points[0].shape.num_outputs == 64);
  CHECK(points[0].time_s == Approx(1.0e-6));
  REQUIRE(points[0].cycles.has_value());
  CHECK(*points[0].cycles == 1850.0);
  CHECK_FALSE(points[0].iqr_s.has_value());
  CHECK(points[0].line == 2);
  CHECK(points[1].shape.num_outputs == 32768);

  // A100 format, CRLF line ends and a trailing blank line tolerated.
  const auto a100 = write_file("a100.csv", ",num_inputs,num_features,num_outputs,time,iqr\r\n0,16,16,32,10.5,0.25\r\n\r\n");
  const auto a = read_hydronet_csv(a100.string(), "scatter_max");
  REQUIRE(a.size() == 1);
  CHECK(a[0].op == "scatter_max");
  CHECK(a[0].time_s == Approx(10.5e-6));
  REQUIRE(a[0].iqr_s.has_value());
  CHECK(*a[0].iqr_s == Approx(0.25e-6));
  CHECK_FALSE(a[0].cycles.has_value());
}

TEST_CASE("hydronet CSV reader: errors name the file and line", "[analysis][validation]") {
  const std::string missing = (scratch_dir() / "no_such.csv").string();
  CHECK_THAT(input_error_of([&] { read_hydronet_csv(missing, "gather"); }), Contains(missing));

  const std::string header = ",num_inputs,num_features,num_outputs,time,iqr\n";
  const auto bad_number = write_file("bad_number.csv", header + "0,16,16,32,10.0,0.1\n1,16,16,64,fast,0.1\n");
  const std::string e1 = input_error_of([&] { read_hydronet_csv(bad_number.string(), "gather"); });
  CHECK_THAT(e1, Contains(bad_number.string()) && Contains("line 3") && Contains("time") && Contains("fast"));

  const auto fractional = write_file("fractional.csv", header + "0,16.5,16,32,10.0,0.1\n");
  CHECK_THAT(input_error_of([&] { read_hydronet_csv(fractional.string(), "gather"); }),
             Contains("line 2") && Contains("num_inputs"));

  const auto short_row = write_file("short.csv", header + "0,16,16,32\n");
  CHECK_THAT(input_error_of([&] { read_hydronet_csv(short_row.string(), "gather"); }), Contains("line 2"));

  const auto negative = write_file("negative.csv", header + "0,16,16,32,-1,0.1\n");
  CHECK_THAT(input_error_of([&] { read_hydronet_csv(negative.string(), "gather"); }), Contains("positive"));

  const auto no_time = write_file("no_time.csv", ",num_inputs,num_features,num_outputs,cycles\n0,1,1,1,5\n");
  CHECK_THAT(input_error_of([&] { read_hydronet_csv(no_time.string(), "gather"); }), Contains("line 1") && Contains("time"));

  const auto empty = write_file("empty.csv", "");
  CHECK_THAT(input_error_of([&] { read_hydronet_csv(empty.string(), "gather"); }), Contains(empty.string()));
  const auto header_only = write_file("header_only.csv", header);
  CHECK_THAT(input_error_of([&] { read_hydronet_csv(header_only.string(), "gather"); }), Contains("data row"));
}

TEST_CASE("the shipped hydronet files: 594 points each, known first rows, a full grid", "[analysis][validation]") {
  const auto bow_gather = read_hydronet_csv(shipped("bow/gather.csv"), "gather");
  REQUIRE(bow_gather.size() == 594);
  CHECK(bow_gather[0].shape.num_inputs == 16);
  CHECK(bow_gather[0].shape.num_features == 16);
  CHECK(bow_gather[0].shape.num_outputs == 32);
  CHECK(*bow_gather[0].cycles == Approx(1388.6203125));
  CHECK(bow_gather[0].time_s == Approx(0.7506055743243243e-6));

  const auto a100_gather = read_hydronet_csv(shipped("a100/gather.csv"), "gather");
  REQUIRE(a100_gather.size() == 594);
  CHECK(a100_gather[0].shape.num_outputs == 32);
  CHECK(a100_gather[0].time_s == Approx(10.073046796023844e-6));
  CHECK(*a100_gather[0].iqr_s == Approx(0.03739087842404756e-6));

  const auto sets = suite_datasets("hydronet", std::string(TILESIM_SOURCE_DIR) + "/validation");
  REQUIRE(sets.size() == 6);
  for (const auto& set : sets) {
    INFO(set.path);
    const auto points = read_hydronet_csv(set.path, set.op);
    CHECK(points.size() == 594);
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> shapes;
    std::size_t calibration = 0;
    for (const auto& p : points) {
      shapes.insert({p.shape.num_inputs, p.shape.num_features, p.shape.num_outputs});
      calibration += in_calibration_split(p.shape) ? 1 : 0;
      // Bow: the time column is cycles at 1.85 GHz.
      if (p.cycles) CHECK(p.time_s == Approx(*p.cycles / 1.85e9).epsilon(1e-9));
    }
    CHECK(shapes.size() == 594);  // 9 x 6 x 11, each once
    CHECK(calibration == 297);
  }
}

TEST_CASE("unknown suites are rejected with the known ones listed", "[analysis][validation]") {
  CHECK_THAT(input_error_of([] { suite_datasets("mlperf"); }), Contains("hydronet") && Contains("mlperf"));
}

// ---------------------------------------------------------------------------------------------------
// gnuplot

TEST_CASE("gnuplot renders a figure to a real PNG and well-formed SVG beside its script", "[analysis][validation]") {
  GnuplotFigure fig;
  fig.stem = "line_test";
  fig.description = "a test line";
  fig.data = "# x y\n1 1\n2 4\n3 9\n";
  fig.body = "set title \"test\"\nset xlabel \"x (s)\"\nplot datafile using 1:2 with linespoints title \"y\"\n";
  const fs::path dir = scratch_dir() / "plots";
  const RenderedFigure r = render_figure(dir.string(), fig);

  CHECK(fs::path(r.script_path).parent_path() == fs::path(r.data_path).parent_path());
  const std::string script = slurp(r.script_path);
  CHECK_THAT(script, Contains("datafile = 'line_test.dat'") && Contains("gnuplot line_test.gp"));
  CHECK(slurp(r.data_path) == fig.data);

  const std::string png = slurp(r.png_path);
  REQUIRE(png.size() > 2000);
  CHECK(png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  const std::string svg = slurp(r.svg_path);
  CHECK(svg.size() > 2000);
  std::string root;
  CHECK(well_formed_xml(svg, root));
  CHECK(root == "svg");
  // The gnuplot log is removed after a successful render.
  CHECK_FALSE(fs::exists(dir / "line_test.gnuplot-log.txt"));
}

TEST_CASE("the validation figures render", "[analysis][validation]") {
  std::vector<ValidationPoint> points;
  std::vector<ScatterPoint> scatter;
  for (std::int64_t in = 16; in <= 256; in *= 2)
    for (std::int64_t f : {16, 64})
      for (std::int64_t out = 32; out <= 512; out *= 2) {
        ValidationPoint p;
        p.machine = "bow";
        p.op = "scatter_add";
        p.shape = {in, f, out};
        p.calibration = in_calibration_split(p.shape);
        p.measured_s = 1e-6 * static_cast<double>(in + out) / 16;
        p.predicted_s = p.measured_s * (p.calibration ? 1.2 : 0.7);
        points.push_back(p);
        scatter.push_back({p.measured_s * 1e6, p.predicted_s * 1e6, p.calibration, p.shape});
      }
  const fs::path dir = scratch_dir() / "validation_plots";
  ScatterSpec spec{"scatter_test", "Bow IPU scatter_add: simulated vs measured", "measured time per op (µs)",
                   "simulated time per op (µs)", false, "held-out: median 30.0%"};
  const auto a = render_figure(dir.string(), scatter_figure(spec, scatter));
  spec.stem = "speedup_test";
  spec.speedup_quadrants = true;
  const auto b = render_figure(dir.string(), scatter_figure(spec, scatter));
  const auto c = render_figure(dir.string(), error_map_figure("map_test", "error map", points));
  for (const auto& r : {a, b, c}) {
    INFO(r.script_path);
    CHECK(fs::file_size(r.png_path) > 5000);
    std::string root;
    CHECK(well_formed_xml(slurp(r.svg_path), root));
  }
  // The title keeps "scatter_add" literal under enhanced text (an unescaped '_' would subscript "add").
  CHECK_THAT(slurp(a.script_path), Contains("scatter\\\\_add"));
  // Two feature sizes: two panels, data sets 0 and 1.
  const std::string map_script = slurp(c.script_path);
  CHECK_THAT(map_script, Contains("datafile index 1") && !Contains("datafile index 2"));
  CHECK(error_map_range_pct(points) == 50.0);  // errors +20 % and -30 %
}

TEST_CASE("a missing gnuplot is reported with the package to install", "[analysis][validation]") {
  const std::string nowhere = (scratch_dir() / "no" / "gnuplot").string();
  try {
    require_gnuplot(nowhere);
    FAIL("require_gnuplot accepted a missing program");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Contains("gnuplot-nox") && Contains(nowhere));
    CHECK(e.code() == ExitCode::bad_input);
  }
  GnuplotFigure fig;
  fig.stem = "never";
  fig.data = "1 1\n";
  fig.body = "plot datafile\n";
  CHECK_THROWS_WITH(render_figure((scratch_dir() / "never").string(), fig, nowhere), Contains("gnuplot-nox"));
}

TEST_CASE("a gnuplot error is reported with gnuplot's message", "[analysis][validation]") {
  GnuplotFigure fig;
  fig.stem = "broken";
  fig.data = "1 1\n";
  fig.body = "plot datafile using 1:2 with no_such_style\n";
  CHECK_THROWS_WITH(render_figure((scratch_dir() / "broken").string(), fig), Contains("\"broken.gp\" line"));
}
