// `mpirun -n K tilesim sweep` (docs/sweep-format.md, "Sweeps over MPI ranks"): the rows of a sweep over
// 2 and 4 ranks are the one-process sweep's; rank files a dead run left (a rank killed with SIGKILL, or
// files seeded as one leaves them) are merged by a --resume over another number of ranks or in one
// process, each point ending up exactly once and no finished row re-run; an error on one rank ends the
// job with its exit code and names the rank; bad input is said once.
//
// The end-to-end cases exist only where CMake found MPI (TILESIM_MPIEXEC, its mpiexec); elsewhere
// tests/CMakeLists.txt registers a CTest test that reports them skipped and says why.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/results_table.hpp"
#include "runs/sweep/rank_share.hpp"
#include "tests/support/results_support.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim_test;
using Catch::Matchers::Contains;

TEST_CASE("rank shares: every pending point on exactly one rank, shares within one point of each other", "[sweep][unit]") {
  std::vector<int> pending(23);
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = static_cast<int>(100 + i);
  for (int ranks : {1, 2, 4, 7, 30}) {
    INFO(ranks << " ranks");
    std::multiset<int> seen;
    std::size_t smallest = pending.size(), largest = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto share = tilesim::runs::sweep::rank_share(pending, r, ranks);
      seen.insert(share.begin(), share.end());
      smallest = std::min(smallest, share.size());
      largest = std::max(largest, share.size());
      // Interleaved: rank r's first point is the r-th pending one, the next K further on.
      if (!share.empty()) CHECK(share.front() == pending[static_cast<std::size_t>(r)]);
      if (share.size() > 1) CHECK(share[1] - share[0] == ranks);
    }
    CHECK(seen == std::multiset<int>(pending.begin(), pending.end()));
    CHECK(largest - smallest <= 1);
  }
  CHECK(tilesim::runs::sweep::rank_share(pending, 2, 2).empty());  // no such rank
}

#ifdef TILESIM_MPIEXEC

namespace {

const fs::path& mpi_dir() {
  static const fs::path d = scratch("mpi_sweep_test");
  return d;
}

// `mpiexec -n K tilesim ARGS` from the source tree, its output kept in files under the scratch folder.
// Root may start ranks only when it says so; --oversubscribe lets 4 ranks share a 2-core host. Open MPI
// allocates at MPI_Init what it never frees, so in a sanitizer build LeakSanitizer is told to look away
// in the ranks (the one-process sweep tests check the same code for leaks).
CliResult run_mpi(int ranks, const std::string& args, const std::string& tag) {
  return run_in_source_tree(mpi_launch(ranks) + " " + TILESIM_BINARY + " " + args, mpi_dir() / (tag + ".stdout"),
                            mpi_dir() / (tag + ".stderr"));
}

// 2 ops x 3 x 2 x 4 sizes x 2 backends. The default pair, simulated and modeled, is deterministic and
// takes a few ms a point; two GPU models take a fraction of a ms (for the cases about the files).
constexpr std::size_t kGridPoints = 2 * 3 * 2 * 4 * 2;
fs::path grid_sweep(const std::string& name, const std::string& backends = R"("ipu:bow", "gpu-model:a100-40gb")") {
  return write_text(mpi_dir() / (name + ".json"),
                    R"({"name": ")" + name + R"(", "ops": ["gather", "scatter_add"],
                        "sizes": {"num_inputs": [16, 128, 1024], "num_features": [16, 64],
                                  "num_outputs": {"from": 32, "to": 2048, "times": 4}},
                        "backends": [)" + backends + "]}");
}
const char* const kModelsOnly = R"("gpu-model:a100-40gb", "gpu-model:h100-sxm")";

std::size_t column(const std::string& name) {
  const auto& columns = tilesim::analysis::result_columns();
  const auto at = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin());
  REQUIRE(at < columns.size());
  return at;
}

// Each data row of results.csv in file order, without the fields two runs of the same point may differ
// in: wall_s (host seconds) always; for measured rows also the time and the measurement's threads and
// disturbance, which depend on the host's load at the time.
std::vector<std::string> comparable_rows(const fs::path& csv) {
  std::vector<std::size_t> drop{column("wall_s")};
  std::vector<std::size_t> drop_measured{column("time_s"), column("threads"), column("team_threads"), column("disturbed"),
                                         column("machine")};
  std::vector<std::string> rows;
  for (const auto& line : data_lines(csv)) {
    std::vector<std::string> fields = tilesim::analysis::split_csv_record(line, csv.string(), 0);
    REQUIRE(fields.size() == tilesim::analysis::result_columns().size());
    const bool measured = fields[column("kind")] == "measured";
    std::string row;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const bool dropped = std::count(drop.begin(), drop.end(), i) ||
                           (measured && std::count(drop_measured.begin(), drop_measured.end(), i));
      row += (dropped ? std::string("-") : fields[i]) + ",";
    }
    rows.push_back(row);
  }
  return rows;
}

void check_each_point_once(const fs::path& csv, std::size_t points) {
  const auto counts = key_counts(csv);
  CHECK(counts.size() == points);
  std::size_t repeated = 0;
  for (const auto& [key, n] : counts) repeated += n != 1 ? 1 : 0;
  CHECK(repeated == 0);
}

// Writes a rank file as a rank leaves it: the header, then `lines` (each with its line end).
void seed_rank_file(const fs::path& out, int rank, const std::vector<std::string>& lines, const std::string& partial = "") {
  std::string text = tilesim::analysis::results_csv_header();
  for (const auto& l : lines) text += l + "\n";
  write_text(out / "ranks" / ("rank-" + std::to_string(rank) + ".csv"), text + partial);
}

bool contains_line(const fs::path& csv, const std::string& line) {
  const auto lines = data_lines(csv);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

}  // namespace

TEST_CASE("mpirun -n 2 and -n 4 sweeps give the one-process sweep's rows, measured points on rank 0", "[sweep][cli][slow]") {
  // Two measured CPU points ride along: rank 0 times them alone once the shares are merged.
  const fs::path sweep = grid_sweep("ranks", R"("ipu:bow", "gpu-model:a100-40gb", {"backend": "cpu", "sizes": {"num_inputs": [16], "num_features": [16], "num_outputs": [32]}})");
  const std::size_t total = kGridPoints + 2;
  const fs::path one = mpi_dir() / "ranks1";
  fs::remove_all(one);
  const auto r1 = run_tilesim("sweep " + sweep.string() + " --out " + one.string(), mpi_dir());
  REQUIRE(r1.exit_code == 0);
  const auto expected = comparable_rows(one / "results.csv");
  REQUIRE(expected.size() == total);

  for (int ranks : {2, 4}) {
    INFO(ranks << " ranks");
    const fs::path out = mpi_dir() / ("ranks" + std::to_string(ranks));
    fs::remove_all(out);
    const auto r = run_mpi(ranks, "sweep " + sweep.string() + " --out " + out.string(), "ranks" + std::to_string(ranks));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    // The same rows, even in the same order (the merge puts them in sweep order; the measured ones last,
    // as the CPU is the last backend).
    CHECK(comparable_rows(out / "results.csv") == expected);
    check_each_point_once(out / "results.csv", total);
    CHECK_THAT(r.out, Contains("sweep over " + std::to_string(ranks) + " MPI ranks: " + std::to_string(kGridPoints) +
                               " simulated and modeled points") &&
                          Contains("2 measured points on rank 0") &&
                          Contains("merged " + std::to_string(kGridPoints) + " rows of " + std::to_string(ranks) + " rank files") &&
                          Contains("sweep: " + std::to_string(total) + " new rows"));
    // One account on stdout and stderr: rank 0's (one plan, one summary, its own share's progress); the
    // others print nothing.
    auto count = [](const std::string& text, const std::string& what) {
      std::size_t n = 0;
      for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
      return n;
    };
    CHECK(count(r.out, "sweep ranks: ") == 1);
    CHECK(count(r.out, " new rows in ") == 1);
    CHECK(count(r.err, "rank 0 of " + std::to_string(ranks) + "'s share") > 0);
    CHECK(count(r.err, "rank 1 of") == 0);
    CHECK_FALSE(fs::exists(out / "ranks"));  // merged and removed
    const auto echo = nlohmann::json::parse(slurp(out / "sweep.json"));
    CHECK(echo["run"]["ranks"] == ranks);
    for (const auto& row : tilesim::analysis::read_results_csv((out / "results.csv").string()))
      if (row.backend == "cpu") CHECK(row.kind == "measured");
  }
}

TEST_CASE("rank files a dead run left are merged by a resume over 4 ranks or in one process, and nothing re-runs", "[sweep][cli][slow]") {
  const fs::path sweep = grid_sweep("dead", kModelsOnly);
  const fs::path full = mpi_dir() / "dead_full";
  fs::remove_all(full);  // each section runs the case anew
  auto r = run_tilesim("sweep " + sweep.string() + " --out " + full.string(), mpi_dir());
  REQUIRE(r.exit_code == 0);
  const auto reference = data_lines(full / "results.csv");
  REQUIRE(reference.size() == kGridPoints);

  // A 2-rank run whose ranks died: results.csv got the first 10 rows (as a resume that started from a
  // one-process run's folder would have), rank 0 finished 6 more and rank 1 5 more, rank 1 dying in the
  // middle of a write; rank 0 also holds a row results.csv has (its merge was cut short after the
  // rename). Each resume must keep these rows as they are (their wall_s says they were not re-run).
  auto seed = [&](const fs::path& out) {
    fs::remove_all(out);
    r = run_tilesim("sweep " + sweep.string() + " --out " + out.string() + " --stop-after 10 --jobs 1", mpi_dir());
    REQUIRE(r.exit_code == 0);
    REQUIRE(data_lines(out / "results.csv").size() == 10);
    // The first 10 points in sweep order are there; the ranks finished the next 11.
    std::vector<std::string> rank0{data_lines(out / "results.csv")[3]}, rank1;
    for (std::size_t i = 10; i < 16; ++i) rank0.push_back(reference[i]);
    for (std::size_t i = 16; i < 21; ++i) rank1.push_back(reference[i]);
    seed_rank_file(out, 0, rank0);
    seed_rank_file(out, 1, rank1, "gather,1024,64,2");
    std::vector<std::string> finished(rank0.begin() + 1, rank0.end());
    finished.insert(finished.end(), rank1.begin(), rank1.end());
    return finished;
  };

  SECTION("resumed over 4 ranks") {
    const fs::path out = mpi_dir() / "dead_ranks";
    auto kept = seed(out);
    r = run_mpi(4, "sweep " + sweep.string() + " --out " + out.string() + " --resume", "dead_ranks");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("merged 11 rows of 2 rank files") && Contains("1 rows already there left out") &&
                          Contains("1 partial last line dropped"));
    CHECK_THAT(r.out, Contains("sweep: " + std::to_string(kGridPoints - 21) + " new rows"));
    check_each_point_once(out / "results.csv", kGridPoints);
    for (const auto& line : kept) CHECK(contains_line(out / "results.csv", line));
    CHECK_FALSE(fs::exists(out / "ranks"));
  }
  SECTION("resumed in one process") {
    const fs::path out = mpi_dir() / "dead_one";
    auto kept = seed(out);
    // Without --resume the folder is refused and left as it is.
    r = run_tilesim("sweep " + sweep.string() + " --out " + out.string(), mpi_dir());
    CHECK(r.exit_code == 2);
    CHECK(fs::exists(out / "ranks" / "rank-1.csv"));
    r = run_tilesim("sweep " + sweep.string() + " --out " + out.string() + " --resume", mpi_dir());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("merged 11 rows of 2 rank files"));
    CHECK_THAT(r.out, Contains("sweep: " + std::to_string(kGridPoints - 21) + " new rows"));
    check_each_point_once(out / "results.csv", kGridPoints);
    for (const auto& line : kept) CHECK(contains_line(out / "results.csv", line));
    CHECK_FALSE(fs::exists(out / "ranks"));
  }
  SECTION("--overwrite starts again without them") {
    const fs::path out = mpi_dir() / "dead_overwrite";
    seed(out);
    r = run_mpi(2, "sweep " + sweep.string() + " --out " + out.string() + " --overwrite", "dead_overwrite");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("removed 2 rank files of an earlier run"));
    check_each_point_once(out / "results.csv", kGridPoints);
  }
}

TEST_CASE("a rank killed with SIGKILL loses only its unfinished points, and a resume in one process completes the sweep",
          "[sweep][cli][slow]") {
  // Rank 1, or rank 0, the one that owns the folder: either way the folder stays resumable.
  const int victim_rank = GENERATE(1, 0);
  INFO("rank " << victim_rank << " killed");
  const fs::path sweep = write_text(mpi_dir() / "killed.json", R"({"name": "killed", "ops": ["gather", "scatter_add"],
      "sizes": {"num_inputs": {"from": 16, "to": 1024, "times": 2}, "num_features": [16, 64],
                "num_outputs": {"from": 32, "to": 8192, "times": 2}},
      "backends": ["ipu:bow"]})");
  const std::size_t total = 2 * 7 * 2 * 9;
  const fs::path out = mpi_dir() / ("killed_out" + std::to_string(victim_rank));
  fs::remove_all(out);
  const fs::path victim_file = out / "ranks" / ("rank-" + std::to_string(victim_rank) + ".csv");
  const std::string cmd = "exec " + mpi_launch(2) + " " + TILESIM_BINARY + " sweep " + sweep.string() +
                          " --out " + out.string() + " >" + (mpi_dir() / "killed.stdout").string() + " 2>" +
                          (mpi_dir() / "killed.stderr").string();
  const pid_t launcher = ::fork();
  REQUIRE(launcher >= 0);
  if (launcher == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // However the case ends, the job does not outlive it.
  struct EndJob {
    pid_t pid;
    ~EndJob() {
      if (::waitpid(pid, nullptr, WNOHANG) == 0) {
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  } end_job{launcher};
  // The victim: a descendant of the launcher (other tests may run MPI jobs at the same time) whose
  // launcher-set rank is victim_rank, found once its rank file has a few rows.
  auto parent_of = [](pid_t pid) -> pid_t {
    const std::string stat = slurp(fs::path("/proc") / std::to_string(pid) / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long parent = -1;
    rest >> state >> parent;
    return static_cast<pid_t>(parent);
  };
  const std::string rank_variable = "OMPI_COMM_WORLD_RANK=" + std::to_string(victim_rank) + '\0';
  auto victim_pid = [&]() -> pid_t {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      if (slurp(entry.path() / "environ").find(rank_variable) == std::string::npos) continue;
      const auto pid = static_cast<pid_t>(std::stol(name));
      for (pid_t p = parent_of(pid), hops = 0; p > 1 && hops < 4; p = parent_of(p), ++hops)
        if (p == launcher) return pid;
    }
    return -1;
  };
  pid_t victim = -1;
  std::size_t rows_at_kill = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(victim_file) && (rows_at_kill = data_lines(victim_file).size()) >= 5 && (victim = victim_pid()) > 0) break;
    int status = 0;
    if (::waitpid(launcher, &status, WNOHANG) == launcher) FAIL("the sweep ended before a rank could be killed");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(victim > 0);
  ::kill(victim, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(launcher, &status, 0) == launcher);
  // The launcher ends the job when a rank dies: a failure, and no merge.
  CHECK((!WIFEXITED(status) || WEXITSTATUS(status) != 0));
  REQUIRE(fs::exists(victim_file));
  CHECK(data_lines(victim_file).size() >= rows_at_kill);
  CHECK(data_lines(victim_file).size() < total / 2);
  CHECK(data_lines(out / "results.csv").empty());
  // The rows the ranks finished: their files' whole lines (a kill in the middle of a write leaves a
  // partial last one, without its line end), the header aside.
  std::vector<std::string> finished;
  for (const auto& file : {out / "ranks" / "rank-0.csv", out / "ranks" / "rank-1.csv"}) {
    std::istringstream text(slurp(file));
    std::string line;
    for (bool header = true; std::getline(text, line) && !text.eof(); header = false)
      if (!header) finished.push_back(line);
  }

  const auto r = run_tilesim("sweep " + sweep.string() + " --out " + out.string() + " --resume", mpi_dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Contains("rank files an earlier run left"));
  check_each_point_once(out / "results.csv", total);
  // What the ranks finished before the kill is kept as it was, not run again.
  CHECK(finished.size() >= rows_at_kill);
  for (const auto& line : finished) CHECK(contains_line(out / "results.csv", line));
}

TEST_CASE("an error on one rank ends the job with its exit code and names the rank, and bad input is said once", "[sweep][cli]") {
  const fs::path sweep = grid_sweep("errors");
  SECTION("bad input: one message, from rank 0, exit 2 from the launcher") {
    const fs::path bad = write_text(mpi_dir() / "bad.json", R"({"name": "bad", "ops": ["gather"], "sizes": {}, "backends": ["ipu:bow"]})");
    const auto r = run_mpi(2, "sweep " + bad.string() + " --out " + (mpi_dir() / "bad_out").string(), "bad");
    CHECK(r.exit_code == 2);
    std::size_t messages = 0;
    for (auto at = r.err.find("tilesim: error:"); at != std::string::npos; at = r.err.find("tilesim: error:", at + 1)) ++messages;
    CHECK(messages == 1);
    CHECK_THAT(r.err, Contains("bad.json: sizes.num_inputs"));
  }
  SECTION("a rank whose machine files are missing ends the job, naming itself") {
    // Rank 1 alone reads its IPU machines from a folder that has none (an MPMD launch gives it its own
    // environment); rank 0 found the sweep good, so the job is under way when rank 1 fails.
    const fs::path out = mpi_dir() / "rank_error_out";
    fs::remove_all(out);
    const fs::path empty = mpi_dir() / "no_machines";
    fs::create_directories(empty);
    const std::string one = "-n 1 " + std::string(TILESIM_BINARY) + " sweep " + sweep.string() + " --out " + out.string();
    const std::string two = "-n 1 env TILESIM_MACHINE_DIR=" + empty.string() + " " + TILESIM_BINARY + " sweep " + sweep.string() +
                            " --out " + out.string();
    const std::string launcher = mpi_launcher() + " ";
    const fs::path err = mpi_dir() / "rank_error.stderr";
    const std::string cmd = "cd '" + std::string(TILESIM_SOURCE_DIR) + "' && " + launcher + one + " : " +
                            two + " >/dev/null 2>'" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK_THAT(slurp(err), Contains("tilesim: error: rank 1 of 2: ") && Contains("bow"));
  }
}

#endif  // TILESIM_MPIEXEC
