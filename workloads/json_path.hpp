#pragma once
// A path into a JSON document, as a workload sweep's axes name the field they vary
// (docs/sweep-format.md, "Workload sweeps"): keys joined by ".", "[N]" for element N of an array and
// "[*]" for every element of one: "loader.batch_size", "model[*].out", "model[1].heads",
// "train.optimizer.lr". Knows no workload: the workload reader judges the document a path builds.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim::workloads {

struct JsonPathStep {
  enum class Kind { key, index, every };
  Kind kind = Kind::key;
  std::string key;         // Kind::key
  std::size_t index = 0;   // Kind::index
};

struct JsonPath {
  std::string text;        // as written
  std::vector<JsonPathStep> steps;
};

// Parses `text`: nullopt when it is not such a path (empty, not starting with a key, an empty key, a
// bracket holding neither a non-negative integer nor "*", an unclosed bracket).
std::optional<JsonPath> parse_json_path(const std::string& text);

// Sets `value` at `path` in `document` (at every element for a "[*]" step). Every step but the last
// must be there (an object holding the key, an array holding the element); the last may be a key the
// object lacks, which is added, so that an axis can give a key the base leaves to its default (the
// workload reader then says whether the format has that key). Returns "" when the value was set, else
// why not, worded as an error's "found" part: `no "train" in the workload`, `model has 2 elements, no
// model[5]`, `graph is an object, not an array`. On failure the document may be partly changed.
std::string set_at_path(nlohmann::json& document, const JsonPath& path, const nlohmann::json& value);

}  // namespace tilesim::workloads
