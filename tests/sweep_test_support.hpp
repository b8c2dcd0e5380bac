#pragma once
// Helpers shared by the sweep and analysis tests: a scratch directory per test process, files in and
// out, the tilesim binary run through the shell, and checks that a rendered figure is a real PNG,
// well-formed SVG or a PDF of some size.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tilesim_test {

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

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `tilesim ARGS` in the source tree (where the shipped sweep files and reference data are).
inline CliResult run_tilesim(const std::string& args, const fs::path& scratch_dir) {
  const fs::path out = scratch_dir / "stdout.txt", err = scratch_dir / "stderr.txt";
  const std::string cmd = "cd '" + std::string(TILESIM_SOURCE_DIR) + "' && " + std::string(TILESIM_BINARY) + " " + args +
                          " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

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

// A small well-formedness check of XML: every element closed in order, attribute values quoted,
// comments, processing instructions and CDATA skipped. Enough to tell a complete SVG from a truncated
// or garbled one without an XML library.
inline bool well_formed_xml(const std::string& text, std::string& root) {
  std::vector<std::string> open;
  std::size_t i = 0;
  bool seen_root = false;
  while ((i = text.find('<', i)) != std::string::npos) {
    if (text.compare(i, 4, "<!--") == 0) {
      i = text.find("-->", i);
      if (i == std::string::npos) return false;
      i += 3;
      continue;
    }
    if (text.compare(i, 9, "<![CDATA[") == 0) {
      i = text.find("]]>", i);
      if (i == std::string::npos) return false;
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "<?") == 0 || text.compare(i, 2, "<!") == 0) {
      i = text.find('>', i);
      if (i == std::string::npos) return false;
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    char quote = 0;
    for (; j < text.size(); ++j) {
      if (quote) {
        if (text[j] == quote) quote = 0;
      } else if (text[j] == '"' || text[j] == '\'') {
        quote = text[j];
      } else if (text[j] == '>') {
        break;
      }
    }
    if (j >= text.size()) return false;
    const std::string tag = text.substr(i + 1, j - i - 1);
    i = j + 1;
    if (tag.empty()) return false;
    if (tag[0] == '/') {
      const std::string name = tag.substr(1, tag.find_first_of(" \t\r\n", 1) - 1);
      if (open.empty() || open.back() != name) return false;
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \t\r\n/"));
    if (open.empty()) {
      if (seen_root) return false;
      seen_root = true;
      root = name;
    }
    if (tag.back() != '/') open.push_back(name);
  }
  return seen_root && open.empty();
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
