#include "apps/render_figures.hpp"

#include <filesystem>
#include <future>
#include <iostream>

namespace tilesim::cli {

std::vector<analysis::RenderedFigure> render_figures(const std::string& dir, const std::vector<analysis::GnuplotFigure>& figures) {
  std::vector<std::future<analysis::RenderedFigure>> pending;
  std::vector<analysis::RenderedFigure> rendered;
  for (const auto& figure : figures) {
    if (pending.size() == 2) {
      rendered.push_back(pending.front().get());
      pending.erase(pending.begin());
    }
    pending.push_back(std::async(std::launch::async, [&dir, &figure] { return analysis::render_figure(dir, figure); }));
  }
  for (auto& f : pending) rendered.push_back(f.get());
  return rendered;
}

std::string plots_dir(const std::string& out_dir, const std::string& input) {
  return out_dir.empty() ? (std::filesystem::path(input).parent_path() / "plots").string() : out_dir;
}

void render_and_list(const std::string& dir, const std::vector<analysis::GnuplotFigure>& figures) {
  namespace fs = std::filesystem;
  for (const auto& r : render_figures(dir, figures))
    std::cout << "  " << r.pdf_path << "  (also .svg, .png; script " << fs::path(r.script_path).filename().string() << ", data "
              << fs::path(r.data_path).filename().string() << ")\n";
}

std::string file_slug(const std::string& name) {
  std::error_code ec;
  std::string slug;
  if (std::filesystem::exists(name, ec)) {
    // A reference: the machine's directory name ("a100"), for a file its parent's.
    std::filesystem::path p = std::filesystem::path(name).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();  // "dir/" names the directory
    const std::string machine =
        std::filesystem::is_directory(p, ec) ? p.filename().string() : p.parent_path().filename().string();
    slug = "measured-" + (machine.empty() ? p.stem().string() : machine);
  } else {
    slug = name;
  }
  for (auto& c : slug)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) c = '-';
  return slug;
}

}  // namespace tilesim::cli
