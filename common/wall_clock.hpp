#pragma once
// The two clocks the commands report: the UTC time a report or a calibration was written (ISO 8601,
// second resolution) and the seconds a long piece of work has taken so far (steady clock).
#include <chrono>
#include <ctime>
#include <string>

namespace tilesim {

inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tilesim
