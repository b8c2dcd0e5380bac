#pragma once
// The backend registry: every backend family tilesim knows, and the questions the command, sweeps and
// analysis ask of a backend name. Names as users write them in --backends: "ipu" (= "ipu:bow"),
// "ipu:MACHINE", "ipu:path/to/machine.json", "ipu:MACHINE:static" (a model's graph edges compiled into
// the exchange), "cpu", "torch-cpu" (libtorch's ATen kernels, when built in), "cuda" (= "cuda:kernel",
// device time), "cuda:per-call" (host time per call), "gpu-model" (= "gpu-model:a100-40gb"),
// "gpu-model:MACHINE", "gpu-model:MACHINE:kernel" and "gpu-model:MACHINE:eager".
#include <optional>
#include <string>
#include <vector>

#include "backends/backend_family.hpp"

namespace tilesim::backends {

// Every family, in the order help texts and listings show them: ipu, cpu, torch-cpu, cuda, gpu-model.
const std::vector<const BackendFamily*>& all_families();

// The family a backend name belongs to (the text before its first ':'); nullptr when none.
const BackendFamily* find_family(const std::string& name);

// Every family's names, as --backends' help shows them, and as the error for an unknown name lists them.
std::string backends_help_text();
std::string accepted_names_text();

// The label figures and tables give a backend name ("ipu:bow" -> "Bow IPU (simulated)"); std::nullopt
// for a name no family labels (a path to reference measurements).
std::optional<std::string> display_label(const std::string& name, const std::string& kind, const std::string& mode);

// The machine forms `tilesim roofline --machine` takes, one per family that has one ("ipu:NAME_OR_FILE").
std::vector<std::string> roofline_machine_forms();
// The --machine family that applies to a backend name's rows ("" when none applies).
std::string roofline_machine_family(const std::string& backend);

// "ipu (simulated), cpu (measured), gpu-model (modeled), torch-cpu (measured, libtorch ...), ...": the
// families built into every tilesim first, then the optional ones with what was built or why not.
std::string version_summary();

// This host as the measured families' rows name their machine: CPU model, logical CPUs, OpenMP threads.
std::string host_machine_description();

}  // namespace tilesim::backends
