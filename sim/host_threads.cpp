#include "sim/host_threads.hpp"

#include <limits>
#include <system_error>

namespace tilesim::sim {

namespace {

constexpr std::uint64_t pack(std::uint32_t generation, std::uint64_t item) {
  return (std::uint64_t{generation} << 32) | item;
}

}  // namespace

HostThreads::HostThreads(int threads) : threads_(threads < 1 ? 1 : threads) {}

HostThreads::~HostThreads() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& helper : helpers_) helper.join();
}

void HostThreads::claim_and_run(std::uint32_t generation, std::int64_t count, const std::function<void(std::int64_t)>* task) {
  std::uint64_t claim = next_.load(std::memory_order_relaxed);
  for (;;) {
    if (claim >> 32 != generation || static_cast<std::int64_t>(claim & 0xffffffffu) >= count) return;
    if (!next_.compare_exchange_weak(claim, claim + 1, std::memory_order_relaxed)) continue;
    (*task)(static_cast<std::int64_t>(claim & 0xffffffffu));
    // Release: the caller, seeing the last count, sees every item's writes.
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
      const std::lock_guard<std::mutex> lock(mutex_);
      finished_.notify_one();
    }
    claim = next_.load(std::memory_order_relaxed);
  }
}

void HostThreads::helper_loop() {
  // Runs from the one that started it on: an earlier run has ended, and its task with it.
  std::uint32_t seen = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    seen = generation_;
  }
  for (;;) {
    std::uint32_t generation = 0;
    std::int64_t count = 0;
    const std::function<void(std::int64_t)>* task = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation = generation_;
      count = count_;
      task = task_;
    }
    // The task stays alive while any item of its run is unclaimed or running: the caller waits for all.
    // A helper that wakes after its run ended finds no item of that generation and never calls it.
    claim_and_run(generation, count, task);
  }
}

void HostThreads::run(std::int64_t count, const std::function<void(std::int64_t)>& task) {
  if (threads_ <= 1 || count <= 1 || count > std::numeric_limits<std::uint32_t>::max()) {
    for (std::int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  // Helpers start on first use; a host that refuses a thread runs with fewer.
  try {
    while (static_cast<int>(helpers_.size()) + 1 < threads_) helpers_.emplace_back([this] { helper_loop(); });
  } catch (const std::system_error&) {
  }
  std::uint32_t generation = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    generation = ++generation_;
    count_ = count;
    task_ = &task;
    done_.store(0, std::memory_order_relaxed);
    next_.store(pack(generation, 0), std::memory_order_relaxed);
  }
  wake_.notify_all();
  claim_and_run(generation, count, &task);
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_.load(std::memory_order_acquire) == count; });
}

}  // namespace tilesim::sim
