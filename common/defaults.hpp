#pragma once
// Defaults that more than one layer states (the run options, the command line, the sweep file), in one
// place, each with the reason for its value.

namespace tilesim::defaults {

// Measured backends (cpu, torch-cpu, cuda): untimed calls of each op before the timed ones. The first
// call pays for one-time work the timed calls would not repeat (page faults on a fresh output, cold
// caches, OpenMP's thread pool, a CUDA context's lazy module loading); the second starts the timed
// calls from the state they repeat.
inline constexpr int warmup_calls = 2;

// Measured backends: timed calls of each op; the median is the reported time. With ten, one or two
// calls slowed by other work sharing the host leave the median where it is.
inline constexpr int timed_calls = 10;

}  // namespace tilesim::defaults
