#pragma once
// The relabelling of a node batch: full-graph node ids -> local ids 0..n-1 in order of first
// appearance. Backed by a node-indexed table that each thread keeps between batches and resets only
// where a batch wrote it, so a batch costs O(its nodes), not O(the graph), after the first.
#include <cstdint>
#include <vector>

namespace tilesim::workloads::loaders {

class LocalIds {
 public:
  // Borrows this thread's table (a private one if the thread's is already borrowed), sized for node
  // ids in [0, num_nodes).
  explicit LocalIds(std::int64_t num_nodes);
  ~LocalIds();
  LocalIds(const LocalIds&) = delete;
  LocalIds& operator=(const LocalIds&) = delete;

  static constexpr std::int32_t absent = -1;
  // The local id of a full-graph node, or `absent`.
  std::int32_t find(std::int32_t global) const { return (*table_)[static_cast<std::size_t>(global)]; }
  // The local id of `global`, numbering it next when it is new.
  std::int32_t add(std::int32_t global) {
    std::int32_t& local = (*table_)[static_cast<std::size_t>(global)];
    if (local == absent) {
      local = static_cast<std::int32_t>(nodes_.size());
      nodes_.push_back(global);
    }
    return local;
  }
  std::int64_t size() const { return static_cast<std::int64_t>(nodes_.size()); }
  const std::vector<std::int32_t>& nodes() const { return nodes_; }
  // local -> global, handing the list over; the table is reset and the object is empty afterwards.
  std::vector<std::int32_t> take_nodes();

 private:
  void reset_table();

  std::vector<std::int32_t>* table_;
  std::vector<std::int32_t> own_table_;  // used when the thread's table is already borrowed
  bool borrowed_ = false;
  std::vector<std::int32_t> nodes_;
};

}  // namespace tilesim::workloads::loaders
