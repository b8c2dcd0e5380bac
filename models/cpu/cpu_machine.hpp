#pragma once
// CPU machine files: the ceilings of a host CPU as `tilesim calibrate` measured them (streaming DRAM
// bandwidth, random-access gather bandwidth, peak FLOP/s per dtype with all cores), each figure as
// {"value": ..., "source": "..."} whose source says it was measured, when and on which host. Used by
// `tilesim roofline` for the ceilings of the `cpu` backend. Format: models/cpu/README.md.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::cpu_model {

struct Figure {
  double value = 0;
  std::string source;
};

struct CpuMachine {
  std::string name;
  std::string description;
  std::string file;  // path it was read from ("" when built in code)

  // The host the figures were measured on.
  std::string hostname;
  std::string cpu_model;
  std::int64_t logical_cpus = 0;
  std::int64_t threads = 0;        // OpenMP threads the measurements used
  std::string measured_utc;        // ISO 8601
  std::string tool;                // "tilesim 0.1.0"

  Figure dram_stream_bytes_per_s;         // STREAM triad over arrays far larger than the last-level cache
  Figure dram_random_gather_bytes_per_s;  // 64-byte rows gathered at random from a table far larger than the LLC
  // Optional (files from before it have none): the STREAM triad over arrays held in the last-level cache,
  // the roof of ops whose data stay in the caches.
  std::optional<Figure> llc_stream_bytes_per_s;
  std::map<std::string, Figure> peak_flops_per_s;  // by dtype: "float32", "float64"
  // Optional (files from before it have none): a large matmul's rate by dtype ("float32", "bfloat16",
  // "float16"), with the instruction set it ran on: "AMX", "AVX-512-BF16", "AVX-512-FP16", "conversion to
  // float32" (16-bit), or "AVX-512", "AVX2", "other" (float32); kernel names the library's kernel.
  struct MatmulFigure {
    Figure rate;
    std::string instruction_set;
    std::string kernel;
  };
  std::map<std::string, MatmulFigure> matmul_peak_flops_per_s;

  nlohmann::json details = nlohmann::json::object();  // how each figure was measured (array sizes, trials)
};

// Reads a CPU machine file; a name without '/' and without ".json" is looked up in the shipped
// directory (models/cpu/machines/, or $TILESIM_CPU_MACHINE_DIR). Strict: an unknown key, a bare number,
// a missing source or a non-positive value throws tilesim::InputError naming the file and JSON path.
CpuMachine load_cpu_machine(const std::string& name_or_path);
CpuMachine parse_cpu_machine(const nlohmann::json& document, const std::string& file);

nlohmann::json to_json(const CpuMachine& machine);

std::string cpu_machine_dir();

}  // namespace tilesim::cpu_model
