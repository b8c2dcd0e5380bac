#include "runs/training_run.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

namespace tilesim::runs {

nlohmann::json phase_times(const OpGraph& graph, const BackendResult& step) {
  std::map<std::string, OpPhase> phase_of;
  for (const Op& op : graph.ops) phase_of[op.name] = op.phase;
  std::map<OpPhase, double> seconds{{OpPhase::forward, 0}, {OpPhase::loss, 0}, {OpPhase::backward, 0}, {OpPhase::optimizer, 0}};
  for (const OpResult& row : step.ops) {
    // A row that stands for a whole phase (torch-cpu's autograd step) says which; an op's row is
    // matched to its op by name.
    if (row.phase) {
      seconds[*row.phase] += row.time_s;
      continue;
    }
    auto it = phase_of.find(row.op);
    seconds[it == phase_of.end() ? OpPhase::forward : it->second] += row.time_s;
  }
  nlohmann::json j;
  for (const auto& [phase, s] : seconds) j[to_string(phase) + "_s"] = s;
  return j;
}

TrainingRun run_training_steps(Backend& backend, const workloads::Instance& instance, std::int64_t steps,
                               const RunOptions& options, bool progress) {
  const workloads::training::TrainingLayout& layout = instance.training;
  TrainingRun run;
  TensorValues values = instance.values;  // this backend's parameters, state and step number
  nlohmann::json per_step = nlohmann::json::array();
  std::vector<std::int64_t> failed_steps;
  for (std::int64_t s = 1; s <= steps; ++s) {
    BackendResult result = backend.run(instance.graph, values, options);
    const TensorValues* outputs = backend.computed_outputs();
    const bool has_values = outputs != nullptr && outputs->has(layout.loss);
    std::optional<double> loss;
    if (has_values) loss = outputs->f32(layout.loss).at(0);
    if (has_values && s == 1) run.first_step_outputs = *outputs;
    bool verified = true;
    for (const OpResult& row : result.ops) verified = verified && row.verified.value_or(true);
    if (!verified) failed_steps.push_back(s);
    run.all_steps_verified = run.all_steps_verified && verified;

    nlohmann::json entry = phase_times(instance.graph, result);
    entry["step"] = s;
    entry["time_s"] = result.time_s;
    entry["loss"] = loss ? nlohmann::json(*loss) : nlohmann::json(nullptr);
    entry["verified"] = verified;
    per_step.push_back(entry);
    run.loss.push_back(loss);
    run.step_time_s.push_back(result.time_s);
    if (progress && steps > 1)
      std::cerr << "tilesim:   " << result.backend << " step " << s << "/" << steps
                << (loss ? " loss " + std::to_string(*loss) : std::string()) << std::endl;

    // The next step starts from this step's updates (a model computes none: its steps repeat).
    if (has_values && s < steps) workloads::training::advance_step(layout, *outputs, values);
    run.last_step = std::move(result);
  }

  // The median step and its split: the first step's times include cold caches like any first call.
  std::vector<double> sorted = run.step_time_s;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? 0 : (sorted.size() % 2 ? sorted[sorted.size() / 2]
                                                                 : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]));
  nlohmann::json loss_list = nlohmann::json::array();
  for (const auto& l : run.loss) loss_list.push_back(l ? nlohmann::json(*l) : nlohmann::json(nullptr));
  const nlohmann::json last_split = phase_times(instance.graph, run.last_step);
  const double forward_s = last_split.value("forward_s", 0.0), backward_s = last_split.value("backward_s", 0.0);
  run.summary = {{"steps", steps},
                 {"loss", loss_list},
                 {"median_step_time_s", median},
                 {"last_step", last_split},
                 {"backward_to_forward", forward_s > 0 ? nlohmann::json(backward_s / forward_s) : nlohmann::json(nullptr)},
                 {"all_steps_verified", run.all_steps_verified},
                 {"failed_steps", failed_steps},
                 {"per_step", per_step}};
  return run;
}

LossAgreement compare_losses(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b,
                             double relative_tolerance) {
  LossAgreement r;
  for (std::size_t s = 0; s < std::min(a.size(), b.size()); ++s) {
    if (!a[s] || !b[s]) continue;
    ++r.compared_steps;
    const double d = std::fabs(*a[s] - *b[s]);
    if (d > r.max_abs_difference || std::isnan(d)) {
      r.max_abs_difference = d;
      r.worst_step = static_cast<std::int64_t>(s) + 1;
    }
    if (!(d <= relative_tolerance * std::max(1.0, std::fabs(*a[s])))) {
      if (s == 0) r.first_step_equal = false;
      if (r.every_step_equal) r.first_step_apart = static_cast<std::int64_t>(s) + 1;
      r.every_step_equal = false;
    }
  }
  return r;
}

double loss_relative_tolerance(DType model_dtype) { return is_half_dtype(model_dtype) ? 8.0 * unit_roundoff(model_dtype) : 1e-4; }

nlohmann::json loss_curve_agreements(const std::vector<const std::vector<std::optional<double>>*>& curves,
                                     const std::vector<backends::BackendSpec>& specs, double relative_tolerance, const std::string& unit,
                                     bool& all_agree, std::string& notes) {
  nlohmann::json agreements = nlohmann::json::array();
  for (std::size_t a = 0; a < curves.size(); ++a)
    for (std::size_t b = a + 1; b < curves.size(); ++b) {
      const LossAgreement la = compare_losses(*curves[a], *curves[b], relative_tolerance);
      const bool compared = la.compared_steps > 0;
      const auto if_compared = [&](bool v) { return compared ? nlohmann::json(v) : nlohmann::json(nullptr); };
      agreements.push_back({{"backends", {specs[a].name(), specs[b].name()}},
                            {"compared_" + unit + "s", la.compared_steps},
                            {"first_" + unit + "_equal", if_compared(la.first_step_equal)},
                            {"every_" + unit + "_equal", if_compared(la.every_step_equal)},
                            {"first_" + unit + "_apart", la.first_step_apart},
                            {"worst_" + unit, la.worst_step},
                            {"max_abs_difference", la.max_abs_difference},
                            {"tolerance", "within " + std::to_string(relative_tolerance) + " of max(1, |loss|)"}});
      if (!compared) continue;  // nothing to say of a curve a model does not compute
      all_agree = all_agree && la.first_step_equal;
      std::ostringstream note;
      note << "loss curves " << specs[a].name() << " / " << specs[b].name() << ": ";
      if (!la.first_step_equal)
        note << "DIFFER at " << unit << " 1 (same parameters, same inputs) by " << la.max_abs_difference;
      else if (la.every_step_equal)
        note << "agree at every " << unit << " (largest difference " << la.max_abs_difference << ")";
      else
        note << "agree at " << unit << " 1, apart from " << unit << " " << la.first_step_apart << " (up to " << la.max_abs_difference
             << "): each follows its own rounded updates";
      notes += note.str() + "\n";
    }
  return agreements;
}

}  // namespace tilesim::runs
