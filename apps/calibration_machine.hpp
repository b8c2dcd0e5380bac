#pragma once
// The CPU machine file `tilesim calibrate` writes: the host's measured ceilings (kernels/cpu's
// calibration) as a CPU model's machine (models/cpu). Here, in the command, because the measurement
// and the model are layers that do not include each other.
#include <cstdint>
#include <string>

#include "kernels/cpu/host_calibration.hpp"
#include "models/cpu/cpu_machine.hpp"

namespace tilesim::cpu_model {

// A CPU machine file from a calibration: every figure's source names the method, the host and the
// time of measurement.
CpuMachine machine_from_calibration(const CalibrationResult& result, const std::string& name, const std::string& hostname,
                                    const std::string& cpu_model, std::int64_t logical_cpus, const std::string& measured_utc,
                                    const std::string& tool);

}  // namespace tilesim::cpu_model
