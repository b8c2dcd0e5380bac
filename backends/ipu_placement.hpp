#pragma once
// The simulated IPU as a placement study sees it (runs/placement_study.hpp, `tilesim placement`): its
// chip's figures, where node rows go on its tiles under a placement, and the simulated exchange of one
// message-passing step (models/ipu/placement.hpp). Here because runs/ does not include a model: this
// class is the model's face towards it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim::ipu {
struct IpuMachine;
}

namespace tilesim::backends {

// The tile of each node row (a sim::TileId per row).
using RowTiles = std::vector<std::int32_t>;

class PlacementMachine {
 public:
  // "bow", "mk2", "mk1", "bow-2000" or an IPU machine file; InputError as the machine reader throws it.
  explicit PlacementMachine(const std::string& name_or_path);

  const std::string& chip_name() const;
  std::int32_t num_tiles() const;
  std::int64_t sram_bytes_per_tile() const;

  // Linear spread of rows in equal contiguous blocks; the linear spread of relabelled rows; part p of
  // `num_parts` on its share of the tiles.
  RowTiles linear_rows(std::int64_t num_rows) const;
  RowTiles relabelled_rows(const std::vector<std::int32_t>& label_of_row) const;
  RowTiles part_rows(const std::vector<std::int32_t>& part_of_row, std::int32_t num_parts) const;

  // Plans, builds and runs (timing-only) the exchange of one message-passing step with rows of
  // `row_bytes` placed by `tile_of_row`; the figures as PlacementResult::to_json has them. PlanError
  // when a tile's own rows do not fit its SRAM.
  nlohmann::json simulate_exchange(const std::string& placement, const std::vector<std::int32_t>& src,
                                   const std::vector<std::int32_t>& dst, const RowTiles& tile_of_row, std::int64_t row_bytes) const;

 private:
  std::shared_ptr<const ipu::IpuMachine> machine_;
};

}  // namespace tilesim::backends
