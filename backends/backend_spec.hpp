#pragma once
// Backend names as users write them in --backends: "ipu" (= "ipu:bow"), "ipu:MACHINE",
// "ipu:path/to/machine.json", "cpu", "gpu-model" (= "gpu-model:a100-40gb"), "gpu-model:MACHINE" and
// "ipu:MACHINE:static" (a model's graph edges compiled into the exchange, static_index.hpp),
// "gpu-model:MACHINE:kernel" (kernel mode), "gpu-model:MACHINE:eager" (eager mode), "torch-cpu" (libtorch's
// ATen kernels, when built in), "cuda" (= "cuda:kernel", device time) and "cuda:per-call" (host time per call).
#include <memory>
#include <string>
#include <vector>

#include "results/backend.hpp"

namespace tilesim::cli {

struct BackendSpec {
  std::string family;   // "ipu", "cpu", "torch-cpu", "cuda" or "gpu-model"
  std::string machine;  // for ipu and gpu-model: a shipped machine name or a path
  std::string mode;     // for gpu-model: "kernel" or "eager"; for cuda: "kernel" or "per-call"; for ipu: "dynamic" or "static"
  // Canonical name: the default modes (gpu-model and cuda kernel, ipu dynamic) are not spelled out.
  std::string name() const {
    std::string n = machine.empty() ? family : family + ":" + machine;
    return mode == "eager" || mode == "per-call" || mode == "static" ? n + ":" + mode : n;
  }
};

// Parses a comma-separated list; throws InputError naming the entry and what is accepted.
std::vector<BackendSpec> parse_backend_list(const std::string& list);

std::unique_ptr<Backend> make_backend(const BackendSpec& spec);

}  // namespace tilesim::cli
