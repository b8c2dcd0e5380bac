#pragma once
// Facts about the host tilesim runs on: for reports and machine files written from measurements, and
// for the limits on what a run may generate.
#include <cstdint>
#include <string>

namespace tilesim {

// The CPU's model name from /proc/cpuinfo ("unknown CPU" when it cannot be read).
std::string host_cpu_model_name();

// The cores this process may run on (its affinity mask), or the logical CPUs when that cannot be read.
int host_cores_available();

// Physical memory in bytes (sysconf); 0 when the system does not say.
std::int64_t host_physical_memory_bytes();

// The memory a run's generated inputs (workload tensors, graphs, a sweep's largest point) may take:
// half of physical memory, since a backend needs room for its own copies and outputs besides. 0 when
// the physical memory is unknown.
std::int64_t host_input_memory_bytes();

}  // namespace tilesim
