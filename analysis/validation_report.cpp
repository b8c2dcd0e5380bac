#include "analysis/validation_report.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "fitting/error_metrics.hpp"
#include "fitting/split.hpp"

namespace tilesim::analysis {

namespace {

constexpr Split report_splits[] = {Split::held_out, Split::calibration, Split::all};

// NaN (an empty group) becomes null, so validation.json stays valid JSON with no magic numbers.
nlohmann::json number_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json shape_json(const OpShape& shape) {
  return {{"num_inputs", shape.num_inputs}, {"num_features", shape.num_features}, {"num_outputs", shape.num_outputs}};
}

std::string split_name(bool calibration) { return calibration ? "calibration" : "held_out"; }

// (machine, op) pairs in the order the points first name them.
std::vector<std::pair<std::string, std::string>> groups_of(const std::vector<ValidationPoint>& points) {
  std::vector<std::pair<std::string, std::string>> groups;
  for (const auto& p : points) {
    const std::pair<std::string, std::string> key{p.machine, p.op};
    bool seen = false;
    for (const auto& g : groups) seen = seen || g == key;
    if (!seen) groups.push_back(key);
  }
  return groups;
}

const ModelInfo* find_model(const std::vector<ModelInfo>& models, const std::string& machine) {
  for (const auto& m : models)
    if (m.machine == machine) return &m;
  return nullptr;
}

nlohmann::json speedup_summary_json(const std::vector<SpeedupPoint>& points) {
  std::vector<double> base_pred, base_meas, target_pred, target_meas;
  // summarize_speedup works on times; a speedup s is the pair (s, 1) of baseline and target times.
  for (const auto& p : points) {
    base_pred.push_back(p.predicted);
    base_meas.push_back(p.measured);
    target_pred.push_back(1.0);
    target_meas.push_back(1.0);
  }
  const fitting::SpeedupSummary s = fitting::summarize_speedup(base_pred, base_meas, target_pred, target_meas);
  return {{"count", s.count},
          {"correct_side_share", number_or_null(s.correct_side_share)},
          {"median_abs_error_pct", number_or_null(s.median_abs_error_pct)},
          {"p90_abs_error_pct", number_or_null(s.p90_abs_error_pct)},
          {"bias_pct", number_or_null(s.bias_pct)},
          {"median_measured_speedup", number_or_null(s.median_measured_speedup)},
          {"median_predicted_speedup", number_or_null(s.median_predicted_speedup)}};
}

std::string format_pct(const nlohmann::json& value, bool sign = false) {
  if (!value.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", value.get<double>());
  return buf;
}

std::string format_r(const nlohmann::json& value) {
  if (!value.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", value.get<double>());
  return buf;
}

std::string pad(const std::string& text, std::size_t width, bool right = false) {
  // Width in characters: every cell here is ASCII.
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

}  // namespace

std::string to_string(Split split) {
  switch (split) {
    case Split::held_out: return "held_out";
    case Split::calibration: return "calibration";
    case Split::all: return "all";
  }
  throw std::logic_error("unknown Split");
}

bool in_split(bool calibration, Split split) {
  return split == Split::all || (split == Split::calibration) == calibration;
}

double ValidationPoint::error_pct() const { return fitting::percentage_error(predicted_s, measured_s); }

std::optional<ErrorTargets> error_targets_for(const std::string& machine) {
  if (machine == "bow") return ErrorTargets{15.0, 35.0, 0.97};
  if (machine == "a100") return ErrorTargets{5.0, 15.0, std::nullopt};
  return std::nullopt;
}

std::vector<SpeedupPoint> speedup_points(const std::vector<ValidationPoint>& points, const std::string& op,
                                         const std::string& baseline_machine, const std::string& target_machine) {
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, const ValidationPoint*> baseline;
  for (const auto& p : points)
    if (p.machine == baseline_machine && p.op == op)
      baseline[{p.shape.num_inputs, p.shape.num_features, p.shape.num_outputs}] = &p;
  std::vector<SpeedupPoint> out;
  for (const auto& p : points) {
    if (p.machine != target_machine || p.op != op) continue;
    const auto it = baseline.find({p.shape.num_inputs, p.shape.num_features, p.shape.num_outputs});
    if (it == baseline.end()) continue;
    out.push_back({p.shape, p.calibration, it->second->predicted_s / p.predicted_s, it->second->measured_s / p.measured_s});
  }
  return out;
}

nlohmann::json error_summary_json(const std::vector<ValidationPoint>& points, std::size_t worst_count) {
  std::vector<double> predicted, measured;
  for (const auto& p : points) {
    predicted.push_back(p.predicted_s);
    measured.push_back(p.measured_s);
  }
  const fitting::ErrorSummary s = fitting::summarize_errors(predicted, measured, worst_count);
  nlohmann::json worst = nlohmann::json::array();
  for (std::size_t i : s.worst) {
    const auto& p = points[i];
    nlohmann::json row = shape_json(p.shape);
    row["split"] = split_name(p.calibration);
    row["predicted_s"] = p.predicted_s;
    row["measured_s"] = p.measured_s;
    row["error_pct"] = p.error_pct();
    worst.push_back(std::move(row));
  }
  return {{"count", s.count},
          {"median_ape_pct", number_or_null(s.median_ape_pct)},
          {"p90_ape_pct", number_or_null(s.p90_ape_pct)},
          {"bias_pct", number_or_null(s.bias_pct)},
          {"pearson_log_r", s.pearson_log_r ? nlohmann::json(*s.pearson_log_r) : nlohmann::json()},
          {"worst", std::move(worst)}};
}

nlohmann::json build_validation_report(const ReportInputs& in) {
  nlohmann::json report;
  report["suite"] = in.suite;
  report["data"] = {{"dir", in.data_dir},
                    {"source", "graphcore-research/hydronet-gnn at commit a89c2e4, folder experiments/ (MIT licence)"}};
  report["split_rule"] = fitting::split_rule_text();
  report["headline_split"] = "held_out";
  report["error_definition"] =
      "error_pct = 100 * (predicted - measured) / measured per point (> 0: the model is slower than the hardware); "
      "median and p90 are of its absolute value (linear interpolation between order statistics), bias is its mean, "
      "pearson_log_r is the correlation of log(predicted) with log(measured)";

  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : in.models)
    models.push_back({{"machine", m.machine},
                      {"machine_label", m.machine_label},
                      {"prediction_kind", m.prediction_kind},
                      {"model", m.model},
                      {"machine_file", m.machine_file},
                      {"mode", m.mode},
                      {"measurement", m.measurement}});
  report["models"] = std::move(models);

  nlohmann::json results = nlohmann::json::array();
  for (const auto& [machine, op] : groups_of(in.points)) {
    nlohmann::json entry = {{"machine", machine}, {"op", op}};
    if (const ModelInfo* m = find_model(in.models, machine)) {
      entry["prediction_kind"] = m->prediction_kind;
      entry["model"] = m->model;
      entry["machine_file"] = m->machine_file;
      entry["mode"] = m->mode;
    }
    nlohmann::json splits;
    for (Split split : report_splits) {
      std::vector<ValidationPoint> subset;
      for (const auto& p : in.points)
        if (p.machine == machine && p.op == op && in_split(p.calibration, split)) subset.push_back(p);
      splits[to_string(split)] = error_summary_json(subset, in.worst_count);
    }
    if (const auto targets = error_targets_for(machine)) {
      const auto& held = splits["held_out"];
      const auto le = [](const nlohmann::json& v, double bound) { return v.is_number() && v.get<double>() <= bound; };
      bool met = le(held["median_ape_pct"], targets->median_ape_pct_max) && le(held["p90_ape_pct"], targets->p90_ape_pct_max);
      nlohmann::json t = {{"split", "held_out"},
                          {"median_ape_pct_max", targets->median_ape_pct_max},
                          {"p90_ape_pct_max", targets->p90_ape_pct_max}};
      if (targets->pearson_log_r_min) {
        t["pearson_log_r_min"] = *targets->pearson_log_r_min;
        met = met && held["pearson_log_r"].is_number() && held["pearson_log_r"].get<double>() >= *targets->pearson_log_r_min;
      }
      t["met"] = met;
      entry["targets"] = std::move(t);
    }
    entry["splits"] = std::move(splits);
    results.push_back(std::move(entry));
  }
  report["results"] = std::move(results);

  nlohmann::json speedups = nlohmann::json::array();
  const ModelInfo* base_model = find_model(in.models, in.speedup_baseline);
  const ModelInfo* target_model = find_model(in.models, in.speedup_target);
  for (const auto& [machine, op] : groups_of(in.points)) {
    if (machine != in.speedup_target) continue;
    const auto points = speedup_points(in.points, op, in.speedup_baseline, in.speedup_target);
    if (points.empty()) continue;
    nlohmann::json entry = {
        {"op", op},
        {"baseline", in.speedup_baseline},
        {"target", in.speedup_target},
        {"speedup", in.speedup_baseline + " time / " + in.speedup_target + " time (> 1: " + in.speedup_target + " is faster)"},
        {"predicted_by", {{in.speedup_baseline, base_model ? base_model->prediction_kind : ""},
                          {in.speedup_target, target_model ? target_model->prediction_kind : ""}}}};
    nlohmann::json splits;
    for (Split split : report_splits) {
      std::vector<SpeedupPoint> subset;
      for (const auto& p : points)
        if (in_split(p.calibration, split)) subset.push_back(p);
      splits[to_string(split)] = speedup_summary_json(subset);
    }
    const auto& share = splits["held_out"]["correct_side_share"];
    entry["targets"] = {{"split", "held_out"},
                        {"correct_side_share_min", speedup_correct_side_share_min},
                        {"met", share.is_number() && share.get<double>() >= speedup_correct_side_share_min}};
    entry["splits"] = std::move(splits);
    speedups.push_back(std::move(entry));
  }
  report["speedup"] = std::move(speedups);
  return report;
}

std::string points_csv(const std::vector<ValidationPoint>& points) {
  std::ostringstream csv;
  csv << "machine,op,num_inputs,num_features,num_outputs,split,index_seed,predicted_s,measured_s,error_pct\n";
  char buf[160];
  for (const auto& p : points) {
    csv << p.machine << ',' << p.op << ',' << p.shape.num_inputs << ',' << p.shape.num_features << ','
        << p.shape.num_outputs << ',' << split_name(p.calibration) << ',';
    if (p.index_seed) csv << *p.index_seed;
    // %.9g keeps a time to well under a nanosecond's part in a million; the error to 0.001%.
    std::snprintf(buf, sizeof buf, ",%.9g,%.9g,%.4f\n", p.predicted_s, p.measured_s, p.error_pct());
    csv << buf;
  }
  return csv.str();
}

std::string format_validation_table(const nlohmann::json& report) {
  std::ostringstream out;
  out << "tilesim validate: suite " << report.value("suite", "") << ", predicted vs measured time per op\n";
  for (const auto& m : report["models"])
    out << "  " << pad(m["machine"].get<std::string>(), 5) << " " << m["prediction_kind"].get<std::string>() << ": "
        << m["model"].get<std::string>() << " (" << m["machine_file"].get<std::string>() << ")\n";
  out << "\n";

  const auto header = [&] {
    out << pad("machine", 8) << pad("op", 13) << pad("split", 12) << pad("n", 5, true) << pad("median", 9, true)
        << pad("p90", 9, true) << pad("bias", 9, true) << pad("r(log)", 8, true) << "  targets\n";
  };
  header();
  for (Split split : report_splits) {
    if (split != Split::held_out) out << "\n";
    for (const auto& entry : report["results"]) {
      const auto& s = entry["splits"][to_string(split)];
      out << pad(entry["machine"].get<std::string>(), 8) << pad(entry["op"].get<std::string>(), 13)
          << pad(split == Split::held_out ? "held-out" : to_string(split), 12)
          << pad(std::to_string(s["count"].get<std::size_t>()), 5, true) << pad(format_pct(s["median_ape_pct"]), 9, true)
          << pad(format_pct(s["p90_ape_pct"]), 9, true) << pad(format_pct(s["bias_pct"], true), 9, true)
          << pad(format_r(s["pearson_log_r"]), 8, true);
      if (split == Split::held_out && entry.contains("targets")) {
        const auto& t = entry["targets"];
        char buf[96];
        std::snprintf(buf, sizeof buf, "  %s (median<=%g%%, p90<=%g%%", t["met"].get<bool>() ? "met" : "MISSED",
                      t["median_ape_pct_max"].get<double>(), t["p90_ape_pct_max"].get<double>());
        out << buf;
        if (t.contains("pearson_log_r_min")) out << ", r>=" << format_r(t["pearson_log_r_min"]);
        out << ")";
      }
      out << "\n";
    }
  }

  if (!report["speedup"].empty()) {
    out << "\n" << pad("speedup", 21) << pad("split", 12) << pad("n", 5, true) << pad("right side of 1x", 18, true)
        << pad("median err", 12, true) << pad("p90 err", 10, true) << pad("meas/pred median", 19, true) << "\n";
    for (Split split : report_splits) {
      for (const auto& entry : report["speedup"]) {
        const auto& s = entry["splits"][to_string(split)];
        const std::string name = entry["op"].get<std::string>() + " " + entry["baseline"].get<std::string>() + "/" +
                                 entry["target"].get<std::string>();
        char share[32] = "-", medians[48] = "-";
        if (s["correct_side_share"].is_number())
          std::snprintf(share, sizeof share, "%.1f%%", 100.0 * s["correct_side_share"].get<double>());
        if (s["median_measured_speedup"].is_number())
          std::snprintf(medians, sizeof medians, "%.2fx / %.2fx", s["median_measured_speedup"].get<double>(),
                        s["median_predicted_speedup"].get<double>());
        out << pad(name, 21) << pad(split == Split::held_out ? "held-out" : to_string(split), 12)
            << pad(std::to_string(s["count"].get<std::size_t>()), 5, true) << pad(share, 18, true)
            << pad(format_pct(s["median_abs_error_pct"]), 12, true) << pad(format_pct(s["p90_abs_error_pct"]), 10, true)
            << pad(medians, 19, true);
        if (split == Split::held_out)
          out << "  " << (entry["targets"]["met"].get<bool>() ? "met" : "MISSED") << " (>= "
              << 100.0 * entry["targets"]["correct_side_share_min"].get<double>() << "%)";
        out << "\n";
      }
    }
  }
  out << "\nheadline: the held-out half; fitted parameters may use only the calibration half (log2 sizes sum to an "
         "even number, fitting/split.hpp)\n";
  return out.str();
}

}  // namespace tilesim::analysis
