// Arithmetic intensity, achieved rates and roofline bounds against hand-computed values; results.csv
// written and read back; the reader's errors naming file, line and column.
#include <algorithm>
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "analysis/intensity.hpp"
#include "analysis/results_table.hpp"
#include "analysis/roofline.hpp"
#include "common/error.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::analysis;
using Catch::Matchers::Contains;

namespace {

// scatter_add of 64 messages x 16 features into 32 rows: 64 x 16 = 1024 adds.
ResultRow ipu_row() {
  ResultRow r;
  r.op = "scatter_add";
  r.shape = {64, 16, 32};
  r.backend = "ipu:bow";
  r.kind = "simulated";
  r.mode = "timing-only";
  r.machine = "bow";
  r.index_seed = 64000016000032ull;
  r.time_s = 1e-6;
  r.cycles = 1850;
  r.flops = 1024;
  r.min_bytes = 6400;  // 64 x 4 (indices) + 64 x 16 x 4 (messages) + 32 x 16 x 4 (output)
  r.bytes = {{"tile_sram_read_bytes", 3000}, {"tile_sram_write_bytes", 1096}, {"exchange_bytes", 2048}};
  r.intensity_level = "tile_sram";
  r.intensity_flops_per_byte = 0.25;
  r.verified = "timing-only";
  r.wall_s = 0.004;
  return r;
}

using tilesim_test::input_error_of;

}  // namespace

TEST_CASE("intensity and achieved rates per memory level, by hand", "[analysis][roofline][formula]") {
  const ResultRow r = ipu_row();
  const auto t = traffic_by_level(r);
  REQUIRE(t.size() == 2);
  CHECK(t[0].level == "tile_sram");
  CHECK(t[0].bytes == 4096);                                   // 3000 read + 1096 written
  CHECK(*t[0].intensity_flops_per_byte == Approx(0.25));       // 1024 / 4096
  CHECK(*t[0].bytes_per_s == Approx(4.096e9));                 // 4096 B / 1 us
  CHECK(t[1].level == "exchange");
  CHECK(*t[1].intensity_flops_per_byte == Approx(0.5));        // 1024 / 2048
  CHECK(*achieved_flops_per_s(r) == Approx(1.024e9));
  CHECK(main_level(r) == "tile_sram");

  ResultRow gpu = r;
  gpu.bytes = {{"l2_bytes", 16384}, {"hbm_bytes", 8192}};
  const auto g = traffic_by_level(gpu);
  REQUIRE(g.size() == 2);
  CHECK(g[0].level == "l2");
  CHECK(*g[0].intensity_flops_per_byte == Approx(1024.0 / 16384));
  CHECK(*g[1].intensity_flops_per_byte == Approx(0.125));
  CHECK(main_level(gpu) == "hbm");

  ResultRow cpu = r;
  cpu.bytes = {{"dram_min_bytes", 6400}};
  CHECK(main_level(cpu) == "dram");
  CHECK(*traffic_by_level(cpu)[0].intensity_flops_per_byte == Approx(0.16));  // 1024 / 6400

  // A gather does no FLOPs: intensity 0, not undefined; no bytes: undefined.
  CHECK(*arithmetic_intensity(0, 100) == 0);
  CHECK_FALSE(arithmetic_intensity(10, 0));
  ResultRow unfit = r;
  unfit.time_s.reset();
  CHECK_FALSE(achieved_flops_per_s(unfit));
  CHECK_FALSE(traffic_by_level(unfit)[0].bytes_per_s);
  CHECK(level_label("hbm") == "HBM");
}

TEST_CASE("roofline bound and ridge point, by hand", "[analysis][roofline][formula]") {
  // A100 40GB: 19.5 TFLOP/s fp32, 1.555 TB/s HBM: ridge at 12.54 FLOP/byte.
  CHECK(ridge_intensity(19.5e12, 1.555e12) == Approx(12.5402).epsilon(1e-4));
  CHECK(attainable_flops_per_s(19.5e12, 1.555e12, 1.0) == Approx(1.555e12));
  CHECK(attainable_flops_per_s(19.5e12, 1.555e12, 100.0) == Approx(19.5e12));
  CHECK(attainable_flops_per_s(19.5e12, 1.555e12, 0.125) == Approx(1.94375e11));

  std::vector<ResultRow> rows = {ipu_row(), ipu_row(), ipu_row()};
  rows[1].backend = "cpu";
  rows[1].bytes = {{"dram_min_bytes", 6400}};
  rows[2].time_s.reset();
  rows[2].verified = "does-not-fit";
  const auto points = roofline_points(rows, "ipu:bow");
  REQUIRE(points.size() == 2);  // one per level of the one row with a time
  CHECK(points[0].level == "tile_sram");
  CHECK(*points[0].intensity() == Approx(0.25));
  CHECK(points[0].flops_per_s() == Approx(1.024e9));
  CHECK(points[1].bytes_per_s() == Approx(2.048e9));
}

TEST_CASE("results.csv rows survive writing and reading, quoting included", "[analysis][sweep][unit]") {
  ResultRow a = ipu_row();
  ResultRow b = ipu_row();
  b.op = "gather";
  b.backend = "cpu";
  b.kind = "measured";
  b.mode = "median-of-10";
  b.machine = "AMD EPYC, 2 logical CPUs, \"quoted\"\nname";
  b.cycles.reset();
  b.flops = 0;
  b.bytes = {{"dram_min_bytes", 6400}};
  b.intensity_level = "dram";
  b.intensity_flops_per_byte = 0;
  b.verified = "yes";
  ResultRow c = ipu_row();
  c.time_s.reset();
  c.cycles.reset();
  c.bytes.clear();
  c.intensity_level = "";
  c.intensity_flops_per_byte.reset();
  c.verified = "does-not-fit";
  c.repeat = 3;
  const std::string text = results_csv_header() + results_csv_row(a) + results_csv_row(b) + results_csv_row(c);
  const auto rows = parse_results_csv(text, "r.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].line == 2);
  CHECK(rows[0].op == a.op);
  CHECK(rows[0].shape.num_inputs == 64);
  CHECK(rows[0].shape.num_features == 16);
  CHECK(rows[0].shape.num_outputs == 32);
  CHECK(rows[0].index_seed == a.index_seed);
  CHECK(*rows[0].time_s == Approx(1e-6).epsilon(1e-9));
  CHECK(*rows[0].cycles == 1850);
  CHECK(rows[0].bytes == a.bytes);
  CHECK(*rows[0].intensity_flops_per_byte == Approx(0.25));
  CHECK(rows[1].machine == "AMD EPYC, 2 logical CPUs, \"quoted\" name");  // the line break became a space
  CHECK_FALSE(rows[1].cycles);
  CHECK(rows[1].mode == "median-of-10");
  CHECK(rows[2].verified == "does-not-fit");
  CHECK_FALSE(rows[2].time_s);
  CHECK(rows[2].repeat == 3);
  CHECK(point_key(rows[2]) == "scatter_add|64|16|32|float32|ipu:bow|3");
  // One line per record, whatever the fields hold.
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);
}

TEST_CASE("results.csv reader errors name the file, line and column", "[analysis][sweep][unit]") {
  const std::string header = results_csv_header();
  std::string row = results_csv_row(ipu_row());
  CHECK_THAT(input_error_of([&] { parse_results_csv("op,num_inputs\n", "r.csv"); }),
             Contains("r.csv:1") && Contains("num_features"));
  CHECK_THAT(input_error_of([&] { parse_results_csv("", "r.csv"); }), Contains("empty file"));
  std::string bad_kind = row;
  bad_kind.replace(bad_kind.find("simulated"), 9, "guessed");
  CHECK_THAT(input_error_of([&] { parse_results_csv(header + bad_kind, "r.csv"); }),
             Contains("r.csv:2") && Contains("column kind") && Contains("\"guessed\""));
  std::string bad_size = row;
  bad_size.replace(bad_size.find(",64,"), 4, ",6x4,");
  CHECK_THAT(input_error_of([&] { parse_results_csv(header + row + bad_size, "r.csv"); }),
             Contains("r.csv:3") && Contains("column num_inputs") && Contains("6x4"));
  ResultRow no_time = ipu_row();
  no_time.time_s.reset();
  CHECK_THAT(input_error_of([&] { parse_results_csv(header + results_csv_row(no_time), "r.csv"); }),
             Contains("column time_s") && Contains("does-not-fit"));
  CHECK_THAT(input_error_of([&] { parse_results_csv(header + "gather,1,2\n", "r.csv"); }),
             Contains("r.csv:2") && Contains("fields as in the header"));
  CHECK_THAT(input_error_of([&] { read_results_csv("/no/such/results.csv"); }), Contains("/no/such/results.csv"));
}

TEST_CASE("CSV records split with RFC 4180 quoting", "[analysis][sweep][unit]") {
  CHECK(split_csv_record("a,\"b,c\",\"d\"\"e\",", "f", 1) == std::vector<std::string>{"a", "b,c", "d\"e", ""});
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK_THROWS_AS(split_csv_record("a,\"open", "f", 7), InputError);
}
