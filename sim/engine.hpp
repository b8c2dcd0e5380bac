#pragma once
// The BSP tile-machine engine on SystemC. SystemC elaborates once per process, so the engine is a
// process-wide instance built once with enough tile slots; any number of Programs then run through it
// (repeated sc_start), each on a MachineConfig using up to that many tiles.
//
// Time: one SystemC time unit is one tile cycle. Each tile is an SC_METHOD woken once per phase: it
// computes its phase length from the cost of its vertices (or its exchange bytes) and signals its
// arrival at the sync that many cycles later; the sync controller waits for every tile, charges the
// sync, and starts the next phase. Nothing is woken per cycle.
//
// Under `mpirun -n K`, with spread_over_mpi_ranks(true), a functional program on a machine of C chips,
// K > 1 dividing C, is spread over the ranks: rank r holds the SRAM of chips [r C/K, (r+1) C/K) and
// runs their vertices and copies, and the exchange bytes that cross ranks travel as MPI messages at
// each exchange phase (sim/rank_partition.hpp, sim/rank_messages.hpp). Every rank computes the whole
// program's timing, so each reports the same cycles, and host reads return the same bytes on every
// rank. Any other program (timing-only, or on fewer chips than ranks) runs whole on every rank.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

// Mode and the cost rules have headers of their own; included here so that the engine's users have them.
#include "sim/machine_config.hpp"
#include "sim/mode.hpp"
#include "sim/program.hpp"
#include "sim/stats.hpp"
#include "sim/tile_cost.hpp"
#include "sim/trace.hpp"

namespace tilesim::sim {

// A rectangle of a host array that one loaded buffer holds: `rows` rows of `row_bytes` bytes, packed
// from the buffer's first byte; host row k starts at byte host_offset_bytes + k * host_stride_bytes of
// the host array (a tensor's column block: the tensor's row bytes apart).
struct HostRows {
  BufferId buffer = -1;
  std::int64_t rows = 0;
  std::int64_t row_bytes = 0;
  std::int64_t host_offset_bytes = 0;
  std::int64_t host_stride_bytes = 0;
};

class Engine {
 public:
  // The process-wide engine; the first call elaborates it with `tile_slots` tiles. A later call
  // asking for more slots than were elaborated throws std::logic_error.
  static Engine& instance(std::int32_t tile_slots);
  std::int32_t tile_slots() const;

  // Whether functional programs spread over the ranks of an MPI job (above); off by default, and
  // without effect outside one. With it on, every rank must load and run the same programs and make
  // the same host reads and writes in the same order (`tilesim run` does: each rank runs the same
  // command); a job whose ranks do different work (a sweep's points) leaves it off. Takes effect at
  // the next load.
  static void spread_over_mpi_ranks(bool spread);

  // For tests: start each phase's tiles and run their byte work in an order drawn from `seed` (each
  // phase its own permutation) instead of the program's, so that tiles finishing at the same instant
  // arrive in another order too; nullopt restores the program's order. A correct program gives the same
  // bytes and cycles in every order (sim/phase_order.hpp). Takes effect at the next phase.
  static void shuffle_same_instant_order(std::optional<std::uint64_t> seed);

  // Timing-only programs run without a trace have their phases laid end to end from the compiled costs,
  // without the simulation kernel, which could only confirm them (sim/phase_sequence.hpp); true makes
  // them run through SystemC as every other program does. For the tests that hold the two equal.
  static void sequence_timing_only_in_systemc(bool in_systemc);

  // What spreading over ranks has done in this process so far: for the user's record of a run
  // (`tilesim run` prints it) and for tests that must know bytes really crossed ranks.
  struct SpreadTotals {
    std::int64_t programs_spread = 0;      // functional programs loaded spread over ranks
    std::int64_t exchange_bytes_sent = 0;  // bytes this rank sent to other ranks in exchange phases
    std::int64_t host_bytes_received = 0;  // bytes of host reads this rank received from other ranks
  };
  static SpreadTotals spread_totals();

  // Places the program's buffers on the machine's tiles. Throws tilesim::PlanError naming the tile,
  // the bytes it needs and the bytes it has if a tile's SRAM overflows; std::logic_error if the program
  // refers to tiles or buffers that do not exist, or if config.num_tiles exceeds tile_slots().
  void load(const Program& program, const MachineConfig& config, Mode mode);

  // Host access to loaded buffers (functional mode only; untimed, like data already resident). A read
  // of a shared copy (Transfer::read_only_copies) sees its source's bytes; writing one throws
  // std::logic_error, since the program promised that nothing writes it. Spread over ranks, a write
  // lands on the rank that holds the buffer (every rank is handed the same host bytes), and a read
  // brings each buffer's bytes from the rank that holds it, so every rank reads the same.
  void write(BufferId buffer, std::int64_t offset_bytes, const void* src, std::int64_t bytes);
  void read(BufferId buffer, std::int64_t offset_bytes, void* dst, std::int64_t bytes) const;
  // Moves many pieces of one host array, `host_bytes` long, in one call (an op's tensor I/O): each piece
  // is checked against its buffer, as write and read check, and against the host array. Pieces listed
  // one after another over the same host rows (a tensor's column blocks) move row by row together, and
  // a large move is spread over the host's cores; the pieces must not overlap where they are written.
  void write_rows(const std::vector<HostRows>& pieces, const void* host, std::int64_t host_bytes);
  void read_rows(const std::vector<HostRows>& pieces, void* host, std::int64_t host_bytes) const;

  // Runs the loaded program to completion. `trace` (optional) receives one slice per busy tile per
  // phase and one per sync.
  RunStats run(TraceWriter* trace = nullptr);

  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

 private:
  explicit Engine(std::int32_t tile_slots);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilesim::sim
