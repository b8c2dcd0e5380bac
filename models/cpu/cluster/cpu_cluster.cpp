#include "models/cpu/cluster/cpu_cluster.hpp"

#include <filesystem>

#include "common/error.hpp"
#include "common/machine_files.hpp"
#include "common/strict_json.hpp"
#include "models/cpu/cpu_machine.hpp"
#include "models/cpu/node/cpu_node.hpp"

namespace tilesim::cpu_model {

namespace {

std::string shipped_path(const std::string& name) {
  return (std::filesystem::path(cpu_machine_dir()) / (name + ".json")).string();
}

std::string resolve_path(const std::string& name_or_path) {
  return names_a_file(name_or_path) ? name_or_path : shipped_path(name_or_path);
}

// The node a cluster file names: a shipped node ("spr-2s") stays a name; a path is taken relative to
// the cluster file, so a cluster and its node can sit side by side anywhere.
std::string node_reference(const std::string& node, const std::string& cluster_file) {
  if (!names_a_file(node)) return node;
  const std::filesystem::path p(node);
  if (p.is_absolute()) return node;
  return (std::filesystem::path(cluster_file).parent_path() / p).lexically_normal().string();
}

}  // namespace

bool is_cpu_cluster_file(const std::string& name_or_path) {
  const std::string path = resolve_path(name_or_path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  try {
    const nlohmann::json doc = load_json_file(path);
    return doc.is_object() && doc.contains("cluster");
  } catch (const InputError&) {
    return false;
  }
}

CpuCluster load_cpu_cluster(const std::string& name_or_path) {
  const std::string path = resolve_path(name_or_path);
  std::error_code ec;
  if (!names_a_file(name_or_path) && !std::filesystem::is_regular_file(path, ec))
    throw InputError("unknown CPU cluster \"" + name_or_path + "\": expected a machine file in " + cpu_machine_dir() +
                     " (e.g. spr-cluster) or a path to one (*.json)");
  const nlohmann::json document = load_json_file(path);
  ObjectReader root(document, path, "");
  CpuCluster c;
  c.file = path;
  c.provenance = MachineProvenance({path}, {});
  c.name = root.string("name");
  c.description = root.string("description");
  root.string_or("notes", "");

  ObjectReader cluster = root.object("cluster");
  const std::string node = node_reference(cluster.string("node"), path);
  // The node must be a node file: read it now, so a cluster naming a bad node fails here, naming both.
  try {
    if (is_cpu_cluster_file(node)) throw InputError("a cluster file, not a node file");
    (void)load_cpu_node(node);
  } catch (const InputError& e) {
    throw InputError(path, cluster.path_of("node"), "a CPU node machine file (a shipped name such as spr-2s, or a path "
                     "relative to this file) that reads without error", "\"" + node + "\": " + e.what());
  }
  c.node_backend = "cpu-model:" + node;
  // FigureReader takes its own copy of the section (with "node" already read), so it finishes it.
  FigureReader figures(cluster, c.provenance);
  c.num_nodes = static_cast<std::int32_t>(figures.integer("nodes", 1, 1 << 16));
  FigureReader fabric = figures.section("fabric");
  c.fabric.bytes_per_s_per_node = fabric.number("bytes_per_s_per_node", 1e3, 1e15);
  c.fabric.latency_s = fabric.number("latency_s", 0.0, 1.0);
  fabric.finish();
  figures.finish();
  root.finish();
  return c;
}

}  // namespace tilesim::cpu_model
