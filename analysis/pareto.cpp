#include "analysis/pareto.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "analysis/sensitivity.hpp"
#include "common/error.hpp"
#include "common/machine_overrides.hpp"
#include "common/strict_json.hpp"

namespace tilesim::analysis {

namespace {

// The rows of one machine of a group: its time at each point it ran.
struct ParetoMachineRows {
  std::map<std::string, double> time_s_by_point;
  int base_rank = 0;  // 2: the base backend itself; 1: a what-if scaling every figure it names by 1; 0: another what-if
};

struct ParetoGroupRows {
  std::string backend, op, kind;
  std::vector<std::string> machines;  // in the order the rows name them
  std::map<std::string, ParetoMachineRows> rows_of;
  std::set<std::string> points;       // the points some machine of the group has a time for
};

// How much a row's machine is the base machine's figures (ParetoMachineRows::base_rank).
int pareto_base_rank(const ResultRow& r, const std::string& results_file) {
  if (r.backend.find('{') == std::string::npos) return 2;
  const std::optional<MachineOverrides> o = row_overrides(r, results_file);
  if (!o) return 0;
  for (const FigureOverride& f : o->figures)
    if (!f.scale || f.value != 1.0) return 0;
  return 1;
}

std::vector<ParetoGroupRows> pareto_group_rows(const std::vector<ResultRow>& rows, const std::string& results_file,
                                               const std::vector<std::string>& ops, const std::vector<std::string>& backends) {
  std::vector<ParetoGroupRows> groups;
  std::map<std::pair<std::string, std::string>, std::size_t> index_of;
  for (const ResultRow& r : rows) {
    if (!ops.empty() && std::find(ops.begin(), ops.end(), r.op) == ops.end()) continue;
    const std::string base = what_if_base_backend(r.backend);
    if (!backends.empty() && std::find(backends.begin(), backends.end(), base) == backends.end()) continue;
    const auto key = std::make_pair(base, r.op);
    if (!index_of.count(key)) {
      index_of[key] = groups.size();
      groups.push_back({base, r.op, r.kind, {}, {}, {}});
    }
    ParetoGroupRows& g = groups[index_of[key]];
    if (!g.rows_of.count(r.backend)) {
      g.machines.push_back(r.backend);
      g.rows_of[r.backend].base_rank = pareto_base_rank(r, results_file);
    }
    // A point that does not fit has no time: the machine misses it.
    if (!r.time_s) continue;
    const std::string point = grid_point_key(r);
    g.rows_of[r.backend].time_s_by_point.emplace(point, *r.time_s);
    g.points.insert(point);
  }
  return groups;
}

// A few names of an object's keys, for a message that must stay short.
std::string pareto_some_keys(const nlohmann::json& object) {
  std::string text;
  std::size_t n = 0;
  for (auto it = object.begin(); it != object.end(); ++it, ++n) {
    if (n == 8) return text + ", ... (" + std::to_string(object.size()) + " in all)";
    text += (n ? ", " : "") + it.key();
  }
  return text.empty() ? "nothing" : text;
}

// One figure of one machine's provenance ("machine_provenance" of machines.json).
double pareto_figure_value(const nlohmann::json& provenance, const std::string& machines_file, const std::string& backend,
                           const std::string& path) {
  const std::string where = "backend " + backend;
  const std::string expected = "figure " + path + " in its machine (the --cost expression names it)";
  if (!provenance.is_object())
    throw InputError(machines_file, where, expected, "no machine file (a measured backend; --backends leaves it out)");
  static const nlohmann::json no_figures = nlohmann::json::object();
  const nlohmann::json* node = provenance.contains("figures") ? &provenance.at("figures") : &no_figures;
  std::string walked;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string key = path.substr(start, dot - start);
    if (!node->is_object() || !node->contains(key))
      throw InputError(machines_file, where, expected,
                       "none: " + (walked.empty() ? std::string("its figures hold ") : walked + " holds ") +
                           (node->is_object() ? pareto_some_keys(*node) : std::string("no figures")));
    node = &node->at(key);
    walked += (walked.empty() ? "" : ".") + key;
    start = dot + 1;
  }
  if (!node->is_object()) throw InputError(machines_file, where, expected, path + " = " + describe_json(*node) + ", part of a figure");
  if (!node->contains("value"))
    throw InputError(machines_file, where, expected, "a section: " + path + " holds " + pareto_some_keys(*node));
  const nlohmann::json& value = node->at("value");
  if (!value.is_number()) throw InputError(machines_file, where + ", " + path, "a number", describe_json(value));
  return value.get<double>();
}

double pareto_cost_of(const nlohmann::json& provenance, const std::string& machines_file, const std::string& backend,
                      const std::vector<std::string>& factors) {
  double cost = 1;
  for (const auto& path : factors) cost *= pareto_figure_value(provenance, machines_file, backend, path);
  return cost;
}

// Every backend's machine provenance in a machines.json, by backend name.
std::map<std::string, const nlohmann::json*> pareto_provenance_by_backend(const nlohmann::json& machines) {
  std::map<std::string, const nlohmann::json*> by_backend;
  for (const auto& entry : machines.at("backends")) by_backend[entry.at("backend").get<std::string>()] = &entry.at("machine_provenance");
  return by_backend;
}

// The design points of one group: each machine's cost, total time and place on the front.
ParetoGroup pareto_group(const ParetoGroupRows& g, const std::map<std::string, const nlohmann::json*>& provenance,
                         const std::string& machines_file, const std::string& cost_expr, const std::vector<std::string>& factors) {
  ParetoGroup out;
  out.backend = g.backend;
  out.op = g.op;
  out.kind = g.kind;
  out.cost = cost_expr;
  out.points = g.points.size();
  int best_rank = 0;
  for (const auto& name : g.machines) {
    const ParetoMachineRows& m = g.rows_of.at(name);
    const auto p = provenance.find(name);
    if (p == provenance.end())
      throw InputError(machines_file, "backends", "an entry for " + name + " (a backend of the results; the machines.json of the same sweep)",
                       "none");
    ParetoVariant v;
    v.backend = name;
    v.cost = pareto_cost_of(*p->second, machines_file, name, factors);
    v.missing_points = g.points.size() - m.time_s_by_point.size();
    if (v.missing_points == 0) {
      for (const auto& [point, t] : m.time_s_by_point) v.time_s += t;
      best_rank = std::max(best_rank, m.base_rank);
    }
    (v.missing_points ? out.infeasible : out.feasible).push_back(v);
  }
  const auto by_cost_then_time = [](const ParetoVariant& a, const ParetoVariant& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.time_s < b.time_s;
  };
  std::stable_sort(out.feasible.begin(), out.feasible.end(), by_cost_then_time);
  std::stable_sort(out.infeasible.begin(), out.infeasible.end(), by_cost_then_time);
  // On the front: faster than every machine that costs as much or less (those sorted before it).
  double fastest_s = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < out.feasible.size(); ++i) {
    ParetoVariant& v = out.feasible[i];
    v.on_front = v.time_s < fastest_s;
    fastest_s = std::min(fastest_s, v.time_s);
    if (best_rank > 0 && out.base_index < 0 && g.rows_of.at(v.backend).base_rank == best_rank) {
      v.base_machine = true;
      out.base_index = static_cast<int>(i);
    }
  }
  return out;
}

}  // namespace

std::vector<const ParetoVariant*> ParetoGroup::front() const {
  std::vector<const ParetoVariant*> out;
  for (const auto& v : feasible)
    if (v.on_front) out.push_back(&v);
  return out;
}

std::vector<std::string> cost_factors(const std::string& cost_expr) {
  const std::string expected = "a machine-figure path or paths joined by '*' (chip.num_tiles*chip.sram_bytes_per_tile)";
  std::vector<std::string> factors;
  std::size_t start = 0;
  while (start <= cost_expr.size()) {
    const std::size_t star = std::min(cost_expr.find('*', start), cost_expr.size());
    const std::string path = cost_expr.substr(start, star - start);
    const bool bad_dots = path.empty() || path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos;
    if (bad_dots || path.find_first_of(" \t\n") != std::string::npos)
      throw InputError("", "--cost", expected, "\"" + cost_expr + "\"");
    factors.push_back(path);
    start = star + 1;
  }
  return factors;
}

std::string sweep_machines_path(const std::string& results_file) {
  return (std::filesystem::path(results_file).parent_path() / "machines.json").string();
}

nlohmann::json read_sweep_machines(const std::string& machines_file) {
  const std::string reason = unreadable_file_reason(machines_file);
  if (!reason.empty())
    throw InputError(machines_file, "", "the machines.json that `tilesim sweep` writes beside results.csv (or --machines FILE)", reason);
  nlohmann::json doc = load_json_file(machines_file);
  if (!doc.is_object() || !doc.contains("backends") || !doc["backends"].is_array())
    throw InputError(machines_file, "backends", "an array of the sweep's machines (machines.json of tilesim sweep)",
                     doc.is_object() && doc.contains("backends") ? describe_json(doc["backends"]) : "none");
  for (std::size_t i = 0; i < doc["backends"].size(); ++i) {
    const nlohmann::json& e = doc["backends"][i];
    const std::string at = "backends[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("backend") || !e["backend"].is_string() || !e.contains("machine_provenance"))
      throw InputError(machines_file, at, "an object with \"backend\" and \"machine_provenance\"", describe_json(e));
    const nlohmann::json& p = e["machine_provenance"];
    if (!p.is_null() && !(p.is_object() && p.contains("figures") && p["figures"].is_object()))
      throw InputError(machines_file, at + ".machine_provenance", "null or an object with \"figures\"", describe_json(p));
  }
  return doc;
}

double machine_figure(const nlohmann::json& machines, const std::string& machines_file, const std::string& backend,
                      const std::string& path) {
  const auto provenance = pareto_provenance_by_backend(machines);
  const auto p = provenance.find(backend);
  if (p == provenance.end())
    throw InputError(machines_file, "backends", "an entry for " + backend + " (a backend of the results)", "none");
  return pareto_figure_value(*p->second, machines_file, backend, path);
}

std::vector<ParetoGroup> pareto_fronts(const std::vector<ResultRow>& rows, const std::string& results_file,
                                       const nlohmann::json& machines, const std::string& machines_file,
                                       const std::string& cost_expr, const std::vector<std::string>& ops,
                                       const std::vector<std::string>& backends) {
  const std::vector<std::string> factors = cost_factors(cost_expr);
  std::set<std::string> bases;
  for (const ResultRow& r : rows) bases.insert(what_if_base_backend(r.backend));
  for (const auto& b : backends)
    if (!bases.count(b)) {
      std::string names;
      for (const auto& n : bases) names += (names.empty() ? "" : ", ") + n;
      throw InputError("", "--backends", "base backends of the results (" + names + ")", "\"" + b + "\"");
    }
  const auto provenance = pareto_provenance_by_backend(machines);
  std::vector<ParetoGroup> groups;
  bool any_front = false;
  // A group of one machine is no design space: its cost is never read, so a sweep may hold other
  // backends (a GPU model, the CPU) beside the machines compared.
  for (const ParetoGroupRows& g : pareto_group_rows(rows, results_file, ops, backends)) {
    if (g.machines.size() < 2) continue;
    groups.push_back(pareto_group(g, provenance, machines_file, cost_expr, factors));
    any_front = any_front || groups.back().feasible.size() >= 2;
  }
  if (!any_front)
    throw InputError(results_file, "",
                     "rows of a sweep over machine figures: a backend and op with at least two machines that each ran every point "
                     "(backends such as ipu:bow{chip.sram_bytes_per_tile*=2}; docs/sweep-format.md, \"Machine axes\")",
                     "none" + std::string(ops.empty() && backends.empty() ? "" : " among the selected ops and backends"));
  return groups;
}

}  // namespace tilesim::analysis
