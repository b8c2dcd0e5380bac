#include "analysis/gnuplot.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace tilesim::analysis {

namespace fs = std::filesystem;

namespace {

const char* const missing_gnuplot_help =
    "install the Debian package gnuplot-nox (apt-get install gnuplot-nox), or set TILESIM_GNUPLOT to a gnuplot "
    "with the svg and pngcairo terminals";

// Single-quotes a word for /bin/sh.
std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') quoted += "'\\''";
    else quoted += c;
  }
  return quoted + "'";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw InputError(path.string(), "", "a writable file", "it cannot be written");
}

void check_stem(const std::string& stem) {
  bool ok = !stem.empty() && stem.front() != '.';
  for (char c : stem)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '-' || c == '.');
  // The stem is spliced into the gnuplot script inside single quotes; a bug, not user input.
  if (!ok) throw std::invalid_argument("figure stem '" + stem + "' must be letters, digits, '_', '-' or '.'");
}

// Runs a shell command and returns its exit status, or 127 when the shell could not find the program.
int run_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

std::string gnuplot_program() {
  const char* env = std::getenv("TILESIM_GNUPLOT");
  return env && *env ? env : "gnuplot";
}

void require_gnuplot(const std::string& program) {
  // `gnuplot -e 'set terminal pngcairo'` fails both when gnuplot is missing and when it was built
  // without cairo (gnuplot-nox has cairo; a hand-built one may not).
  const std::string command = shell_quote(program) + " -e " + shell_quote("set terminal pngcairo; set terminal svg") +
                              " >/dev/null 2>&1";
  const int status = run_shell(command);
  if (status == 127 || status == 126)
    throw Error(ExitCode::bad_input, "gnuplot (`" + program + "`) was not found; " + missing_gnuplot_help);
  if (status != 0)
    throw Error(ExitCode::bad_input, "`" + program + "` cannot draw with the svg and pngcairo terminals (exit status " +
                                         std::to_string(status) + "); " + missing_gnuplot_help);
}

std::string gnuplot_script(const GnuplotFigure& figure) {
  check_stem(figure.stem);
  std::ostringstream s;
  s << "# " << figure.stem << ".gp: " << figure.description << "\n"
    << "# Written by tilesim. The data are in " << figure.stem << ".dat (its header names the columns).\n"
    << "# Restyle freely, then re-render in this directory:  gnuplot " << figure.stem << ".gp\n"
    << "# which writes " << figure.stem << ".svg" << (figure.pdf ? ", " + figure.stem + ".pdf" : std::string()) << " and "
    << figure.stem << ".png (PNG at twice the SVG size).\n"
    << "datafile = '" << figure.stem << ".dat'\n"
    << "do for [format in \"svg png" << (figure.pdf ? " pdf" : "") << "\"] {\n"
    << "  reset\n"
    << "  set encoding utf8\n"
    << "  if (format eq \"svg\") {\n"
    << "    set terminal svg size " << figure.width_px << "," << figure.height_px << " dynamic enhanced font \"Helvetica,"
    << figure.font_pt << "\" background \"white\"\n"
    << "  } else {\n";
  if (figure.pdf) {
    // Sized in inches so 1 SVG pixel = 1 pt: the PDF placed at natural size matches the SVG.
    s << "  if (format eq \"pdf\") {\n"
      << "    set terminal pdfcairo size " << figure.width_px / 72.0 << "in," << figure.height_px / 72.0
      << "in enhanced font \"Helvetica," << figure.font_pt << "\" linewidth 1 background \"white\"\n"
      << "  } else {\n";
  }
  s << "    set terminal pngcairo size " << 2 * figure.width_px << "," << 2 * figure.height_px
    << " enhanced font \"Helvetica," << figure.font_pt << "\" fontscale 2 linewidth 2 pointscale 1.6 background \"white\"\n"
    << "  }\n"
    << (figure.pdf ? "  }\n" : "")
    << "  set output '" << figure.stem << ".'.format\n";
  std::istringstream body(figure.body);
  std::string line;
  while (std::getline(body, line)) s << (line.empty() ? "" : "  ") << line << "\n";
  s << "  unset output\n"
    << "}\n";
  return s.str();
}

RenderedFigure render_figure(const std::string& dir, const GnuplotFigure& figure, const std::string& program) {
  const std::string script = gnuplot_script(figure);
  create_output_directory(dir, "a directory tilesim can create");
  std::error_code ec;
  const fs::path base(dir);
  RenderedFigure files;
  files.data_path = (base / (figure.stem + ".dat")).string();
  files.script_path = (base / (figure.stem + ".gp")).string();
  files.svg_path = (base / (figure.stem + ".svg")).string();
  files.png_path = (base / (figure.stem + ".png")).string();
  if (figure.pdf) files.pdf_path = (base / (figure.stem + ".pdf")).string();
  write_text(files.data_path, figure.data);
  write_text(files.script_path, script);
  fs::remove(files.svg_path, ec);
  fs::remove(files.png_path, ec);
  if (figure.pdf) fs::remove(files.pdf_path, ec);

  // gnuplot's messages go to a file beside the script so a failure can quote them; removed on success.
  const fs::path log = base / (figure.stem + ".gnuplot-log.txt");
  const std::string command = "cd " + shell_quote(dir) + " && " + shell_quote(program) + " " +
                              shell_quote(figure.stem + ".gp") + " >" + shell_quote(log.filename().string()) + " 2>&1";
  const int status = run_shell(command);
  const std::string messages = read_text(log);
  if (status == 127 || status == 126) {
    fs::remove(log, ec);
    throw Error(ExitCode::bad_input, "gnuplot (`" + program + "`) was not found; " + missing_gnuplot_help);
  }
  const bool rendered = fs::is_regular_file(files.svg_path) && fs::file_size(files.svg_path, ec) > 0 &&
                        fs::is_regular_file(files.png_path) && fs::file_size(files.png_path, ec) > 0 &&
                        (!figure.pdf || (fs::is_regular_file(files.pdf_path) && fs::file_size(files.pdf_path, ec) > 0));
  if (status != 0 || !rendered)
    throw Error(ExitCode::internal_error, "gnuplot failed on " + files.script_path + " (exit status " +
                                              std::to_string(status) + "):\n" + messages);
  fs::remove(log, ec);
  return files;
}

}  // namespace tilesim::analysis
