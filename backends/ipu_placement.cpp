#include "backends/ipu_placement.hpp"

#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/placement.hpp"

namespace tilesim::backends {

PlacementMachine::PlacementMachine(const std::string& name_or_path)
    : machine_(std::make_shared<const ipu::IpuMachine>(ipu::load_ipu_machine(name_or_path))) {}

const std::string& PlacementMachine::chip_name() const { return machine_->chip.name; }

std::int32_t PlacementMachine::num_tiles() const { return machine_->chip.num_tiles; }

std::int64_t PlacementMachine::sram_bytes_per_tile() const { return machine_->chip.sram_bytes_per_tile; }

RowTiles PlacementMachine::linear_rows(std::int64_t num_rows) const { return ipu::linear_row_tiles(num_rows, num_tiles()); }

RowTiles PlacementMachine::relabelled_rows(const std::vector<std::int32_t>& label_of_row) const {
  return ipu::relabelled_row_tiles(label_of_row, num_tiles());
}

RowTiles PlacementMachine::part_rows(const std::vector<std::int32_t>& part_of_row, std::int32_t num_parts) const {
  return ipu::part_row_tiles(part_of_row, num_parts, num_tiles());
}

nlohmann::json PlacementMachine::simulate_exchange(const std::string& placement, const std::vector<std::int32_t>& src,
                                                   const std::vector<std::int32_t>& dst, const RowTiles& tile_of_row,
                                                   std::int64_t row_bytes) const {
  return ipu::simulate_placement(placement, src, dst, tile_of_row, row_bytes, *machine_).to_json();
}

}  // namespace tilesim::backends
