#include "common/host_info.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <thread>

namespace tilesim {

std::string host_cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

int host_cores_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::int64_t host_physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_bytes <= 0) return 0;
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::int64_t>(pages), static_cast<std::int64_t>(page_bytes), &bytes))
    return std::numeric_limits<std::int64_t>::max();
  return bytes;
}

std::int64_t host_input_memory_bytes() { return host_physical_memory_bytes() / 2; }

}  // namespace tilesim
