// tilesim roofline RESULTS.csv [--machine FAMILY:NAME_OR_FILE]... [--out DIR]: for every backend of
// the results, a roofline (FLOP/s against arithmetic intensity, per memory level) and a bandwidth view
// (achieved bandwidth against bytes moved), with the machine's ceilings read from its machine files.
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include "analysis/gnuplot.hpp"
#include "analysis/results_table.hpp"
#include "analysis/roofline.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"
#include "backends/machine_ceilings.hpp"
#include "backends/registry.hpp"
#include "common/error.hpp"

namespace tilesim::cli {


namespace {

// "a, b or c"
std::string either_of(const std::vector<std::string>& forms) {
  std::string text;
  for (std::size_t i = 0; i < forms.size(); ++i) text += (i == 0 ? "" : (i + 1 == forms.size() ? " or " : ", ")) + forms[i];
  return text;
}

// Whether --machine FAMILY:... names a family that takes a machine ("cpu" of the form "cpu:FILE").
bool takes_machine(const std::string& family) {
  for (const auto& form : backends::roofline_machine_forms())
    if (form.substr(0, form.find(':')) == family) return true;
  return false;
}

}  // namespace

int roofline_command(const RooflineArgs& args) {
  const auto rows = analysis::read_results_csv(args.results);
  std::map<std::string, std::string> overrides;  // family -> machine
  for (const auto& m : args.machines) {
    const auto colon = m.find(':');
    const std::string family = m.substr(0, colon);
    if (colon == std::string::npos || colon + 1 == m.size() || !takes_machine(family))
      throw InputError("", "--machine", either_of(backends::roofline_machine_forms()), "\"" + m + "\"");
    if (!overrides.emplace(family, m.substr(colon + 1)).second)
      throw InputError("", "--machine", "one machine per family", "a second one for " + family + ": \"" + m + "\"");
  }
  std::vector<std::string> backends;
  for (const auto& r : rows)
    if (std::find(backends.begin(), backends.end(), r.backend) == backends.end()) backends.push_back(r.backend);
  if (backends.empty()) throw InputError(args.results, "", "at least one result row", "a header alone");
  analysis::require_gnuplot();

  const std::string out_dir = plots_dir(args.out_dir, args.results);
  std::vector<analysis::GnuplotFigure> figures;
  for (const auto& backend : backends) {
    const auto it = overrides.find(backends::roofline_machine_family(backend));
    const analysis::RooflineMachine machine = backends::roofline_machine(backend, it == overrides.end() ? "" : it->second);
    for (const auto& note : machine.notes) std::cerr << "roofline: " << backend << ": " << note << "\n";
    if (machine.ceilings.empty()) continue;
    const auto points = analysis::roofline_points(rows, backend);
    figures.push_back(analysis::roofline_figure(machine, points, "roofline_" + file_slug(backend)));
    figures.push_back(analysis::bandwidth_figure(machine, points, "bandwidth_" + file_slug(backend)));
    std::cout << "roofline: " << backend << ": ceilings from";
    for (const auto& f : machine.files) std::cout << " " << f;
    std::cout << "\n";
  }
  render_and_list(out_dir, figures);
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_roofline_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    RooflineArgs roofline;
  };
  const auto o = std::make_shared<Options>();
  RooflineArgs& roofline = o->roofline;
  auto* roofline_cmd = app.add_subcommand("roofline", "Roofline and bandwidth plots of a results.csv with each machine's ceilings");
  roofline_cmd->add_option("results", roofline.results, "results.csv written by tilesim sweep")->required();
  std::string machine_forms;
  for (const auto& form : backends::roofline_machine_forms()) machine_forms += (machine_forms.empty() ? "" : ", ") + form;
  roofline_cmd->add_option("--machine", roofline.machines,
                           "Machine for a backend family: " + machine_forms + " (default: the backend's own machine; cpu: " +
                               backends::default_cpu_machine_file() + ")");
  roofline_cmd->add_option("--out", roofline.out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  commands.push_back({roofline_cmd, [o] {
    return roofline_command(o->roofline);
  }});
}

}  // namespace tilesim::cli
