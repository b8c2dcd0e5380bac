#pragma once
// Figures drawn by gnuplot. Each figure is a data file and a gnuplot script written side by side
// (STEM.dat, STEM.gp), rendered to STEM.svg and STEM.png (and STEM.pdf when asked) by running the
// script in that directory. The script names its data file relatively and renders every format itself,
// so a user can restyle it for a paper and re-run `gnuplot STEM.gp` there. Needs gnuplot with the
// cairo terminals (pngcairo, pdfcairo) and svg: Debian's gnuplot-nox has them.
#include <string>

namespace tilesim::analysis {

struct GnuplotFigure {
  std::string stem;         // file name without extension; letters, digits, '_', '-', '.' only
  std::string description;  // one line, the script's first comment
  std::string data;         // the contents of STEM.dat (comment lines start with '#')
  // gnuplot commands that draw the figure. They run once per output format after `reset`, with the
  // terminal and output already set and the variable `datafile` naming STEM.dat; a body using
  // multiplot must end it (`unset multiplot`).
  std::string body;
  // Size in SVG pixels (1 px = 1 pt when placed in a document at natural size). The PNG is rendered at
  // twice this size with fonts, lines and points scaled to match, so both look the same.
  int width_px = 480;
  int height_px = 360;
  int font_pt = 12;
  // Also render STEM.pdf (pdfcairo, vector, at the SVG's size in points) for papers.
  bool pdf = false;
};

struct RenderedFigure {
  std::string data_path, script_path, svg_path, png_path;
  std::string pdf_path;  // empty unless the figure asked for a PDF
};

// The gnuplot program: $TILESIM_GNUPLOT when set (tests point it elsewhere), else "gnuplot".
std::string gnuplot_program();

// Throws tilesim::Error (exit code bad_input) when `program` cannot be run, with a message naming the
// Debian package gnuplot-nox.
void require_gnuplot(const std::string& program = gnuplot_program());

// The complete script text for a figure (what render_figure writes to STEM.gp).
std::string gnuplot_script(const GnuplotFigure& figure);

// Writes STEM.dat and STEM.gp into `dir` (created if needed) and runs `program` on the script there.
// Throws tilesim::Error when gnuplot is missing (as require_gnuplot) or fails, quoting its messages.
RenderedFigure render_figure(const std::string& dir, const GnuplotFigure& figure,
                             const std::string& program = gnuplot_program());

}  // namespace tilesim::analysis
