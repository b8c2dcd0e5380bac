#include "workloads/parallel/parallel_spec.hpp"

#include <map>
#include <stdexcept>

#include "common/error.hpp"
#include "common/strict_json.hpp"

namespace tilesim::workloads::parallel {

namespace {

const char* const why_bound = " (replicas, stages, micro-batches, partitions and micro-steps of one step)";

std::int64_t read_count(ObjectReader& r, const std::string& key) {
  if (!r.has(key)) {
    r.ignore(key);
    return 1;
  }
  return r.positive_integer(key, kMaxParallel, why_bound);
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

PipelineSpec read_pipeline(const nlohmann::json& object, const std::string& file, const std::string& path, const ModelFacts& model) {
  if (!object.is_object()) throw InputError(file, path, "an object ({\"stages\": [[layer names], ...], \"micro_batches\", \"schedule\"})", describe_json(object));
  ObjectReader r(object, file, path);
  PipelineSpec p;
  const nlohmann::json& stages = r.array("stages");  // a non-empty array, or the reader's error
  // Where each layer sits in the model, and in which stage it was found.
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < model.layer_names.size(); ++i) position[model.layer_names[i]] = i;
  std::map<std::string, std::size_t> stage_of;
  std::size_t next_layer = 0;  // stages hold consecutive layers in model order
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const std::string stage_path = r.element_path("stages", s);
    const nlohmann::json& stage = stages[s];
    if (!stage.is_array() || stage.empty())
      throw InputError(file, stage_path, "a non-empty array of layer names (the layers of one stage)", describe_json(stage));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < stage.size(); ++i) {
      const std::string name_path = stage_path + "[" + std::to_string(i) + "]";
      if (!stage[i].is_string()) throw InputError(file, name_path, "a layer name (a string)", describe_json(stage[i]));
      const std::string name = stage[i].get<std::string>();
      const auto at = position.find(name);
      if (at == position.end())
        throw InputError(file, name_path, "a layer name of the model (" + quoted_list(model.layer_names) + ")", describe_json(name));
      if (const auto seen = stage_of.find(name); seen != stage_of.end())
        throw InputError(file, name_path, "each layer in one stage only",
                         describe_json(name) + ", already in " + r.element_path("stages", seen->second));
      if (at->second != next_layer)
        throw InputError(file, name_path,
                         "the model's layers in order over the stages (stage after stage, each a run of consecutive layers): " +
                             describe_json(model.layer_names[next_layer]) + " here",
                         describe_json(name));
      stage_of[name] = s;
      ++next_layer;
      names.push_back(name);
    }
    p.stages.push_back(std::move(names));
  }
  if (next_layer < model.layer_names.size())
    throw InputError(file, r.path_of("stages"), "every layer of the model in a stage",
                     describe_json(model.layer_names[next_layer]) + " in none");
  if (static_cast<std::int64_t>(p.stages.size()) > kMaxParallel)
    throw InputError(file, r.path_of("stages"), "at most " + std::to_string(kMaxParallel) + " stages", std::to_string(p.stages.size()));
  p.micro_batches = read_count(r, "micro_batches");
  if (r.has("schedule")) p.schedule = r.one_of("schedule", {"gpipe", "1f1b"}) == "1f1b" ? PipelineSchedule::one_f_one_b : PipelineSchedule::gpipe;
  r.ignore("schedule");
  r.finish();
  return p;
}

}  // namespace

ParallelSpec parse_parallel(const nlohmann::json& object, const std::string& file, const std::string& json_path,
                            const ModelFacts& model) {
  if (!object.is_object())
    throw InputError(file, json_path,
                     "an object (\"replicas\", \"gradient_accumulation\", \"allreduce\", \"merge_allreduce\", \"pipeline\", \"partitions\")",
                     describe_json(object));
  ObjectReader r(object, file, json_path);
  ParallelSpec spec;
  spec.replicas = read_count(r, "replicas");
  spec.gradient_accumulation = read_count(r, "gradient_accumulation");
  if (spec.gradient_accumulation > 1 && !model.training)
    throw InputError(file, r.path_of("gradient_accumulation"),
                     "1 or no \"gradient_accumulation\" without a \"train\" section (it accumulates gradients over micro-steps)",
                     describe_json(r.value("gradient_accumulation")));
  if (r.has("allreduce"))
    spec.allreduce = r.one_of("allreduce", {"ring", "hierarchical"}) == "hierarchical" ? AllreduceAlgorithm::hierarchical : AllreduceAlgorithm::ring;
  r.ignore("allreduce");
  if (r.has("merge_allreduce")) {
    if (!model.training)
      throw InputError(file, r.path_of("merge_allreduce"),
                       "no \"merge_allreduce\" without a \"train\" section (it says how the gradients are all-reduced)",
                       describe_json(r.value("merge_allreduce")));
    spec.merge_allreduce = r.boolean("merge_allreduce");
  }
  r.ignore("merge_allreduce");
  if (r.has("pipeline")) {
    if (!model.loader_kind.empty())
      throw InputError(file, r.path_of("pipeline"),
                       "no \"pipeline\" beside a \"loader\" (a pipeline's micro-batches are cut from the whole graph; "
                       "pipelined mini-batches are not modelled)",
                       describe_json(r.value("pipeline")));
    spec.pipeline = read_pipeline(r.value("pipeline"), file, r.path_of("pipeline"), model);
  }
  r.ignore("pipeline");
  spec.partitions = read_count(r, "partitions");
  if (spec.partitions > 1 && spec.pipeline)
    throw InputError(file, r.path_of("partitions"), "1 or no \"partitions\" beside a \"pipeline\" (partitions split the graph "
                     "over nodes that each run the whole model)", describe_json(r.value("partitions")));
  if (spec.partitions > 1 && model.loader_kind == "graphs")
    throw InputError(file, r.path_of("partitions"),
                     "1 or no \"partitions\" beside a \"graphs\" loader (METIS partitions cut one graph; a dataset of small "
                     "graphs is spread by \"replicas\")",
                     describe_json(r.value("partitions")));
  r.finish();
  if (spec.devices() > kMaxParallel)
    throw InputError(file, json_path, "at most " + std::to_string(kMaxParallel) + " devices (replicas x stages x partitions)",
                     std::to_string(spec.devices()));
  return spec;
}

nlohmann::json to_json(const ParallelSpec& spec) {
  nlohmann::json j = {{"replicas", spec.replicas},
                      {"gradient_accumulation", spec.gradient_accumulation},
                      {"allreduce", to_string(spec.allreduce)},
                      {"merge_allreduce", spec.merge_allreduce},
                      {"partitions", spec.partitions}};
  if (spec.pipeline)
    j["pipeline"] = {{"stages", spec.pipeline->stages},
                     {"micro_batches", spec.pipeline->micro_batches},
                     {"schedule", to_string(spec.pipeline->schedule)}};
  return j;
}

std::string to_string(const ParallelSpec& spec) {
  std::vector<std::string> parts;
  if (spec.replicas > 1 || (!spec.pipeline && spec.partitions == 1)) {
    std::string r = std::to_string(spec.replicas) + " replica" + (spec.replicas == 1 ? "" : "s");
    std::vector<std::string> how;
    if (spec.replicas > 1)
      how.push_back(to_string(spec.allreduce) + (spec.merge_allreduce ? " all-reduce" : " all-reduce per gradient tensor"));
    if (spec.gradient_accumulation > 1) how.push_back(std::to_string(spec.gradient_accumulation) + " micro-steps per all-reduce");
    if (!how.empty()) r += " (" + how.front() + (how.size() > 1 ? ", " + how.back() : std::string()) + ")";
    parts.push_back(r);
  }
  if (spec.pipeline)
    parts.push_back(std::to_string(spec.pipeline->stages.size()) + " pipeline stage" + (spec.pipeline->stages.size() == 1 ? "" : "s") + " (" +
                    to_string(spec.pipeline->schedule) + ", " + std::to_string(spec.pipeline->micro_batches) + " micro-batch" +
                    (spec.pipeline->micro_batches == 1 ? "" : "es") + ")");
  if (spec.partitions > 1) parts.push_back(std::to_string(spec.partitions) + " METIS partitions");
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : " x ") + part;
  return text;
}

}  // namespace tilesim::workloads::parallel
