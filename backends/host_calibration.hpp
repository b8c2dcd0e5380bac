#pragma once
// This host's ceilings as a CPU machine file: what `tilesim calibrate` writes and tilesim.calibrate
// returns. The measurement (kernels/cpu's host calibration) and the CPU model's machine file
// (models/cpu) are layers that do not include each other; the backend layer includes both and joins
// them here, for the command and the Python module alike.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/cpu/host_calibration.hpp"
#include "models/cpu/cpu_machine.hpp"

namespace tilesim::backends {

struct HostCalibration {
  cpu_model::CalibrationResult result;  // the measurements, every trial's figures in its details
  cpu_model::CpuMachine machine;        // as a CPU machine
  std::string host;                     // the host name it was measured on
  nlohmann::json document;              // the CPU machine file's content
};

// Refuses (InputError naming `out`, as --out) a destination whose directory cannot be created or that
// cannot be written, creating the directory: a bad path fails before the seconds of measurement.
void check_calibration_destination(const std::string& out);

// Measures this host with all of the process's OpenMP threads (a few seconds) and makes its CPU machine
// file. `progress`: a line on standard error first, saying what is measured.
HostCalibration calibrate_this_host(bool progress);

// A CPU machine file from a calibration: every figure's source names the method, the host and the
// time of measurement.
cpu_model::CpuMachine machine_from_calibration(const cpu_model::CalibrationResult& result, const std::string& name,
                                               const std::string& hostname, const std::string& cpu_model,
                                               std::int64_t logical_cpus, const std::string& measured_utc, const std::string& tool);

}  // namespace tilesim::backends
