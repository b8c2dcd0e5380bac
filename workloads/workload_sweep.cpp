#include "workloads/workload_sweep.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "workloads/loaders/loader_knob.hpp"
#include "workloads/sweep_machine_axes.hpp"
#include "workloads/sweep_options.hpp"

namespace tilesim::workloads {

namespace {

namespace fs = std::filesystem;

// The same rule as an op sweep's name: it names the default output folder out/<name>/.
// An axis's place in the sweep file, as messages name it: axes["model[*].out"].
std::string axis_where(const std::string& name) { return "axes[" + nlohmann::json(name).dump() + "]"; }

void read_sweep_base_workload(ObjectReader& r, WorkloadSweepSpec& s) {
  const nlohmann::json& w = r.value("workload");
  if (w.is_string() && !w.get<std::string>().empty()) {
    const std::string given = w.get<std::string>();
    // Relative to the sweep file, as index files are to their workload.
    s.workload_file = fs::path(given).is_absolute() ? given : (fs::path(s.file).parent_path() / given).string();
    s.workload = load_json_file(s.workload_file);
  } else if (w.is_object()) {
    // Inline: its relative paths (a graph file, index files) are relative to the sweep file.
    s.workload = w;
    s.workload_file = s.file;
    s.inline_workload = true;
  } else {
    throw InputError(s.file, "workload", "a workload file's path (relative to the sweep file) or a workload object", describe_json(w));
  }
}

// One axis of "axes": a path into the base workload and a non-empty array of distinct values.
WorkloadAxis read_workload_axis(const WorkloadSweepSpec& s, const std::string& name, const nlohmann::json& values) {
  const std::string where = axis_where(name);
  const std::optional<JsonPath> path = parse_json_path(name);
  if (!path)
    throw InputError(s.file, where,
                     "a JSON path of the workload: keys joined by \".\", [N] for element N of an array, [*] for every element "
                     "(\"model[*].out\")",
                     describe_json(name));
  if (!values.is_array() || values.empty())
    throw InputError(s.file, where, "a non-empty array of values (any JSON values)", describe_json(values));
  if (values.size() > max_workload_axis_values)
    throw InputError(s.file, where, "at most " + std::to_string(max_workload_axis_values) + " values", std::to_string(values.size()));
  WorkloadAxis axis{name, *path, {}, false};
  std::set<std::string> seen;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!seen.insert(values[i].dump()).second)
      throw InputError(s.file, where + "[" + std::to_string(i) + "]", "each value once", describe_json(values[i]) + " twice");
    axis.values.push_back(values[i]);
  }
  // Checked on the base now, so that a misspelt section is named before anything else is read.
  nlohmann::json probe = s.workload;
  const std::string why = set_at_path(probe, axis.path, axis.values.front());
  if (!why.empty())
    throw InputError(s.file, where,
                     "a path into the workload" + (s.inline_workload ? std::string() : " (" + s.workload_file + ")") +
                         ": every part of it there but the last key, which may be one the workload leaves to its default",
                     why);
  return axis;
}

// "batch_sizes": the shorthand for an axis over the loader's batch knob, named by the knob's path.
WorkloadAxis read_batch_size_axis(ObjectReader& r, WorkloadSweepSpec& s) {
  const nlohmann::json& sizes = r.array("batch_sizes");
  const std::string expected = "a non-empty array of batch sizes, ascending positive integers";
  if (sizes.empty()) throw InputError(s.file, "batch_sizes", expected, "[]");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const nlohmann::json& v = sizes[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 2147483647 ||
        (!s.batch_sizes.empty() && v.get<std::int64_t>() <= s.batch_sizes.back()))
      throw InputError(s.file, r.element_path("batch_sizes", i), expected, describe_json(v));
    s.batch_sizes.push_back(v.get<std::int64_t>());
  }
  // The knob depends on the loader's kind: the base must read as a workload with a loader.
  const Workload base = parse_workload(s.workload, s.workload_file);
  if (!base.model || !base.model->loader)
    throw InputError(s.workload_file, "loader", "a workload with a \"loader\" (the sweep varies its batch size)", "none");
  WorkloadAxis axis;
  axis.name = "loader." + loaders::batch_knob(*base.model->loader).name;
  axis.path = *parse_json_path(axis.name);
  axis.batch_knob = true;
  for (const std::int64_t v : s.batch_sizes) axis.values.emplace_back(v);
  return axis;
}

// "zip": groups of axes that step together (equal lengths), each axis in one group at most.
void read_zip_groups(ObjectReader& r, WorkloadSweepSpec& s) {
  const nlohmann::json& groups = r.array("zip");
  std::map<std::string, std::string> grouped;  // axis -> the group it is in
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::string gpath = r.element_path("zip", g);
    if (!groups[g].is_array() || groups[g].size() < 2)
      throw InputError(s.file, gpath, "an array of two or more axis names (axes that step together)", describe_json(groups[g]));
    std::vector<std::string> names;
    std::size_t length = 0;
    for (std::size_t k = 0; k < groups[g].size(); ++k) {
      const nlohmann::json& n = groups[g][k];
      const std::string where = gpath + "[" + std::to_string(k) + "]";
      const auto axis = n.is_string() ? std::find_if(s.axes.begin(), s.axes.end(), [&](const WorkloadAxis& a) { return a.name == n.get<std::string>(); })
                                      : s.axes.end();
      if (axis == s.axes.end()) {
        std::string known;
        for (const WorkloadAxis& a : s.axes) known += (known.empty() ? "" : ", ") + nlohmann::json(a.name).dump();
        throw InputError(s.file, where, "the name of an axis of the sweep (" + known + ")", describe_json(n));
      }
      if (const auto it = grouped.find(axis->name); it != grouped.end())
        throw InputError(s.file, where, "each axis in one zip group only", describe_json(n) + ", already in " + it->second);
      grouped[axis->name] = gpath;
      if (k == 0) length = axis->values.size();
      else if (axis->values.size() != length)
        throw InputError(s.file, where,
                         "an axis with as many values as " + nlohmann::json(names.front()).dump() + " (" + std::to_string(length) + ")",
                         describe_json(n) + " with " + std::to_string(axis->values.size()));
      names.push_back(axis->name);
    }
    s.zip.push_back(names);
  }
}

// The dimensions the points step through: each axis alone, or its zip group at its first axis.
void order_axis_dimensions(WorkloadSweepSpec& s) {
  std::sort(s.axes.begin(), s.axes.end(), [](const WorkloadAxis& a, const WorkloadAxis& b) { return a.name < b.name; });
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < s.axes.size(); ++i) position[s.axes[i].name] = i;
  std::map<std::string, std::size_t> group_of;
  for (std::size_t g = 0; g < s.zip.size(); ++g)
    for (const std::string& n : s.zip[g]) group_of[n] = g;
  std::set<std::size_t> placed;
  for (std::size_t i = 0; i < s.axes.size(); ++i) {
    const auto g = group_of.find(s.axes[i].name);
    if (g == group_of.end()) {
      s.dimensions.push_back({i});
      continue;
    }
    if (!placed.insert(g->second).second) continue;
    std::vector<std::size_t> members;
    for (const std::string& n : s.zip[g->second]) members.push_back(position[n]);
    std::sort(members.begin(), members.end());
    s.dimensions.push_back(members);
  }
}

void read_workload_run_options(ObjectReader& r, WorkloadSweepSpec& s) {
  const nlohmann::json& backends = r.array("backends");
  if (backends.empty()) throw InputError(s.file, "backends", "a non-empty array of backend names", "[]");
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const std::string path = r.element_path("backends", i);
    if (backends[i].is_string()) {
      s.backends.push_back(backends[i].get<std::string>());
      continue;
    }
    if (!backends[i].is_object())
      throw InputError(s.file, path, "a backend name or {\"backend\": NAME, \"machine\": {PATH: AXIS, ...}}", describe_json(backends[i]));
    // Machine axes, as an op sweep's backends take them: one what-if backend per combination.
    ObjectReader br(backends[i], s.file, path);
    const std::string name = br.string("backend");
    if (!br.has("machine")) {
      s.backends.push_back(name);
    } else {
      const std::string machine_path = br.path_of("machine");
      for (const std::string& overrides : analysis::machine_axis_variants(br.value("machine"), s.file, machine_path, analysis::max_machine_variants))
        s.backends.push_back(analysis::with_machine_overrides(name, overrides, s.file, machine_path));
    }
    br.finish();
  }
  if (r.has("batches")) s.batches = r.integer("batches", 1, limits::max_steps);
  analysis::SweepRunOptions options{s.ipu_verify, s.cpu_warmup, s.cpu_timed_calls};
  analysis::read_sweep_run_options(r, options);
  s.ipu_verify = options.ipu_verify;
  s.cpu_warmup = options.cpu_warmup;
  s.cpu_timed_calls = options.cpu_timed_calls;
}

}  // namespace

std::size_t WorkloadSweepSpec::points() const {
  std::size_t n = 1;
  for (const auto& d : dimensions) n *= axes[d.front()].values.size();
  return n;
}

std::vector<std::size_t> WorkloadSweepSpec::value_indices(std::size_t point) const {
  std::vector<std::size_t> at(axes.size(), 0);
  for (std::size_t d = dimensions.size(); d-- > 0;) {
    const std::size_t size = axes[dimensions[d].front()].values.size();
    for (const std::size_t a : dimensions[d]) at[a] = point % size;
    point /= size;
  }
  return at;
}

bool is_workload_sweep(const nlohmann::json& document) { return document.is_object() && document.contains("workload"); }

WorkloadSweepSpec parse_workload_sweep(const nlohmann::json& document, const std::string& file) {
  ObjectReader r(document, file, "");
  WorkloadSweepSpec s;
  s.file = file;
  s.name = analysis::read_sweep_name(r);
  s.description = r.string_or("description", "");
  read_sweep_base_workload(r, s);
  if (r.has("axes")) {
    const nlohmann::json& axes = r.value("axes");
    if (!axes.is_object())
      throw InputError(file, "axes", "an object mapping JSON paths of the workload to arrays of values (\"model[*].out\": [16, 64])",
                       describe_json(axes));
    for (auto it = axes.begin(); it != axes.end(); ++it) s.axes.push_back(read_workload_axis(s, it.key(), it.value()));
  }
  if (r.has("batch_sizes")) {
    WorkloadAxis knob = read_batch_size_axis(r, s);
    if (std::any_of(s.axes.begin(), s.axes.end(), [&](const WorkloadAxis& a) { return a.name == knob.name; }))
      throw InputError(file, "batch_sizes", "\"batch_sizes\" or an axis " + nlohmann::json(knob.name).dump() + " (it is its shorthand), not both",
                       "both");
    s.axes.push_back(std::move(knob));
  }
  if (s.axes.empty())
    throw InputError(file, "axes", "at least one axis (\"axes\": {\"model[*].out\": [16, 64]}) or \"batch_sizes\"", "none");
  if (r.has("zip")) read_zip_groups(r, s);
  order_axis_dimensions(s);
  std::size_t points = 1;
  for (const auto& d : s.dimensions) {
    points *= s.axes[d.front()].values.size();
    if (points > max_workload_sweep_points)
      throw InputError(file, "axes", "at most " + std::to_string(max_workload_sweep_points) + " points (the axes crossed, zipped ones together)",
                       "more");
  }
  read_workload_run_options(r, s);
  for (const char* key : {"description", "axes", "batch_sizes", "zip", "batches", "ipu", "cpu"}) r.ignore(key);
  r.finish();
  return s;
}

std::string axis_cell(const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::string point_label(const WorkloadSweepSpec& spec, std::size_t point) {
  const std::vector<std::size_t> at = spec.value_indices(point);
  std::string values;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    std::string v = spec.axes[a].values[at[a]].dump();
    if (v.size() > 48) v = v.substr(0, 45) + "...";  // a whole "model" array would drown the message
    values += (values.empty() ? "" : ", ") + spec.axes[a].name + "=" + v;
  }
  return "point " + std::to_string(point + 1) + " of " + std::to_string(spec.points()) + " (" + values + ")";
}

WorkloadPoint point_workload(const WorkloadSweepSpec& spec, std::size_t point) {
  const std::vector<std::size_t> at = spec.value_indices(point);
  WorkloadPoint p{spec.workload, {}};
  std::optional<std::size_t> knob;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (spec.axes[a].batch_knob) {
      knob = a;
      continue;
    }
    // In name order, so an axis over a section ("model") is set before one inside it ("model[*].out").
    const std::string why = set_at_path(p.document, spec.axes[a].path, spec.axes[a].values[at[a]]);
    if (!why.empty())
      throw InputError(spec.file, point_label(spec, point) + ": " + axis_where(spec.axes[a].name),
                       "a path into the point's workload (the axes set before it changed its shape)", why);
  }
  try {
    p.workload = parse_workload(p.document, spec.workload_file);
    if (knob) {
      // The knob as `tilesim fit` turns it, written back into the document, which is read again.
      if (!p.workload.model || !p.workload.model->loader)
        throw InputError(spec.workload_file, "loader", "a workload with a \"loader\" (the sweep varies its batch size)", "none");
      const std::int64_t value = spec.axes[*knob].values[at[*knob]].get<std::int64_t>();
      p.document["loader"] = loaders::to_json(loaders::with_batch_knob(*p.workload.model->loader, value));
      p.workload = parse_workload(p.document, spec.workload_file);
    }
  } catch (const InputError& e) {
    throw InputError(spec.file + ": " + point_label(spec, point) + ": " + e.what());
  }
  return p;
}

nlohmann::json to_json(const WorkloadSweepSpec& spec) {
  nlohmann::json axes = nlohmann::json::object();
  for (const WorkloadAxis& a : spec.axes) axes[a.name] = a.values;
  nlohmann::json j = {{"name", spec.name},
                      {"description", spec.description},
                      {"workload", spec.workload},
                      {"workload_file", spec.inline_workload ? nlohmann::json(nullptr) : nlohmann::json(spec.workload_file)},
                      {"axes", axes},
                      {"zip", spec.zip},
                      {"points", spec.points()},
                      {"backends", spec.backends},
                      {"ipu", {{"verify", spec.ipu_verify}}},
                      {"cpu", {{"warmup", spec.cpu_warmup}, {"timed_calls", spec.cpu_timed_calls}}}};
  if (!spec.batch_sizes.empty()) j["batch_sizes"] = spec.batch_sizes;
  if (spec.batches) j["batches"] = *spec.batches;
  return j;
}

}  // namespace tilesim::workloads
