#pragma once
// Helpers shared by the CLI, sweep and analysis tests: a scratch directory per test process, files in and
// out, the tilesim binary run through the shell, and checks that a rendered figure is a real PNG,
// well-formed SVG or a PDF of some size.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "results/backend.hpp"

namespace tilesim_test {

// Run options for a test that checks outputs, not timings: no warm-up, one call.
inline tilesim::RunOptions single_call() {
  tilesim::RunOptions o;
  o.warmup = 0;
  o.repeats = 1;
  return o;
}

namespace fs = std::filesystem;

inline fs::path scratch(const std::string& what) {
  const fs::path d = fs::temp_directory_path() / ("tilesim_" + what + "_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline fs::path write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// A fresh directory per object, removed with everything in it when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& what = "test") {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("tilesim-" + what + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `name` (subdirectories made as needed) and returns the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    return write_text(path_ / name, text).string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& dir() const { return path_; }

 private:
  fs::path path_;
};

// Test data: the rows (each `cols` wide) of `v` whose weight is 1.
template <class T>
std::vector<T> kept_rows(const std::vector<T>& v, std::int64_t cols, const std::vector<float>& weights) {
  std::vector<T> kept;
  for (std::size_t r = 0; r < weights.size(); ++r)
    if (weights[r] == 1.0f)
      kept.insert(kept.end(), v.begin() + static_cast<std::ptrdiff_t>(r) * cols, v.begin() + static_cast<std::ptrdiff_t>(r + 1) * cols);
  return kept;
}

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `ENV tilesim ARGS` in the source tree (where the shipped sweep files and reference data are),
// its standard output and error kept in files under `scratch_dir`. `env` is a prefix of shell
// variable assignments ("" for none).
// Runs a shell command from the source tree, its standard output and error kept in `out` and `err`.
inline CliResult run_in_source_tree(const std::string& command, const fs::path& out, const fs::path& err) {
  const std::string cmd = "cd '" + std::string(TILESIM_SOURCE_DIR) + "' && " + command + " >'" + out.string() + "' 2>'" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline CliResult run_tilesim(const std::string& args, const fs::path& scratch_dir, const std::string& env = "") {
  return run_in_source_tree(env + " " + std::string(TILESIM_BINARY) + " " + args, scratch_dir / "stdout.txt",
                            scratch_dir / "stderr.txt");
}

#ifdef TILESIM_MPIEXEC
// The MPI launcher as the MPI tests start it (apps and their rank counts follow): root may start ranks
// only when it says so, --oversubscribe lets 4 ranks share a 2-core host, and Open MPI's allocations at
// MPI_Init are never freed, so LeakSanitizer looks away in the ranks of a sanitizer build.
inline std::string mpi_launcher() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string cmd = "env ASAN_OPTIONS='" + std::string(asan ? asan : "") + ":detect_leaks=0' " + std::string(TILESIM_MPIEXEC) +
                    " --oversubscribe";
  if (::geteuid() == 0) cmd += " --allow-run-as-root";
  return cmd;
}
// `mpiexec -n K` (then the command).
inline std::string mpi_launch(int ranks) { return mpi_launcher() + " -n " + std::to_string(ranks); }
#endif

// Data lines of a CSV file (the header left out).
inline std::vector<std::string> data_lines(const fs::path& csv) {
  std::istringstream in(slurp(csv));
  std::vector<std::string> lines;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

inline bool is_png(const std::string& bytes) { return bytes.size() > 8 && bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0; }
inline bool is_pdf(const std::string& bytes) {
  return bytes.size() > 8 && bytes.compare(0, 5, "%PDF-") == 0 && bytes.find("%%EOF") != std::string::npos;
}

// Whether `text` is well-formed XML, and the name of its root element in `root`: Boost.PropertyTree's
// XML reader parses it (it rejects unclosed or mismatched elements and unquoted attributes), so a
// complete SVG is told from a truncated or garbled one.
inline bool well_formed_xml(const std::string& text, std::string& root) {
  boost::property_tree::ptree tree;
  std::istringstream in(text);
  try {
    boost::property_tree::read_xml(in, tree);
  } catch (const boost::property_tree::xml_parser_error&) {
    return false;
  }
  for (const auto& [name, child] : tree) {
    (void)child;
    if (name == "<xmlcomment>" || name == "<xmlattr>") continue;
    root = name;
    return true;
  }
  return false;
}

// The message of the tilesim::InputError `f` must throw, checking it carries the bad-input exit code;
// the test fails when `f` throws none.
template <class F>
std::string required_input_error_of(F&& f) {
  try {
    f();
  } catch (const tilesim::InputError& e) {
    CHECK(e.code() == tilesim::ExitCode::bad_input);
    return e.what();
  }
  FAIL("expected an InputError, but none was thrown");
  return "";
}

// The message of the tilesim::InputError `f` throws ("" when it throws none).
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const tilesim::InputError& e) {
    return e.what();
  }
  return "";
}

// Every file a rendered figure should have, valid and of a size that holds a drawing (not an empty
// frame): the PNG at least `min_png_bytes`.
inline std::string figure_problem(const fs::path& dir, const std::string& stem, std::size_t min_png_bytes = 8000) {
  for (const char* ext : {".dat", ".gp", ".svg", ".png", ".pdf"})
    if (!fs::is_regular_file(dir / (stem + ext))) return stem + ext + " missing";
  const std::string png = slurp(dir / (stem + ".png"));
  if (!is_png(png)) return stem + ".png is not a PNG";
  if (png.size() < min_png_bytes) return stem + ".png has only " + std::to_string(png.size()) + " bytes";
  std::string root;
  const std::string svg = slurp(dir / (stem + ".svg"));
  if (!well_formed_xml(svg, root) || root != "svg") return stem + ".svg is not well-formed SVG";
  if (svg.size() < 5000) return stem + ".svg has only " + std::to_string(svg.size()) + " bytes";
  const std::string pdf = slurp(dir / (stem + ".pdf"));
  if (!is_pdf(pdf)) return stem + ".pdf is not a PDF";
  if (pdf.size() < 5000) return stem + ".pdf has only " + std::to_string(pdf.size()) + " bytes";
  return "";
}

}  // namespace tilesim_test
