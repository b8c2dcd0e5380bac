#pragma once
// The host threads a functional run spreads large phases and host tensor moves over: the calling thread
// and helpers that block between runs, never spin. On a host other processes keep busy (a 2-core
// development machine building beside the simulator), a spinning helper took the core the caller
// needed, and a run that waited for every helper to wake took longer than one thread; here the caller
// claims items itself and waits only for those a helper has started. Engine-internal.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tilesim::sim {

class HostThreads {
 public:
  // `threads` counts the calling thread; helpers start on the first run that can use them.
  explicit HostThreads(int threads);
  ~HostThreads();
  HostThreads(const HostThreads&) = delete;
  HostThreads& operator=(const HostThreads&) = delete;

  int threads() const { return threads_; }

  // Calls task(i) once for every i in [0, count), on the calling thread and any helpers that wake in
  // time, in no particular order; returns when every call has returned. `task` must not throw. One run
  // at a time (the engine runs on one thread).
  void run(std::int64_t count, const std::function<void(std::int64_t)>& task);

 private:
  void helper_loop();
  // Claims and runs items of run `generation` until none of that run is left.
  void claim_and_run(std::uint32_t generation, std::int64_t count, const std::function<void(std::int64_t)>* task);

  const int threads_;
  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable wake_;      // helpers: a run started, or stop
  std::condition_variable finished_;  // caller: the last item returned
  bool stopping_ = false;
  // The current run, set under mutex_.
  std::uint32_t generation_ = 0;
  std::int64_t count_ = 0;
  const std::function<void(std::int64_t)>* task_ = nullptr;
  // The run's generation (high 32 bits) and next unclaimed item (low 32): a helper that wakes late
  // cannot claim an item of a later run with an earlier run's task.
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::int64_t> done_{0};
};

}  // namespace tilesim::sim
