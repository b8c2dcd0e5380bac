#include "workloads/published_suite.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "common/error.hpp"
#include "common/strict_json.hpp"

namespace tilesim::analysis {

namespace fs = std::filesystem;

const std::vector<std::string>& published_units() {
  static const std::vector<std::string> units = {"s", "ms", "us", "graphs_per_s", "nodes_per_s", "seed_nodes_per_s", "samples_per_s"};
  return units;
}

bool is_rate_unit(const std::string& unit) {
  return unit == "graphs_per_s" || unit == "nodes_per_s" || unit == "seed_nodes_per_s" || unit == "samples_per_s";
}

double seconds_per_unit(const std::string& unit) {
  if (unit == "s") return 1;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  throw InputError("", "unit", "a time unit (s, ms, us)", "\"" + unit + "\"");
}

const std::vector<std::string>& prediction_quantities() {
  static const std::vector<std::string> q = {"step_time_s", "forward_s",   "backward_s",      "epoch_time_s",
                                             "graphs_per_s", "nodes_per_s", "seed_nodes_per_s"};
  return q;
}

namespace {

std::string nonempty_string(ObjectReader& r, const std::string& key) {
  const std::string s = r.string(key);
  if (s.empty()) throw InputError(r.file(), r.path_of(key), "a non-empty string", "\"\"");
  return s;
}

std::vector<std::string> string_list(ObjectReader& r, const std::string& key) {
  std::vector<std::string> out;
  if (!r.has(key)) return out;
  const nlohmann::json& a = r.value(key);
  if (!a.is_array()) throw InputError(r.file(), r.path_of(key), "an array of strings", describe_json(a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string() || a[i].get<std::string>().empty())
      throw InputError(r.file(), r.element_path(key, i), "a non-empty string", describe_json(a[i]));
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

PublishedEntry read_entry(const nlohmann::json& j, const std::string& file, const std::string& path, const fs::path& dir) {
  ObjectReader r(j, file, path);
  PublishedEntry e;
  e.id = nonempty_string(r, "id");
  {
    ObjectReader s = r.object("source");
    e.source.citation = nonempty_string(s, "citation");
    e.source.url = nonempty_string(s, "url");
    e.source.location = nonempty_string(s, "location");
    s.finish();
  }
  {
    ObjectReader c = r.object("config");
    e.config.dataset = nonempty_string(c, "dataset");
    e.config.model = nonempty_string(c, "model");
    e.config.hidden = nonempty_string(c, "hidden");
    e.config.layers = c.integer("layers", 1, 1000);
    e.config.batch = nonempty_string(c, "batch");
    e.config.precision = nonempty_string(c, "precision");
    e.config.chips = c.integer("chips", 1, 1 << 20);
    e.config.mode = nonempty_string(c, "mode");
    e.config.framework = nonempty_string(c, "framework");
    e.config.hardware = nonempty_string(c, "hardware");
    c.finish();
  }
  {
    ObjectReader p = r.object("published");
    e.published.value = p.number_above("value", 0.0, 1e18);
    e.published.unit = p.one_of("unit", published_units());
    e.published.quantity = nonempty_string(p, "quantity");
    p.finish();
  }
  const bool has_prediction = r.has("prediction"), has_nc = r.has("not_comparable");
  if (has_prediction == has_nc)
    throw InputError(file, path, "exactly one of \"prediction\" and \"not_comparable\"", has_prediction ? "both" : "neither");
  if (has_prediction) {
    ObjectReader p = r.object("prediction");
    PredictionRecipe recipe;
    const std::string workload = nonempty_string(p, "workload");
    const fs::path resolved = fs::path(workload).is_absolute() ? fs::path(workload) : dir / workload;
    std::error_code ec;
    if (!fs::is_regular_file(resolved, ec))
      throw InputError(file, p.path_of("workload"), "a workload file (relative to the entries file)",
                       "no file \"" + resolved.string() + "\"");
    recipe.workload = resolved.string();
    recipe.backend = nonempty_string(p, "backend");
    recipe.quantity = p.one_of("quantity", prediction_quantities());
    recipe.scale = p.number_above("scale", 0.0, 1e12);
    recipe.conversion = nonempty_string(p, "conversion");
    recipe.deviations = string_list(p, "deviations");
    const bool rate_quantity =
        recipe.quantity == "graphs_per_s" || recipe.quantity == "nodes_per_s" || recipe.quantity == "seed_nodes_per_s";
    if (rate_quantity != is_rate_unit(e.published.unit))
      throw InputError(file, p.path_of("quantity"),
                       std::string(rate_quantity ? "a time quantity" : "a rate quantity (graphs_per_s, nodes_per_s, seed_nodes_per_s)") +
                           " for the published unit \"" + e.published.unit + "\"",
                       "\"" + recipe.quantity + "\"");
    p.finish();
    e.prediction = std::move(recipe);
  } else {
    ObjectReader n = r.object("not_comparable");
    NotComparable nc;
    nc.missing = nonempty_string(n, "missing");
    if (n.has("issues")) {
      const nlohmann::json& a = n.value("issues");
      if (!a.is_array() || a.empty()) throw InputError(file, n.path_of("issues"), "a non-empty array of issue numbers", describe_json(a));
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_number_integer() || a[i].get<std::int64_t>() < 1)
          throw InputError(file, n.element_path("issues", i), "a positive issue number", describe_json(a[i]));
        nc.issues.push_back(a[i].get<std::int64_t>());
      }
    }
    n.finish();
    e.not_comparable = std::move(nc);
  }
  r.finish();
  return e;
}

}  // namespace

PublishedSuite read_published_suite(const std::string& path) {
  const nlohmann::json doc = load_json_file(path);
  ObjectReader root(doc, path, "");
  PublishedSuite suite;
  suite.file = path;
  suite.name = root.one_of("suite", {"layers", "whole-model"});
  suite.about = nonempty_string(root, "about");
  const nlohmann::json& entries = root.array("entries");
  const fs::path dir = fs::path(path).parent_path();
  std::set<std::string> ids;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = root.element_path("entries", i);
    PublishedEntry e = read_entry(entries[i], path, where, dir);
    if (!ids.insert(e.id).second) throw InputError(path, where + ".id", "an id no other entry has", "\"" + e.id + "\" again");
    suite.entries.push_back(std::move(e));
  }
  root.finish();
  return suite;
}

std::string published_suite_file(const std::string& suite, const std::string& data_dir) {
  const std::string folder = suite == "layers" ? "layers" : "whole-model";
  return (fs::path(data_dir) / folder / "entries.json").string();
}

}  // namespace tilesim::analysis
