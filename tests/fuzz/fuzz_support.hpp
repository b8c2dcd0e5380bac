#pragma once
// Shared by the fuzz targets (tests/fuzz/fuzz_*.cpp): the scratch file each input is written to, so that
// the readers that take a path are fuzzed through their file reading too, and the rule for what counts
// as a finding.
//
// A target's entry point is a plain libFuzzer LLVMFuzzerTestOneInput. The fuzz build (preset `fuzz`,
// clang) links it with libFuzzer; the normal builds (gcc or clang, Release or ASan) compile it with the
// entry point renamed to tilesim_fuzz_<target> into tilesim_fuzz_replay (replay_main.cpp), which runs it
// over the seed corpus and the regression inputs: a CTest per target.
//
// The rule: a reader given any bytes returns, or throws a tilesim::Error whose code is not
// internal_error (InputError, exit 2; PlanError, exit 3) and whose message names the input file.
// Anything else is a finding: another exception (it escapes the target and terminates the process), a
// tilesim::Error with code internal_error, an error message that does not say which file is at fault,
// a crash, a sanitizer report, a leak, an input that runs past libFuzzer's -timeout or -rss_limit_mb.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.hpp"

namespace tilesim::fuzz {

// This process's scratch directory: a fresh mkdtemp folder under $TMPDIR (or /tmp), made on first
// use and removed, with what is in it, when the process exits normally (a process that crashes, as on a
// finding or in libFuzzer's -minimize_crash, leaves its folder behind).
const std::string& scratch_dir();

// Writes the input to `name` in the scratch directory and returns the file's path. Every call with the
// same name overwrites the same file (one file per target and process, not one per input).
std::string write_scratch_file(const std::string& name, const std::uint8_t* data, std::size_t size);

// Copies `from` into the scratch directory as `name`: a file that inputs may name by a relative path
// (an index file beside a workload, a chip file beside an IPU system file). Targets call it once.
void copy_to_scratch_dir(const std::string& from, const std::string& name);

// Reports a finding: prints "fuzz finding: WHAT" to stderr and aborts, which libFuzzer (and the replay
// test) reports as a crash on the input being run.
[[noreturn]] void finding(const std::string& what);

// The expected answers to bad input: a tilesim::Error that is not internal_error and names `file`
// (its path, as the reader was given it). Otherwise a finding; an internal_error is rethrown so that its
// message is printed as the process terminates.
void check_error(const Error& error, const std::string& file);

// Runs `read` (a reader on the input written to `file`); returns 0 when it returns or throws an
// expected error. Other exceptions pass through: they are findings.
template <class Read>
int read_expecting_input_errors(const std::string& file, Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    check_error(e, file);
  }
  return 0;
}

}  // namespace tilesim::fuzz
