#include "sim/phase_order.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>

namespace tilesim::sim {

namespace {

// Set by a test before a run, read by the one thread that runs SystemC.
std::atomic<bool> shuffled{false};
std::atomic<std::uint64_t> order_seed{0};

}  // namespace

void set_phase_order_seed(std::optional<std::uint64_t> seed) {
  order_seed.store(seed.value_or(0));
  shuffled.store(seed.has_value());
}

bool phase_order_shuffled() { return shuffled.load(); }

void fill_phase_tile_order(std::vector<std::size_t>& order, std::size_t count, std::size_t phase_index) {
  order.resize(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (!shuffled.load()) return;
  std::seed_seq seq{order_seed.load(), static_cast<std::uint64_t>(phase_index)};
  std::mt19937_64 rng(seq);
  std::shuffle(order.begin(), order.end(), rng);
}

}  // namespace tilesim::sim
