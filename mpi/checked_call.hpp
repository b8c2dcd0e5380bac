#pragma once
// What the MPI calls of mpi/*.cpp share: a failed call as an exception, and the largest message one
// call moves. Compiled with MPI only (TILESIM_HAVE_MPI); mpi-internal.
#ifdef TILESIM_HAVE_MPI
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tilesim::mpi {

// MPI counts are ints: a message longer than this goes as several, in order (MPI keeps the order of
// messages between two ranks on one tag, and of collectives on one communicator).
constexpr std::int64_t max_message_bytes = std::int64_t{1} << 30;

inline void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed with code " + std::to_string(code));
}

}  // namespace tilesim::mpi
#endif
