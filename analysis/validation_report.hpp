#pragma once
// The validation report: predicted against measured time for every point of a suite, summarised per
// (machine, op) and per split of fitting/split.hpp, plus the speedup surface between two machines.
// Pure: the validate command runs the models and hands the points here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim::analysis {

enum class Split { held_out, calibration, all };
std::string to_string(Split split);  // "held_out", "calibration", "all"
bool in_split(bool calibration, Split split);

struct ValidationPoint {
  std::string machine;  // "bow", "a100"
  std::string op;       // "gather", "scatter_add", ...
  OpShape shape;
  bool calibration = false;  // fitting::in_calibration_split(shape)
  double predicted_s = 0;
  double measured_s = 0;
  std::optional<std::uint64_t> index_seed;  // simulated points: seed of the indices the model was given
  double error_pct() const;                 // 100 * (predicted - measured) / measured
};

// What produced the predictions for one machine, and how its reference times were measured.
struct ModelInfo {
  std::string machine;          // "bow"
  std::string machine_label;    // "Graphcore Bow IPU"
  std::string prediction_kind;  // "simulated" or "modeled (eager)"
  std::string model;            // which model, in words
  std::string machine_file;     // the machine file it read
  std::string mode;             // "timing-only", "eager"
  std::string measurement;      // how the reference times were taken
};

// The held-out targets of issue 3 for a machine (nullopt for a machine without targets).
struct ErrorTargets {
  double median_ape_pct_max = 0;
  double p90_ape_pct_max = 0;
  std::optional<double> pearson_log_r_min;
};
std::optional<ErrorTargets> error_targets_for(const std::string& machine);
constexpr double speedup_correct_side_share_min = 0.95;

// One point of a speedup surface: baseline time / target time, predicted and measured.
struct SpeedupPoint {
  OpShape shape;
  bool calibration = false;
  double predicted = 0;
  double measured = 0;
};

// The points of `op` measured on both machines, matched by shape, in the target's order.
std::vector<SpeedupPoint> speedup_points(const std::vector<ValidationPoint>& points, const std::string& op,
                                         const std::string& baseline_machine, const std::string& target_machine);

// {count, median_ape_pct, p90_ape_pct, bias_pct, pearson_log_r (null when undefined), worst: [...]}
// for the given points (already filtered to one machine, op and split).
nlohmann::json error_summary_json(const std::vector<ValidationPoint>& points, std::size_t worst_count);

struct ReportInputs {
  std::string suite;
  std::string data_dir;
  std::vector<ModelInfo> models;
  std::vector<ValidationPoint> points;
  std::string speedup_baseline = "a100";  // speedup = baseline time / target time
  std::string speedup_target = "bow";
  std::size_t worst_count = 10;
};

// validation.json without the "files" section (the command adds where it wrote things).
nlohmann::json build_validation_report(const ReportInputs& inputs);

// points.csv: machine,op,num_inputs,num_features,num_outputs,split,index_seed,predicted_s,measured_s,error_pct
std::string points_csv(const std::vector<ValidationPoint>& points);

// The compact table `tilesim validate` prints: held-out rows first as the headline, then calibration
// and all, then the speedup-surface shares.
std::string format_validation_table(const nlohmann::json& report);

}  // namespace tilesim::analysis
