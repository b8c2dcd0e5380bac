#pragma once
// Backend names as users write them in --backends, parsed by the family each names (registry.hpp lists
// the families and their grammars).
#include <memory>
#include <string>
#include <vector>

#include "results/backend.hpp"

namespace tilesim::backends {

class BackendFamily;

struct BackendSpec {
  const BackendFamily* descriptor = nullptr;  // what its family declares and does (backend_family.hpp)
  std::string machine;  // ipu and gpu-model: a shipped machine name or a machine file path; "" otherwise
  std::string mode;     // one of the family's modes ("static", "eager", "per-call", ...); "" for a family without modes
  // Canonical name: a default mode is not spelled out ("ipu:bow", "gpu-model:a100-40gb:eager").
  std::string name() const;
};

// The entries of a comma-separated list, as written; an empty list or an empty entry ("cpu,", ",cpu",
// "cpu,,ipu") is an InputError for --backends.
std::vector<std::string> split_backend_list(const std::string& list);

// Parses a comma-separated list; throws InputError naming the entry and what is accepted.
std::vector<BackendSpec> parse_backend_list(const std::string& list);

// The backend itself (machine files read here); throws InputError when it cannot run in this build or host.
std::unique_ptr<Backend> make_backend(const BackendSpec& spec);

}  // namespace tilesim::backends
