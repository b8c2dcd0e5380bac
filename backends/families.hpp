#pragma once
// The backend families, one file each; registry.cpp lists them. Also the small text helpers their
// name grammars and labels share.
#include <string>

#include "backends/backend_family.hpp"

namespace tilesim::backends {

const BackendFamily& ipu_family();        // ipu_family.cpp
const BackendFamily& cpu_family();        // cpu_family.cpp
const BackendFamily& torch_cpu_family();  // torch_cpu_family.cpp
const BackendFamily& cuda_family();       // cuda_family.cpp
const BackendFamily& gpu_model_family();  // gpu_model_family.cpp
const BackendFamily& cpu_model_family();  // cpu_model_family.cpp

bool ends_with(const std::string& text, const std::string& suffix);
// A machine as a label shows it: a machine file path by its stem ("runs/my-ipu.json" -> "my-ipu").
std::string machine_stem(const std::string& machine);
std::string upper_case(std::string text);

}  // namespace tilesim::backends
