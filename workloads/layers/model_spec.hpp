#pragma once
// The "model" array of a workload file (format in docs/workload-format.md, "Models"): a stack of
// layers, each {"layer": KIND, "out": WIDTH, ...}, strictly validated.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

// Parses the array at `json_path` of `file`. `in_features` is the width of the model's input, used to
// check each layer's widths (a SchNet block keeps its width). Throws tilesim::InputError naming the
// file, the JSON path, what was expected and what was found.
std::vector<LayerSpec> parse_model(const nlohmann::json& array, const std::string& file, const std::string& json_path,
                                   std::int64_t in_features);

// The width of a layer's output given its input width.
std::int64_t output_width(const LayerSpec& spec, std::int64_t in_features);

// The resolved layer (every default filled in), as echoed in report.json: itself a valid layer entry.
nlohmann::json to_json(const LayerSpec& spec, std::int64_t in_features);

}  // namespace tilesim::workloads::layers
