// The bad-input corpus (tests/bad_inputs/cases.json): every error the format docs document, fed to the
// tilesim command, which must exit with the documented code and print the documented message (the
// file, the JSON path, what was expected and what was found); and the check that every row of the
// docs' error tables, every error example in their prose and every kind of bad input README.md's exit
// codes name has its case, so a newly documented error without a case fails here.
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/host_info.hpp"
#include "tests/support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tilesim_test::slurp;

const fs::path source_dir = TILESIM_SOURCE_DIR;
const fs::path corpus_dir = source_dir / "tests" / "bad_inputs";
const char* const format_docs[] = {"docs/workload-format.md", "docs/sweep-format.md", "docs/machine-format.md",
                                   "docs/graph-format.md"};

const json& manifest() {
  static const json m = json::parse(slurp(corpus_dir / "cases.json"));
  return m;
}

std::vector<json> cases_under(const std::string& prefix) {
  std::vector<json> out;
  for (const json& c : manifest().at("cases"))
    if (c.at("case").get<std::string>().rfind(prefix, 0) == 0) out.push_back(c);
  return out;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// The placeholders of cases.json's "about": {case_dir}, {long_name}, {memory_limit_rows:F:B}.
std::string expand(std::string text, const std::string& case_dir) {
  if (text.find('{') == std::string::npos) return text;
  replace_all(text, "{case_dir}", case_dir);
  replace_all(text, "{long_name}", std::string(4995, 'a') + ".json");
  static const std::regex rows(R"(\{memory_limit_rows:([0-9.]+):([0-9]+)\})");
  std::smatch m;
  while (std::regex_search(text, m, rows)) {
    const double bytes = std::stod(m[1].str()) * static_cast<double>(tilesim::host_input_memory_bytes());
    const auto count = static_cast<long long>(std::ceil(bytes / std::stod(m[2].str())));
    text.replace(static_cast<std::size_t>(m.position(0)), static_cast<std::size_t>(m.length(0)), std::to_string(count));
  }
  return text;
}

// Whether `text` is `pattern`, each "..." of the pattern standing for any text (possibly none).
bool matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at = pattern.find("..."); at != std::string::npos; at = pattern.find("...", start)) {
    parts.push_back(pattern.substr(start, at - start));
    start = at + 3;
  }
  parts.push_back(pattern.substr(start));
  if (parts.size() == 1) return text == pattern;
  if (text.compare(0, parts.front().size(), parts.front()) != 0) return false;
  std::size_t pos = parts.front().size();
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    const std::size_t at = text.find(parts[i], pos);
    if (at == std::string::npos) return false;
    pos = at + parts[i].size();
  }
  const std::string& last = parts.back();
  return text.size() >= pos + last.size() && text.compare(text.size() - last.size(), last.size(), last) == 0;
}

// The message a case documents: "FILE: JSON_PATH: expected EXPECTED, found FOUND", or its "message".
std::string documented_message(const json& c) {
  if (c.contains("message")) return c.at("message").get<std::string>();
  std::string m;
  if (c.contains("file")) m += c.at("file").get<std::string>() + ": ";
  if (c.contains("json_path")) m += c.at("json_path").get<std::string>() + ": ";
  return m + "expected " + c.at("expected").get<std::string>() + ", found " + c.at("found").get<std::string>();
}

// Two messages agree when either, read as a pattern, matches the other (the docs elide what the case
// states, or the case elides the docs' host-dependent figures).
bool agree(const std::string& a, const std::string& b) { return matches(a, b) || matches(b, a); }

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Outcome {
  std::string name;
  int exit_code = -1;
  std::string err;
  std::vector<std::string> errors;  // stderr's "tilesim: error: " lines, without the prefix
  std::string expected_message;     // placeholders expanded
};

// Copies the case's folder to `scratch`/CASE, expands the placeholders in its files and runs tilesim there.
Outcome run_case(const json& c, const fs::path& scratch) {
  Outcome o;
  o.name = c.at("case").get<std::string>();
  const fs::path dir = scratch / o.name;
  fs::create_directories(dir);
  if (fs::exists(corpus_dir / o.name))
    fs::copy(corpus_dir / o.name, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string text = slurp(entry.path());
    const std::string expanded = expand(text, dir.string());
    if (expanded != text) tilesim_test::write_text(entry.path(), expanded);
  }
  std::string command = "cd " + quoted(dir.string()) + " &&";
  if (c.contains("env"))
    for (const auto& [key, value] : c.at("env").items()) command += " " + key + "=" + quoted(expand(value.get<std::string>(), dir.string()));
  command += " " + quoted(TILESIM_BINARY);
  for (const json& arg : c.at("args")) command += " " + quoted(expand(arg.get<std::string>(), dir.string()));
  const fs::path out = dir.string() + ".stdout", err = dir.string() + ".stderr";
  command += " </dev/null >" + quoted(out.string()) + " 2>" + quoted(err.string());
  const int status = std::system(command.c_str());
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = slurp(err);
  std::istringstream lines(o.err);
  const std::string prefix = "tilesim: error: ";
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) o.errors.push_back(line.substr(prefix.size()));
  o.expected_message = expand(documented_message(c), dir.string());
  return o;
}

// Runs the cases whose names start with `prefix`, two at a time (each run is mostly the loading of
// tilesim's libraries), and checks each.
void check_corpus(const std::string& prefix) {
  const std::vector<json> cases = cases_under(prefix);
  REQUIRE(!cases.empty());
  const tilesim_test::TempDir scratch("bad_inputs");
  std::vector<Outcome> outcomes(cases.size());
  constexpr std::size_t workers = 2;
  std::vector<std::future<void>> running;
  for (std::size_t w = 0; w < workers; ++w)
    running.push_back(std::async(std::launch::async, [&, w] {
      for (std::size_t i = w; i < cases.size(); i += workers) outcomes[i] = run_case(cases[i], scratch.dir());
    }));
  for (auto& r : running) r.get();

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Outcome& o = outcomes[i];
    INFO("case " << o.name << "\nstderr:\n" << o.err);
    CHECK(o.exit_code == cases[i].at("exit").get<int>());
    REQUIRE(o.errors.size() == 1);
    INFO("message:  " << o.errors.front() << "\nexpected: " << o.expected_message);
    CHECK(matches(o.errors.front(), o.expected_message));
  }
}

// A docs table row: its first cell (the rule) and the example message of its second, unquoted.
struct DocRow {
  std::string doc, rule, example;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The cells of a Markdown table row ("\|" is a pipe inside a cell).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// The rows of every table under a heading "Errors..." (any level) of `doc`.
std::vector<DocRow> error_table_rows(const std::string& doc) {
  std::vector<DocRow> rows;
  std::istringstream in(slurp(source_dir / doc));
  bool in_errors = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) {
      const std::string heading = trim(line.substr(line.find_first_not_of('#')));
      in_errors = heading.rfind("Errors", 0) == 0;
      continue;
    }
    if (!in_errors || line.rfind("|", 0) != 0) continue;
    const auto cells = cells_of(line);
    if (cells.size() < 2 || cells[0] == "rule" || cells[0].rfind("---", 0) == 0) continue;
    std::string example = cells[1];
    if (example.size() >= 2 && example.front() == '`' && example.back() == '`') example = example.substr(1, example.size() - 2);
    rows.push_back({doc, cells[0], example});
  }
  return rows;
}

// Every inline code span of `doc` (outside fenced blocks and tables, across line breaks, spaces
// collapsed) that reads like an error message.
std::vector<std::string> error_examples_in_prose(const std::string& doc) {
  std::istringstream in(slurp(source_dir / doc));
  std::string text;
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced && line.rfind("|", 0) != 0) text += line + "\n";  // table rows are checked as rows
  }
  std::vector<std::string> spans;
  for (std::size_t open = text.find('`'); open != std::string::npos;) {
    const std::size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    std::string span = text.substr(open + 1, close - open - 1);
    std::replace(span.begin(), span.end(), '\n', ' ');
    span = std::regex_replace(span, std::regex(" +"), " ");
    // "FILE: JSON_PATH: expected EXPECTED, found FOUND" is the form, not an example.
    if (span.find("expected ") != std::string::npos && span.find(", found ") != std::string::npos &&
        span.find("expected EXPECTED") == std::string::npos)
      spans.push_back(span);
    open = text.find('`', close + 1);
  }
  return spans;
}

}  // namespace

TEST_CASE("bad-input corpus: workload files exit 2 naming the file, the JSON path, expected and found", "[cli][errors][slow]") {
  check_corpus("workload/");
}

TEST_CASE("bad-input corpus: sweep files exit 2 naming the file, the JSON path, expected and found", "[cli][errors][slow]") {
  check_corpus("sweep/");
}

TEST_CASE("bad-input corpus: machine files exit 2 naming the file, the JSON path, expected and found", "[cli][errors]") {
  check_corpus("machine/");
}

TEST_CASE("bad-input corpus: graphs exit 2 naming the file, the JSON path or line, expected and found", "[cli][errors]") {
  check_corpus("graph/");
}

TEST_CASE("bad-input corpus: usage, a missing gnuplot and a workload that does not fit exit as README.md says", "[cli][errors]") {
  check_corpus("cli/");
}

TEST_CASE("the message matcher: ... stands for any text, the rest is literal", "[unit]") {
  CHECK(matches("w.json: a: expected x, found 1", "w.json: a: expected x, found 1"));
  CHECK_FALSE(matches("w.json: a: expected x, found 12", "w.json: a: expected x, found 1"));
  CHECK(matches("w.json: a: expected at most 12 bytes (1 GiB), found 3", "w.json: a: expected at most ... bytes (...), found 3"));
  CHECK(matches("/tmp/x/g.mtx:4: expected", ".../g.mtx:4: expected"));
  CHECK(matches("ab", "a...b"));
  CHECK_FALSE(matches("ab", "a...b...b"));
  CHECK_FALSE(matches("w.json: x", "...y"));
}

TEST_CASE("every error the format docs and README.md document has its case in the bad-input corpus", "[unit]") {
  std::set<std::string> case_names;
  std::map<std::pair<std::string, std::string>, std::vector<json>> cases_of_row;
  std::vector<std::string> messages;  // every case's documented message, placeholders expanded
  for (const json& c : manifest().at("cases")) {
    const std::string name = c.at("case").get<std::string>();
    INFO("case " << name);
    CHECK(case_names.insert(name).second);
    CHECK(c.at("args").is_array());
    CHECK(c.at("exit").is_number_integer());
    CHECK((c.contains("message") || (c.contains("expected") && c.contains("found"))));
    if (c.contains("row")) cases_of_row[{c.at("doc").get<std::string>(), c.at("row").get<std::string>()}].push_back(c);
    messages.push_back(expand(documented_message(c), "/checkout/tests/bad_inputs/" + name));
  }

  std::set<std::pair<std::string, std::string>> rows_seen;
  std::size_t rows = 0;
  for (const char* doc : format_docs) {
    const auto doc_rows = error_table_rows(doc);
    CHECK(!doc_rows.empty());  // each format doc has an errors table
    for (const DocRow& row : doc_rows) {
      ++rows;
      INFO(doc << ", row \"" << row.rule << "\": " << row.example);
      CHECK(rows_seen.insert({row.doc, row.rule}).second);  // rules are unique within a doc
      const auto it = cases_of_row.find({row.doc, row.rule});
      CHECK(it != cases_of_row.end());  // the row has a case
      if (it == cases_of_row.end()) continue;
      bool one_agrees = false;
      for (const json& c : it->second)
        one_agrees = one_agrees || agree(row.example, expand(documented_message(c), "/checkout/tests/bad_inputs/" + c.at("case").get<std::string>()));
      CHECK(one_agrees);  // ... whose message is the row's example
    }
    for (const std::string& example : error_examples_in_prose(doc)) {
      INFO(doc << ": the example `" << example << "` in the prose");
      CHECK(std::any_of(messages.begin(), messages.end(),
                        [&](const std::string& m) { return agree(example, m) || matches(m, "..." + example); }));
    }
  }
  CHECK(rows >= 60);
  // No case names a row that is not there (a renamed or removed row).
  for (const auto& [row, cases] : cases_of_row) {
    INFO(row.first << ", row \"" << row.second << "\" named by " << cases.front().at("case").get<std::string>());
    CHECK(rows_seen.count(row) == 1);
  }

  // README.md's exit codes: every code but success and internal error has a case; every case's code is
  // documented and none expects an internal error; each kind of bad input exit code 2 lists has a case.
  std::istringstream readme(slurp(source_dir / "README.md"));
  std::map<int, std::string> codes;
  bool in_codes = false;
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("#", 0) == 0) in_codes = line.find("Exit codes") != std::string::npos;
    if (!in_codes || line.rfind("|", 0) != 0) continue;
    const auto cells = cells_of(line);
    if (cells.size() >= 2 && !cells[0].empty() && std::isdigit(static_cast<unsigned char>(cells[0][0])))
      codes[std::stoi(cells[0])] = cells[1];
  }
  REQUIRE(codes.count(0) == 1);
  REQUIRE(codes.count(1) == 1);
  REQUIRE(codes.count(2) == 1);
  std::set<int> exits;
  std::set<std::string> kinds;
  for (const json& c : manifest().at("cases")) {
    exits.insert(c.at("exit").get<int>());
    if (c.contains("readme")) kinds.insert(c.at("readme").get<std::string>());
  }
  for (const auto& [code, meaning] : codes) {
    INFO("exit code " << code << ": " << meaning);
    if (code == 0 || code == 1) CHECK(exits.count(code) == 0);
    else CHECK(exits.count(code) == 1);
  }
  for (int code : exits) CHECK(codes.count(code) == 1);
  // "bad input: usage, workload file, ... or a missing tool (gnuplot). The message ..."
  const std::string& bad_input = codes.at(2);
  const std::string head = "bad input: ";
  REQUIRE(bad_input.rfind(head, 0) == 0);
  std::string list = bad_input.substr(head.size(), bad_input.find(". ") - head.size());
  replace_all(list, " or ", ", ");
  std::istringstream items(list);
  std::size_t listed = 0;
  for (std::string item; std::getline(items, item, ',');) {
    item = trim(item);
    if (item.empty()) continue;
    ++listed;
    INFO("README.md's exit code 2 lists \"" << item << "\"");
    CHECK(kinds.count(item) == 1);
  }
  CHECK(listed >= 5);
}
