#pragma once
// A timeline of simulated runs in the Chrome trace-event JSON format, which ui.perfetto.dev and
// chrome://tracing load: one track per tile, one slice per phase a tile is busy in, plus a track for
// the sync controller. Timestamps are simulated microseconds.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/machine_config.hpp"

namespace tilesim::sim {

class TraceWriter {
 public:
  // start_us is on the trace's one timeline. The engine starts each program at end_us(), so slices of
  // several programs follow one another.
  void add_slice(std::int32_t track, const std::string& name, const std::string& category, double start_us,
                 double duration_us);
  // Names a track ("tile 17", "sync"); naming it again replaces the name.
  void name_track(std::int32_t track, const std::string& name);
  std::size_t size() const { return slices_.size(); }
  // The end of the latest slice, in simulated microseconds (0 when empty).
  double end_us() const { return end_us_; }
  // Writes the whole trace; throws tilesim::Error naming the path if it cannot be written.
  void write(const std::string& path) const;

 private:
  struct Slice {
    std::int32_t track;
    std::string name, category;
    double start_us, duration_us;
  };
  std::vector<Slice> slices_;
  std::map<std::int32_t, std::string> track_names_;
  double end_us_ = 0;
};

}  // namespace tilesim::sim
