// The published suites of `tilesim validate` (layers, whole models): the entries reader's checks, the
// shipped suites' sizes and sources, the report and its markdown and LaTeX tables, and the command end
// to end on the shipped suites.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

#include "analysis/published_report.hpp"
#include "analysis/validation_tables.hpp"
#include "common/error.hpp"
#include "workloads/published_suite.hpp"

namespace fs = std::filesystem;
using namespace tilesim;
using namespace tilesim::analysis;
using Catch::Matchers::Contains;

namespace {

fs::path published_dir() {
  static const fs::path dir = tilesim_test::scratch("published_validation_test");
  return dir;
}

std::string shipped_suite(const std::string& suite) {
  return published_suite_file(suite, std::string(TILESIM_SOURCE_DIR) + "/validation");
}

// A valid one-entry suite file (a comparable entry whose workload is a shipped example), edited by `edit`.
std::string suite_file(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json entry = {
      {"id", "e1"},
      {"source", {{"citation", "someone"}, {"url", "https://example.org"}, {"location", "table 1"}}},
      {"config", {{"dataset", "Cora"}, {"model", "GCN"}, {"hidden", "16"}, {"layers", 2}, {"batch", "full graph"},
                  {"precision", "float32"}, {"chips", 1}, {"mode", "training"}, {"framework", "PyG"}, {"hardware", "V100"}}},
      {"published", {{"value", 0.01}, {"unit", "s"}, {"quantity", "epoch time"}}},
      {"prediction", {{"workload", std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/gcn_cora_train.json"},
                      {"backend", "gpu-model:a100-40gb:eager"}, {"quantity", "step_time_s"}, {"scale", 1},
                      {"conversion", "epoch = 1 step"}}}};
  nlohmann::json doc = {{"suite", "whole-model"}, {"about", "test"}, {"entries", {entry}}};
  edit(doc);
  const fs::path path = published_dir() / (name + ".json");
  std::ofstream(path) << doc.dump(2);
  return path.string();
}

std::string read_error(const std::string& path) {
  try {
    read_published_suite(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the published-entries reader rejects bad input with file, path, expected and found", "[validate][unit]") {
  const std::string good = suite_file("good", [](nlohmann::json&) {});
  REQUIRE(read_published_suite(good).entries.size() == 1);

  const std::string unknown = suite_file("unknown", [](nlohmann::json& d) { d["entries"][0]["published"]["unti"] = "s"; });
  CHECK_THAT(read_error(unknown), Contains(unknown) && Contains("entries[0].published.unti") && Contains("unknown key"));

  const std::string no_source = suite_file("no_source", [](nlohmann::json& d) { d["entries"][0].erase("source"); });
  CHECK_THAT(read_error(no_source), Contains(no_source) && Contains("entries[0].source") && Contains("required"));

  const std::string empty_url = suite_file("empty_url", [](nlohmann::json& d) { d["entries"][0]["source"]["url"] = ""; });
  CHECK_THAT(read_error(empty_url), Contains("entries[0].source.url") && Contains("non-empty string"));

  const std::string bad_unit = suite_file("bad_unit", [](nlohmann::json& d) { d["entries"][0]["published"]["unit"] = "seconds"; });
  CHECK_THAT(read_error(bad_unit), Contains("entries[0].published.unit") && Contains("\"ms\"") && Contains("\"seconds\""));

  const std::string rate_for_time =
      suite_file("rate_for_time", [](nlohmann::json& d) { d["entries"][0]["published"]["unit"] = "graphs_per_s"; });
  CHECK_THAT(read_error(rate_for_time), Contains("entries[0].prediction.quantity") && Contains("rate quantity"));

  // Loader and scaling runs' throughputs in their own units: nodes (cluster loaders) and seed nodes (neighbour loaders) per second.
  const std::string nodes_rate = suite_file("nodes_rate", [](nlohmann::json& d) {
    d["entries"][0]["published"]["unit"] = "nodes_per_s";
    d["entries"][0]["prediction"]["quantity"] = "nodes_per_s";
  });
  REQUIRE(read_published_suite(nodes_rate).entries.at(0).prediction->quantity == "nodes_per_s");
  const std::string seed_rate_for_time = suite_file(
      "seed_rate_for_time", [](nlohmann::json& d) { d["entries"][0]["prediction"]["quantity"] = "seed_nodes_per_s"; });
  CHECK_THAT(read_error(seed_rate_for_time), Contains("entries[0].prediction.quantity") && Contains("a time quantity"));

  const std::string both = suite_file("both", [](nlohmann::json& d) { d["entries"][0]["not_comparable"] = {{"missing", "x"}}; });
  CHECK_THAT(read_error(both), Contains("entries[0]") && Contains("exactly one of") && Contains("both"));

  const std::string no_workload =
      suite_file("no_workload", [](nlohmann::json& d) { d["entries"][0]["prediction"]["workload"] = "nowhere.json"; });
  CHECK_THAT(read_error(no_workload), Contains("entries[0].prediction.workload") && Contains("nowhere.json"));

  const std::string twice = suite_file("twice", [](nlohmann::json& d) { d["entries"].push_back(d["entries"][0]); });
  CHECK_THAT(read_error(twice), Contains("entries[1].id") && Contains("\"e1\" again"));

  const std::string bad_value = suite_file("bad_value", [](nlohmann::json& d) { d["entries"][0]["published"]["value"] = 0; });
  CHECK_THAT(read_error(bad_value), Contains("entries[0].published.value") && Contains("greater than 0"));
}

TEST_CASE("the shipped published suites hold their stated entries, each with a source", "[validate][unit]") {
  const PublishedSuite models = read_published_suite(shipped_suite("models"));
  const PublishedSuite layers = read_published_suite(shipped_suite("layers"));
  CHECK(models.name == "whole-model");
  CHECK(layers.name == "layers");
  CHECK(models.entries.size() >= 8);
  CHECK(layers.entries.size() >= 8);
  std::size_t ipu = 0, gpu = 0, compared = 0;
  for (const auto* suite : {&models, &layers}) {
    for (const auto& e : suite->entries) {
      INFO(e.id);
      CHECK(!e.source.citation.empty());
      CHECK(e.source.url.rfind("https://", 0) == 0);
      CHECK(!e.source.location.empty());
      CHECK(e.config.chips >= 1);
      CHECK(e.prediction.has_value() != e.not_comparable.has_value());
      if (suite == &models) (e.config.hardware.find("IPU") != std::string::npos ? ipu : gpu) += 1;
      if (e.prediction) {
        ++compared;
        CHECK(!e.prediction->conversion.empty());
        CHECK(fs::is_regular_file(e.prediction->workload));
      }
    }
  }
  CHECK(ipu >= 1);  // across IPU and GPU
  CHECK(gpu >= 1);
  CHECK(compared >= 4);
}

TEST_CASE("a published report keeps not-comparable entries, and its tables are well formed", "[validate][unit]") {
  PublishedSuite suite = read_published_suite(suite_file("report", [](nlohmann::json& d) {
    nlohmann::json nc = d["entries"][0];
    nc["id"] = "fp16_&_50%";
    nc.erase("prediction");
    nc["not_comparable"] = {{"missing", "float16 values (issue 15) & {more}"}, {"issues", {15}}};
    d["entries"].push_back(nc);
  }));
  PublishedPrediction p;
  p.value = 0.012;
  p.report_value = 0.012;
  p.kind = prediction_label("modeled", "eager");
  const nlohmann::json report = build_published_report(suite, {p, std::nullopt});
  CHECK(p.kind == "modeled (eager mode)");
  CHECK(prediction_label("modeled", "kernel") == "modeled (kernel mode)");
  CHECK(prediction_label("modeled", "eager-nograd") == "modeled (eager-nograd mode)");
  CHECK(prediction_label("simulated", "dynamic") == "simulated");
  REQUIRE(report["entries"].size() == 2);
  CHECK(report["entries"][0]["status"] == "compared");
  CHECK(report["entries"][0]["error_pct"].get<double>() == Approx(20.0));
  CHECK(report["entries"][1]["status"] == "not yet comparable");
  CHECK(report["entries"][1]["missing"] == "float16 values (issue 15) & {more}");
  CHECK(report["summary"]["compared"] == 1);
  CHECK(report["summary"]["not_yet_comparable"] == 1);
  // The errors per backend family, beside all of them: here the one compared GPU-model entry.
  REQUIRE(report["summary"]["by_family"].size() == 1);
  CHECK(report["summary"]["by_family"]["gpu-model"]["compared"] == 1);
  CHECK(report["summary"]["by_family"]["gpu-model"]["median_ape_pct"].get<double>() == Approx(20.0));
  CHECK(report["summary"]["median_ape_pct"].get<double>() == Approx(20.0));

  const auto tables = published_tables(report);
  REQUIRE(tables.size() == 2);
  for (const auto& t : tables)
    for (const auto& row : t.rows) CHECK(row.size() == t.header.size());

  // Markdown: every table line has as many cells as the header.
  const std::string md = render_table(tables[1], TableFormat::markdown);
  std::istringstream lines(md);
  std::string line;
  int table_lines = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '|') continue;
    std::size_t bars = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++bars;
    CHECK(bars == tables[1].header.size() + 1);
    ++table_lines;
  }
  CHECK(table_lines == 3);  // header, rule, one row
  CHECK_THAT(md, Contains("float16 values (issue 15)"));

  // LaTeX: special characters escaped, a row per entry with header-many cells, booktabs rules.
  const std::string tex = render_table(tables[1], TableFormat::latex);
  CHECK_THAT(tex, Contains("fp16\\_\\&\\_50\\%") && Contains("\\{more\\}") && Contains("\\toprule") && Contains("\\bottomrule"));
  CHECK_THAT(tex, Contains("\\begin{tabular}{lllll}"));
  CHECK(escape_latex("a_b%c$d#e&f{g}h~i^j\\k") ==
        "a\\_b\\%c\\$d\\#e\\&f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j\\textbackslash{}k");
  CHECK(escape_markdown("a|b\nc") == "a\\|b c");
  CHECK_THROWS_WITH(parse_table_format("html"), Contains("--format") && Contains("markdown"));
}

// validation/whole-model/README.md's status table states each compared entry's error: every row must
// be what the suite computes now, to the digits the row prints, and every compared entry must have a row.
static void check_readme_errors(const nlohmann::json& suite) {
  std::map<std::string, double> computed;
  for (const auto& e : suite["entries"])
    if (e["status"] == "compared") {
      const double published = e["published"]["value"].get<double>(), predicted = e["prediction"]["value"].get<double>();
      computed[e["id"].get<std::string>()] = 100.0 * (predicted - published) / published;
    }
  std::istringstream readme(tilesim_test::slurp(fs::path(TILESIM_SOURCE_DIR) / "validation/whole-model/README.md"));
  std::string line;
  bool in_status = false;
  std::size_t rows = 0;
  while (std::getline(readme, line)) {
    if (line.rfind("## ", 0) == 0) in_status = line == "## Status";
    if (!in_status || line.rfind("| `", 0) != 0) continue;
    const std::string id = line.substr(3, line.find('`', 3) - 3);
    // The last cell: "-41.0%" or "+398%".
    const std::size_t end = line.rfind('%'), begin = line.rfind('|', end) + 1;
    const std::string cell = line.substr(begin, end - begin);
    INFO(line);
    REQUIRE(computed.count(id) == 1);
    const double stated = std::stod(cell);
    const bool one_decimal = cell.find('.') != std::string::npos;
    CHECK(std::abs(stated - computed[id]) <= (one_decimal ? 0.051 : 0.51));
    ++rows;
  }
  CHECK(rows == computed.size());
}

TEST_CASE("tilesim validate runs the published suites: predictions positive and labelled, tables written", "[validate][cli][slow]") {
  const fs::path out = published_dir() / "validate_published";
  const tilesim_test::CliResult r =
      tilesim_test::run_tilesim("validate --suite models --format markdown --no-plots --out " + out.string(), published_dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("### whole-model suite") && Contains("not yet comparable") && Contains("gpspp-pcqm4mv2-bowpod16"));
  CHECK(fs::exists(out / "validation.md"));
  const auto report = nlohmann::json::parse(tilesim_test::slurp(out / "validation.json"));
  const auto& suite = report["published_suites"]["whole-model"];
  std::size_t compared = 0;
  for (const auto& e : suite["entries"]) {
    INFO(e["id"]);
    if (e["status"] == "compared") {
      ++compared;
      CHECK(e["prediction"]["value"].get<double>() > 0);
      CHECK_THAT(e["prediction"]["kind"].get<std::string>(), Contains("modeled (eager mode)") || Contains("simulated"));
      CHECK(fs::exists(e["prediction"]["report"].get<std::string>()));
    } else {
      CHECK(!e["missing"].get<std::string>().empty());
    }
  }
  CHECK(compared == suite["summary"]["compared"].get<std::size_t>());
  CHECK(suite["entries"].size() >= 8);
  check_readme_errors(suite);

  const tilesim_test::CliResult tex =
      tilesim_test::run_tilesim("validate --suite layers --format latex --no-plots --out " + out.string(), published_dir());
  INFO(tex.err);
  REQUIRE(tex.exit_code == 0);
  CHECK_THAT(tilesim_test::slurp(out / "validation.tex"), Contains("\\begin{tabular}") && Contains("gin-qm9-a100-fp16"));

  const tilesim_test::CliResult bad = tilesim_test::run_tilesim("validate --suite nope --out " + out.string(), published_dir());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("hydronet, layers, models, all"));
}
