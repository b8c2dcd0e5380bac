#pragma once
// Backend names as users write them in --backends: "ipu" (= "ipu:bow"), "ipu:MACHINE",
// "ipu:path/to/machine.json", "cpu".
#include <memory>
#include <string>
#include <vector>

#include "results/backend.hpp"

namespace tilesim::cli {

struct BackendSpec {
  std::string family;   // "ipu" or "cpu"
  std::string machine;  // for ipu: a shipped machine name or a path
  std::string name() const { return machine.empty() ? family : family + ":" + machine; }
};

// Parses a comma-separated list; throws InputError naming the entry and what is accepted.
std::vector<BackendSpec> parse_backend_list(const std::string& list);

std::unique_ptr<Backend> make_backend(const BackendSpec& spec);

}  // namespace tilesim::cli
