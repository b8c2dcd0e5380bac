#pragma once
// An exclusive hold on a sweep's output folder, so two sweeps never write one results.csv.
//
// The hold is an advisory flock(2) on DIR/sweep.lock, taken before anything in the folder is read or
// written. The kernel releases it when the holding process ends, however it ends (kill -9 included),
// so a stale lock file never blocks anyone: only a live holder does. The file's text names the holder
// (pid, host, start time, command) for the message the next writer gets.
//
// Worker processes forked by --jobs share the parent's open file and so its hold; they die with the
// parent. A multi-rank sweep is meant to take this lock once (in the rank that merges) and have every
// rank append to its own part file beside results.csv.
#include <string>

namespace tilesim::runs::sweep {

class OutputLock {
 public:
  // Takes the lock on `dir` (which must exist) or throws InputError (exit 2) naming the folder and,
  // when it can be read, the process that holds it. `what`: this writer, as the holder's text records it.
  OutputLock(const std::string& dir, const std::string& what);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace tilesim::runs::sweep
