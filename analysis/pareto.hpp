#pragma once
// Pareto fronts of time against a cost from a sweep over machine figures (docs/sweep-format.md,
// "Machine axes"; docs/analysis.md, "tilesim plot pareto"). Rows are grouped by base backend (the
// backend with its `{...}` overrides removed) and op; within a group every machine (the base itself or
// a what-if) is one design point. Its time is the sum of its rows' time_s over the grid's points, and
// its cost the product of machine figures named by the cost expression, read from the machines.json
// the sweep wrote beside results.csv. A machine lacking a time at a point another machine of its group
// ran (a point that does not fit) cannot run the whole grid: it is listed apart, never on the front.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/results_table.hpp"

namespace tilesim::analysis {

struct ParetoVariant {
  std::string backend;            // the row's backend: "ipu:bow{chip.sram_bytes_per_tile*=2}", or the base itself
  double cost = 0;                // the product of the cost expression's figures on this machine
  double time_s = 0;              // the sum of time_s over the group's points (0 when points are missing)
  std::size_t missing_points = 0;  // points of the group this machine has no time for (0: it runs the whole grid)
  bool on_front = false;
  // The base machine's own figures: the base backend itself, or (when it is not among the rows) a
  // what-if whose every override is a scale of exactly 1, as a machine axis `{"scale": [..., 1, ...]}` makes.
  bool base_machine = false;
};

struct ParetoGroup {
  std::string backend;  // the base backend, "ipu:bow", "gpu-model:a100-40gb:eager"
  std::string op;
  std::string kind;     // the rows' kind: "simulated" or "modeled" (the time is whatever the rows say)
  std::string cost;     // the cost expression as given, "chip.num_tiles*chip.sram_bytes_per_tile"
  std::size_t points = 0;  // the grid's points: (shape, dtype, repeat) that some machine of the group ran
  std::vector<ParetoVariant> feasible;    // by cost ascending, ties by time
  std::vector<ParetoVariant> infeasible;  // missing points; by cost ascending
  // The speedup reference: the feasible base-machine variant, or -1 when there is none.
  int base_index = -1;
  std::vector<const ParetoVariant*> front() const;  // the feasible variants on the front, in cost order
};

// The cost expression's figure paths: "chip.num_tiles*chip.sram_bytes_per_tile" -> both paths. Throws
// InputError (option --cost) for an empty expression, an empty factor or a factor holding a space.
std::vector<std::string> cost_factors(const std::string& cost_expr);

// machines.json beside a results.csv (where `tilesim sweep` writes it).
std::string sweep_machines_path(const std::string& results_file);

// Reads a sweep's machines.json. A missing file is an InputError naming it and saying `tilesim sweep`
// writes it; a file without a "backends" array of {"backend", "machine_provenance"} is one naming the path.
nlohmann::json read_sweep_machines(const std::string& machines_file);

// The value of one figure path ("chip.sram_bytes_per_tile") of `backend`'s machine in a machines.json
// document as read_sweep_machines returns it (so checked for its shape; pareto_fronts takes the same). Throws InputError naming machines_file, the backend and the path when the backend is not
// listed, has no machine (a measured backend), or its machine carries no such figure.
double machine_figure(const nlohmann::json& machines, const std::string& machines_file, const std::string& backend,
                      const std::string& path);

// Every (base backend, op) with at least two machines among `rows`, in the order the rows name them;
// `ops` / `backends` (base backend names), when not empty, keep only those. Throws InputError naming
// results_file when no group has two machines that each run the whole grid (not a machine sweep), and
// as machine_figure does for a machine of such a group that lacks a cost figure.
std::vector<ParetoGroup> pareto_fronts(const std::vector<ResultRow>& rows, const std::string& results_file,
                                       const nlohmann::json& machines, const std::string& machines_file,
                                       const std::string& cost_expr, const std::vector<std::string>& ops = {},
                                       const std::vector<std::string>& backends = {});

}  // namespace tilesim::analysis
