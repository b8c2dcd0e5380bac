#pragma once
// A list whose first few elements live inside it (boost::container::small_vector), for the short
// lists every vertex holds: its per-worker cycles and its buffer refs. A large op makes thousands of
// vertices per point; with a heap block for each of these lists, allocating and freeing them was
// about a sixth of a timing-only sweep point's host time. Longer lists still grow onto the heap, so
// the inline capacity is a performance choice, not a limit of any machine.
//
// Builders fill these lists from std::vector results and brace lists, so both convert implicitly.
#include <boost/container/small_vector.hpp>

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

namespace tilesim::sim {

template <class T, std::size_t InlineCapacity>
class InlineList : public boost::container::small_vector<T, InlineCapacity> {
  using Base = boost::container::small_vector<T, InlineCapacity>;

 public:
  using Base::Base;
  InlineList() = default;
  InlineList(const InlineList&) = default;
  // Declared noexcept (boost does not for every element type, though moving inline elements of these
  // plain types cannot throw): a std::vector of vertices then moves them when it grows, not copies.
  InlineList(InlineList&& other) noexcept : Base(std::move(static_cast<Base&>(other))) {}
  InlineList& operator=(const InlineList& other) {
    Base::operator=(other);
    return *this;
  }
  InlineList& operator=(InlineList&& other) noexcept {
    Base::operator=(std::move(static_cast<Base&>(other)));
    return *this;
  }
  InlineList(const std::vector<T>& values) : Base(values.begin(), values.end()) {}  // NOLINT: implicit by design
  InlineList& operator=(const std::vector<T>& values) {
    this->assign(values.begin(), values.end());
    return *this;
  }
  InlineList& operator=(std::initializer_list<T> values) {
    this->assign(values.begin(), values.end());
    return *this;
  }
};

}  // namespace tilesim::sim
