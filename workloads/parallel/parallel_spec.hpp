#pragma once
// The "parallel" section of a workload: how a step is spread over several chips (docs/workload-format.md,
// "parallel"). Knows nothing of machines: a backend's system (models/*/system) says how long the spread
// step takes on it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/parallelism.hpp"

namespace tilesim::workloads::parallel {

// The most replicas, stages, micro-batches, partitions or accumulated micro-steps a section may ask for:
// far beyond any shipped system (a POD64 has 64 IPUs), small enough that their products fit int64.
inline constexpr std::int64_t kMaxParallel = std::int64_t{1} << 16;

// The forms of parallelism (ir/parallelism.hpp, where the models see them too), by their names here.
using tilesim::AllreduceAlgorithm;
using tilesim::PipelineSchedule;

struct PipelineSpec {
  std::vector<std::vector<std::string>> stages;  // layer names of each stage, in order, on consecutive chips
  std::int64_t micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::gpipe;
};

struct ParallelSpec {
  std::int64_t replicas = 1;               // data parallelism: each replica takes its own batch
  std::int64_t gradient_accumulation = 1;  // micro-steps per replica before each all-reduce
  AllreduceAlgorithm allreduce = AllreduceAlgorithm::ring;
  // One all-reduce of every gradient at once (true: a framework that merges or buckets them, PopART's
  // replicatedCollectivesSettings.mergeAllReduceCollectives, PyTorch DDP's buckets), or one per trained
  // parameter tensor, each paying the collective's fixed steps (false: PopART's own default).
  bool merge_allreduce = true;
  std::optional<PipelineSpec> pipeline;    // model parallelism over consecutive chips
  std::int64_t partitions = 1;             // graph partitions (METIS), one per node, halo exchange per layer

  std::int64_t stages() const { return pipeline ? static_cast<std::int64_t>(pipeline->stages.size()) : 1; }
  // Chips (or GPUs, or CPU nodes) one step occupies.
  std::int64_t devices() const { return replicas * stages() * partitions; }
};

// The model a "parallel" section is checked against: its layer names in order, and whether the workload
// trains it, has a loader, and of which kind ("" without one).
struct ModelFacts {
  std::vector<std::string> layer_names;
  bool training = false;
  std::string loader_kind;
};

// Parses the object at `json_path` of `file` (the top-level "parallel"). Throws tilesim::InputError naming
// the file, the JSON path, what was expected and what was found: unknown keys, counts below 1 or above
// kMaxParallel, an unknown algorithm or schedule, a "merge_allreduce" that is not a boolean or is given without training, an empty stage list or stage, a layer name in no stage,
// in two stages, out of model order or not in the model, gradient accumulation without training, a
// pipeline beside a loader, partitions beside a pipeline or a "graphs" loader.
ParallelSpec parse_parallel(const nlohmann::json& object, const std::string& file, const std::string& json_path,
                            const ModelFacts& model);

// The resolved section (every default filled in), as echoed in report.json: itself valid input.
nlohmann::json to_json(const ParallelSpec& spec);

// One line for summaries: "4 replicas (ring all-reduce) x 2 pipeline stages (gpipe, 4 micro-batches)".
std::string to_string(const ParallelSpec& spec);

}  // namespace tilesim::workloads::parallel
