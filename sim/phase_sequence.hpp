#pragma once
// What a phase of a compiled program reports once it has run (PhaseStats), and the timing-only run that
// needs no simulation kernel to get it.
//
// A compiled phase already knows its length: its fixed cost plus its slowest tile's cycles, each tile's
// cycles coming from the pure cost rules at compile time. The SystemC run wakes each tile once per
// phase and checks that the tiles really arrive then (sync_controller.hpp); a timing-only program moves
// no bytes and runs no vertex, so that run can only confirm the sum. sequence_phases() lays the phases
// end to end without the kernel and gives the same PhaseStats, cycle for cycle: the engine uses it for
// timing-only runs without a trace, and a test runs the shipped hydronet grid both ways and compares
// every phase (tests/models/ipu/timing_only_sequence_test.cpp). Engine-internal.
#include "sim/compiled_program.hpp"
#include "sim/stats.hpp"

namespace tilesim::sim {

// The record of `phase`, started `start_cycle` cycles after its program's start, that lasted `cycles`.
PhaseStats phase_stats(const CompiledProgram& program, const CompiledPhase& phase, Cycles start_cycle, Cycles cycles);

// Appends every phase of `program` to stats.phases, each starting where the one before ended.
void sequence_phases(const CompiledProgram& program, RunStats& stats);

}  // namespace tilesim::sim
