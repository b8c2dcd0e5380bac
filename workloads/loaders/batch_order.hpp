#pragma once
// The order in which a loader visits its items in an epoch (seed nodes, clusters, dataset graphs): as
// given, or shuffled by a stream keyed on the loader's seed and the epoch, then cut into batches. One
// place for it so every loader shuffles the same way, with the written-out streams of
// workloads/random_streams.hpp (the same seed gives the same epochs wherever tilesim builds).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tilesim::workloads::loaders {

// The engine of stream `purpose` for `epoch` under `seed`.
std::mt19937_64 epoch_engine(std::uint64_t seed, std::int64_t epoch, const std::string& purpose);

// A seed for batch `batch` of `epoch`, for the per-batch draws of a sampler (sample_neighbors):
// distinct batches get unrelated streams.
std::uint64_t batch_seed(std::uint64_t seed, std::int64_t epoch, std::int64_t batch);

// Fisher-Yates with Lemire's bounded integers (graphs::bounded), not std::shuffle, whose algorithm is
// the standard library's choice.
void shuffle_in_place(std::vector<std::int32_t>& items, std::mt19937_64& engine);

// `items` cut into consecutive batches of batch_size (the last one may be smaller); batch_size >= 1.
std::vector<std::vector<std::int32_t>> cut_into_batches(const std::vector<std::int32_t>& items, std::int64_t batch_size);

// `items` in order, or shuffled by epoch_engine(seed, epoch, purpose) when `shuffle`, cut into batches.
std::vector<std::vector<std::int32_t>> epoch_batches(std::vector<std::int32_t> items, std::int64_t batch_size,
                                                     bool shuffle, std::uint64_t seed, std::int64_t epoch,
                                                     const std::string& purpose);

}  // namespace tilesim::workloads::loaders
