#include "workloads/loaders/local_ids.hpp"

#include <utility>

namespace tilesim::workloads::loaders {

namespace {

struct ThreadTable {
  std::vector<std::int32_t> table;  // every entry `absent` between batches
  bool in_use = false;
};

ThreadTable& thread_table() {
  thread_local ThreadTable t;
  return t;
}

}  // namespace

LocalIds::LocalIds(std::int64_t num_nodes) {
  ThreadTable& t = thread_table();
  if (t.in_use) {
    own_table_.assign(static_cast<std::size_t>(num_nodes), absent);
    table_ = &own_table_;
  } else {
    t.in_use = true;
    borrowed_ = true;
    if (t.table.size() < static_cast<std::size_t>(num_nodes)) t.table.resize(static_cast<std::size_t>(num_nodes), absent);
    table_ = &t.table;
  }
}

LocalIds::~LocalIds() {
  reset_table();
  if (borrowed_) thread_table().in_use = false;
}

void LocalIds::reset_table() {
  for (std::int32_t global : nodes_) (*table_)[static_cast<std::size_t>(global)] = absent;
}

std::vector<std::int32_t> LocalIds::take_nodes() {
  reset_table();
  return std::exchange(nodes_, {});
}

}  // namespace tilesim::workloads::loaders
