#pragma once
// The published suites of `tilesim validate` (layers, whole models): entries that each cite a public
// source, give the exact configuration and the published figure with its unit, and either say how
// tilesim predicts it (a workload, a backend, the report quantity and its conversion) or which
// feature tilesim lacks for it ("not yet comparable"). Read strictly from validation/<suite>/entries.json.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilesim::analysis {

// Units a published figure may have: times per step/epoch/call, and rates.
const std::vector<std::string>& published_units();  // "s", "ms", "us", "graphs_per_s", "samples_per_s"
bool is_rate_unit(const std::string& unit);
// Seconds per unit of a time unit (1, 1e-3, 1e-6); throws for a rate unit.
double seconds_per_unit(const std::string& unit);

// Report quantities a prediction may read: a step (training median, or a forward pass), a training
// step's forward or backward phase, a loader run's epoch, a loader run's graphs per second.
const std::vector<std::string>& prediction_quantities();  // step_time_s, forward_s, backward_s, epoch_time_s, graphs_per_s

struct PublishedSource {
  std::string citation;  // who and what
  std::string url;
  std::string location;  // path @ commit, table, row
};

struct PublishedConfig {
  std::string dataset, model, hidden, batch, precision, mode, framework, hardware;
  std::int64_t layers = 0;
  std::int64_t chips = 0;
};

struct PublishedFigure {
  double value = 0;
  std::string unit;      // one of published_units()
  std::string quantity;  // what was measured, and how
};

struct PredictionRecipe {
  std::string workload;   // resolved path of the workload file
  std::string backend;    // e.g. gpu-model:v100-16gb:eager, ipu:bow
  std::string quantity;   // one of prediction_quantities()
  double scale = 1;       // published = quantity x scale (in the published unit)
  std::string conversion; // the conversion in words
  std::vector<std::string> deviations;  // where the workload differs from the published configuration
};

struct NotComparable {
  std::string missing;             // the feature (or fact) tilesim lacks
  std::vector<std::int64_t> issues;  // issue numbers, when the feature is planned
};

struct PublishedEntry {
  std::string id;
  PublishedSource source;
  PublishedConfig config;
  PublishedFigure published;
  std::optional<PredictionRecipe> prediction;  // exactly one of prediction and not_comparable
  std::optional<NotComparable> not_comparable;
};

struct PublishedSuite {
  std::string name;   // "layers" or "whole-model"
  std::string about;
  std::string file;
  std::vector<PublishedEntry> entries;
};

// Reads and checks an entries file: unknown keys, missing keys, bad units or quantities, a time
// quantity for a rate unit (or the reverse), duplicate ids and a workload file that does not exist are
// InputErrors naming the file, the JSON path, what was expected and what was found.
PublishedSuite read_published_suite(const std::string& path);

// The entries file of a published suite: <data_dir>/layers/entries.json, <data_dir>/whole-model/entries.json.
std::string published_suite_file(const std::string& suite, const std::string& data_dir);

}  // namespace tilesim::analysis
