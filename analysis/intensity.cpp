#include "analysis/intensity.hpp"

namespace tilesim::analysis {

namespace {

struct LevelColumns {
  const char* level;
  std::vector<const char*> columns;  // summed
};

const std::vector<LevelColumns>& levels() {
  static const std::vector<LevelColumns> all = {{"tile_sram", {"tile_sram_read_bytes", "tile_sram_write_bytes"}},
                                                {"exchange", {"exchange_bytes"}},
                                                {"l2", {"l2_bytes"}},
                                                {"hbm", {"hbm_bytes"}},
                                                {"dram", {"dram_min_bytes"}}};
  return all;
}

}  // namespace

std::optional<double> arithmetic_intensity(double flops, double bytes) {
  if (!(bytes > 0)) return std::nullopt;
  return flops / bytes;
}

std::vector<LevelTraffic> traffic_by_level(const ResultRow& row) {
  std::vector<LevelTraffic> out;
  for (const auto& l : levels()) {
    bool present = false;
    double bytes = 0;
    for (const char* c : l.columns) {
      const auto it = row.bytes.find(c);
      if (it == row.bytes.end()) continue;
      present = true;
      bytes += static_cast<double>(it->second);
    }
    if (!present) continue;
    LevelTraffic t;
    t.level = l.level;
    t.bytes = bytes;
    t.intensity_flops_per_byte = arithmetic_intensity(row.flops, bytes);
    if (row.time_s && *row.time_s > 0) t.bytes_per_s = bytes / *row.time_s;
    out.push_back(t);
  }
  return out;
}

std::string main_level(const ResultRow& row) {
  const auto traffic = traffic_by_level(row);
  for (const char* level : {"tile_sram", "hbm", "dram"})
    for (const auto& t : traffic)
      if (t.level == level) return level;
  return "";
}

std::optional<double> achieved_flops_per_s(const ResultRow& row) {
  if (!row.time_s || !(*row.time_s > 0)) return std::nullopt;
  return row.flops / *row.time_s;
}

std::string level_label(const std::string& level) {
  if (level == "tile_sram") return "tile SRAM";
  if (level == "exchange") return "exchange";
  if (level == "l2") return "L2";
  if (level == "hbm") return "HBM";
  if (level == "dram") return "DRAM";
  if (level == "llc") return "last-level cache";
  return level;
}

}  // namespace tilesim::analysis
