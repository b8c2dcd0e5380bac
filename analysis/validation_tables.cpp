#include "analysis/validation_tables.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/error.hpp"

namespace tilesim::analysis {

TableFormat parse_table_format(const std::string& name) {
  if (name == "text") return TableFormat::text;
  if (name == "markdown") return TableFormat::markdown;
  if (name == "latex") return TableFormat::latex;
  throw InputError("", "--format", "one of: text, markdown, latex", "\"" + name + "\"");
}

std::string escape_latex(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\textbackslash{}"; break;
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': out += '\\'; out += c; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\n': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_markdown(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

std::string render_table(const Table& t, TableFormat format) {
  std::ostringstream out;
  const std::size_t n = t.header.size();
  if (format == TableFormat::markdown) {
    out << "### " << escape_markdown(t.title) << "\n\n|";
    for (const auto& h : t.header) out << " " << escape_markdown(h) << " |";
    out << "\n|";
    for (std::size_t i = 0; i < n; ++i) out << "---|";
    out << "\n";
    for (const auto& row : t.rows) {
      out << "|";
      for (const auto& cell : row) out << " " << escape_markdown(cell) << " |";
      out << "\n";
    }
    if (!t.note.empty()) out << "\n" << escape_markdown(t.note) << "\n";
    return out.str();
  }
  if (format == TableFormat::latex) {
    out << "\\begin{table}[htbp]\n\\centering\\small\n\\caption{" << escape_latex(t.title) << "}\n\\begin{tabular}{"
        << std::string(n, 'l') << "}\n\\toprule\n";
    for (std::size_t i = 0; i < n; ++i) out << (i ? " & " : "") << escape_latex(t.header[i]);
    out << " \\\\\n\\midrule\n";
    for (const auto& row : t.rows) {
      for (std::size_t i = 0; i < row.size(); ++i) out << (i ? " & " : "") << escape_latex(row[i]);
      out << " \\\\\n";
    }
    out << "\\bottomrule\n\\end{tabular}\n";
    if (!t.note.empty()) out << "\\par\\smallskip " << escape_latex(t.note) << "\n";
    out << "\\end{table}\n";
    return out.str();
  }
  std::vector<std::size_t> width(n, 0);
  for (std::size_t i = 0; i < n; ++i) width[i] = t.header[i].size();
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size() && i < n; ++i) width[i] = std::max(width[i], row[i].size());
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out << cells[i];
      if (i + 1 < cells.size()) out << std::string(width[i] - cells[i].size() + 2, ' ');
    }
    out << "\n";
  };
  out << t.title << "\n";
  line(t.header);
  for (const auto& row : t.rows) line(row);
  if (!t.note.empty()) out << t.note << "\n";
  return out.str();
}

std::string percent_text(const nlohmann::json& v, bool sign) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", v.get<double>());
  return buf;
}

namespace {

std::string figure(double value, const std::string& unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", value);
  std::string u = unit;
  if (u == "graphs_per_s") u = "graphs/s";
  if (u == "nodes_per_s") u = "nodes/s";
  if (u == "seed_nodes_per_s") u = "seed nodes/s";
  if (u == "samples_per_s") u = "samples/s";
  return std::string(buf) + " " + u;
}

}  // namespace

Table hydronet_table(const nlohmann::json& report) {
  Table t;
  t.title = "hydronet suite (single ops, measured on Bow and A100): absolute percentage error of the prediction per op";
  t.header = {"machine", "prediction", "op", "split", "points", "median APE", "p90 APE"};
  for (const char* split : {"held_out", "calibration", "all"}) {
    for (const auto& entry : report.at("results")) {
      const auto& s = entry.at("splits").at(split);
      t.rows.push_back({entry.at("machine").get<std::string>(), entry.value("prediction_kind", std::string("-")),
                        entry.at("op").get<std::string>(), std::string(split) == "held_out" ? "held-out" : split,
                        std::to_string(s.at("count").get<std::size_t>()), percent_text(s.at("median_ape_pct")), percent_text(s.at("p90_ape_pct"))});
    }
  }
  t.note = "headline: the held-out half (fitted figures use only the calibration half)";
  return t;
}

std::vector<Table> published_tables(const nlohmann::json& report) {
  const std::string suite = report.at("suite");
  Table compared, missing;
  compared.title = suite + " suite: published figures against tilesim's predictions";
  compared.header = {"entry", "hardware", "published", "predicted", "prediction", "error", "source"};
  missing.title = suite + " suite: published figures not yet comparable";
  missing.header = {"entry", "hardware", "published", "missing in tilesim", "source"};
  for (const auto& e : report.at("entries")) {
    const std::string unit = e.at("published").at("unit");
    const std::string published = figure(e.at("published").at("value").get<double>(), unit);
    const std::string source = e.at("source").at("url").get<std::string>() + " (" + e.at("source").at("location").get<std::string>() + ")";
    const std::string hardware = e.at("config").at("hardware");
    if (e.at("status") == "compared") {
      const auto& p = e.at("prediction");
      compared.rows.push_back({e.at("id").get<std::string>(), hardware, published, figure(p.at("value").get<double>(), unit),
                               p.at("kind").get<std::string>() + ", " + p.at("backend").get<std::string>(), percent_text(e.at("error_pct"), true),
                               source});
    } else {
      missing.rows.push_back({e.at("id").get<std::string>(), hardware, published, e.at("missing").get<std::string>(), source});
    }
  }
  const auto& s = report.at("summary");
  compared.note = std::to_string(s.at("compared").get<std::size_t>()) + " of " + std::to_string(s.at("entries").get<std::size_t>()) +
                  " entries compared; median APE " + percent_text(s.at("median_ape_pct")) + ", p90 APE " + percent_text(s.at("p90_ape_pct"));
  const nlohmann::json by_family = s.value("by_family", nlohmann::json::object());
  for (const auto& [family, f] : by_family.items())
    compared.note += "; " + family + " (" + std::to_string(f.at("compared").get<std::size_t>()) + "): median " +
                     percent_text(f.at("median_ape_pct")) + ", p90 " + percent_text(f.at("p90_ape_pct"));
  compared.note += "; error = (predicted - published) / published";
  std::vector<Table> tables;
  if (!compared.rows.empty()) tables.push_back(std::move(compared));
  if (!missing.rows.empty()) tables.push_back(std::move(missing));
  return tables;
}

}  // namespace tilesim::analysis
