// The performance model against published measurements (tests/data/perf/cases.json, each case with its
// source; run in full, and fitted, by scripts/perf-cases.py; error table in docs/performance-model.md
// "Error against published measurements"). Each regime's count of cases within issue #12's floor
// (10% for decode and prefill times, 20% for large-batch throughput) must not fall below the count the
// committed table shows, so that a change to a term or a coefficient that loses a case fails here; when a
// refit gains cases, rerun the script, refresh the table and raise the count.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"

using nlohmann::json;

namespace {

const std::string kPerf = std::string(KVPLAN_TEST_DATA) + "/perf";

// predicted / measured for a time, measured / predicted for a throughput (as scripts/perf-cases.py):
// > 1 when kvplan is slower than the measurement
double ratio(const json& c) {
  std::vector<std::string> args = {"plan"};
  for (const auto& a : c["args"]) {
    const std::string s = a.get<std::string>();
    args.push_back(s.starts_with("configs/") ? kPerf + "/" + s : s);
  }
  args.push_back("--format");
  args.push_back("json");
  const auto r = kvtest::kvplan(args);
  INFO(c["id"].get<std::string>() << ": " << r.err);
  REQUIRE((r.exit == 0 || r.exit == 1));
  const json d = json::parse(r.out);
  const json& perf = d["results"]["performance"];
  const std::string m = c["metric"];
  const double measured = c["measured"].get<double>();
  if (m == "tpot_ms") return perf["tpot_s"].get<double>() * 1e3 / measured;
  if (m == "ttft_ms") return perf["ttft_s"].get<double>() * 1e3 / measured;
  if (m == "batch_time_ms") return perf["batch_time_s"].get<double>() * 1e3 / measured;
  const double tps = perf["output_tokens_per_s"].get<double>();
  if (m == "output_tokens_per_s") return measured / tps;
  if (m == "output_tokens_per_s_per_gpu") return measured / (tps / d["inputs"]["gpus"].get<double>());
  FAIL(c["id"].get<std::string>() << ": unknown metric " << m);
  return 0;
}

// the sanitizer build starts kvplan for one case in eight (a 100 MB binary, ~1 s a start there) and checks that
// each runs and gives a finite figure; the counts are checked by the release run, which starts all of them
#ifdef KVPLAN_SANITIZED
constexpr std::size_t kStride = 8;
#else
constexpr std::size_t kStride = 1;
#endif

}  // namespace

TEST_CASE("published measurements within the floor: no regime loses a case", "[perf_cases]") {
  const json doc = json::parse(kvtest::slurp(kPerf + "/cases.json"));
  // regime -> (floor, cases within it in the committed table, docs/performance-model.md)
  const std::map<std::string, std::pair<double, int>> floor = {
      {"batch1-decode", {0.10, 60}},  // 56 of 66 until the five CPU-host rows (cpu_bw_eff, 2026-12-07)
      {"llamacpp-table", {0.10, 67}},
      {"small-batch", {0.10, 12}},
      {"tp", {0.10, 38}},  // 39 before the PCIe ring latency (2026-12-07): the 4 x RTX 3090 Ti TP4 row, rounded log figures, -2% -> -19%
      {"prefill", {0.10, 7}},
      {"large-batch", {0.20, 10}},
      {"moe", {0.10, 22}},
      {"llamacpp-prompt", {0.10, 6}},
  };
  std::map<std::string, int> within, total;
  std::size_t i = 0;
  for (const auto& c : doc["cases"]) {
    const std::string regime = c["regime"];
    if (!floor.contains(regime)) continue;  // "moderate": a simulator case, not a static step
    if (i++ % kStride != 0) continue;
    const double r = ratio(c);
    REQUIRE(std::isfinite(r));
    ++total[regime];
    if (std::abs(r - 1) <= floor.at(regime).first) ++within[regime];
  }
  if (kStride > 1) return;
  for (const auto& [regime, f] : floor) {
    INFO(regime << ": " << within[regime] << " of " << total[regime] << " within " << f.first * 100 << "%");
    CHECK(within[regime] >= f.second);
  }
}

TEST_CASE("the held-out measurements still run: every case's arguments parse and give a finite figure", "[perf_cases]") {
  // tests/data/perf/heldout.json is kept out of the fit (docs/performance-model.md "Held-out check"); no count is
  // asserted on it, but a renamed option or profile must not leave its cases unrunnable
  const json doc = json::parse(kvtest::slurp(kPerf + "/heldout.json"));
  REQUIRE(doc["cases"].size() >= 70);
  std::size_t i = 0;
  for (const auto& c : doc["cases"]) {
    if (i++ % kStride != 0) continue;
    const double r = ratio(c);
    INFO(c["id"].get<std::string>());
    CHECK(std::isfinite(r));
    CHECK(r > 0);
  }
}
