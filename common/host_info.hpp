#pragma once
// Facts about the host tilesim runs on, for reports and machine files written from measurements.
#include <string>

namespace tilesim {

// The CPU's model name from /proc/cpuinfo ("unknown CPU" when it cannot be read).
std::string host_cpu_model_name();

}  // namespace tilesim
