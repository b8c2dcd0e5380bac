#pragma once
// A described CPU node: the figures of a server as its vendor states them (cores, clock, memory
// channels, vector and matrix units), each {"value", "source"}, for the `cpu-model` backend, which
// predicts what an op would take on a node nobody measured here. The sibling of cpu_machine.hpp, whose
// files hold the ceilings `tilesim calibrate` measured on this host. Format: models/cpu/README.md,
// "Described CPU nodes: the cpu-model backend".
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/machine_provenance.hpp"

namespace tilesim::cpu_model {

struct CpuNode {
  std::string name;
  std::string description;
  std::string file;
  MachineProvenance provenance;  // every figure read, with its source (reports carry it)

  // node
  std::int64_t sockets = 0;
  std::int64_t cores_per_socket = 0;
  double base_clock_hz = 0;       // the clock the peaks are stated at
  std::int64_t memory_bytes = 0;  // DRAM installed in the node

  // memory: per-socket DDR channels; peak = channels x transfers/s x bytes per transfer
  std::int64_t channels_per_socket = 0;
  double transfers_per_s = 0;         // DDR5-4800: 4.8e9
  std::int64_t bytes_per_transfer = 0;  // a 64-bit channel: 8
  double stream_fraction = 0;         // sustained STREAM triad over peak, whole node

  // vector units (AVX-512): FLOP/s = cores x fma_units x lanes x 2 x clock
  std::int64_t fma_units_per_core = 0;
  std::int64_t fp32_lanes_per_fma = 0;  // 512-bit: 16
  std::int64_t fp16_lanes_per_fma = 0;  // AVX-512-FP16: 32
  // matrix unit (AMX): bfloat16 FLOP per cycle per core (a multiply-add is 2)
  double amx_bf16_flops_per_cycle_per_core = 0;

  // software
  double per_op_overhead_s = 0;  // a parallel region's fork, barrier and join around each op

  std::int64_t cores() const { return sockets * cores_per_socket; }
  double peak_dram_bytes_per_s() const;
  double stream_bytes_per_s() const;      // what the model charges bytes at
  double fp32_vector_flops_per_s() const;
  double fp16_vector_flops_per_s() const;
  double bf16_amx_flops_per_s() const;
  // The derived figures (peaks, achievable bandwidth) with how each was formed, for reports.
  nlohmann::json derived_json() const;
};

// Reads a node file: a name without '/' and ".json" ("spr-2s") is looked up in the shipped directory
// (models/cpu/machines/, or $TILESIM_CPU_MACHINE_DIR). Strict: an unknown key, a bare number, a missing
// source or a value out of range throws tilesim::InputError naming the file and the JSON path.
CpuNode load_cpu_node(const std::string& name_or_path);
CpuNode parse_cpu_node(const nlohmann::json& document, const std::string& file);

}  // namespace tilesim::cpu_model
