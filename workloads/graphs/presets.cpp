#include "workloads/graphs/presets.hpp"

#include <cstdlib>
#include <limits>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/machine_files.hpp"
#include "common/strict_json.hpp"

namespace tilesim::workloads::graphs {

namespace {


const nlohmann::json& presets_object(const nlohmann::json& document, const std::string& file) {
  if (!document.is_object() || !document.contains("presets") || !document["presets"].is_object()) {
    throw InputError(file, "presets", "an object of presets by name", describe_json(document));
  }
  return document["presets"];
}

}  // namespace

std::string presets_file() {
  if (const char* env = std::getenv("TILESIM_GRAPH_PRESETS"); env && *env) return env;
  return TILESIM_GRAPH_PRESETS_FILE;
}

std::vector<std::string> preset_names() {
  const std::string file = presets_file();
  const auto document = load_json_file(file);
  std::vector<std::string> names;
  for (const auto& item : presets_object(document, file).items()) names.push_back(item.key());
  return names;  // nlohmann::json objects iterate in sorted key order
}

Preset load_preset(const std::string& name, const std::string& file, const std::string& json_path) {
  const std::string presets_path = presets_file();
  const auto document = load_json_file(presets_path);
  {
    ObjectReader top(document, presets_path, "");
    top.string("about");
    top.object("presets");
    top.finish();
  }
  const auto& presets = presets_object(document, presets_path);
  if (!presets.contains(name)) {
    std::string known;
    for (const auto& item : presets.items()) known += (known.empty() ? "" : ", ") + item.key();
    throw InputError(file, json_path, "a preset name (" + known + ")", describe_json(name));
  }
  ObjectReader reader(presets[name], presets_path, "presets." + name);
  Preset p;
  p.name = name;
  p.description = reader.string("description");
  const std::string generator = reader.one_of("generator", {"chung_lu", "molecules"});
  FigureReader figures(reader.object("figures"));
  p.num_features = figures.integer("num_features", 1, limits::max_size);
  if (generator == "chung_lu") {
    p.generator = PresetGenerator::chung_lu;
    p.power_law.symmetric = reader.boolean("stored_both_directions");
    p.power_law.num_nodes = figures.integer("num_nodes", 2, limits::max_size);
    p.power_law.num_edges = figures.integer("num_edges", 1, limits::max_size);
    p.power_law.max_degree = figures.number("max_degree", 1, 1e9);
    p.power_law.exponent = figures.number("exponent", 1.01, 100);
    p.power_law.num_blocks = figures.integer("num_blocks", 1, p.power_law.num_nodes);
    p.power_law.intra_block_fraction = figures.number("intra_block_fraction", 0, 1);
  } else {
    p.generator = PresetGenerator::molecules;
    const std::string connectivity = reader.one_of("connectivity", {"complete"});
    (void)connectivity;
    p.molecules.connectivity = MoleculeConnectivity::complete;
    p.molecules.num_graphs = figures.integer("num_graphs", 1, limits::max_size);
    p.molecules.min_nodes = figures.integer("min_nodes", 1, 1000);
    p.molecules.max_nodes = figures.integer("max_nodes", p.molecules.min_nodes, 1000);
  }
  figures.finish();
  reader.finish();
  return p;
}

}  // namespace tilesim::workloads::graphs
