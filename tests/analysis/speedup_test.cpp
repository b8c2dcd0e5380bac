// Speedups between two sources against hand-computed values: matching points, repeats, the grids
// behind the surfaces (per feature size and geometric mean), the 1x contour, the crossover, the
// summary statistics and the tables.
#include <cmath>

#include <catch2/catch.hpp>

#include "analysis/speedup.hpp"
#include "analysis/speedup_report.hpp"
#include "common/error.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::analysis;
using Catch::Matchers::Contains;

namespace {

ResultRow row(const std::string& backend, const std::string& op, OpShape shape, double time_s, int repeat = 0) {
  ResultRow r;
  r.op = op;
  r.shape = shape;
  r.backend = backend;
  r.repeat = repeat;
  r.kind = backend == "cpu" ? "measured" : "simulated";
  r.mode = backend == "cpu" ? "median-of-10" : "timing-only";
  r.time_s = time_s;
  r.verified = backend == "cpu" ? "yes" : "timing-only";
  return r;
}

TimeSeries series(const std::string& name, const std::vector<std::pair<OpShape, double>>& times, const std::string& op = "gather") {
  TimeSeries s;
  s.name = name;
  s.label = name;
  s.kind = "measured";
  for (const auto& [shape, t] : times) s.time_s[{op, shape, "float32"}] = t;
  return s;
}

using tilesim_test::input_error_of;

}  // namespace

TEST_CASE("a backend's series: repeats reduced to their median, unfit points left out", "[analysis][speedup][unit]") {
  std::vector<ResultRow> rows = {row("ipu:bow", "gather", {16, 16, 32}, 1e-6, 0), row("ipu:bow", "gather", {16, 16, 32}, 3e-6, 1),
                                 row("ipu:bow", "gather", {16, 16, 32}, 2e-6, 2), row("cpu", "gather", {16, 16, 32}, 9e-6)};
  ResultRow unfit = row("ipu:bow", "gather", {4096, 512, 32768}, 0);
  unfit.time_s.reset();
  unfit.verified = "does-not-fit";
  rows.push_back(unfit);
  const TimeSeries s = series_from_rows(rows, "ipu:bow", "r.csv");
  REQUIRE(s.time_s.size() == 1);
  CHECK(s.time_s.begin()->second == Approx(2e-6));
  CHECK(s.kind == "simulated");
  CHECK(s.mode == "timing-only");
  CHECK(s.label == "Bow IPU (simulated)");
  CHECK_THAT(input_error_of([&] { series_from_rows(rows, "gpu-model:h100-sxm", "r.csv"); }),
             Contains("r.csv") && Contains("ipu:bow, cpu") && Contains("gpu-model:h100-sxm"));
}

TEST_CASE("speedup = baseline time / target time at the points both have", "[analysis][speedup][unit]") {
  const auto baseline = series("a100", {{{16, 16, 32}, 4e-6}, {{16, 16, 64}, 3e-6}, {{32, 16, 32}, 1e-6}});
  const auto target = series("bow", {{{16, 16, 32}, 1e-6}, {{16, 16, 64}, 6e-6}, {{64, 16, 32}, 1e-6}});
  const auto points = paired_speedups(baseline, target, "gather");
  REQUIRE(points.size() == 2);
  CHECK(points[0].speedup == Approx(4.0));
  CHECK(points[1].speedup == Approx(0.5));
  CHECK(paired_speedups(baseline, target, "scatter_add").empty());
  CHECK(paired_speedups(baseline, target, "").size() == 2);
}

TEST_CASE("surface grids: one per feature size, and the geometric mean over them", "[analysis][speedup][unit]") {
  // At (16, 32): 2x with 16 features and 0.5x with 64: the mean of the logs is 1x.
  // At (32, 32): 4x and 1x: geometric mean 2x. (16, 64) only with 16 features: 8x.
  const auto baseline = series("b", {{{16, 16, 32}, 2}, {{16, 64, 32}, 1}, {{32, 16, 32}, 4}, {{32, 64, 32}, 1}, {{16, 16, 64}, 8}});
  const auto target = series("t", {{{16, 16, 32}, 1}, {{16, 64, 32}, 2}, {{32, 16, 32}, 1}, {{32, 64, 32}, 1}, {{16, 16, 64}, 1}});
  const auto points = paired_speedups(baseline, target, "gather");
  const auto per_feature = grids_per_feature(points);
  REQUIRE(per_feature.size() == 2);
  CHECK(per_feature[0].slice == "num_features = 16");
  CHECK(per_feature[0].xs == std::vector<double>{16, 32});
  CHECK(per_feature[0].ys == std::vector<double>{32, 64});
  CHECK(*per_feature[0].speedup[0][0] == Approx(2));
  CHECK(*per_feature[0].speedup[0][1] == Approx(8));
  CHECK_FALSE(per_feature[1].speedup[0][1]);  // no (16, 64) point with 64 features: the cell stays empty
  const auto mean = grid_averaged_over_features(points);
  CHECK(mean.slice == "geometric mean over num_features 16-64");
  CHECK(*mean.speedup[0][0] == Approx(1.0));
  CHECK(*mean.speedup[1][0] == Approx(2.0));
  CHECK(*mean.speedup[0][1] == Approx(8.0));
  CHECK_FALSE(mean.speedup[1][1]);
}

TEST_CASE("the 1x contour by marching squares, interpolated in log space", "[analysis][speedup][unit]") {
  SpeedupGrid g;
  g.xs = {16, 32};
  g.ys = {32, 64};
  // 2x on the left column, 0.5x on the right: log speedup +1 and -1 in base 2, so the contour is the
  // vertical line halfway between log2(16) = 4 and log2(32) = 5, at x = 2^4.5.
  g.speedup = {{2.0, 2.0}, {0.5, 0.5}};
  auto segments = unit_contour(g);
  REQUIRE(segments.size() == 1);
  const double x = std::exp2(4.5);
  CHECK(segments[0].x0 == Approx(x));
  CHECK(segments[0].x1 == Approx(x));
  CHECK(std::min(segments[0].y0, segments[0].y1) == Approx(32));
  CHECK(std::max(segments[0].y0, segments[0].y1) == Approx(64));

  // 4x against 0.5x: log2 +2 and -1, so the crossing is two thirds of the way: 2^(4 + 2/3).
  g.speedup = {{4.0, 4.0}, {0.5, 0.5}};
  segments = unit_contour(g);
  REQUIRE(segments.size() == 1);
  CHECK(segments[0].x0 == Approx(std::exp2(4 + 2.0 / 3)));

  // No crossing; a missing corner; a saddle (two segments).
  g.speedup = {{2.0, 3.0}, {4.0, 5.0}};
  CHECK(unit_contour(g).empty());
  g.speedup = {{2.0, std::nullopt}, {0.5, 0.5}};
  CHECK(unit_contour(g).empty());
  g.speedup = {{2.0, 0.5}, {0.5, 2.0}};
  CHECK(unit_contour(g).size() == 2);
}

TEST_CASE("the crossover: the size threshold that best separates faster from slower", "[analysis][speedup][unit]") {
  std::vector<SpeedupSample> points;
  // Faster for num_outputs up to 128, slower beyond: a clean threshold on num_outputs.
  for (std::int64_t out : {32, 64, 128, 256, 512, 1024})
    points.push_back({{"gather", {16, 16, out}, "float32"}, 1, 1, out <= 128 ? 3.0 : 0.5});
  auto c = find_crossover(points);
  CHECK(c.exists);
  CHECK(c.measure == "num_outputs");
  CHECK(c.below == 128);
  CHECK(c.above == 256);
  CHECK_FALSE(c.target_faster_above);
  CHECK(c.agreement == Approx(1.0));
  CHECK(c.text == "faster where num_outputs <= 128 (100% of points agree)");

  // One point on the wrong side: 5 of 6 agree.
  points[1].speedup = 0.9;
  c = find_crossover(points);
  CHECK(c.measure == "num_outputs");
  CHECK(c.agreement == Approx(5.0 / 6));

  // One side everywhere: no crossover.
  for (auto& p : points) p.speedup = 2;
  c = find_crossover(points);
  CHECK_FALSE(c.exists);
  CHECK(c.text == "none: faster at every point");
  CHECK(find_crossover({}).text == "no points");
}

TEST_CASE("speedup statistics by hand", "[analysis][speedup][formula]") {
  std::vector<SpeedupSample> points;
  for (double s : {1.0, 2.0, 4.0, 8.0}) points.push_back({{"gather", {16, 16, 32}, "float32"}, s, 1, s});
  const auto stats = summarize_speedups(points);
  CHECK(stats.count == 4);
  CHECK(stats.median == Approx(3.0));
  CHECK(stats.geomean == Approx(std::sqrt(8.0)));
  CHECK(stats.min == 1.0);
  CHECK(stats.max == 8.0);
  CHECK(stats.target_faster_share == Approx(0.75));  // exactly 1x is not faster
  CHECK(format_speedup(0.0123456) == "0.0123");
  CHECK(format_speedup(4.031) == "4.03");
  CHECK(format_speedup(12.24) == "12.2");
  CHECK(format_speedup(908.4) == "908");
}

TEST_CASE("speedup tables in Markdown, LaTeX and CSV", "[analysis][speedup][unit]") {
  std::vector<ResultRow> rows;
  for (std::int64_t out : {32, 64, 128, 256}) {
    rows.push_back(row("ipu:bow", "scatter_add", {16, 16, out}, 1e-6));
    rows.push_back(row("cpu", "scatter_add", {16, 16, out}, out <= 64 ? 4e-6 : 0.5e-6));
  }
  const auto table = speedup_table({{series_from_rows(rows, "ipu:bow", "r"), series_from_rows(rows, "cpu", "r")}},
                                   {"gather", "scatter_add"});
  REQUIRE(table.size() == 1);  // no gather points
  CHECK(table[0].stats.median == Approx(2.25));  // (0.5 + 4) / 2
  const std::string md = speedup_table_markdown(table);
  CHECK_THAT(md, Contains("| scatter_add | Bow IPU (simulated) | CPU (measured) | 4 | 2.25x |") &&
                     Contains("faster where num_outputs <= 64 (100% of points agree)"));
  const std::string tex = speedup_table_latex(table);
  CHECK_THAT(tex, Contains("\\begin{tabular}") && Contains("scatter\\_add") && Contains("$\\leq$") &&
                      Contains("50\\%") && Contains("\\bottomrule"));
  const std::string csv = speedup_table_csv(table);
  CHECK_THAT(csv, Contains("op,target,target_kind,target_mode,baseline") &&
                      Contains("scatter_add,ipu:bow,simulated,timing-only,cpu,measured,median-of-10,4,2.25,") &&
                      Contains(",num_outputs,64,128,false,1,"));
  const std::string summary = speedup_summary(rows, table);
  CHECK_THAT(summary, Contains("results: ipu:bow 4 points (simulated, timing-only), cpu 4 points (measured, median-of-10)") &&
                          Contains("Bow IPU (simulated) over CPU (measured): scatter_add median 2.25x (0.5-4.00x)"));
  CHECK(latex_escape("a_b & 50% {x}") == "a\\_b \\& 50\\% \\{x\\}");
}

TEST_CASE("sources named by backend, reference file or reference directory", "[analysis][speedup][unit]") {
  const std::vector<ResultRow> rows = {row("ipu:bow", "gather", {16, 16, 32}, 1e-6)};
  const std::string dir = std::string(TILESIM_SOURCE_DIR) + "/validation/hydronet-gnn/a100";
  const auto a100 = resolve_series(rows, "r.csv", dir, {"gather", "scatter_add"});
  CHECK(a100.time_s.size() == 2 * 594);
  CHECK(a100.kind == "measured");
  CHECK(a100.label == "A100 (measured)");
  const auto bow = resolve_series(rows, "r.csv", std::string(TILESIM_SOURCE_DIR) + "/validation/hydronet-gnn/bow/gather.csv", {});
  CHECK(bow.time_s.size() == 594);
  CHECK(bow.label == "Bow IPU (measured)");
  // The measured A100 took 10.07 us for gather 16 x 16 -> 32.
  CHECK(a100.time_s.at({"gather", {16, 16, 32}, "float32"}) == Approx(10.073046796023844e-6));
  CHECK(resolve_series(rows, "r.csv", "ipu:bow", {"gather"}).name == "ipu:bow");
  CHECK_THAT(input_error_of([&] { resolve_series(rows, "r.csv", "gpu-model:a100", {"gather"}); }),
             Contains("ipu:bow") && Contains("reference") && Contains("gpu-model:a100"));
  CHECK_THAT(input_error_of([&] { resolve_series(rows, "r.csv", dir, {"scatter_mean"}); }), Contains("scatter_mean.csv"));
  CHECK(series_label("gpu-model:a100-40gb:eager", "modeled", "eager") == "A100-40GB model (eager)");
  CHECK(series_label("gpu-model:h100-sxm", "modeled", "kernel") == "H100-SXM model (kernel)");
  CHECK(series_label("ipu:mk2", "simulated", "functional") == "Mk2 IPU (simulated)");
  CHECK(series_label("cpu", "measured", "") == "CPU (measured)");
  CHECK(series_label("torch-cpu", "measured", "") == "PyTorch CPU (measured)");
  CHECK(series_label("cuda", "measured", "") == "CUDA GPU (measured, kernel)");
}

TEST_CASE("shares read as whole percentages but never 100% short of all nor 0% above none", "[analysis][speedup][unit]") {
  CHECK(share_percent(1.0) == "100%");
  CHECK(share_percent(0.0) == "0%");
  CHECK(share_percent(0.5) == "50%");
  CHECK(share_percent(593.0 / 594.0) == "99.8%");
  CHECK(share_percent(0.9999) == "99.99%");
  CHECK(share_percent(0.004) == "0.4%");
}
