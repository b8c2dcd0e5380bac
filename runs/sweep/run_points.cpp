#include "runs/sweep/run_points.hpp"

#include "analysis/results_table.hpp"
#include "common/error.hpp"
#include "runs/sweep/workers.hpp"

namespace tilesim::runs::sweep {

namespace {

std::string shape_text(const OpShape& s) {
  return std::to_string(s.num_inputs) + "x" + std::to_string(s.num_features) + "->" + std::to_string(s.num_outputs);
}

// The points that run in this process, one after another; an error names the point and the rows
// already written.
void run_serially(const analysis::SweepPoints& points, const std::vector<std::size_t>& indices, PointRunner& runner,
                  const std::vector<std::string>& backend_names, Recorder& recorder, const std::string& rows_path) {
  for (const std::size_t i : indices) {
    if (recorder.stopped()) break;
    const analysis::SweepPoint p = points[i];
    const std::string what = backend_names[p.backend] + " " + p.op + " " + shape_text(p.shape);
    analysis::ResultRow row;
    try {
      row = runner.run(p);
    } catch (const Error& e) {
      recorder.progress().finish();
      throw Error(e.code(), what + ": " + e.what() + " (the rows before it are in " + rows_path + ")");
    }
    if (row.verified == "does-not-fit" || row.verified == "no") recorder.note_problem(what + ": " + runner.last_error());
    recorder.note_measurement(p.backend, what, row.threads, row.team_threads, row.disturbed);
    recorder.record(p.backend, analysis::results_csv_row(row), row.wall_s, row.verified, what);
  }
}

}  // namespace

void run_points(const analysis::SweepPoints& points, const std::vector<std::size_t>& indices, int jobs,
                const std::vector<SweepBackendRun>& backends, PointRunner& runner, Recorder& recorder,
                const std::string& rows_path) {
  std::vector<std::string> names;
  for (const auto& b : backends) names.push_back(b.name);
  if (jobs <= 1) {
    run_serially(points, indices, runner, names, recorder, rows_path);
    return;
  }
  std::vector<std::size_t> parallel_points, serial_points;
  for (const std::size_t i : indices) (!backends[points.backend_of(i)].measured ? parallel_points : serial_points).push_back(i);
  if (!parallel_points.empty()) run_in_workers(points, parallel_points, jobs, runner, names, recorder, rows_path);
  run_serially(points, serial_points, runner, names, recorder, rows_path);
}

}  // namespace tilesim::runs::sweep
