// Pareto fronts of time against a machine-figure cost (analysis/pareto.hpp, pareto_figure.hpp): the
// front over hand-made rows whose totals are known (ties in cost and in time, a machine missing a
// point, the base machine as the speedup reference), a product cost, and the errors for an unknown
// figure, a missing machines.json and results that are no machine sweep; then `tilesim plot pareto` on
// a small sweep over two figures, end to end.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/pareto.hpp"
#include "analysis/pareto_figure.hpp"
#include "common/error.hpp"
#include "tests/support/results_support.hpp"
#include "tests/support/test_support.hpp"

using tilesim::InputError;
using tilesim::analysis::ParetoGroup;
using tilesim::analysis::ParetoVariant;
using tilesim::analysis::ResultRow;
using Catch::Matchers::Contains;

namespace {

// A machine_provenance as a sweep writes it, with the two chip figures the cases read.
nlohmann::json pareto_test_provenance(double num_tiles, double sram_bytes_per_tile) {
  return {{"files", {"models/ipu/machines/bow.json"}},
          {"figures",
           {{"chip",
             {{"num_tiles", {{"value", num_tiles}, {"source", "test"}}},
              {"sram_bytes_per_tile", {{"value", sram_bytes_per_tile}, {"source", "test"}}}}}}},
          {"content_hash", "sha256:test"}};
}

nlohmann::json pareto_test_machines(const std::vector<std::pair<std::string, nlohmann::json>>& backends) {
  nlohmann::json doc = {{"tool", "test"}, {"backends", nlohmann::json::array()}};
  for (const auto& [name, provenance] : backends) doc["backends"].push_back({{"backend", name}, {"machine_provenance", provenance}});
  return doc;
}

// One row of `backend` ("ipu:bow{...}") on the point with `num_features`; no time: it does not fit.
ResultRow pareto_test_row(const std::string& backend, std::int64_t num_features, std::optional<double> time_s,
                          const std::string& op = "gather") {
  ResultRow r;
  r.op = op;
  r.shape = {256, num_features, 2048};
  r.backend = backend;
  r.machine = backend.substr(backend.find(':') + 1);
  r.kind = "simulated";
  r.time_s = time_s;
  r.verified = time_s ? "timing-only" : "does-not-fit";
  return r;
}

// The machines of the front case: (backend, SRAM bytes per tile, time at each of the two points).
struct ParetoTestMachine {
  std::string backend;
  double sram_bytes_per_tile;
  std::optional<double> time_s_16, time_s_64;
};

const std::vector<ParetoTestMachine>& pareto_test_design() {
  static const std::vector<ParetoTestMachine> design = {
      {"ipu:bow", 638976, 1.0, 1.0},                                          // the base: cost 638976, 2.0 s
      {"ipu:bow{chip.sram_bytes_per_tile*=0.5}", 319488, 1.5, 1.5},          // cheapest: on the front, 3.0 s
      {"ipu:bow{chip.exchange_bytes_per_cycle*=0.5}", 638976, 1.25, 0.75},   // the base's cost and time: not on it
      {"ipu:bow{chip.exchange_bytes_per_cycle*=2}", 638976, 0.8, 0.8},       // the base's cost, faster: on it, 1.6 s
      {"ipu:bow{chip.sram_bytes_per_tile*=2}", 1277952, 0.6, 0.6},           // on it, 1.2 s
      {"ipu:bow{chip.sram_bytes_per_tile*=4}", 2555904, 0.6, 0.6},           // as fast at more cost: not on it
      {"ipu:bow{chip.sram_bytes_per_tile*=0.25}", 159744, 2.0, std::nullopt},  // misses a point: left out
  };
  return design;
}

std::vector<ResultRow> pareto_test_rows() {
  std::vector<ResultRow> rows;
  for (const auto& m : pareto_test_design()) {
    rows.push_back(pareto_test_row(m.backend, 16, m.time_s_16));
    rows.push_back(pareto_test_row(m.backend, 64, m.time_s_64));
  }
  // A backend with one machine, whose machine carries no SRAM figure: no design space, never read.
  rows.push_back(pareto_test_row("gpu-model:a100-40gb", 16, 0.1));
  return rows;
}

nlohmann::json pareto_test_design_machines() {
  std::vector<std::pair<std::string, nlohmann::json>> list;
  for (const auto& m : pareto_test_design()) list.push_back({m.backend, pareto_test_provenance(1472, m.sram_bytes_per_tile)});
  list.push_back({"gpu-model:a100-40gb", {{"files", nlohmann::json::array()}, {"figures", {{"chip", {{"sm_count", {{"value", 108}}}}}}}}});
  return pareto_test_machines(list);
}

std::string pareto_test_error(const std::vector<ResultRow>& rows, const nlohmann::json& machines, const std::string& cost) {
  try {
    tilesim::analysis::pareto_fronts(rows, "r.csv", machines, "out/machines.json", cost);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> pareto_test_names(const std::vector<const ParetoVariant*>& variants) {
  std::vector<std::string> names;
  for (const ParetoVariant* v : variants) names.push_back(v->backend);
  return names;
}

}  // namespace

TEST_CASE("pareto: the front by cost then time, ties in cost and time off it, a machine missing a point left out", "[pareto][unit]") {
  const auto groups = tilesim::analysis::pareto_fronts(pareto_test_rows(), "r.csv", pareto_test_design_machines(), "out/machines.json",
                                                       "chip.sram_bytes_per_tile");
  REQUIRE(groups.size() == 1);  // the GPU model's single machine is no design space
  const ParetoGroup& g = groups[0];
  CHECK(g.backend == "ipu:bow");
  CHECK(g.op == "gather");
  CHECK(g.kind == "simulated");
  CHECK(g.points == 2);
  REQUIRE(g.feasible.size() == 6);
  CHECK(g.feasible[0].cost == 319488);
  CHECK(g.feasible[0].time_s == Approx(3.0));
  // At equal cost the faster machine sorts first; the two at 2.0 s keep the rows' order.
  CHECK(g.feasible[1].backend == "ipu:bow{chip.exchange_bytes_per_cycle*=2}");
  CHECK(g.feasible[2].backend == "ipu:bow");
  CHECK(g.feasible[3].backend == "ipu:bow{chip.exchange_bytes_per_cycle*=0.5}");
  CHECK(pareto_test_names(g.front()) == std::vector<std::string>{"ipu:bow{chip.sram_bytes_per_tile*=0.5}",
                                                                 "ipu:bow{chip.exchange_bytes_per_cycle*=2}",
                                                                 "ipu:bow{chip.sram_bytes_per_tile*=2}"});
  REQUIRE(g.infeasible.size() == 1);
  CHECK(g.infeasible[0].backend == "ipu:bow{chip.sram_bytes_per_tile*=0.25}");
  CHECK(g.infeasible[0].missing_points == 1);
  CHECK_FALSE(g.infeasible[0].on_front);
  REQUIRE(g.base_index == 2);
  CHECK(g.feasible[2].base_machine);

  const std::string table = tilesim::analysis::pareto_table(groups);
  CHECK_THAT(table, Contains("3 on the front, 1 left out"));
  CHECK_THAT(table, Contains("1.667x"));  // the base's 2.0 s / 1.2 s
  CHECK_THAT(table, Contains("left out, misses 1 of 2 points: ipu:bow{chip.sram_bytes_per_tile*=0.25}"));
  const auto figures = tilesim::analysis::pareto_figures(groups);
  REQUIRE(figures.size() == 1);
  CHECK(figures[0].stem == "pareto_ipu_bow_gather");
  CHECK(figures[0].pdf);
  CHECK(std::count(figures[0].data.begin(), figures[0].data.end(), '#') == 3);  // every machine, the front, the base
  CHECK_THAT(figures[0].body, Contains("set logscale x 2"));  // 319488 to 2555904 bytes: 8x
  CHECK_THAT(figures[0].body, Contains("summed over the grid"));
}

TEST_CASE("pareto: a product cost, and the base machine found as the what-if scaling every figure by 1", "[pareto][unit]") {
  CHECK(tilesim::analysis::cost_factors("chip.num_tiles*chip.sram_bytes_per_tile") ==
        std::vector<std::string>{"chip.num_tiles", "chip.sram_bytes_per_tile"});
  for (const char* bad : {"", "chip.num_tiles**chip.sram_bytes_per_tile", "chip.", "chip num_tiles", "*chip.num_tiles"})
    CHECK_THROWS_AS(tilesim::analysis::cost_factors(bad), InputError);

  const std::string unit = "ipu:bow{chip.num_tiles*=1;chip.sram_bytes_per_tile*=1}";
  const std::string big = "ipu:bow{chip.num_tiles*=2;chip.sram_bytes_per_tile*=1}";
  const std::vector<ResultRow> rows = {pareto_test_row(unit, 16, 2.0), pareto_test_row(big, 16, 1.0)};
  const auto machines = pareto_test_machines({{unit, pareto_test_provenance(1472, 638976)}, {big, pareto_test_provenance(2944, 638976)}});
  const auto groups = tilesim::analysis::pareto_fronts(rows, "r.csv", machines, "out/machines.json", "chip.num_tiles*chip.sram_bytes_per_tile");
  REQUIRE(groups.size() == 1);
  REQUIRE(groups[0].feasible.size() == 2);
  CHECK(groups[0].feasible[0].cost == Approx(1472.0 * 638976));
  CHECK(groups[0].feasible[1].cost == Approx(2944.0 * 638976));
  CHECK(groups[0].front().size() == 2);
  CHECK(groups[0].base_index == 0);
  CHECK(tilesim::analysis::machine_figure(machines, "m.json", big, "chip.num_tiles") == 2944);
}

TEST_CASE("pareto: a cost figure a machine does not carry names machines.json, the backend and the path", "[pareto][unit]") {
  const auto machines = pareto_test_design_machines();
  const std::string unknown = pareto_test_error(pareto_test_rows(), machines, "chip.sram_bytes");
  CHECK_THAT(unknown, Contains("out/machines.json: backend ipu:bow: expected figure chip.sram_bytes in its machine"));
  CHECK_THAT(unknown, Contains("chip holds num_tiles, sram_bytes_per_tile"));
  CHECK_THAT(pareto_test_error(pareto_test_rows(), machines, "chip"), Contains("found a section: chip holds"));
  CHECK_THAT(pareto_test_error(pareto_test_rows(), machines, "memory.bytes"), Contains("its figures hold chip"));
  CHECK_THAT(pareto_test_error(pareto_test_rows(), machines, "chip.num_tiles.source"), Contains("part of a figure"));
  // A backend the machines.json does not list: another sweep's file.
  auto other = machines;
  other["backends"].erase(0);
  CHECK_THAT(pareto_test_error(pareto_test_rows(), other, "chip.num_tiles"), Contains("expected an entry for ipu:bow"));
  // A measured backend has no machine file to read a cost from.
  const std::vector<ResultRow> cpu = {pareto_test_row("ipu:bow", 16, 1.0), pareto_test_row("ipu:bow{chip.num_tiles*=2}", 16, 1.0)};
  const auto with_null = pareto_test_machines({{"ipu:bow", nullptr}, {"ipu:bow{chip.num_tiles*=2}", pareto_test_provenance(2944, 1)}});
  CHECK_THAT(pareto_test_error(cpu, with_null, "chip.num_tiles"), Contains("no machine file (a measured backend"));
}

TEST_CASE("pareto: a missing or malformed machines.json is named, and said to be tilesim sweep's", "[pareto][unit]") {
  tilesim_test::TempDir dir("pareto_test");
  const std::string missing = dir.path("sweep/machines.json");
  CHECK(tilesim::analysis::sweep_machines_path(dir.path("sweep/results.csv")) == missing);
  try {
    tilesim::analysis::read_sweep_machines(missing);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains(missing + ": expected the machines.json that `tilesim sweep` writes"));
    CHECK_THAT(e.what(), Contains("no such file"));
  }
  const std::string no_array = dir.write("bad.json", R"({"backends": 3})");
  CHECK_THROWS_WITH(tilesim::analysis::read_sweep_machines(no_array), Contains("backends: expected an array of the sweep's machines"));
  const std::string no_figures = dir.write("bad2.json", R"({"backends": [{"backend": "ipu:bow", "machine_provenance": {"files": []}}]})");
  CHECK_THROWS_WITH(tilesim::analysis::read_sweep_machines(no_figures), Contains("backends[0].machine_provenance"));
  const std::string good = dir.write("good.json", pareto_test_design_machines().dump());
  CHECK(tilesim::analysis::read_sweep_machines(good)["backends"].size() == 8);
}

TEST_CASE("pareto: results that are no sweep over machine figures are said to be so", "[pareto][unit]") {
  const auto machines = pareto_test_design_machines();
  // One machine per backend: nothing to compare.
  const std::vector<ResultRow> plain = {pareto_test_row("ipu:bow", 16, 1.0), pareto_test_row("gpu-model:a100-40gb", 16, 0.1)};
  CHECK_THAT(pareto_test_error(plain, machines, "chip.sram_bytes_per_tile"), Contains("r.csv: expected rows of a sweep over machine figures"));
  // Two machines, one missing a point the other ran: only one runs the whole grid.
  const std::vector<ResultRow> one_runs = {pareto_test_row("ipu:bow", 16, 1.0), pareto_test_row("ipu:bow", 64, 1.0),
                                           pareto_test_row("ipu:bow{chip.sram_bytes_per_tile*=0.5}", 16, 1.0),
                                           pareto_test_row("ipu:bow{chip.sram_bytes_per_tile*=0.5}", 64, std::nullopt)};
  const std::string error = pareto_test_error(one_runs, machines, "chip.sram_bytes_per_tile");
  CHECK_THAT(error, Contains("docs/sweep-format.md, \"Machine axes\""));
  CHECK_THAT(error, Contains("found none"));
}

TEST_CASE("tilesim plot pareto: a sweep over SRAM and exchange bandwidth, the front against SRAM per tile", "[pareto][cli][slow]") {
  namespace fs = tilesim_test::fs;
  const fs::path dir = tilesim_test::scratch("pareto_cli_test");
  const fs::path out = tilesim_test::run_sram_exchange_sweep(dir, R"(["gather", "scatter_add"])");
  REQUIRE(fs::exists(out / "machines.json"));

  const fs::path plots = dir / "plots";
  const std::string results = (out / "results.csv").string();
  const auto plot = tilesim_test::run_tilesim("plot pareto " + results + " --cost chip.sram_bytes_per_tile --out " + plots.string(), dir);
  INFO(plot.err);
  REQUIRE(plot.exit_code == 0);
  for (const char* stem : {"pareto_ipu_bow_gather", "pareto_ipu_bow_scatter_add"}) CHECK(tilesim_test::figure_problem(plots, stem) == "");
  CHECK_THAT(plot.out, Contains("ipu:bow gather: cost chip.sram_bytes_per_tile"));
  CHECK_THAT(plot.out, Contains("9 machines run them all"));
  CHECK_THAT(plot.out, Contains("\n  ipu:bow{chip.exchange_bytes_per_cycle*="));  // a front line names its machine
  CHECK_THAT(plot.out, Contains("the base machine's figures"));

  const auto unknown = tilesim_test::run_tilesim("plot pareto " + results + " --cost chip.sram_bytes --out " + plots.string(), dir);
  CHECK(unknown.exit_code == static_cast<int>(tilesim::ExitCode::bad_input));
  CHECK_THAT(unknown.err, Contains("chip.sram_bytes"));
  const auto no_machines = tilesim_test::run_tilesim("plot pareto " + results + " --cost chip.num_tiles --machines " +
                                                         (dir / "none.json").string(), dir);
  CHECK(no_machines.exit_code == static_cast<int>(tilesim::ExitCode::bad_input));
  CHECK_THAT(no_machines.err, Contains("tilesim sweep"));
}
