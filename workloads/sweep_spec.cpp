#include "workloads/sweep_spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "workloads/sweep_machine_axes.hpp"
#include "workloads/sweep_options.hpp"
#include "workloads/sweep_points.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::analysis {

namespace {

constexpr std::int64_t max_size = limits::max_size;
// A range that asks for more values than this on one axis is almost certainly a typo (a step of 1
// over millions); a sweep that large would not finish anyway.
constexpr std::size_t max_axis_values = 100000;
constexpr std::size_t max_points = 10000000;

const std::vector<std::string> axis_names = {"num_inputs", "num_features", "num_outputs"};

// A size written as 4096 or 4096.0, in [1, 2^31 - 1].
std::int64_t size_value(const nlohmann::json& v, const std::string& file, const std::string& path) {
  const std::string expected = "an integer size in [1, " + std::to_string(max_size) + "]";
  if (v.is_number_unsigned()) {
    const std::uint64_t x = v.get<std::uint64_t>();
    if (x >= 1 && x <= static_cast<std::uint64_t>(max_size)) return static_cast<std::int64_t>(x);
  } else if (v.is_number_integer()) {
    const std::int64_t x = v.get<std::int64_t>();
    if (x >= 1 && x <= max_size) return x;
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= 1 && d <= static_cast<double>(max_size))
      return static_cast<std::int64_t>(d);
  }
  throw InputError(file, path, expected, describe_json(v));
}

std::string list_text(const std::vector<std::int64_t>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size() && i < 12; ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  if (values.size() > 12) s += ", ... (" + std::to_string(values.size()) + " values)";
  return s;
}

// One axis: an array of sizes, or {"from", "to", "times"} (geometric) or {"from", "to", "step"}
// (arithmetic). Returns the values ascending.
std::vector<std::int64_t> read_axis(const nlohmann::json& v, const std::string& file, const std::string& path) {
  std::vector<std::int64_t> values;
  if (v.is_array()) {
    if (v.empty()) throw InputError(file, path, "a non-empty array of sizes or a range object", describe_json(v));
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      const std::int64_t x = size_value(v[i], file, p);
      if (!seen.insert(x).second) throw InputError(file, p, "each size once", std::to_string(x) + " twice");
      values.push_back(x);
    }
    std::sort(values.begin(), values.end());
    return values;
  }
  if (!v.is_object())
    throw InputError(file, path, "an array of sizes or a range object ({\"from\", \"to\", \"times\" or \"step\"})",
                     describe_json(v));
  ObjectReader r(v, file, path);
  const std::int64_t from = size_value(r.value("from"), file, r.path_of("from"));
  const std::int64_t to = size_value(r.value("to"), file, r.path_of("to"));
  if (to < from) throw InputError(file, r.path_of("to"), "a size >= from (" + std::to_string(from) + ")", std::to_string(to));
  const bool times = r.has("times"), step = r.has("step");
  if (times == step)
    throw InputError(file, path, "exactly one of \"times\" (a geometric range) and \"step\" (an arithmetic range)",
                     times ? "both" : "neither");
  if (times) {
    const std::int64_t factor = r.integer("times", 2, 1024);
    for (std::int64_t x = from; x <= to; x *= factor) {
      values.push_back(x);
      if (values.size() > max_axis_values || x > max_size / factor) break;
    }
  } else {
    const std::int64_t stride = r.integer("step", 1, max_size);
    for (std::int64_t x = from; x <= to; x += stride) {
      values.push_back(x);
      if (values.size() > max_axis_values) break;
    }
  }
  r.finish();
  if (values.size() > max_axis_values)
    throw InputError(file, path, "a range of at most " + std::to_string(max_axis_values) + " values", "more");
  return values;
}

// A backend's subset of one axis: the values must be values of the sweep's axis.
std::vector<std::int64_t> read_subset(const nlohmann::json& v, const std::vector<std::int64_t>& grid, const std::string& axis,
                                      const std::string& file, const std::string& path) {
  std::vector<std::int64_t> values = read_axis(v, file, path);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::binary_search(grid.begin(), grid.end(), values[i])) continue;
    // Name the element when the subset was a list (its position after sorting is the same set).
    std::string p = path;
    if (v.is_array())
      for (std::size_t j = 0; j < v.size(); ++j)
        if (size_value(v[j], file, path) == values[i]) p = path + "[" + std::to_string(j) + "]";
    throw InputError(file, p, "a value of the sweep's " + axis + " (" + list_text(grid) + ")", std::to_string(values[i]));
  }
  return values;
}

// Strings of a fixed set, each once.
std::vector<std::string> read_names(ObjectReader& r, const std::string& key, const std::vector<std::string>& allowed) {
  const auto& a = r.array(key);
  std::vector<std::string> out;
  std::string expected = "one of";
  for (std::size_t i = 0; i < allowed.size(); ++i) expected += (i ? ", \"" : " \"") + allowed[i] + "\"";
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = r.element_path(key, i);
    if (!a[i].is_string() || std::find(allowed.begin(), allowed.end(), a[i].get<std::string>()) == allowed.end())
      throw InputError(r.file(), p, expected, describe_json(a[i]));
    if (std::find(out.begin(), out.end(), a[i].get<std::string>()) != out.end())
      throw InputError(r.file(), p, "each name once", describe_json(a[i]) + " twice");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

std::size_t grid_points(const SweepSpec& s, const SweepBackend& b) {
  return s.ops.size() * s.dtypes.size() * b.num_inputs.size() * b.num_features.size() * b.num_outputs.size() *
         static_cast<std::size_t>(s.repeats);
}

}  // namespace

SweepSpec parse_sweep(const nlohmann::json& document, const std::string& file) {
  ObjectReader r(document, file, "");
  SweepSpec s;
  s.file = file;
  s.name = read_sweep_name(r);
  if (r.has("description")) s.description = r.string("description");
  // schnet_block: the hydronet SchNet InteractionBlock benchmark, one group of ops per point
  // (workloads/layers/layers.hpp), with num_inputs nodes, num_features = hidden = filters, num_outputs edges.
  s.ops = read_names(r, "ops", {"gather", "scatter_add", "schnet_block"});
  s.dtypes = r.has("dtypes") ? read_names(r, "dtypes", {"float32", "float16", "bfloat16"}) : std::vector<std::string>{"float32"};

  ObjectReader sizes = r.object("sizes");
  s.num_inputs = read_axis(sizes.value("num_inputs"), file, sizes.path_of("num_inputs"));
  s.num_features = read_axis(sizes.value("num_features"), file, sizes.path_of("num_features"));
  s.num_outputs = read_axis(sizes.value("num_outputs"), file, sizes.path_of("num_outputs"));
  sizes.finish();

  s.repeats = static_cast<int>(r.integer_or("repeats", 1, limits::max_sweep_repeats, 1));
  s.seed = static_cast<std::uint64_t>(r.integer_or("seed", 0, limits::max_seed, 0));
  if (r.has("indices")) s.indices = r.one_of("indices", {"uniform", "sorted"});
  SweepRunOptions options{s.ipu_verify, s.cpu_warmup, s.cpu_timed_calls};
  read_sweep_run_options(r, options);
  s.ipu_verify = options.ipu_verify;
  s.cpu_warmup = options.cpu_warmup;
  s.cpu_timed_calls = options.cpu_timed_calls;

  const auto& backends = r.array("backends");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const std::string path = r.element_path("backends", i);
    SweepBackend b;
    b.num_inputs = s.num_inputs;
    b.num_features = s.num_features;
    b.num_outputs = s.num_outputs;
    std::vector<std::string> machine_variants;  // what-if overrides from "machine" (empty: the machine as named)
    std::string machine_path;
    if (backends[i].is_string()) {
      b.name = backends[i].get<std::string>();
      b.json_path = path;
    } else if (backends[i].is_object()) {
      ObjectReader br(backends[i], file, path);
      b.name = br.string("backend");
      b.json_path = br.path_of("backend");
      if (br.has("sizes")) {
        ObjectReader sub = br.object("sizes");
        if (sub.has("num_inputs"))
          b.num_inputs = read_subset(sub.value("num_inputs"), s.num_inputs, "num_inputs", file, sub.path_of("num_inputs"));
        if (sub.has("num_features"))
          b.num_features =
              read_subset(sub.value("num_features"), s.num_features, "num_features", file, sub.path_of("num_features"));
        if (sub.has("num_outputs"))
          b.num_outputs =
              read_subset(sub.value("num_outputs"), s.num_outputs, "num_outputs", file, sub.path_of("num_outputs"));
        sub.finish();
      }
      if (br.has("machine")) {
        machine_path = br.path_of("machine");
        machine_variants = machine_axis_variants(br.value("machine"), file, machine_path, max_machine_variants);
      }
      br.finish();
    } else {
      throw InputError(file, path, "a backend name or {\"backend\": NAME, \"sizes\": {...}, \"machine\": {...}}",
                       describe_json(backends[i]));
    }
    if (b.name.empty()) throw InputError(file, b.json_path, "a backend name", "\"\"");
    b.subset = b.num_inputs.size() != s.num_inputs.size() || b.num_features.size() != s.num_features.size() ||
               b.num_outputs.size() != s.num_outputs.size();
    // Machine axes: one backend per what-if machine, its errors placed at the "machine" object.
    std::vector<SweepBackend> expanded;
    if (machine_variants.empty()) expanded.push_back(b);
    for (const std::string& overrides : machine_variants) {
      SweepBackend v = b;
      v.name = with_machine_overrides(b.name, overrides, file, b.json_path);
      v.json_path = machine_path;
      expanded.push_back(std::move(v));
    }
    for (auto& e : expanded) {
      if (!seen.insert(e.name).second) throw InputError(file, e.json_path, "each backend once", "\"" + e.name + "\" twice");
      s.backends.push_back(std::move(e));
    }
  }
  r.finish();

  // One backend's points fit a size_t (3 ops x 100000^3 values x 1000 repeats < 2^64), and so does the
  // total up to the limit plus one backend's; summing every backend's first could wrap below the limit.
  std::size_t total = 0;
  for (const auto& b : s.backends) {
    total += grid_points(s, b);
    if (total > max_points)
      throw InputError(file, "sizes", "a sweep of at most " + std::to_string(max_points) + " points",
                       (&b == &s.backends.back() ? "" : "at least ") + std::to_string(total));
  }
  return s;
}

SweepSpec load_sweep(const std::string& path) { return parse_sweep(load_json_file(path), path); }

std::vector<SweepPoint> expand_sweep(const SweepSpec& s) {
  const SweepPoints lazy(s);
  std::vector<SweepPoint> points;
  points.reserve(lazy.size());
  for (std::size_t i = 0; i < lazy.size(); ++i) points.push_back(lazy[i]);
  return points;
}

std::uint64_t sweep_index_seed(const OpShape& shape, std::uint64_t seed, int repeat) {
  const std::uint64_t mask = (std::uint64_t{1} << 63) - 1;
  return (point_index_seed(shape) + seed + 1000003ull * static_cast<std::uint64_t>(repeat)) & mask;
}

nlohmann::json to_json(const SweepSpec& s) {
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : s.backends) {
    nlohmann::json entry = {{"backend", b.name}};
    if (b.subset)
      entry["sizes"] = {{"num_inputs", b.num_inputs}, {"num_features", b.num_features}, {"num_outputs", b.num_outputs}};
    backends.push_back(entry);
  }
  return {{"name", s.name},
          {"description", s.description},
          {"source_file", s.file},
          {"ops", s.ops},
          {"dtypes", s.dtypes},
          {"sizes", {{"num_inputs", s.num_inputs}, {"num_features", s.num_features}, {"num_outputs", s.num_outputs}}},
          {"backends", backends},
          {"repeats", s.repeats},
          {"seed", s.seed},
          {"indices", s.indices},
          {"ipu", {{"verify", s.ipu_verify}}},
          {"cpu", {{"warmup", s.cpu_warmup}, {"timed_calls", s.cpu_timed_calls}}}};
}

}  // namespace tilesim::analysis
