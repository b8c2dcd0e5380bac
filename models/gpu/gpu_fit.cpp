#include "models/gpu/gpu_fit.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "fitting/coordinate_descent.hpp"
#include "fitting/split.hpp"

namespace tilesim::gpu {

namespace {

constexpr const char* kZeroFillKey = "zero_fill";
constexpr const char* kGatherHostKey = "gather";

bool is_efficiency(const std::string& key) { return key == "dram_efficiency" || key == "l2_efficiency"; }

double round_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::floor(std::log10(std::abs(value)));
  const double scale = std::pow(10.0, static_cast<double>(digits - 1) - magnitude);
  return std::round(value * scale) / scale;
}

// The points of each op, in GpuOp order, restricted to one half.
std::map<GpuOp, std::vector<const GpuMeasurement*>> by_op(const std::vector<GpuMeasurement>& points, bool calibration_half) {
  std::map<GpuOp, std::vector<const GpuMeasurement*>> groups;
  for (const auto& p : points) {
    if (fitting::in_calibration_split(p.shape) == calibration_half) groups[p.op].push_back(&p);
  }
  return groups;
}

double objective_of(const std::map<GpuOp, std::vector<const GpuMeasurement*>>& groups, const GpuMachine& machine) {
  double total = 0;
  int ops = 0;
  for (const auto& [op, pts] : groups) {
    if (pts.empty()) continue;
    double sum = 0;
    for (const GpuMeasurement* p : pts) {
      const double predicted = predict(op, p->shape, DType::float32, machine, GpuMode::eager).time_s;
      sum += std::abs(std::log(predicted / p->time_s));
    }
    total += sum / static_cast<double>(pts.size());
    ++ops;
  }
  return ops == 0 ? 0.0 : total / ops;
}

}  // namespace

GpuCalibration prior_calibration(const GpuMachine& machine) {
  // Starting values only: the search moves every fitted figure away from them. Host floors are the
  // smallest A100 times of each op kind in the hydronet README; launch latency is NVIDIA's ~2.9 us
  // (blog "Getting Started with CUDA Graphs"); rates start at index_select's ~1e11 elements/s
  // (workloads.md section 0), retries an order of magnitude faster; efficiencies mid-range.
  const double element_rate_per_sm_cycle = 1e11 / machine.sm_cycles_per_s();
  GpuCalibration c;
  c.host_gather_s = 8.6e-6;
  c.host_scatter_add_s = 24.6e-6;
  c.host_scatter_max_min_s = 41.5e-6;
  c.host_zero_fill_s = c.host_gather_s;
  c.launch_latency_s = 2.9e-6;
  c.dram_efficiency = 0.9;
  c.l2_efficiency = 0.5;
  c.gather_elements_per_sm_cycle = element_rate_per_sm_cycle;
  c.atomic_add_elements_per_sm_cycle = element_rate_per_sm_cycle;
  c.atomic_cas_elements_per_sm_cycle = element_rate_per_sm_cycle;
  c.contended_cas_retries_per_sm_cycle = 10 * element_rate_per_sm_cycle;
  return c;
}

double fit_objective(const std::vector<GpuMeasurement>& points, const GpuMachine& machine) {
  std::map<GpuOp, std::vector<const GpuMeasurement*>> groups;
  for (const auto& p : points) groups[p.op].push_back(&p);
  return objective_of(groups, machine);
}

std::vector<GpuHalfErrors> half_errors(const std::vector<GpuMeasurement>& points, const GpuMachine& machine,
                                       std::vector<GpuOp>& ops_out) {
  std::map<GpuOp, GpuHalfErrors> rows;
  std::map<GpuOp, std::vector<double>> pred[2], meas[2];
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const bool cal = fitting::in_calibration_split(p.shape);
    auto& row = rows[p.op];
    (cal ? row.calibration_points : row.held_out_points).push_back(i);
    pred[cal][p.op].push_back(predict(p.op, p.shape, DType::float32, machine, GpuMode::eager).time_s);
    meas[cal][p.op].push_back(p.time_s);
  }
  ops_out.clear();
  std::vector<GpuHalfErrors> out;
  for (auto& [op, row] : rows) {
    constexpr std::size_t kWorst = 5;
    row.calibration = fitting::summarize_errors(pred[1][op], meas[1][op], kWorst);
    row.held_out = fitting::summarize_errors(pred[0][op], meas[0][op], kWorst);
    ops_out.push_back(op);
    out.push_back(std::move(row));
  }
  return out;
}

namespace {

// The figures to fit, by position in calibration_figures(): those `keys` name (each once, in the order
// given), or every fitted figure when `keys` is empty. Throws InputError for an unknown key.
std::vector<std::size_t> free_figures(const std::vector<std::string>& keys) {
  const auto& figures = calibration_figures();
  std::vector<std::size_t> free;
  if (keys.empty()) {
    for (std::size_t i = 0; i < figures.size(); ++i) {
      if (std::string(figures[i].key) != kZeroFillKey) free.push_back(i);
    }
    return free;
  }
  for (const auto& key : keys) {
    std::size_t found = figures.size();
    for (std::size_t i = 0; i < figures.size(); ++i) {
      if (key == figures[i].key) found = i;
    }
    if (found == figures.size() || key == kZeroFillKey) {
      std::string known;
      for (const auto& f : figures) {
        if (std::string(f.key) != kZeroFillKey) known += (known.empty() ? "" : ", ") + std::string(f.key);
      }
      throw InputError("", "fit parameters", "one of " + known, "\"" + key + "\"");
    }
    if (std::find(free.begin(), free.end(), found) == free.end()) free.push_back(found);
  }
  return free;
}

// The calibration half's points by op, after checking that every time is usable and that the half is
// not empty.
std::map<GpuOp, std::vector<const GpuMeasurement*>> calibration_points(const std::vector<GpuMeasurement>& points) {
  for (const auto& p : points) {
    if (!(p.time_s > 0) || !std::isfinite(p.time_s)) {
      throw InputError("", "measurements", "positive finite times", std::to_string(p.time_s) + " s for " + to_string(p.op));
    }
  }
  auto groups = by_op(points, /*calibration_half=*/true);
  std::size_t calibration_count = 0;
  for (const auto& [op, pts] : groups) calibration_count += pts.size();
  if (calibration_count == 0) {
    throw InputError("", "measurements", "points in the calibration half (fitting/split.hpp)", "none");
  }
  return groups;
}

}  // namespace

GpuFitResult fit_gpu_model(const std::vector<GpuMeasurement>& points, const GpuMachine& machine,
                           const GpuFitOptions& options) {
  const auto& figures = calibration_figures();
  const std::vector<std::size_t> free = free_figures(options.free);
  const auto groups = calibration_points(points);

  GpuMachine start = machine;
  start.calibration = options.start ? *options.start : prior_calibration(machine);
  const auto sync_zero_fill = [&](GpuCalibration& c) {
    for (std::size_t i : free) {
      if (std::string(figures[i].key) == kGatherHostKey) c.host_zero_fill_s = c.host_gather_s;
    }
  };
  sync_zero_fill(start.calibration);

  // The search's coordinates are the free figures; a point of it is the start with those figures set.
  const auto machine_at = [&](const std::vector<double>& values) {
    GpuMachine m = start;
    for (std::size_t j = 0; j < free.size(); ++j) m.calibration.*(figures[free[j]].member) = values[j];
    sync_zero_fill(m.calibration);
    return m;
  };
  std::vector<double> start_values;
  for (std::size_t i : free) start_values.push_back(start.calibration.*(figures[i].member));
  // A step is a distance in log space: a figure moves by the factor exp(+-step). Efficiencies stay <= 1.
  const fitting::MoveFunction move = [&](std::size_t j, double value, int direction, double step) {
    double v = value * std::exp(direction * step);
    if (is_efficiency(figures[free[j]].key)) v = std::min(v, 1.0);
    return v;
  };
  const fitting::ObjectiveFunction objective = [&](const std::vector<double>& values) {
    return objective_of(groups, machine_at(values));
  };
  // Each figure keeps its own step, growing after a kept move and halving after a visit without one.
  fitting::DescentOptions schedule;
  schedule.schedule = fitting::StepSchedule::adaptive;
  schedule.initial_step = 0.5;
  schedule.max_passes = options.max_sweeps;
  schedule.moves_per_visit = 4;
  schedule.step_growth = 1.5;
  schedule.max_step = 2.0;
  schedule.step_shrink = 0.5;
  schedule.min_step = 1e-5;
  schedule.tolerance = 1e-12;
  const fitting::DescentResult descent = fitting::coordinate_descent(start_values, move, objective, schedule);

  GpuMachine trial = machine_at(descent.values);
  for (std::size_t i : free) {
    double& v = trial.calibration.*(figures[i].member);
    v = round_significant(v, options.significant_digits);
  }
  sync_zero_fill(trial.calibration);

  GpuFitResult result;
  result.start_objective = descent.start_objective;
  result.calibration = trial.calibration;
  for (std::size_t i : free) result.fitted.push_back(figures[i].key);
  // Sweeps as this fit reports them: the passes before the one after which every step was below the
  // smallest, or max_sweeps when the steps never got there.
  result.sweeps = descent.converged ? descent.passes - 1 : descent.passes;
  result.calibration_objective = objective_of(groups, trial);
  result.errors = half_errors(points, trial, result.ops);
  return result;
}

std::string machine_text_with_calibration(const std::string& path, const GpuCalibration& calibration,
                                          const std::vector<std::pair<std::string, std::string>>& sources_by_key) {
  // Validate first with the strict reader (duplicate keys, unknown keys, missing sources), then edit
  // an order-preserving copy so the file keeps its layout.
  parse_gpu_machine(load_json_file(path), path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text.str());
  for (const auto& [key, source] : sources_by_key) {
    const CalibrationFigure* figure = nullptr;
    for (const auto& f : calibration_figures()) {
      if (key == f.key) figure = &f;
    }
    if (!figure) throw std::invalid_argument("machine_text_with_calibration: unknown figure " + key);
    auto& entry = doc[figure->section][figure->key];
    entry["value"] = calibration.*(figure->member);
    entry["source"] = source;
  }
  const std::string out = doc.dump(2) + "\n";
  parse_gpu_machine(nlohmann::json::parse(out), path);
  return out;
}

}  // namespace tilesim::gpu
