#include "sim/work_executor.hpp"

#include "sim/block_copy.hpp"

namespace tilesim::sim {

void WorkExecutor::run(const TileWork& work) noexcept {
  if (work.count == 0 || failed()) return;  // timing-only work has no items; after a failure, stop touching bytes
  try {
    if (kind_ == PhaseKind::compute) {
      const auto* items = program_->vertices.data() + work.first;
      const auto* addresses = program_->addresses.data();
      for (std::uint32_t i = 0; i < work.count; ++i) {
        const VertexItem& item = items[i];
        if (item.execute) item.execute(VertexContext(addresses + item.first_address, item.address_count));
      }
    } else if (kind_ == PhaseKind::exchange) {
      const auto* copies = program_->copies.data() + work.first;
      for (std::uint32_t i = 0; i < work.count; ++i) {
        const CopyItem& c = copies[i];
        // memmove semantics: a plan may copy a region onto itself; overlapping regions are the plan's business.
        for (std::int64_t k = 0; k < c.blocks; ++k) {
          move_bytes(c.dst + k * c.dst_stride_bytes, c.src + k * c.src_stride_bytes, static_cast<std::size_t>(c.bytes));
        }
      }
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

}  // namespace tilesim::sim
