#include "runs/sweep/rank_comm.hpp"

#include <cstddef>

#include "mpi/collectives.hpp"
#include "mpi/world.hpp"

namespace tilesim::runs::sweep::ranks {

namespace {

bool several_ranks() { return mpi::world().active && mpi::world().size > 1; }

std::int64_t broadcast_count(std::int64_t count) {
  mpi::broadcast_from_root_quietly(&count, 1);
  return count;
}

}  // namespace

std::vector<std::int64_t> broadcast_from_root(const std::vector<std::int64_t>& values) {
  if (!several_ranks()) return values;
  std::vector<std::int64_t> out = values;
  out.resize(static_cast<std::size_t>(broadcast_count(static_cast<std::int64_t>(values.size()))));
  if (!out.empty()) mpi::broadcast_from_root_quietly(out.data(), static_cast<int>(out.size()));
  return out;
}

std::string broadcast_from_root(const std::string& text) {
  if (!several_ranks()) return text;
  std::string out = text;
  out.resize(static_cast<std::size_t>(broadcast_count(static_cast<std::int64_t>(text.size()))));
  if (!out.empty()) mpi::broadcast_from_root_quietly(out.data(), static_cast<int>(out.size()));
  return out;
}

std::vector<std::vector<double>> gather_to_root(const std::vector<double>& values) {
  if (!several_ranks()) return {values};
  const int ranks = mpi::world().size;
  const bool root = mpi::world().rank == 0;
  std::vector<double> all(root ? values.size() * static_cast<std::size_t>(ranks) : 0);
  mpi::gather_to_root_quietly(values.data(), static_cast<int>(values.size()), all.data());
  if (!root) return {};
  std::vector<std::vector<double>> out;
  for (int r = 0; r < ranks; ++r)
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(r * values.size()),
                     all.begin() + static_cast<std::ptrdiff_t>((r + 1) * values.size()));
  return out;
}

std::vector<std::string> gather_to_root(const std::string& text) {
  if (!several_ranks()) return {text};
  const int ranks = mpi::world().size;
  const bool root = mpi::world().rank == 0;
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(root ? static_cast<std::size_t>(ranks) : 0);
  mpi::gather_to_root_quietly(&length, 1, lengths.data());
  std::vector<int> offsets(lengths.size(), 0);
  for (std::size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(root ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
  mpi::gather_to_root_quietly(text.data(), length, all.data(), lengths.data(), offsets.data());
  if (!root) return {};
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

}  // namespace tilesim::runs::sweep::ranks
