#include "tests/fuzz/fuzz_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace tilesim::fuzz {

namespace {

std::string make_scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tilesim-fuzz-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data())) {
    std::perror(("tilesim fuzz: mkdtemp " + pattern).c_str());
    std::abort();
  }
  return buffer.data();
}

void remove_scratch_dir() {
  std::error_code ec;
  std::filesystem::remove_all(scratch_dir(), ec);
}

}  // namespace

const std::string& scratch_dir() {
  static const std::string dir = make_scratch_dir();
  static const bool cleanup_registered = (std::atexit(remove_scratch_dir), true);
  (void)cleanup_registered;
  return dir;
}

std::string write_scratch_file(const std::string& name, const std::uint8_t* data, std::size_t size) {
  std::string path = scratch_dir() + "/" + name;
  // Removed first rather than truncated: ext4 writes a file truncated and rewritten back to disk when it
  // is closed (auto_da_alloc), which made every run wait for the disk (300 runs/s instead of 1000s).
  std::remove(path.c_str());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(("tilesim fuzz: writing " + path).c_str());
    std::abort();
  }
  return path;
}

void copy_to_scratch_dir(const std::string& from, const std::string& name) {
  std::error_code ec;
  std::filesystem::copy_file(from, scratch_dir() + "/" + name, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    std::fprintf(stderr, "tilesim fuzz: copying %s into %s: %s\n", from.c_str(), scratch_dir().c_str(), ec.message().c_str());
    std::abort();
  }
}

void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

void check_error(const Error& error, const std::string& file) {
  if (error.code() == ExitCode::internal_error) throw;  // a bug: let it terminate the process with its message
  const std::string message = error.what();
  // Where a reader follows a reference the input makes (a base machine, an index or graph file, a
  // chip file), the error may name that file instead. Such paths are relative to the input's directory
  // (an absolute path to an existing file is not something fuzzing reaches), so the scratch directory is
  // what every message must name.
  if (message.find(scratch_dir()) == std::string::npos) {
    finding("an error that does not name the file at fault (" + file + "): " + message);
  }
}

}  // namespace tilesim::fuzz
