#pragma once
// Arithmetic intensity and achieved rates of result rows, per memory level (the hierarchical
// roofline view: one intensity per level the backend moves bytes through, the same FLOP/s at each).
//   IPU (simulated): tile_sram = tile SRAM reads + writes; exchange = bytes received over the exchange
//   GPU (modeled):   l2 = all traffic (every access passes through L2); hbm = traffic reaching DRAM
//   CPU (measured):  dram = the op's minimum bytes (what the kernel must move; not a counter reading)
// Intensity = FLOPs / bytes at that level. A gather does no FLOPs: its intensity is 0 and it has no
// place on a FLOP/s roofline, only on the bandwidth view.
#include <optional>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"

namespace tilesim::analysis {

struct LevelTraffic {
  std::string level;                        // "tile_sram", "exchange", "l2", "hbm", "dram"
  double bytes = 0;
  std::optional<double> intensity_flops_per_byte;  // nullopt when bytes is 0
  std::optional<double> bytes_per_s;        // achieved: bytes / time_s; nullopt without a time
};

// FLOPs / bytes; nullopt when bytes is not positive.
std::optional<double> arithmetic_intensity(double flops, double bytes);

// The levels of a row, in the order above, with the bytes the row reports at each (a level whose
// byte columns are all empty is left out).
std::vector<LevelTraffic> traffic_by_level(const ResultRow& row);

// The level results.csv's intensity column is taken at: the backend's main memory, the first of
// tile_sram, hbm and dram the row has ("" when it has none).
std::string main_level(const ResultRow& row);

// FLOPs / time_s; nullopt without a time.
std::optional<double> achieved_flops_per_s(const ResultRow& row);

// Human name of a level with its place: "tile SRAM", "exchange", "L2", "HBM", "DRAM".
std::string level_label(const std::string& level);

}  // namespace tilesim::analysis
