// The sweep figures render to valid, non-trivial files: speedup heat maps and 3D surfaces (one panel
// and several), rooflines and bandwidth views; PDF output of the gnuplot layer; the IPU ceilings
// supplement; the colour range rule.
#include <cmath>
#include <cstdlib>

#include <catch2/catch.hpp>

#include <regex>

#include "analysis/gnuplot.hpp"
#include "analysis/roofline.hpp"
#include "analysis/speedup.hpp"
#include "analysis/surface_figures.hpp"
#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::analysis;
using namespace tilesim_test;
using Catch::Matchers::Contains;

namespace {

const fs::path& plots_dir() {
  static const fs::path d = scratch("analysis_plots_test");
  return d;
}

// A hydronet-like grid where the target wins for small outputs and loses for large ones, more so with
// more features.
std::vector<SpeedupSample> synthetic_points() {
  std::vector<SpeedupSample> points;
  for (std::int64_t in = 16; in <= 4096; in *= 4)
    for (std::int64_t f : {16, 64, 256})
      for (std::int64_t out = 32; out <= 32768; out *= 4) {
        const double s = 8.0 * std::pow(static_cast<double>(out) / 1024.0, -0.6) * std::pow(static_cast<double>(in) / 256.0, -0.2) *
                         (16.0 / static_cast<double>(f));
        points.push_back({{"scatter_add", {in, f, out}, "float32"}, s, 1, s});
      }
  return points;
}

}  // namespace

namespace {

// The groups of the first match of `pattern` in an SVG's text (empty when none), as strings.
std::vector<std::string> svg_groups(const std::string& svg, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(svg, m, std::regex(pattern))) return {};
  std::vector<std::string> groups;
  for (std::size_t i = 1; i < m.size(); ++i) groups.push_back(m[i].str());
  return groups;
}

}  // namespace

TEST_CASE("gnuplot renders PDF beside SVG and PNG when asked", "[analysis][plots][unit]") {
  GnuplotFigure fig;
  fig.stem = "pdf_line";
  fig.description = "a line";
  fig.data = "# x y\n1 1\n2 4\n3 9\n";
  fig.body = "set title \"line\"\nset xlabel \"x (s)\"\nplot datafile using 1:2 with linespoints title \"y\"\n";
  fig.pdf = true;
  const std::string script = gnuplot_script(fig);
  CHECK_THAT(script, Contains("do for [format in \"svg png pdf\"]") && Contains("set terminal pdfcairo size 6.66667in,5in"));
  const RenderedFigure r = render_figure(plots_dir().string(), fig);
  CHECK(r.pdf_path == (plots_dir() / "pdf_line.pdf").string());
  CHECK(is_pdf(slurp(r.pdf_path)));
  CHECK(is_png(slurp(r.png_path)));
  fig.pdf = false;
  CHECK_THAT(gnuplot_script(fig), Contains("do for [format in \"svg png\"]") && !Contains("pdfcairo"));
}

TEST_CASE("speedup heat map and 3D surface, one panel: valid files, contour and values drawn", "[analysis][plots][unit]") {
  SurfaceFigureSpec spec;
  spec.stem = "surface_one";
  spec.title = "scatter_add: speedup of Bow IPU (simulated)\nover A100-40GB model (eager)";
  spec.subtitle = "geometric mean over num_features 16-256; black line: 1×";
  spec.baseline_label = "gpu-model:a100-40gb:eager";
  spec.target_label = "ipu:bow";
  spec.panels.push_back({"", grid_averaged_over_features(synthetic_points())});
  spec.range = surface_colour_range(spec.panels);
  CHECK(spec.range == 30);  // the largest mean speedup is 21x
  const auto heat = render_figure(plots_dir().string(), speedup_heatmap_figure(spec));
  CHECK(figure_problem(plots_dir(), "surface_one") == "");
  const std::string script = slurp(heat.script_path);
  CHECK_THAT(script, Contains("with boxxyerror fillcolor palette") && Contains("with labels") &&
                         Contains("linecolor rgb \"black\"") && Contains("set logscale xy 2") &&
                         Contains("num\\\\_inputs (rows)") && Contains("\"1/10×\"") && Contains("\"1×\" 0"));
  // The colour box's rotated "speedup" label keeps clear of the right edge (by more than its font's
  // size in the SVG: cairo's wider PNG fonts once pushed it off the picture).
  const std::string svg = slurp(plots_dir() / "surface_one.svg");
  const auto box = svg_groups(svg, R"re(viewBox="0 0 ([0-9.]+) ([0-9.]+)")re");
  const auto label = svg_groups(svg, R"re(translate\(([0-9.]+),[0-9.]+\) rotate\(270\)[^>]*font-size="([0-9.]+)"[^>]*>\s*<text><tspan[^>]*>speedup<)re");
  REQUIRE((box.size() == 2 && label.size() == 2));
  CHECK(std::stod(box[0]) - std::stod(label[0]) >= 1.5 * std::stod(label[1]));
  // The data file holds the crossing of 1x.
  CHECK_THAT(slurp(heat.data_path), Contains("the 1x contour: segments"));
  spec.stem = "surface_one_3d";
  const auto surface = render_figure(plots_dir().string(), speedup_surface3d_figure(spec));
  CHECK(figure_problem(plots_dir(), "surface_one_3d") == "");
  CHECK_THAT(slurp(surface.script_path), Contains("with pm3d") && Contains("set view") && Contains("#C0404040"));
}

TEST_CASE("speedup figures with one panel per feature size share one colour scale", "[analysis][plots][unit]") {
  SurfaceFigureSpec spec;
  spec.stem = "surface_panels";
  spec.title = "scatter_add: speedup of Bow IPU (simulated)\nover A100 (measured)";
  spec.subtitle = "one panel per num_features; black line: 1×";
  for (const auto& g : grids_per_feature(synthetic_points())) spec.panels.push_back({g.slice, g});
  REQUIRE(spec.panels.size() == 3);
  spec.range = 30;
  const auto heat = render_figure(plots_dir().string(), speedup_heatmap_figure(spec));
  CHECK(figure_problem(plots_dir(), "surface_panels") == "");
  const std::string script = slurp(heat.script_path);
  CHECK_THAT(script, Contains("set multiplot layout 1,3") && Contains("num\\\\_features = 256") &&
                         Contains("datafile index 4 using 1:2:3:4:5:6:7"));
  // Cell values only on a single panel: three would be too small to read.
  CHECK_THAT(script, !Contains("with labels"));
  spec.stem = "surface_panels_3d";
  render_figure(plots_dir().string(), speedup_surface3d_figure(spec));
  CHECK(figure_problem(plots_dir(), "surface_panels_3d") == "");
}

TEST_CASE("the colour range covers every speedup with a round figure", "[analysis][plots][unit]") {
  auto panels_with = [](std::vector<double> speedups) {
    SurfacePanel p;
    p.grid.xs = {16};
    p.grid.ys = std::vector<double>(speedups.size(), 32);
    p.grid.speedup.resize(1);
    for (double s : speedups) p.grid.speedup[0].push_back(s);
    return std::vector<SurfacePanel>{p};
  };
  CHECK(surface_colour_range(panels_with({1.5})) == 2);
  CHECK(surface_colour_range(panels_with({3.0, 0.9})) == 4);
  CHECK(surface_colour_range(panels_with({0.05})) == 30);
  CHECK(surface_colour_range(panels_with({12.0})) == 30);
  CHECK(surface_colour_range(panels_with({5e4})) == 10000);
}

TEST_CASE("roofline and bandwidth figures with ceilings and points", "[analysis][plots][roofline][unit]") {
  RooflineMachine m;
  m.backend = "gpu-model:a100-40gb";
  m.title = "A100-40GB model (kernel)";
  m.ceilings = {{false, "hbm", "HBM", 1.555e12, "vendor", false},
                {false, "l2", "L2", 7.2e12, "vendor", false},
                {true, "float32", "fp32", 19.5e12, "vendor", false}};
  std::vector<RooflinePoint> points;
  for (std::int64_t out = 32; out <= 32768; out *= 2) {
    const double bytes = 4.0 * 64 * static_cast<double>(out), time_s = 5e-6 + bytes / 1.2e12;
    points.push_back({"scatter_add", {4096, 64, out}, "hbm", 4096.0 * 64, bytes, time_s});
    points.push_back({"gather", {4096, 64, out}, "hbm", 0, bytes, time_s});
  }
  render_figure(plots_dir().string(), roofline_figure(m, points, "roofline_test"));
  CHECK(figure_problem(plots_dir(), "roofline_test") == "");
  const std::string script = slurp(plots_dir() / "roofline_test.gp");
  CHECK_THAT(script, Contains("HBM 1.55 TB/s") && Contains("fp32 19.5 TFLOP/s") && Contains("scatter\\\\_add at HBM") &&
                         Contains("gather: 0 FLOPs"));
  CHECK_THAT(slurp(plots_dir() / "roofline_test.dat"), Contains("bandwidth hbm = 1.555e+12 B/s: vendor"));
  render_figure(plots_dir().string(), bandwidth_figure(m, points, "bandwidth_test"));
  CHECK(figure_problem(plots_dir(), "bandwidth_test") == "");
  CHECK_THAT(slurp(plots_dir() / "bandwidth_test.gp"), Contains("gather at HBM") && Contains("L2 7.2 TB/s"));
  // A machine with many ceilings (a CPU's: two peaks, two matmul peaks, two bandwidths) and several
  // series: the legend lists every one in one column, and the figure grows to hold it.
  RooflineMachine cpu;
  cpu.backend = "cpu";
  cpu.title = "CPU (measured)";
  cpu.ceilings = {{true, "float32", "fp32", 4.7e9, "measured", false},         {true, "float64", "fp64", 2.1e9, "measured", true},
                  {true, "bfloat16", "bfloat16 matmul", 3.5e10, "measured", false}, {true, "float16", "float16 matmul", 2.3e10, "measured", false},
                  {false, "dram", "DRAM stream", 3.8e9, "measured", false},      {false, "dram", "DRAM random gather", 1.0e9, "measured", true}};
  std::vector<RooflinePoint> cpu_points;
  for (std::int64_t out = 32; out <= 32768; out *= 32) {
    cpu_points.push_back({"scatter_add", {4096, 64, out}, "dram", 4096.0 * 64, 4.0 * 64 * static_cast<double>(out), 1e-4});
    cpu_points.push_back({"gather", {4096, 64, out}, "dram", 0, 4.0 * 64 * static_cast<double>(out), 1e-4});
  }
  render_figure(plots_dir().string(), roofline_figure(cpu, cpu_points, "roofline_cpu_test"));
  CHECK(figure_problem(plots_dir(), "roofline_cpu_test") == "");
  const std::string cpu_script = slurp(plots_dir() / "roofline_cpu_test.gp");
  // Six ceilings and scatter_add's points (gather has no FLOPs): seven lines, 4 more than the base holds.
  CHECK_THAT(cpu_script, Contains("maxrows 7") && Contains("size 400,404") && Contains("scatter\\\\_add at DRAM"));
  const std::string cpu_svg = slurp(plots_dir() / "roofline_cpu_test.svg");
  for (const char* entry : {"fp32 4.7 GFLOP/s", "fp64 2.1 GFLOP/s", "float16 matmul", "DRAM stream", "DRAM random gather"}) {
    INFO(entry);
    CHECK_THAT(cpu_svg, Contains(entry));
  }
  render_figure(plots_dir().string(), bandwidth_figure(cpu, cpu_points, "bandwidth_cpu_test"));
  CHECK(figure_problem(plots_dir(), "bandwidth_cpu_test") == "");
  CHECK_THAT(slurp(plots_dir() / "bandwidth_cpu_test.gp"), Contains("maxrows 4") && Contains("gather at DRAM"));
  RooflineMachine none;
  none.backend = "cpu";
  CHECK_THROWS_AS(roofline_figure(none, points, "x"), std::invalid_argument);
}

TEST_CASE("IPU ceilings the simulator does not use come from the machine file's roofline section, strictly read", "[analysis][roofline][unit]") {
  const auto bow = tilesim::ipu::load_ipu_machine("bow");
  // The fp32 AMP peak is not here: it is derived from the codelets the simulator uses.
  CHECK(bow.roofline.tile_sram_bytes_per_s == Approx(66.1e12));
  REQUIRE(bow.roofline.peak_flops_per_s.size() == 1);
  CHECK(bow.roofline.peak_flops_per_s.at("float16") == Approx(350e12));
  CHECK_THAT(bow.provenance.figure("roofline.peak_flops_per_s.float16").source, Contains("Bow-2000 datasheet"));
  // A derived file states its own; a system has none (its chip file's are one IPU's); nor has a file
  // without the section.
  CHECK(tilesim::ipu::load_ipu_machine("mk2").roofline.peak_flops_per_s.at("float16") == Approx(250e12));
  CHECK(tilesim::ipu::load_ipu_machine("mk1").roofline.tile_sram_bytes_per_s == Approx(45e12));
  CHECK(tilesim::ipu::load_ipu_machine("bow-2000").roofline.peak_flops_per_s.empty());
  nlohmann::json doc = load_json_file(bow.file);
  doc["name"] = "my-ipu";
  doc.erase("roofline");
  const auto bare = tilesim::ipu::parse_ipu_machine(doc, "my-ipu.json");
  CHECK(bare.roofline.tile_sram_bytes_per_s == 0);
  CHECK(bare.roofline.peak_flops_per_s.empty());

  doc = load_json_file(bow.file);
  doc["roofline"]["peak_flops_per_s"]["float16"]["value"] = -1;
  CHECK_THROWS_WITH(tilesim::ipu::parse_ipu_machine(doc, "bad.json"),
                    Contains("bad.json") && Contains("roofline.peak_flops_per_s.float16.value") && Contains("a positive number"));
  doc = load_json_file(bow.file);
  doc["roofline"]["peak_flops_per_s"]["bfloat16"] = {{"value", 1e12}, {"source", "x"}};
  CHECK_THROWS_WITH(tilesim::ipu::parse_ipu_machine(doc, "bad.json"), Contains("roofline.peak_flops_per_s.bfloat16"));
}

