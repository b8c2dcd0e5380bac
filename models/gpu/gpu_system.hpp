#pragma once
// GPU systems (models/gpu/machines/dgx-a100.json): several GPUs of one device file joined by NVLink
// inside a node and by a network between nodes. A system file names its "device_file" (relative to
// itself) for one GPU's figures and states the link figures under "system", each {"value", "source"};
// it may derive from another system file ("base"). Format: models/gpu/README.md, "GPU systems".
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/machine_inheritance.hpp"
#include "common/machine_provenance.hpp"
#include "models/gpu/gpu_machine.hpp"

namespace tilesim::gpu {

struct GpuSystem {
  std::string name;
  std::string description;
  std::string file;
  GpuMachine device;                    // one GPU: the device file's figures
  std::int32_t num_gpus = 1;
  std::int32_t gpus_per_node = 1;
  double nvlink_bytes_per_s = 0;        // per GPU, each direction, to any GPU of its node (NVSwitch)
  double nvlink_step_latency_s = 0;     // one step of a collective over NVLink
  double network_bytes_per_s_per_node = 0;  // a node's network adapters together, each direction
  double network_step_latency_s = 0;    // one step of a collective over the network
  MachineProvenance provenance;         // the system file's figures (the device's are in device.provenance)

  std::int32_t num_nodes() const { return num_gpus / gpus_per_node; }
};

// Whether a machine document (as read, or resolved) describes a GPU system: it names a "device_file".
bool is_gpu_system_document(const nlohmann::json& document);
// Whether a machine name or file is a GPU system once its base chain is resolved (a derived system file
// need not restate "device_file"); false for anything that cannot be read (its reader says why).
bool is_gpu_system_file(const std::string& name_or_path);

// Loads "dgx-a100" (a shipped system file) or a path to a system file. Throws tilesim::InputError
// naming the file and JSON path on any problem (unknown key, missing source, a device file that is
// missing or is itself a system, num_gpus not a multiple of gpus_per_node).
GpuSystem load_gpu_system(const std::string& name_or_path);
// `document` as read from `file` (its "base" and "device_file" resolved relative to it).
GpuSystem parse_gpu_system(const nlohmann::json& document, const std::string& file);

// A system document resolved against its base chain (the GPU machine reader hands one over when the file
// it was asked for turns out to be a system).
GpuSystem parse_resolved_gpu_system(const MachineDocument& resolved);

// One GPU of a system, as `gpu-model:SYSTEM` runs: the device file's machine, its description saying
// which system it belongs to.
GpuMachine one_gpu_of(const GpuSystem& system);

// Names of the shipped GPU system files, sorted (shipped_gpu_machines() lists the single GPUs).
std::vector<std::string> shipped_gpu_systems();

}  // namespace tilesim::gpu
