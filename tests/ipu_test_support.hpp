#pragma once
// The shipped Bow machine file, loaded once per test process, for the tests of the simulated IPU.
#include "models/ipu/machine_file.hpp"

namespace tilesim_test {

inline const tilesim::ipu::IpuMachine& bow() {
  static const tilesim::ipu::IpuMachine m = tilesim::ipu::load_ipu_machine("bow");
  return m;
}

}  // namespace tilesim_test
