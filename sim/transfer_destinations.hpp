#pragma once
// A transfer's destinations (Transfer::dst): a small array that holds its first entry in place.
//
// Why not a std::vector: nearly every transfer has one destination, and a large op's program lists
// hundreds of thousands of transfers (a scatter's messages to their row blocks, one per message row and
// column block), so a heap block per transfer was the largest single cost of compiling a timing-only
// point (bench/sim_speed_bench.cpp). Broadcasts grow onto the heap as a vector would. Moves never throw,
// so a vector of transfers relocates by moving.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>

#include "sim/buffer_ref.hpp"

namespace tilesim::sim {

class TransferDestinations {
 public:
  using value_type = BufferRef;
  using iterator = BufferRef*;
  using const_iterator = const BufferRef*;

  TransferDestinations() noexcept = default;
  TransferDestinations(std::initializer_list<BufferRef> refs) {
    reserve(refs.size());
    for (const BufferRef& ref : refs) push_back(ref);
  }
  TransferDestinations(const TransferDestinations& other) {
    reserve(other.size_);
    std::copy(other.begin(), other.end(), data());
    size_ = other.size_;
  }
  TransferDestinations(TransferDestinations&& other) noexcept { take(other); }
  TransferDestinations& operator=(const TransferDestinations& other) {
    if (this != &other) *this = TransferDestinations(other);
    return *this;
  }
  TransferDestinations& operator=(TransferDestinations&& other) noexcept {
    if (this != &other) {
      heap_.reset();
      take(other);
    }
    return *this;
  }
  ~TransferDestinations() = default;

  void push_back(const BufferRef& ref) {
    if (size_ == capacity()) reserve(size_ == 0 ? 1 : 2 * size_);
    data()[size_++] = ref;
  }
  void reserve(std::size_t wanted) {
    if (wanted <= capacity()) return;
    std::unique_ptr<BufferRef[]> grown(new BufferRef[wanted]);
    std::copy(begin(), end(), grown.get());
    heap_ = std::move(grown);
    heap_capacity_ = wanted;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  BufferRef* data() { return heap_ ? heap_.get() : &first_; }
  const BufferRef* data() const { return heap_ ? heap_.get() : &first_; }
  BufferRef& operator[](std::size_t k) { return data()[k]; }
  const BufferRef& operator[](std::size_t k) const { return data()[k]; }
  BufferRef& front() { return data()[0]; }
  const BufferRef& front() const { return data()[0]; }
  BufferRef& back() { return data()[size_ - 1]; }
  const BufferRef& back() const { return data()[size_ - 1]; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }

 private:
  std::size_t capacity() const { return heap_ ? heap_capacity_ : 1; }
  void take(TransferDestinations& other) noexcept {
    first_ = other.first_;
    heap_ = std::move(other.heap_);
    heap_capacity_ = other.heap_capacity_;
    size_ = other.size_;
    other.size_ = 0;
    other.heap_capacity_ = 0;
  }

  BufferRef first_;                    // the only entry until a second arrives
  std::unique_ptr<BufferRef[]> heap_;  // every entry once there are more than one
  std::size_t heap_capacity_ = 0;
  std::size_t size_ = 0;
};

}  // namespace tilesim::sim
