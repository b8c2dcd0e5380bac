#include "models/ipu/ipu_fit.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "fitting/coordinate_descent.hpp"
#include "models/ipu/ipu_backend.hpp"

namespace tilesim::ipu {

std::vector<FitParameter> default_ipu_fit_parameters() {
  return {
      {"chip", "sync_cycles", 0, 5000, true},
      {"chip", "exchange_fixed_cycles", 0, 5000, true},
      {"chip", "exchange_bytes_per_cycle", 0.25, 8, false},
      {"chip", "exchange_cycles_per_region", 0, 200, true},
      {"chip", "compute_fixed_cycles", 0, 5000, true},
      {"planner", "repeat_loop_control_cycles", 0, 20000, true},
      {"planner", "objective_sync_cycles", 0, 5000, true},
      {"codelets", "multislice_cycles_per_vector", 1, 8, true},
      {"codelets", "multiupdateadd_per_extra_element_worker_cycles", 1, 12, true},
  };
}

namespace {

// Pointers to the parsed fields, by JSON place; one table so get and set agree.
template <class Machine>
auto field(Machine& m, const FitParameter& p) {
  struct Ref {
    std::int64_t* i = nullptr;
    std::int32_t* i32 = nullptr;
    double* d = nullptr;
  } r;
  const std::string k = p.section + "." + p.key;
  if (k == "chip.sync_cycles") r.i = &m.chip.sync_cycles;
  else if (k == "chip.exchange_fixed_cycles") r.i = &m.chip.exchange_fixed_cycles;
  else if (k == "chip.exchange_cycles_per_region") r.i = &m.chip.exchange_cycles_per_region;
  else if (k == "chip.compute_fixed_cycles") r.i = &m.chip.compute_fixed_cycles;
  else if (k == "chip.exchange_bytes_per_cycle") r.d = &m.chip.exchange_bytes_per_cycle;
  else if (k == "planner.repeat_loop_control_cycles") r.i = &m.planner.repeat_loop_control_cycles;
  else if (k == "planner.objective_sync_cycles") r.i = &m.planner.objective_sync_cycles;
  else if (k == "codelets.multislice_cycles_per_vector") r.i = &m.codelets.multislice_cycles_per_vector;
  else if (k == "codelets.multislice_in_range_worker_cycles") r.i = &m.codelets.multislice_in_range_worker_cycles;
  else if (k == "codelets.multiupdateadd_per_extra_element_worker_cycles") r.i = &m.codelets.multiupdateadd_per_extra_element_worker_cycles;
  else if (k == "codelets.multiupdateadd_in_range_worker_cycles") r.i = &m.codelets.multiupdateadd_in_range_worker_cycles;
  else if (k == "codelets.supervisor_cycles") r.i = &m.codelets.supervisor_cycles;
  else throw std::logic_error("fit: the IPU model has no fittable figure " + k);
  return r;
}

double rounded(const FitParameter& p, double v) {
  v = std::min(p.max, std::max(p.min, v));
  return p.integer ? std::round(v) : v;
}

// Sets the parsed figure only: what the simulation reads, not the provenance copy that reports and --write read.
void set_value(IpuMachine& machine, const FitParameter& parameter, double value) {
  auto r = field(machine, parameter);
  if (r.i) *r.i = static_cast<std::int64_t>(value);
  if (r.d) *r.d = value;
}

}  // namespace

void set_figure(IpuMachine& machine, const FitParameter& parameter, double value) {
  set_value(machine, parameter, value);
  auto& figure = machine.provenance.figure(parameter.section + "." + parameter.key);
  figure.value = parameter.integer ? nlohmann::json(static_cast<std::int64_t>(value)) : nlohmann::json(value);
}

double get_figure(const IpuMachine& machine, const FitParameter& parameter) {
  auto r = field(const_cast<IpuMachine&>(machine), parameter);
  return r.i ? static_cast<double>(*r.i) : *r.d;
}

double mean_abs_log_error(const IpuMachine& machine, const std::vector<FitPoint>& points) {
  double sum = 0;
  OpGraph graph;
  for (const auto& p : points) {
    graph.ops.clear();
    graph.tensors.clear();
    const Op op = graph.add_gather_scatter("fit", p.kind, DType::float32, p.shape);
    const double predicted = simulate_op_timing(op, p.indices, machine).time_s;
    sum += std::fabs(std::log(predicted / p.measured_s));
  }
  return points.empty() ? 0 : sum / static_cast<double>(points.size());
}

namespace {

// Sync, fixed phase costs and the loop-control step only add cycles per phase: they change neither
// the plans (the planner's objective charges syncs its own planner.objective_sync_cycles, a structural
// figure) nor any tile's work. So a point's cycles are
// its "structural" cycles plus phase counts times those figures, and the fit simulates only when a
// structural figure (exchange rate, codelet costs) changes.
struct PointProfile {
  double structural_cycles = 0;
  int syncs = 0, exchanges = 0, computes = 0;
};

bool is_additive(const FitParameter& p) {
  const std::string k = p.section + "." + p.key;
  return k == "chip.sync_cycles" || k == "chip.exchange_fixed_cycles" || k == "chip.compute_fixed_cycles" ||
         k == "planner.repeat_loop_control_cycles";
}

std::vector<PointProfile> profile_points(IpuMachine machine, const std::vector<FitPoint>& points) {
  machine.planner.repeat_loop_control_cycles = 0;
  std::vector<PointProfile> out;
  out.reserve(points.size());
  OpGraph graph;
  for (const auto& p : points) {
    graph.ops.clear();
    graph.tensors.clear();
    const Op op = graph.add_gather_scatter("fit", p.kind, DType::float32, p.shape);
    const auto t = simulate_op_timing(op, p.indices, machine);
    PointProfile profile;
    for (const auto& phase : t.stats.phases) {
      if (phase.kind == sim::PhaseKind::sync) ++profile.syncs;
      if (phase.kind == sim::PhaseKind::exchange) ++profile.exchanges;
      if (phase.kind == sim::PhaseKind::compute) ++profile.computes;
    }
    profile.structural_cycles = static_cast<double>(t.stats.total_cycles) - profile.syncs * double(machine.chip.sync_cycles) -
                                profile.exchanges * double(machine.chip.exchange_fixed_cycles) -
                                profile.computes * double(machine.chip.compute_fixed_cycles);
    out.push_back(profile);
  }
  return out;
}

double profile_error(const std::vector<PointProfile>& profiles, const std::vector<FitPoint>& points, const IpuMachine& m) {
  double sum = 0;
  const double sync = double(m.chip.sync_cycles), exch = double(m.chip.exchange_fixed_cycles);
  const double comp = double(m.chip.compute_fixed_cycles), loop = double(m.planner.repeat_loop_control_cycles);
  for (std::size_t k = 0; k < points.size(); ++k) {
    const auto& f = profiles[k];
    double cycles = f.structural_cycles + f.syncs * sync + f.exchanges * exch + f.computes * comp;
    if (loop > 0) cycles += loop + comp + sync;  // the loop-control compute phase and its sync
    sum += std::fabs(std::log(cycles / m.chip.clock_hz / points[k].measured_s));
  }
  return points.empty() ? 0 : sum / static_cast<double>(points.size());
}

}  // namespace

FitResult fit_ipu_machine(const IpuMachine& start, const std::vector<FitParameter>& parameters,
                          const std::vector<FitPoint>& points, const std::string& note,
                          const std::function<void(int, double)>& progress) {
  // The search's coordinates are the parameters; a point of it is the start with those figures set.
  const auto machine_at = [&](const std::vector<double>& values) {
    IpuMachine m = start;
    for (std::size_t k = 0; k < parameters.size(); ++k) set_value(m, parameters[k], values[k]);
    return m;
  };
  std::vector<double> before;
  for (const auto& p : parameters) before.push_back(get_figure(start, p));

  // Profiles per setting of the structural figures; additive figures are evaluated from them.
  std::map<std::vector<double>, std::vector<PointProfile>> cache;
  const fitting::ObjectiveFunction error_at = [&](const std::vector<double>& values) {
    const IpuMachine m = machine_at(values);
    std::vector<double> key;
    for (std::size_t k = 0; k < parameters.size(); ++k) {
      if (!is_additive(parameters[k])) key.push_back(values[k]);
    }
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, profile_points(m, points)).first;
    return profile_error(it->second, points, m);
  };
  // A step is a factor: a figure is multiplied or divided by it, within its bounds and rounded as the
  // machine file stores it. Zero cannot be scaled: stepping up from it gives a small positive value.
  const fitting::MoveFunction move = [&](std::size_t k, double current, int direction, double factor) {
    const FitParameter& p = parameters[k];
    const double base = current > 0 ? current : (p.integer ? 1.0 : 0.01);
    return rounded(p, direction > 0 ? (current > 0 ? base * factor : base) : current / factor);
  };
  // Each figure moves up while that helps, then down; the factor starts at 2 and becomes its square
  // root after each of five passes.
  fitting::DescentOptions schedule;
  schedule.schedule = fitting::StepSchedule::shrinking;
  schedule.initial_step = 2.0;
  schedule.max_passes = 5;
  schedule.tolerance = 1e-12;
  const fitting::DescentResult descent = fitting::coordinate_descent(before, move, error_at, schedule, progress);

  FitResult r;
  r.machine = start;
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    if (descent.moves[k] > 0) set_figure(r.machine, parameters[k], descent.values[k]);
  }
  r.initial_error = descent.start_objective;
  r.final_error = descent.objective;
  r.evaluations = descent.evaluations;
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const auto& p = parameters[k];
    const double after = get_figure(r.machine, p);
    r.values[p.section + "." + p.key] = {{"before", before[k]}, {"after", after}};
    auto& figure = r.machine.provenance.figure(p.section + "." + p.key);
    figure.source = "fitted: " + note + " (was " + (p.integer ? std::to_string(static_cast<std::int64_t>(before[k]))
                                                                  : std::to_string(before[k])) + ")";
  }
  return r;
}

}  // namespace tilesim::ipu
