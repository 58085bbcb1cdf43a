// `kvplan fit` with latency targets, the rate search, the hardware comparison and the cost
// (docs/fit.md). Figures are read back from kvplan's own JSON (plan, simulate) so the tests state
// relative facts that hold whatever the performance model's fitted coefficients are: the layout
// chosen meets the target and every smaller one does not; the rate found passes in `simulate` and
// the first failing rate fails there; the cost is price x GPUs / (tokens/s x 3600) x 1e6.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"

using kvtest::Run;
using nlohmann::json;

namespace {

std::string write_temp(const std::string& name, const std::string& text) { return kvtest::write_temp("fitslo", name, text); }

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

json run_json(const std::vector<std::string>& args, int want_exit = 0) {
  const Run r = kvtest::kvplan(args);
  INFO(r.err);
  REQUIRE(r.exit == want_exit);
  return json::parse(r.out);
}

const std::vector<std::string> kWork = {"llama-3.1-8b", "--gpu", "h100", "--prompt-tokens", "2048", "--output-tokens", "256",
                                        "--concurrency", "32"};

double plan_tpot_ms(const std::vector<std::string>& layout) {
  std::vector<std::string> args = {"plan"};
  args.insert(args.end(), kWork.begin(), kWork.end());
  args.insert(args.end(), layout.begin(), layout.end());
  args.insert(args.end(), {"--format", "json"});
  return run_json(args)["results"]["performance"]["tpot_s"].get<double>() * 1e3;
}

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

TEST_CASE("a TPOT target one GPU misses takes the fewest GPUs whose layout meets it", "[fit_slo]") {
  const double one = plan_tpot_ms({"--tensor-parallel-size", "1"});
  const double tp2 = plan_tpot_ms({"--tensor-parallel-size", "2"});
  REQUIRE(tp2 < one);  // tensor parallelism splits the weights read per step
  const double target = (one + tp2) / 2;
  const json out = run_json(with({"fit"}, with(kWork, {"--slo-tpot-ms", num(target), "--format", "json"})));
  const json& f = out["results"]["fewest_gpus"];
  REQUIRE(f["found"] == true);
  CHECK(f["gpus"] == 2);
  const json& slo = out["results"]["slo"];
  CHECK(slo["method"] == "static_model");
  CHECK(slo["pass"] == true);
  CHECK(slo["percentile"] == 99);
  CHECK(slo["targets"]["tpot_ms"].get<double>() == Approx(target));
  CHECK(slo["targets"]["ttft_ms"].is_null());
  // the layout chosen, planned on its own, meets the target; the one-GPU layout does not
  const double chosen = plan_tpot_ms({"--tensor-parallel-size", std::to_string(f["tensor_parallel_size"].get<int>()),
                                      "--pipeline-parallel-size", std::to_string(f["pipeline_parallel_size"].get<int>()),
                                      "--data-parallel-size", std::to_string(f["data_parallel_size"].get<int>())});
  CHECK(chosen <= target);
  CHECK(slo["achieved"]["tpot_ms"].get<double>() == Approx(chosen).epsilon(1e-9));
  CHECK(one > target);
  CHECK(f["slo_rejected_layouts"].get<int>() >= 1);

  // a target nothing meets: exit 1, found false
  const Run none = kvtest::kvplan(with({"fit"}, with(kWork, {"--slo-tpot-ms", "0.001", "--max-gpus", "4", "--format", "json"})));
  CHECK(none.exit == 1);
  CHECK(json::parse(none.out)["results"]["slo"]["pass"] == false);

  // --no-pipeline-parallel keeps pp = 1 and says so
  const json nopp = run_json(with({"fit"}, with(kWork, {"--slo-tpot-ms", num(target), "--no-pipeline-parallel", "--format", "json"})));
  CHECK(nopp["results"]["fewest_gpus"]["pipeline_parallel_size"] == 1);
  CHECK(nopp["results"]["fewest_gpus"]["pipeline_parallel_allowed"] == false);

  // the table says the layout and the target
  const Run table = kvtest::kvplan(with({"fit"}, with(kWork, {"--slo-tpot-ms", num(target)})));
  CHECK(table.exit == 0);
  CHECK(table.out.find("meeting p99 TPOT <=") != std::string::npos);
  CHECK(table.out.find("(static model)") != std::string::npos);
}

TEST_CASE("fit without the new options keeps its output", "[fit_slo]") {
  const json out = run_json({"fit", "llama-3.1-70b", "--context", "32k", "--concurrency", "16", "--fewest-gpus", "--format", "json"});
  const json& f = out["results"]["fewest_gpus"];
  CHECK_FALSE(f.contains("slo_rejected_layouts"));
  CHECK_FALSE(f.contains("pipeline_parallel_allowed"));
  CHECK_FALSE(out["results"].contains("slo"));
  CHECK_FALSE(out["results"].contains("cost"));
  CHECK(out["results"].size() == 1);
}

TEST_CASE("with a rate the targets are checked by simulation", "[fit_slo]") {
  const json out = run_json({"fit", "llama-3.1-8b", "--gpu", "h100", "--prompt-tokens", "512", "--output-tokens", "64",
                             "--slo-ttft-ms", "2000", "--slo-tpot-ms", "200", "--slo-percentile", "90", "--rate", "2",
                             "--requests", "100", "--seed", "3", "--format", "json"});
  const json& slo = out["results"]["slo"];
  CHECK(slo["method"] == "simulation");
  CHECK(slo["percentile"] == 90);
  CHECK(slo["pass"] == true);
  CHECK(slo["workload"]["rate_per_s"] == 2.0);
  CHECK(out["results"]["fewest_gpus"]["gpus"] == 1);
  // the same figure simulate reports at that rate and seed
  const json sim = run_json({"simulate", "llama-3.1-8b", "--gpu", "h100", "--prompt-tokens", "512", "--output-tokens", "64",
                             "--rate", "2", "--requests", "100", "--seed", "3", "--format", "json"});
  CHECK(slo["achieved"]["tpot_ms"].get<double>() == Approx(sim["results"]["tpot_ms"]["p90"].get<double>()));
  CHECK(slo["achieved"]["ttft_ms"].get<double>() == Approx(sim["results"]["ttft_ms"]["p90"].get<double>()));
  // a simulated workload without a target is a usage error
  const Run bad = kvtest::kvplan({"fit", "llama-3.1-8b", "--rate", "2"});
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
}

TEST_CASE("find-max-rate returns a passing rate and the first failing one deterministically", "[fit_slo]") {
  const std::vector<std::string> dep = {"llama-3.1-8b", "--gpu", "h100", "--prompt-tokens", "512", "--output-tokens", "64"};
  const std::vector<std::string> wl = {"--requests", "200", "--seed", "7"};
  const std::vector<std::string> args = with(with(with({"fit"}, dep), wl), {"--find-max-rate", "--slo-ttft-ms", "300", "--slo-tpot-ms", "40", "--format", "json"});
  const Run a = kvtest::kvplan(args);
  const Run b = kvtest::kvplan(args);
  REQUIRE(a.exit == 0);
  CHECK(a.out == b.out);  // the same seed, the same answer
  const json mr = json::parse(a.out)["results"]["max_rate"];
  REQUIRE(mr["found"] == true);
  const double rate = mr["rate_per_s"].get<double>();
  const double fail = mr["first_failing_rate_per_s"].get<double>();
  CHECK(rate >= 0.01);
  CHECK(fail > rate);
  CHECK(fail <= rate * (1 + mr["search"]["relative_tolerance"].get<double>()) * (1 + 1e-12));
  CHECK(mr["simulations"].get<int>() <= 20);
  CHECK(mr["percentile"] == 99);

  const auto p99 = [&](double r) {
    const json s = run_json(with(with(with({"simulate"}, dep), wl), {"--rate", num(r), "--format", "json"}));
    return std::make_pair(s["results"]["ttft_ms"]["p99"].get<double>(), s["results"]["tpot_ms"]["p99"].get<double>());
  };
  const auto [ttft_ok, tpot_ok] = p99(rate);
  CHECK(ttft_ok <= 300);
  CHECK(tpot_ok <= 40);
  CHECK(mr["at_rate"]["ttft_ms"].get<double>() == Approx(ttft_ok));
  CHECK(mr["at_rate"]["tpot_ms"].get<double>() == Approx(tpot_ok));
  const auto [ttft_bad, tpot_bad] = p99(fail);
  CHECK((ttft_bad > 300 || tpot_bad > 40));

  // the rate is searched: --rate with --find-max-rate is a usage error
  const Run clash = kvtest::kvplan(with(args, {"--rate", "3"}));
  CHECK(clash.exit == 2);
  CHECK(clash.err.find("--rate") != std::string::npos);
}

TEST_CASE("a GPU list compares each GPU's fewest-GPU layout", "[fit_slo]") {
  const std::vector<std::string> args = {"fit", "llama-3.1-8b", "--gpu", "h100,h200,l40s", "--context", "4k",
                                         "--concurrency", "8", "--slo-tpot-ms", "100"};
  const json out = run_json(with(args, {"--format", "json"}));
  const json& rows = out["results"]["comparison"];
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["gpu"] == "h100-sxm");
  CHECK(rows[1]["gpu"] == "h200");
  CHECK(rows[2]["gpu"] == "l40s");
  for (const auto& r : rows) {
    CHECK(r["found"] == true);
    CHECK(r["meets_slo"] == true);
    CHECK(r["gpus"].get<int>() >= 1);
    CHECK(r["tpot_ms"].get<double>() <= 100);
  }
  const Run table = kvtest::kvplan(args);
  CHECK(table.exit == 0);
  for (const char* g : {"h100-sxm", "h200", "l40s"}) CHECK(table.out.find(g) != std::string::npos);
  // one price for several GPU types is ambiguous
  const Run one = kvtest::kvplan(with(args, {"--price-per-gpu-hour", "2"}));
  CHECK(one.exit == 2);
}

TEST_CASE("cost per million output tokens from the JSON's own tokens per second", "[fit_slo]") {
  const json out = run_json(with({"fit"}, with(kWork, {"--slo-tpot-ms", "1000", "--price-per-gpu-hour", "2.5", "--format", "json"})));
  const json& c = out["results"]["cost"];
  const double gpus = out["results"]["fewest_gpus"]["gpus"].get<double>();
  CHECK(c["gpus"].get<double>() == gpus);
  const double tps = c["output_tokens_per_s"].get<double>();
  REQUIRE(tps > 0);
  CHECK(c["usd_per_hour"].get<double>() == Approx(2.5 * gpus));
  CHECK(c["usd_per_million_output_tokens"].get<double>() == Approx(2.5 * gpus / (tps * 3600) * 1e6));
  CHECK(c["output_tokens_per_usd"].get<double>() == Approx(tps * 3600 / (2.5 * gpus)));

  // a prices file: keys are GPU names, each price with its date and source
  const std::string good = write_temp("prices.json",
                                      R"({"h100": {"usd_per_gpu_hour": 3.0, "date": "2026-11-01", "source": "a quote"},
                                          "l40s": {"usd_per_gpu_hour": 1.0, "date": "2026-11-01", "source": "a quote"}})");
  const json cmp = run_json({"fit", "llama-3.1-8b", "--gpu", "h100,l40s", "--context", "4k", "--concurrency", "8",
                             "--prices", good, "--format", "json"});
  for (const auto& r : cmp["results"]["comparison"]) {
    const json& rc = r["cost"];
    CHECK(rc["price_date"] == "2026-11-01");
    CHECK(rc["price_source"] == "a quote");
    const double usd = r["gpu"] == "l40s" ? 1.0 : 3.0;
    CHECK(rc["usd_per_million_output_tokens"].get<double>() ==
          Approx(usd * r["gpus"].get<double>() / (rc["output_tokens_per_s"].get<double>() * 3600) * 1e6));
  }
}

TEST_CASE("a price without a date is one error line and exit 2", "[fit_slo]") {
  const std::string bad = write_temp("nodate.json", R"({"h100-sxm": {"usd_per_gpu_hour": 2.5, "source": "a quote"}})");
  const Run r = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--context", "4k", "--prices", bad});
  CHECK(r.exit == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("/h100-sxm/date") != std::string::npos);
  const std::string nosrc = write_temp("nosource.json", R"({"h100-sxm": {"usd_per_gpu_hour": 2.5, "date": "2026-11-01"}})");
  const Run s = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--context", "4k", "--prices", nosrc});
  CHECK(s.exit == 2);
  CHECK(s.err.find("/h100-sxm/source") != std::string::npos);
  // a date no calendar has, and two keys naming one GPU, are refused too
  const std::string feb30 = write_temp("feb30.json", R"({"h100-sxm": {"usd_per_gpu_hour": 2.5, "date": "2026-02-30", "source": "q"}})");
  const Run f = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--context", "4k", "--prices", feb30});
  CHECK(f.exit == 2);
  CHECK(f.err.find("'2026-02-30' is not a calendar date") != std::string::npos);
  const std::string twice = write_temp("twice.json", R"({"h100": {"usd_per_gpu_hour": 9, "date": "2026-11-01", "source": "a"},
                                                         "h100-sxm": {"usd_per_gpu_hour": 2.5, "date": "2026-11-01", "source": "b"}})");
  const Run t = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--context", "4k", "--prices", twice});
  CHECK(t.exit == 2);
  CHECK(t.err.find("names h100-sxm, which an earlier key names too") != std::string::npos);
}

TEST_CASE("the new fit keys are in the fit schema", "[fit_slo]") {
  std::ifstream in(std::string(KVPLAN_SCHEMA_DIR) + "/fit.schema.json");
  REQUIRE(in.good());
  const json s = json::parse(in);
  const json& props = s["properties"]["results"]["properties"];
  for (const char* k : {"slo", "max_rate", "comparison", "cost"}) CHECK(props.contains(k));
}

TEST_CASE("llama.cpp's fewest GPUs is its --gpu-count: the layers split over GPUs, every layer on them", "[fit_slo][llamacpp]") {
  // Llama-3.1-70B Q4_K_M is about 42.5 GB of weights: more than one RTX 4090 (24 GB), less than two. llama.cpp has
  // no TP / PP, so the search varies --gpu-count; one GPU only "fits" by --fit moving layers to the CPU, which
  // does not count
  const std::vector<std::string> base = {"llama-3.1-70b", "--engine", "llama.cpp", "--weight-format", "Q4_K_M", "--gpu", "rtx-4090",
                                         "--context", "8k"};
  const json f = run_json(with(with({"fit"}, base), {"--fewest-gpus", "--format", "json"}))["results"]["fewest_gpus"];
  CHECK(f["found"] == true);
  CHECK(f["gpus"] == 2);
  CHECK(f["llamacpp_layer_split"] == true);
  // the plan agrees: one GPU keeps fewer than all layers, two keep them all and fit
  const json one = run_json(with(with({"plan"}, base), {"--gpu-count", "1", "--format", "json"}), 1)["results"];
  CHECK(one["engine"]["gpu_layers"].get<long>() < one["engine"]["total_layers"].get<long>());
  const json two = run_json(with(with({"plan"}, base), {"--gpu-count", "2", "--format", "json"}))["results"];
  CHECK(two["engine"]["gpu_layers"] == two["engine"]["total_layers"]);
  // a GPU list compares the counts: an H100 (80 GB) holds it alone
  const json c = run_json({"fit", "llama-3.1-70b", "--engine", "llama.cpp", "--weight-format", "Q4_K_M", "--gpu", "rtx-4090,h100",
                           "--context", "8k", "--format", "json"})["results"]["comparison"];
  CHECK(c[0]["gpus"] == 2);
  CHECK(c[1]["gpus"] == 1);
  CHECK(c[1]["llamacpp_layer_split"] == true);
}

TEST_CASE("a tensor parallel size the deployment gives is kept by the layout search", "[fit_slo]") {
  // Llama-3.1-70B bf16 (141 GB of weights) on H100s: two (0.9 x 160 GB = 144 GB, less CUDA context and activations)
  // are too few, three take PP 3 (TP 3 does not divide 64 heads); --tp 4 asks for TP 4 layouts only, so the answer is
  // 4 GPUs at TP 4, and an L40S (48 GB) needs PP 2 beside it (TP 4 x 48 GB < 141 GB)
  const json free = run_json({"fit", "llama-3.1-70b", "--gpu", "h100", "--context", "8k", "--fewest-gpus", "--format", "json"})["results"]["fewest_gpus"];
  CHECK(free["gpus"] == 3);
  CHECK(free["tensor_parallel_size"] == 1);
  const json c = run_json({"fit", "llama-3.1-70b", "--gpu", "h100,l40s", "--context", "8k", "--tp", "4", "--format", "json"})["results"]["comparison"];
  CHECK(c[0]["tensor_parallel_size"] == 4);
  CHECK(c[0]["gpus"] == 4);
  CHECK(c[1]["tensor_parallel_size"] == 4);
  CHECK(c[1]["pipeline_parallel_size"] == 2);
  // a --max-tp below it is a contradiction: one line, exit 2
  const Run bad = kvtest::kvplan({"fit", "llama-3.1-70b", "--gpu", "h100", "--fewest-gpus", "--tp", "4", "--max-tp", "2"});
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("--max-tp") != std::string::npos);
}

TEST_CASE("fit names the traffic it simulated, not one request, in its answer", "[fit_slo]") {
  const Run r = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--slo-ttft-ms", "5000", "--rate", "2", "--prompt-tokens", "2000",
                                "--output-tokens", "300", "--requests", "40"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  CHECK(r.out.find("2.00 req/s of 2,000") != std::string::npos);
  CHECK(r.out.find("1 x 2,300 tokens") == std::string::npos);
  const Run s = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--slo-ttft-ms", "5000", "--prompt-tokens", "2000", "--output-tokens", "300"});
  REQUIRE(s.exit == 0);
  CHECK(s.out.find("1 x 2,300 tokens") != std::string::npos);  // the static model: one request of 2,300 tokens
}

TEST_CASE("fit prices a max-concurrency answer at that concurrency", "[fit_slo]") {
  // the cost is price x GPUs / (tokens/s x 3600) x 1e6, the tokens/s being plan's decode rate at the concurrency fit
  // found (it was priced at one request)
  const json f = run_json({"fit", "llama-3.1-70b", "--gpu", "h100", "--tp", "4", "--context", "8k", "--price-per-gpu-hour", "2.5",
                           "--format", "json"})["results"];
  const long n = f["max_concurrency"]["max_concurrency"].get<long>();
  REQUIRE(n > 1);
  const double tps = run_json({"plan", "llama-3.1-70b", "--gpu", "h100", "--tp", "4", "--context", "8k", "--concurrency",
                               std::to_string(n), "--format", "json"})["results"]["performance"]["decode_tokens_per_s"].get<double>();
  CHECK(f["cost"]["usd_per_million_output_tokens"].get<double>() == Approx(2.5 * 4 / (tps * 3600) * 1e6));
}

TEST_CASE("fit never prices a load that does not fit", "[fit_slo]") {
  // --concurrency alone asks for the longest request: priced at that many tokens, not at max_model_len (which does
  // not fit 8 requests); a length and a concurrency over what fits: priced at the requests that fit
  const json l = run_json({"fit", "llama-3.1-8b", "--gpu", "h100", "--concurrency", "8", "--price-per-gpu-hour", "2", "--format", "json"})["results"];
  const long L = l["max_context"]["max_tokens_per_request"].get<long>();
  REQUIRE(L > 0);
  const double tps_l = run_json({"plan", "llama-3.1-8b", "--gpu", "h100", "--concurrency", "8", "--context", std::to_string(L),
                                 "--format", "json"})["results"]["performance"]["decode_tokens_per_s"].get<double>();
  CHECK(l["cost"]["output_tokens_per_s"].get<double>() == Approx(tps_l));
  const json c = run_json({"fit", "llama-3.1-8b", "--gpu", "h100", "--context", "8192", "--concurrency", "100", "--price-per-gpu-hour", "2",
                           "--format", "json"})["results"];
  const long n = c["max_concurrency"]["max_concurrency"].get<long>();
  REQUIRE(n > 0);
  REQUIRE(n < 100);
  const double tps_c = run_json({"plan", "llama-3.1-8b", "--gpu", "h100", "--context", "8192", "--concurrency", std::to_string(n),
                                 "--format", "json"})["results"]["performance"]["decode_tokens_per_s"].get<double>();
  CHECK(c["cost"]["output_tokens_per_s"].get<double>() == Approx(tps_c));
  CHECK(c["cost"]["usd_per_million_output_tokens"].get<double>() == Approx(2.0 / (tps_c * 3600) * 1e6));
}

TEST_CASE("fit's csv gives the fewest-GPU layout as numbers, as the table gives it in words", "[fit_slo]") {
  const Run r = kvtest::kvplan({"fit", "llama-3.1-70b", "--gpu", "h100", "--fewest-gpus", "--concurrency", "100", "--context", "8192", "--format", "csv"});
  REQUIRE(r.exit == 0);
  const json j = run_json({"fit", "llama-3.1-70b", "--gpu", "h100", "--fewest-gpus", "--concurrency", "100", "--context", "8192", "--format", "json"});
  const json& f = j["results"]["fewest_gpus"];
  CHECK(r.out.find("\ntensor parallel size of that layout," + std::to_string(f["tensor_parallel_size"].get<long>()) + ",\n") != std::string::npos);
  CHECK(r.out.find("\npipeline parallel size of that layout," + std::to_string(f["pipeline_parallel_size"].get<long>()) + ",\n") != std::string::npos);
  CHECK(r.out.find("\ndata parallel size of that layout," + std::to_string(f["data_parallel_size"].get<long>()) + ",\n") != std::string::npos);
}

TEST_CASE("fit's layout search breaks a tie in GPUs by the larger free share of the KV pool", "[fit_slo]") {
  // 8 x A100 for 64 x 3,000 tokens of Llama-3.1-70B under p99 TPOT 40 ms: TP 8 and TP 4 x DP 2 both fit and meet it
  // (fewer GPUs miss it); the answer is the layout whose pool keeps the larger share free, worked out from each
  // layout's own JSON (plan at that layout)
  const json f = run_json({"fit", "llama-3.1-70b", "--gpu", "a100-sxm-80gb", "--slo-tpot-ms", "40", "--concurrency", "64", "--prompt-tokens", "2000",
                           "--output-tokens", "1000", "--format", "json"})["results"]["fewest_gpus"];
  REQUIRE(f["gpus"] == 8);
  const auto free_share = [](const std::string& tp, const std::string& dp) {
    const json c = run_json({"plan", "llama-3.1-70b", "--gpu", "a100-sxm-80gb", "--tp", tp, "--dp", dp, "--concurrency", "64", "--prompt-tokens",
                             "2000", "--output-tokens", "1000", "--format", "json"})["results"]["fit"];
    return 1.0 - c["pool_units_needed"].get<double>() / c["pool_units_available"].get<double>();
  };
  const double tp8 = free_share("8", "1"), tp4 = free_share("4", "2");
  CHECK(f["tensor_parallel_size"] == (tp8 > tp4 ? 8 : 4));
}

TEST_CASE("fit refuses options that would do nothing in the mode asked", "[fit_slo]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--slo-tpot-ms", "30", "--concurrency", "4", "--burstiness", "0.5"}, "kvplan: error: --burstiness: shapes a simulated workload"},
      {{"--slo-tpot-ms", "30", "--concurrency", "4", "--requests", "50"}, "kvplan: error: --requests: shapes a simulated workload"},
      {{"--concurrency", "4", "--slo-percentile", "50"}, "kvplan: error: --slo-percentile: applies to latency targets"},
      {{"--concurrency", "4", "--max-gpus", "4"}, "kvplan: error: --max-gpus: bounds the layout search, and this fit searches no layout"},
      {{"--concurrency", "4", "--no-pipeline-parallel"}, "kvplan: error: --no-pipeline-parallel: bounds the layout search"},
      // a comparison: one GPU's figure would apply to every GPU; a GPU named twice; a GPU whose TTFT cannot be estimated
      {{"--gpu", "h100,h200", "--gpu-bandwidth", "1TB/s", "--slo-tpot-ms", "80", "--concurrency", "8"},
       "kvplan: error: --gpu-bandwidth: one value for several GPU types"},
      {{"--gpu", "h100,h100-sxm", "--concurrency", "4"}, "kvplan: error: --gpu: 'h100' and 'h100-sxm' are the same GPU (h100-sxm)"},
      {{"--gpu", "h100,p40", "--slo-ttft-ms", "1000", "--concurrency", "4", "--context", "4096"},
       "kvplan: error: --gpu: the p40 profile has no TFLOP/s for this weight format"},
  };
  for (const auto& [extra, expect] : bad) {
    std::vector<std::string> args = {"fit", "llama-3.1-8b"};
    if (extra.front() != "--gpu") args.insert(args.end(), {"--gpu", "h100"});
    args.insert(args.end(), extra.begin(), extra.end());
    const Run r = kvtest::kvplan(args);
    INFO(extra.front() << ": " << r.err);
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(expect) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // the same options where they act are accepted
  CHECK(kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--concurrency", "4", "--fewest-gpus", "--max-gpus", "4"}).exit == 0);
  CHECK(kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--slo-tpot-ms", "30", "--rate", "2", "--requests", "50", "--burstiness", "0.5"}).exit == 0);
}

TEST_CASE("fit's cost: a deployment that serves nothing has no tokens to price, and csv answers are plain numbers", "[fit_slo]") {
  // Llama-3.1-70B bf16 (141 GB of weights) does not start on one H100: its hours cost, it serves no tokens
  const json none = run_json({"fit", "llama-3.1-70b", "--gpu", "h100", "--context", "4k", "--price-per-gpu-hour", "2.5", "--format", "json"}, 1);
  const json& c = none["results"]["cost"];
  CHECK(c["usd_per_hour"].get<double>() == Approx(2.5));
  CHECK(c["output_tokens_per_s"].get<double>() == 0);
  CHECK(c["usd_per_million_output_tokens"].is_null());
  // csv: the unit in the question, the answer a number
  const Run csv = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--context", "4k", "--price-per-gpu-hour", "2.5", "--format", "csv"});
  REQUIRE(csv.exit == 0);
  CHECK(csv.out.find("usd per hour of 1 x h100-sxm,2.5000,") != std::string::npos);
  CHECK(csv.out.find("$/h") == std::string::npos);
  CHECK(csv.out.find("usd per million output tokens,") != std::string::npos);
  // a prices file's date and source: columns in csv, a line under the terminal table
  const std::string prices = write_temp("dated.json", R"({"h100": {"usd_per_gpu_hour": 3.0, "date": "2026-11-01", "source": "quote H"},
                                                          "l40s": {"usd_per_gpu_hour": 1.0, "date": "2026-10-15", "source": "quote L"}})");
  const std::vector<std::string> cmp = {"fit", "llama-3.1-8b", "--gpu", "h100,l40s", "--context", "4k", "--concurrency", "8", "--prices", prices};
  const Run t = kvtest::kvplan(cmp);
  CHECK(t.out.find("prices: h100-sxm 2026-11-01, quote H; l40s 2026-10-15, quote L") != std::string::npos);
  const Run tc = kvtest::kvplan(with(cmp, {"--format", "csv"}));
  CHECK(tc.out.find("price_date,price_source") != std::string::npos);
  CHECK(tc.out.find(",2026-10-15,quote L") != std::string::npos);
}

TEST_CASE("fit's layout search keeps a given expert-parallel size and refuses contradictory flags", "[fit_slo]") {
  // --ep-size 2 needs tensor x data parallel GPUs it can split the experts over: one GPU cannot hold it, the search goes on
  const json f = run_json({"fit", "qwen3-30b-a3b", "--gpu", "h100", "--engine", "sglang", "--context", "8k", "--concurrency", "64",
                           "--fewest-gpus", "--ep-size", "2", "--format", "json"})["results"]["fewest_gpus"];
  REQUIRE(f["found"] == true);
  CHECK(f["expert_parallel_size"] == 2);
  const long tp = f["tensor_parallel_size"].get<long>(), dp = f["data_parallel_size"].get<long>();
  CHECK(tp * dp >= 2);
  CHECK((tp < 2 || tp % 2 == 0));
  // as given (no search), the layout must hold it
  const Run given = kvtest::kvplan({"fit", "qwen3-30b-a3b", "--gpu", "h100", "--engine", "sglang", "--context", "8k", "--ep-size", "2"});
  CHECK(given.exit == 2);
  // --no-pipeline-parallel beside a pipeline-parallel size above 1: no layout is both
  const Run both = kvtest::kvplan({"fit", "llama-3.1-70b", "--gpu", "h100", "--context", "8k", "--fewest-gpus", "--no-pipeline-parallel", "--pp", "2"});
  CHECK(both.exit == 2);
  CHECK(both.out.empty());
  CHECK(both.err == "kvplan: error: --no-pipeline-parallel: given with --pipeline-parallel-size 2: no layout is both; drop one of them\n");
}

TEST_CASE("a simulated fit with no lengths given sizes memory at the lengths it simulates", "[fit_slo]") {
  // --rate with the default 1,024 + 128-token requests: 4 of them fit one H100 whatever max_model_len (131,072) would need
  const std::vector<std::string> args = {"fit", "llama-3.1-8b", "--gpu", "h100", "--rate", "20", "--concurrency", "4", "--slo-ttft-ms", "500",
                                         "--requests", "200", "--format", "json"};
  const json none = run_json(args)["results"]["fewest_gpus"];
  const json given = run_json(with(args, {"--prompt-tokens", "1024", "--output-tokens", "128"}))["results"]["fewest_gpus"];
  CHECK(none["gpus"] == given["gpus"]);
  CHECK(none["gpus"] == 1);
}

TEST_CASE("find-max-rate with a TPOT target alone stops where the queue starts to grow", "[fit_slo]") {
  // the running batch is capped, so p99 TPOT stays under a loose target at any rate; the answer is the highest rate the
  // deployment still keeps up with (its served output near rate x 128 tokens), not the search's bound of 10^4 req/s
  const Run r = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--prompt-tokens", "1024", "--output-tokens", "128", "--requests", "1000",
                                "--slo-tpot-ms", "200", "--find-max-rate", "--format", "json"});
  REQUIRE(r.exit == 0);
  const json mr = json::parse(r.out)["results"]["max_rate"];
  REQUIRE(mr["found"] == true);
  const double rate = mr["rate_per_s"].get<double>();
  CHECK(rate < 1000);
  CHECK(mr["at_rate"]["falling_behind"] == false);
  CHECK(mr["at_rate"]["output_tokens_per_s"].get<double>() >= 0.8 * rate * 128);
  CHECK(mr["at_first_failing_rate"]["falling_behind"] == true);
  // the table names that reason, not the targets the failing rate meets (its TPOT is under 200 ms)
  const Run csv = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--prompt-tokens", "1024", "--output-tokens", "128", "--requests", "1000",
                                  "--slo-tpot-ms", "200", "--find-max-rate", "--format", "csv"});
  REQUIRE(csv.exit == 0);
  const auto row = csv.out.find("\nfirst failing rate (req/s),");  // csv: the unit in the question, a plain number
  REQUIRE(row != std::string::npos);
  const std::string line = csv.out.substr(row + 1, csv.out.find('\n', row + 1) - row - 1);
  CHECK(line.size() > std::string("first failing rate (req/s),,falling_behind").size());
  CHECK(line.substr(line.size() - std::string(",falling_behind").size()) == ",falling_behind");
  CHECK(line.find("req/s,") == std::string::npos);
  CHECK(csv.out.find("\nhighest rate (req/s) meeting p99 TPOT <= 200.0 ms,") != std::string::npos);
}

TEST_CASE("find-max-rate at the search's bound says the run is a burst and asks for more requests", "[fit_slo]") {
  // 40 requests in 10 sessions of 4 turns: at any rate no more than 10 requests are in flight (a turn waits for the one
  // before it), which one H100 serves in well under 500 ms TTFT, so every rate up to 10^4 req/s passes: that is a
  // burst the deployment absorbs, not a sustained rate, and the answer says so instead of reporting 10^4 req/s bare
  const Run r = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--find-max-rate", "--slo-ttft-ms", "500", "--turns", "4",
                                "--think-s", "30", "--requests", "40", "--format", "json"});
  REQUIRE(r.exit == 0);
  const json mr = json::parse(r.out)["results"]["max_rate"];
  CHECK(mr["found"] == true);
  CHECK(mr["first_failing_rate_per_s"].is_null());
  CHECK(mr["rate_per_s"].get<double>() == 10000);
  const std::string note =
      "every rate up to the search's bound (10000 req/s) meets the targets: the run's 40 requests (10 sessions of 4 turns) arrive about "
      "at once there, a burst the deployment absorbs, not a rate it sustains; give more --requests to find the rate";
  CHECK(mr["note"] == note);
  CHECK(r.err == "kvplan: warning: --find-max-rate: " + note + "\n");
  // a search that finds a failing rate has no such note
  const Run found = kvtest::kvplan({"fit", "llama-3.1-8b", "--gpu", "h100", "--prompt-tokens", "512", "--output-tokens", "64", "--requests", "200",
                                    "--find-max-rate", "--slo-ttft-ms", "300", "--format", "json"});
  REQUIRE(found.exit == 0);
  CHECK_FALSE(json::parse(found.out)["results"]["max_rate"].contains("note"));
  CHECK(found.err.empty());
}
