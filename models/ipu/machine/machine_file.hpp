#pragma once
// IPU machine files (models/ipu/machines/*.json): the chip's figures, the codelet cost constants and the
// planner's settings, each given as {"value": ..., "source": "..."} so every number says where it came
// from. Format: docs/machine-format.md.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/machine_provenance.hpp"
#include "ir/dtype.hpp"
#include "sim/machine_config.hpp"

namespace tilesim::ipu {

// Cycle-cost constants of the codelets, in worker cycles unless named otherwise (poplibs estimators),
// for values of one type: the machine file's "codelets" section gives the float32 set, and its optional
// "codelets_float16" section the figures that differ for float16 data (the rest carry over).
struct CodeletCosts {
  std::int64_t supervisor_cycles = 0;                  // per multi-worker vertex launch
  // MultiSlice (gather): prologue + per lookup in range (fixed + per element vector) + per lookup out of range
  std::int64_t multislice_prologue_worker_cycles = 0;
  std::int64_t multislice_in_range_worker_cycles = 0;
  std::int64_t multislice_out_of_range_worker_cycles = 0;
  std::int64_t multislice_elements_per_vector = 0;     // float32 elements moved per copy step
  std::int64_t multislice_cycles_per_vector = 0;
  // MultiUpdateAdd (scatter-add): every worker scans all offsets, updates the rows it owns
  std::int64_t multiupdateadd_prologue_worker_cycles = 0;
  std::int64_t multiupdateadd_in_range_worker_cycles = 0;       // first 4-byte atom of a row
  // Per further 4-byte atom of a row: one float32 element, or multiupdateadd_elements_per_atom float16 ones.
  std::int64_t multiupdateadd_per_extra_element_worker_cycles = 0;
  std::int64_t multiupdateadd_elements_per_atom = 1;
  // A row of an odd number of 16-bit elements cannot be written in whole atoms: the codelet's sub-word
  // path costs this per element instead of the per-atom loop (0 for float32, whose rows are whole atoms).
  std::int64_t multiupdateadd_subword_write_worker_cycles_per_element = 0;
  std::int64_t multiupdateadd_out_of_range_worker_cycles = 0;
  // Fill (zeroing): prologue + one 64-bit store per cycle
  std::int64_t fill_prologue_worker_cycles = 0;
  std::int64_t fill_bytes_per_worker_cycle = 0;
  // Elementwise integer op on indices (UnaryOp-like): prologue + per element
  std::int64_t index_transform_prologue_worker_cycles = 0;
  std::int64_t index_transform_worker_cycles_per_element = 0;
  // Reduce (sum of partials): prologue + per output vector (fixed + per partial)
  std::int64_t reduce_prologue_worker_cycles = 0;
  std::int64_t reduce_per_vector_worker_cycles = 0;
  std::int64_t reduce_per_partial_worker_cycles = 0;
  std::int64_t reduce_elements_per_vector = 0;
  // Elementwise float32 ops (popops UnaryOp1D / BinaryOp1D): prologue + per vector of
  // elementwise_elements_per_vector elements, by function (composed functions add their parts).
  std::int64_t elementwise_elements_per_vector = 0;
  std::int64_t unary_prologue_worker_cycles = 0;
  std::int64_t unary_transcendental_prologue_worker_cycles = 0;  // functions built on exp/log/cos/rsqrt
  std::int64_t unary_relu_worker_cycles_per_vector = 0;
  std::int64_t unary_leaky_relu_worker_cycles_per_vector = 0;
  std::int64_t unary_shifted_softplus_worker_cycles_per_vector = 0;
  std::int64_t unary_exp_worker_cycles_per_vector = 0;
  std::int64_t unary_scale_worker_cycles_per_vector = 0;
  std::int64_t unary_rsqrt_or_zero_worker_cycles_per_vector = 0;
  std::int64_t unary_reciprocal_or_zero_worker_cycles_per_vector = 0;
  std::int64_t unary_cosine_cutoff_worker_cycles_per_vector = 0;
  std::int64_t unary_softplus_worker_cycles_per_vector = 0;
  std::int64_t unary_sigmoid_worker_cycles_per_vector = 0;
  std::int64_t binary_prologue_worker_cycles = 0;
  std::int64_t binary_add_subtract_multiply_worker_cycles_per_vector = 0;
  std::int64_t binary_divide_worker_cycles_per_vector = 0;
  // AMP (matmul) vertex: tile cycles = fixed + flops / rate, the rate of this set's operand type
  // (float32: key amp_float32_flops_per_tile_cycle; float16: amp_float16_flops_per_tile_cycle).
  std::int64_t amp_vertex_fixed_cycles = 0;
  std::int64_t amp_flops_per_tile_cycle = 0;
  // What a training step adds. ScaledAdd (popops scaledAddTo / aXPlusbY, the optimizers' updates):
  // prologue + per vector of elementwise_elements_per_vector floats.
  std::int64_t scaled_add_prologue_worker_cycles = 0;
  std::int64_t scaled_add_worker_cycles_per_vector = 0;
  // Elementwise functions the loss, softmax and Adam use (UnaryOp1D / BinaryOp1D, per vector).
  std::int64_t unary_sqrt_worker_cycles_per_vector = 0;
  std::int64_t unary_log_worker_cycles_per_vector = 0;
  std::int64_t binary_maximum_worker_cycles_per_vector = 0;
  // Transposing a block on a tile (poplin's Transpose2d, before an AMP vertex reads a transposed
  // operand): prologue + per element.
  std::int64_t transpose_prologue_worker_cycles = 0;
  std::int64_t transpose_worker_cycles_per_element = 0;
  // Casts between float32 and float16 (popops Cast1D, a half training step's master weights, loss and
  // gradients): prologue + per vector, narrowing (to float16) and widening (to float32) at their rates.
  std::int64_t cast_prologue_worker_cycles = 0;
  std::int64_t cast_narrowing_elements_per_vector = 0;
  std::int64_t cast_narrowing_worker_cycles_per_vector = 0;
  std::int64_t cast_widening_elements_per_vector = 0;
  std::int64_t cast_widening_worker_cycles_per_vector = 0;
};

struct PlannerSettings {
  std::int64_t min_indices_per_tile = 0;   // lookups are not split finer than this
  double memory_fraction = 0;              // first try plans using at most this share of a tile's SRAM
  std::int64_t column_grain_bytes = 0;     // column splits are multiples of this many bytes
  std::int64_t linear_min_bytes_per_tile = 0;  // a linearly mapped tensor puts at least this much on a tile
  // The planner ranks splits by codelet and exchange-bandwidth estimates plus this charge per sync
  // (0: poplibs' own ranking, with no sync term; the hardware pays chip.sync_cycles either way).
  std::int64_t objective_sync_cycles = 0;
  bool outputs_to_linear_layout = false;       // op outputs end mapped linearly (exchanged there)
  // A gather's output ends mapped linearly too; otherwise it stays where the plan's last stage wrote
  // it (poplibs creates it in the plan's layout). The IPU backend sets it for a gather a later op reads.
  bool gather_output_to_linear_layout = false;
  bool scatter_base_from_linear_layout = false;  // scatter-add's zeroed output starts mapped linearly
  bool gather_table_from_linear_layout = false;  // the gathered table starts mapped linearly
  bool scatter_messages_from_linear_layout = false;  // the scatter's messages start mapped linearly
  // Like poplibs' alwaysIncludeBaseRearrangementCost: the objective charges the table (or output)
  // bytes a plan puts on its busiest tile beyond an even spread over all tiles.
  bool objective_includes_base_rearrangement = false;
  std::int64_t repeat_loop_control_cycles = 0;   // per op run: the on-device repeat loop's control step
};

// An IPU system (several chips joined by IPU-Links): what its machine file adds to the chip file it names.
struct IpuSystem {
  std::int32_t num_ipus = 1;          // 1: a single IPU (no system file)
  std::string chip_file;              // path of the chip machine file
  double link_bytes_per_cycle = 0;    // one IPU-Link, one direction, after efficiency
  std::int64_t links_to_pair = 0;     // ladder: links to the other IPU of the same rung
  std::int64_t links_up_down = 0;     // to the IPU on the same side of the next rung
  std::int64_t links_cross_rung = 0;  // to the IPU on the other side of the next rung
  // A system of several machines (a Pod of Bow-2000s): ipus_per_machine IPUs each (0: one machine holds
  // every IPU), their ladders joined in a ring by one gateway link to each neighbour (set_ladder_links).
  std::int32_t ipus_per_machine = 0;
  double gateway_link_bytes_per_cycle = 0;  // one gateway link, one direction, after efficiency
  sim::Cycles gateway_latency_cycles = 0;   // per gateway link crossed
  std::int32_t num_machines() const { return ipus_per_machine > 0 ? num_ipus / ipus_per_machine : 1; }
};

// How the host drives the IPUs (the optional section "host"): what an epoch of PopTorch calls adds to
// the simulated steps (models/ipu/host_execution.hpp). The simulator itself never reads these.
struct HostFigures {
  double host_call_s = 0;              // fixed cost of one host call (one PopTorch model(...) call)
  double host_link_bytes_per_s = 0;    // one host link (host server to IPU-Machine), one direction
  std::int32_t ipus_per_host_link = 1; // IPUs behind one host link, sharing its bandwidth
  double stream_copy_bytes_per_s = 0;  // one IPU reading a staged input into its tiles (StreamCopyMid)
  double epoch_fixed_s = 0;            // fixed cost of one epoch (0 where no source gives one)
};

// Roofline ceilings of one IPU that the simulator does not use, drawn by `tilesim roofline` (the
// optional section "roofline"; the exchange and fp32 AMP ceilings are derived from chip and codelets).
struct RooflineFigures {
  double tile_sram_bytes_per_s = 0;               // aggregate tile-SRAM bandwidth; 0: not given
  std::map<std::string, double> peak_flops_per_s;  // by dtype ("float16": the AMP units' fp16 peak)
};

struct IpuMachine {
  // For a system, chip holds every IPU's tiles (num_tiles = num_ipus x tiles per IPU, tiles_per_chip
  // set) with the link figures; every per-tile figure is the chip file's.
  sim::MachineConfig chip;
  IpuSystem system;
  // The machine as set up for ops of one value type (with_value_dtype): the tiles hold values of
  // value_dtype, and `codelets` is that type's cost set. Loaded machines are set up for float32.
  DType value_dtype = DType::float32;
  CodeletCosts codelets;
  CodeletCosts float32_codelets;   // the "codelets" section (matmul partials are float32 whatever the data)
  bool has_float16_codelets = false;  // a "codelets_float16" section was given
  CodeletCosts float16_codelets;   // float32_codelets with that section's figures over them
  std::int64_t value_bytes() const { return dtype_bytes(value_dtype); }
  PlannerSettings planner;
  RooflineFigures roofline;    // one IPU's; empty for a system (no source gives a system's)
  // The host section (a system's is its chip file's); empty for a machine file without one.
  std::optional<HostFigures> host;
  std::string description;
  std::string file;            // path it was read from
  MachineProvenance provenance;  // every figure read, with its source and file, for reports
};

// Loads "bow", "mk2", "mk1", "bow-2000" (shipped machine files) or a path to a machine file. A file with
// "chip_file" describes an IPU system: the chip file (a path relative to the system file) gives the
// tiles, codelets and planner, the system file the number of IPUs and the IPU-Link figures. A file with
// "base" derives from another IPU machine file (common/machine_inheritance.hpp). Throws
// tilesim::InputError naming the file and JSON path on any problem (unknown key, missing source, bad value).
IpuMachine load_ipu_machine(const std::string& name_or_path);
// `document` as read from `file` (a "base" is resolved relative to it).
IpuMachine parse_ipu_machine(const nlohmann::json& document, const std::string& file);

// The value types the simulated tiles hold: float32 always, float16 when the machine file has a
// "codelets_float16" section. (bfloat16 never: the IPU's vector and AMP units take float16 and float32.)
bool models_value_dtype(const IpuMachine& machine, DType dtype);
// Why `dtype` is not modelled on `machine`, for an error message (empty when it is).
std::string unmodelled_value_dtype_reason(const IpuMachine& machine, DType dtype);
// The cost set of float32 partial sums (a half matmul's partial products): the machine's own set when
// its values are float32 (so a fit's or a test's adjustments to `codelets` hold), else float32_codelets.
inline const CodeletCosts& float32_partial_codelets(const IpuMachine& machine) {
  return machine.value_dtype == DType::float32 ? machine.codelets : machine.float32_codelets;
}
// `machine` set up for ops whose values are `dtype` (value_dtype and codelets). Throws InputError when
// the type is not modelled (models_value_dtype).
IpuMachine with_value_dtype(IpuMachine machine, DType dtype);

// The IPU-Link ladder of a system of `num_ipus` chips (even, or 1): link groups and routes, across the
// rung first, then up or down the ladder one rung per hop (poplibs_test's routing). A system of several
// machines has one ladder per machine (IPUs m p .. m p + p - 1, p = ipus_per_machine) and the machines in
// a ring: machine m's gateway link to machine m + 1 (mod the ring) leaves its IPU m p + 2 and arrives at
// IPU (m + 1) p. A route between machines climbs its machine's ladder to the exit IPU, goes round the ring
// the shorter way (forward on a tie), crossing each machine on the way from entry to exit, and descends
// the last machine's ladder to its destination.
void set_ladder_links(sim::MachineConfig& config, const IpuSystem& system);

// The exit-3 advice on splitting work over more IPUs: names the shipped IPU systems with more IPUs than
// `machine` has (as backends, "ipu:bow-2000 (4 IPUs)"), or says to write a machine file with more.
std::string more_ipus_next_step(const IpuMachine& machine);

// The directory holding the shipped machine files (TILESIM_MACHINE_DIR overrides the built-in path).
std::string ipu_machine_dir();
// Names of the shipped machine files, sorted.
std::vector<std::string> shipped_ipu_machines();

}  // namespace tilesim::ipu
