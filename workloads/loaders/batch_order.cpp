#include "workloads/loaders/batch_order.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "workloads/graphs/graph_random.hpp"
#include "workloads/random_streams.hpp"

namespace tilesim::workloads::loaders {

std::mt19937_64 epoch_engine(std::uint64_t seed, std::int64_t epoch, const std::string& purpose) {
  return streams::named_engine(streams::mix64(seed ^ streams::mix64(static_cast<std::uint64_t>(epoch))), purpose);
}

std::uint64_t batch_seed(std::uint64_t seed, std::int64_t epoch, std::int64_t batch) {
  // Two rounds of the bijective mixer, so (epoch, batch) pairs do not collide the way epoch + batch would.
  const std::uint64_t per_epoch = streams::mix64(seed ^ streams::mix64(static_cast<std::uint64_t>(epoch)));
  return streams::mix64(per_epoch ^ streams::mix64(~static_cast<std::uint64_t>(batch)));
}

void shuffle_in_place(std::vector<std::int32_t>& items, std::mt19937_64& engine) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(graphs::bounded(engine, i));
    std::swap(items[i - 1], items[j]);
  }
}

std::vector<std::vector<std::int32_t>> cut_into_batches(const std::vector<std::int32_t>& items, std::int64_t batch_size) {
  if (batch_size < 1) throw std::invalid_argument("batch size must be at least 1, got " + std::to_string(batch_size));
  std::vector<std::vector<std::int32_t>> batches;
  const auto size = static_cast<std::size_t>(batch_size);
  batches.reserve((items.size() + size - 1) / size);
  for (std::size_t begin = 0; begin < items.size(); begin += size) {
    const std::size_t end = std::min(items.size(), begin + size);
    batches.emplace_back(items.begin() + static_cast<std::ptrdiff_t>(begin), items.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}

std::vector<std::vector<std::int32_t>> epoch_batches(std::vector<std::int32_t> items, std::int64_t batch_size,
                                                     bool shuffle, std::uint64_t seed, std::int64_t epoch,
                                                     const std::string& purpose) {
  if (shuffle) {
    auto engine = epoch_engine(seed, epoch, purpose);
    shuffle_in_place(items, engine);
  }
  return cut_into_batches(items, batch_size);
}

}  // namespace tilesim::workloads::loaders
