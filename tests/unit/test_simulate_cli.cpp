// `kvplan simulate` front end: the trace reader (the three public layouts read with the arrivals, lengths and
// Mooncake prefix groups worked out by hand from the sample rows; 2,000,000 rows streamed in constant memory;
// every bad trace one error line naming file:line and column) and the command (JSON keys and definitions,
// byte-identical output for one seed, exit codes 1 / 2 with one stderr line and nothing on stdout, --html /
// --per-request files, the deployment front door reused). Set KVPLAN_REPORT_SAMPLE=DIR to also write
// DIR/simulate-sample.html (scripts/screenshot-report.sh).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "kvplan/core/error.hpp"
#include "kvplan/io/trace.hpp"

using kvtest::Run;
using nlohmann::json;

namespace {

const std::string kTraces = std::string(KVPLAN_TEST_DATA) + "/traces";

std::filesystem::path temp_dir() { return kvtest::temp_dir("simcli"); }
std::string write_temp(const std::string& name, const std::string& text) { return kvtest::write_temp("simcli", name, text); }

std::vector<kvplan::SimRequest> read_all(const std::string& path, kvplan::io::TraceOptions o = {}) {
  kvplan::io::TraceSource t(path, o);
  std::vector<kvplan::SimRequest> v;
  kvplan::SimRequest r;
  while (t.next(r)) v.push_back(r);
  return v;
}

std::string trace_error(const std::string& path, kvplan::io::TraceOptions o = {}) {
  try {
    read_all(path, o);
  } catch (const kvplan::InputError& e) {
    return e.what();
  }
  return "";
}

long hwm_kib() {  // peak resident memory of this process (VmHWM)
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// a small, fast deployment: Llama-3.1-8B on one H100, vLLM
std::vector<std::string> base(std::vector<std::string> extra) {
  std::vector<std::string> a = {"simulate", "llama-3.1-8b", "--gpu", "h100"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// `kvplan check` on a one-deployment file: the requirements of its JSON, after the exit code asked for
json check_requirements(const std::string& name, const std::string& text, int want_exit) {
  const Run r = kvtest::kvplan({"check", write_temp(name, text), "--format", "json"});
  INFO(r.err);
  CHECK(r.exit == want_exit);
  return json::parse(r.out)["results"]["deployments"][0]["requirements"];
}

}  // namespace

TEST_CASE("Azure LLM inference trace: TIMESTAMP datetimes relative to the first row", "[simulate_cli]") {
  kvplan::io::TraceSource t(kTraces + "/azure-llm-2023-code.csv");
  CHECK(t.format() == "csv");
  CHECK(t.layout() == "azure");
  std::vector<kvplan::SimRequest> v;
  kvplan::SimRequest r;
  while (t.next(r)) v.push_back(r);
  CHECK(t.arrival_unit() == "datetime");  // read from the first row
  REQUIRE(v.size() == 20);
  CHECK(t.rows() == 20);
  // row 1: 2023-11-16 18:15:46.6805900,1160,149 (the origin)
  CHECK(v[0].arrival_s == 0.0);
  CHECK(v[0].prompt_tokens == 1160);
  CHECK(v[0].output_tokens == 149);
  // row 2: 18:15:47.1252062 - 18:15:46.6805900 = 0.4446162 s; 2901 and 96 tokens
  CHECK(v[1].arrival_s == Approx(47.1252062 - 46.6805900).margin(1e-9));
  CHECK(v[1].prompt_tokens == 2901);
  CHECK(v[1].output_tokens == 96);
  // row 20: 18:15:58.8529732 - 18:15:46.6805900 = 12.1723832 s; 2295 and 91 tokens
  CHECK(v[19].arrival_s == Approx(58.8529732 - 46.6805900).margin(1e-9));
  CHECK(v[19].prompt_tokens == 2295);
  CHECK(v[19].output_tokens == 91);
  CHECK(v[19].prefix_group == -1);
}

TEST_CASE("BurstGPT trace: Timestamp in seconds with Request and Response tokens", "[simulate_cli]") {
  kvplan::io::TraceSource t(kTraces + "/burstgpt.csv");
  CHECK(t.layout() == "burstgpt");
  CHECK(t.prompt_column() == "Request tokens");
  CHECK(t.output_column() == "Response tokens");
  std::vector<kvplan::SimRequest> v;
  kvplan::SimRequest r;
  while (t.next(r)) v.push_back(r);
  REQUIRE(v.size() == 20);
  // rows: 5,GPT-4,377,536 / 7,GPT-4,950,269 / ... / 39 (last) ,539,436; arrivals relative to Timestamp 5
  CHECK(v[0].arrival_s == 0.0);
  CHECK(v[0].prompt_tokens == 377);
  CHECK(v[0].output_tokens == 536);
  CHECK(v[1].arrival_s == 7.0 - 5.0);
  CHECK(v[1].prompt_tokens == 950);
  CHECK(v[15].arrival_s == v[16].arrival_s);  // two rows at Timestamp 39: equal arrivals are in order
  CHECK(v[19].arrival_s == 44.0 - 5.0);
  CHECK(v[19].prompt_tokens == 539);
  CHECK(v[19].output_tokens == 436);
}

TEST_CASE(
    "Mooncake trace: timestamp in ms and hash_ids giving prefix groups "
    "and shared lengths",
    "[simulate_cli]") {
  kvplan::io::TraceSource t(kTraces + "/mooncake-conversation.jsonl");
  CHECK(t.format() == "jsonl");
  CHECK(t.layout() == "mooncake");
  CHECK(t.arrival_unit() == "ms");
  std::vector<kvplan::SimRequest> v;
  kvplan::SimRequest r;
  while (t.next(r)) v.push_back(r);
  REQUIRE(v.size() == 20);
  // row 1: ids 0..6, 3212 tokens: starts group 0, its whole prompt is the group's chain
  CHECK(v[0].prefix_group == 0);
  CHECK(v[0].prefix_tokens == 3212);
  // row 2: ids 7..14 (new first id): group 1; arrival 1000 ms
  CHECK(v[1].arrival_s == Approx(1.0));
  CHECK(v[1].prefix_group == 1);
  // row 3: ids 0..6, 15, 16 at 3624 ms: extends group 0's chain; 9 ids x 512 = 4608 > 4234 prompt tokens ->
  // 4234
  CHECK(v[2].arrival_s == Approx(3.624));
  CHECK(v[2].prompt_tokens == 4234);
  CHECK(v[2].output_tokens == 408);
  CHECK(v[2].prefix_group == 0);
  CHECK(v[2].prefix_tokens == 4234);
  // row 19: ids 0, 1, 95 at 27891 ms: branches off group 0 after 2 ids -> 2 x 512 = 1024 shared tokens
  CHECK(v[18].arrival_s == Approx(27.891));
  CHECK(v[18].prefix_group == 0);
  CHECK(v[18].prefix_tokens == 2 * 512);
  // row 20: ids 80..92, a new chain: the tenth group (0..9)
  CHECK(v[19].prefix_group == 9);
  CHECK(v[19].prompt_tokens == 6525);
}

TEST_CASE(
    "plain CSV and JSONL layouts with prefix_group and prefix_tokens and "
    "session",
    "[simulate_cli]") {
  const auto csv = write_temp("plain.csv",
                              "arrival_s,prompt_tokens,output_tokens,prefix_"
                              "group,prefix_tokens,session\n"
                              "0.5,100,10,3,40,\n1.25,200,20,,,7\n");
  const auto v = read_all(csv);
  REQUIRE(v.size() == 2);
  CHECK(v[0].arrival_s == 0.0);  // relative to the first row
  CHECK(v[1].arrival_s == 0.75);
  CHECK(v[0].prefix_group == 3);
  CHECK(v[0].prefix_tokens == 40);
  CHECK(v[0].session == -1);
  CHECK(v[1].prefix_group == -1);
  CHECK(v[1].session == 7);
  const auto jl = write_temp("plain.jsonl",
                             "{\"arrival_s\": 2, \"prompt_tokens\": 50, \"output_tokens\": 5}\n\n"
                             "{\"arrival_s\": 2.5, \"prompt_tokens\": 60, \"output_tokens\": 6}\n");
  const auto w = read_all(jl);
  REQUIRE(w.size() == 2);
  CHECK(w[1].arrival_s == 0.5);
  CHECK(w[1].prompt_tokens == 60);
  // max_rows stops early
  kvplan::io::TraceOptions o;
  o.max_rows = 1;
  CHECK(read_all(jl, o).size() == 1);
}

TEST_CASE("bad traces: one error naming the file and line and column and the fix", "[simulate_cli]") {
  const auto missing = write_temp("missing.csv", "arrival_s,prompt_tokens\n0,5\n");
  CHECK(trace_error(missing) == missing +
                                    ":1: no output-token column (one of output_tokens, "
                                    "GeneratedTokens (Azure), Response tokens "
                                    "(BurstGPT), output_length (Mooncake)); name the columns as "
                                    "docs/simulation.md lists (a header "
                                    "row comes first)");
  const auto negative = write_temp("negative.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,3\n1,-4,2\n");
  CHECK(trace_error(negative) == negative +
                                     ":3: prompt_tokens: negative: '-4' (expected >= 1); give a "
                                     "whole number of tokens from 1 to "
                                     "10000000, or drop the row");
  const auto fraction = write_temp("fraction.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,2.5\n");
  CHECK(trace_error(fraction).find(fraction + ":2: output_tokens: expected a whole number, got '2.5'") == 0);
  const auto unsorted = write_temp("unsorted.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,3\n2,4,2\n1,4,2\n");
  CHECK(trace_error(unsorted).find(unsorted + ":4: arrival_s: arrivals are not in order") == 0);
  kvplan::io::TraceOptions closed;
  closed.require_sorted = false;  // a closed loop replays lengths only: order does not matter
  CHECK(trace_error(unsorted, closed).empty());
  // a row before the first one (a negative time from the first arrival) replays closed-loop too: the loop issues
  // requests as slots free, whatever their times
  const auto earlier = write_temp("earlier.csv", "arrival_s,prompt_tokens,output_tokens\n1.0,100,10\n0.5,200,20\n2,50,5\n");
  const kvtest::Run replay = kvtest::kvplan({"simulate", "llama-3.1-8b", "--trace", earlier, "--concurrency", "2"});
  CHECK(replay.exit == 0);
  CHECK(replay.err.find("arrival_s must be") == std::string::npos);
  // think_s beyond the clock's 10^9 s is a bad row, not a request that never comes back
  const auto think = write_temp("think.csv", "arrival_s,prompt_tokens,output_tokens,think_s\n0,100,10,1e308\n");
  CHECK(trace_error(think).find(think + ":2: think_s: expected seconds in 0..10^9, got '1e308'") == 0);
  const auto empty = write_temp("empty.csv", "");
  CHECK(trace_error(empty).find(empty + ": the trace is empty;") == 0);
  const auto blank = write_temp("blank.csv", "\n  \n\n");
  CHECK(trace_error(blank).find(blank + ": the trace is empty;") == 0);
  std::string junk = "PK";
  for (int i = 0; i < 4000; ++i) junk += static_cast<char>((i * 37) % 256);
  const auto bin = write_temp("junk.csv", junk);
  CHECK(trace_error(bin).find(bin + ":1: binary data") == 0);
  const auto zeros = write_temp("zeros.csv", "");
  std::filesystem::resize_file(zeros,
                               100u << 20);  // 100 MB of NUL bytes (sparse): refused at the first 4 MiB
  CHECK(trace_error(zeros).find(zeros + ":1: line longer than 4 MiB") == 0);
  std::filesystem::remove(zeros);
  const auto huge = write_temp("huge.csv", "arrival_s,prompt_tokens,output_tokens\n0,20000000,3\n");
  CHECK(trace_error(huge).find(huge + ":2: prompt_tokens: '20000000' exceeds the limit of 10000000") == 0);
  const auto jmiss = write_temp("miss.jsonl",
                                "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": "
                                "2}\n{\"timestamp\": 5, \"input_length\": 10}\n");
  CHECK(trace_error(jmiss) == jmiss + ":2: output_length: missing; give every row the first row's keys");
  const auto jneg = write_temp("neg.jsonl", "{\"timestamp\": 0, \"input_length\": -10, \"output_length\": 2}\n");
  CHECK(trace_error(jneg).find(jneg + ":1: input_length: negative: '-10'") == 0);
  const auto cols = write_temp("cols.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,3,9\n");
  CHECK(trace_error(cols).find(cols + ":2: expected 3 columns as in the header, found 4") == 0);
  const auto group = write_temp("group.csv", "arrival_s,prompt_tokens,output_tokens,prefix_group\n0,5,3,1\n");
  CHECK(trace_error(group).find(group + ":1: prefix_group: a prefix group needs its shared length") == 0);
  CHECK(trace_error(temp_dir().string()).find("is a folder") != std::string::npos);
}

TEST_CASE("a 2000000-row trace streams in constant memory", "[simulate_cli]") {
  const auto path = (temp_dir() / "big.csv").string();
  {
    std::ofstream out(path);
    out << "arrival_s,prompt_tokens,output_tokens\n";
    for (int i = 0; i < 2000000; ++i)
      out << i / 1000 << "." << (i % 1000) / 100 << (i % 100) / 10 << i % 10 << "," << 100 + i % 50 << "," << 1 + i % 7
          << "\n";
  }
  const auto bytes = std::filesystem::file_size(path);
  REQUIRE(bytes > 20u << 20);                     // about 29 MB
  std::ofstream("/proc/self/clear_refs") << "5";  // reset VmHWM to the current RSS (Linux >= 4.0)
  const long before = hwm_kib();
  kvplan::io::TraceSource t(path);
  kvplan::SimRequest r;
  long long rows = 0, prompt = 0;
  double last = -1;
  bool sorted = true;
  while (t.next(r)) {
    ++rows;
    prompt += r.prompt_tokens;
    sorted = sorted && r.arrival_s >= last;
    last = r.arrival_s;
  }
  const long after = hwm_kib();
  CHECK(rows == 2000000);
  CHECK(prompt == 2000000LL / 50 * (100 + 149) * 50 / 2);  // 40,000 cycles of 100..149
  CHECK(sorted);
  CHECK(last == Approx(1999.999));
  if (before > 0 && after > 0) CHECK(after - before < 8 * 1024);  // far below the file's 29 MB
  // the command streams it too: it starts simulating without reading the whole file first
  const Run run = kvtest::kvplan(base({"--trace", path, "--requests", "2000", "--format", "json"}));
  REQUIRE(run.exit == 0);
  const json j = json::parse(run.out);
  CHECK(j["inputs"]["workload"]["trace"]["rows"] == 2000);
  CHECK(j["results"]["requests"] == 2000);
  std::filesystem::remove(path);
}

TEST_CASE(
    "simulate JSON: envelope and inputs and the vllm bench serve metrics "
    "and pool and timeline and definitions",
    "[simulate_cli]") {
  const Run r =
      kvtest::kvplan(base({"--rate", "20", "--requests", "200", "--prompt-tokens", "512", "--output-tokens", "64",
                           "--slo-ttft-ms", "500", "--slo-tpot-ms", "50", "--seed", "3", "--format", "json"}));
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out);
  CHECK(j["schema"]["name"] == "kvplan.simulate");
  CHECK(j["inputs"]["engine"] == "vllm");
  CHECK(j["inputs"]["workload"]["mode"] == "open_loop");
  CHECK(j["inputs"]["workload"]["rate_per_s"] == 20.0);
  CHECK(j["inputs"]["workload"]["prompt"]["mean_tokens"] == 512.0);
  CHECK(j["inputs"]["workload"]["slo"]["ttft_ms"] == 500.0);
  const json& res = j["results"];
  CHECK(res["starts"] == true);
  for (const char* k : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"})
    for (const char* s : {"mean", "p50", "p90", "p99"}) {
      INFO(k << "." << s);
      CHECK(res[k][s].is_number());
    }
  CHECK(res["ttft_ms"]["p50"].get<double>() <= res["ttft_ms"]["p99"].get<double>());
  CHECK(res["ttft_ms"]["p50"].get<double>() > 0);
  for (const char* k :
       {"output_tokens_per_s", "total_tokens_per_s", "request_throughput_per_s", "goodput_per_s", "prefix_hit_rate"})
    CHECK(res[k].is_number());
  CHECK(res["requests"] == 200);
  CHECK(res["completed"].get<long>() + res["failed"].get<long>() == 200);
  CHECK(res["truncated"].is_number_integer());
  CHECK(res["preemptions"].is_number_integer());
  for (const char* k : {"blocks", "block_tokens", "scheduler", "max_num_seqs", "max_num_batched_tokens"})
    CHECK(res["pool"].contains(k));
  CHECK(res["pool"]["scheduler"] == "vllm-v1");
  CHECK(res["pool"]["block_tokens"] == 16);
  REQUIRE(res["timeline"].is_array());
  REQUIRE_FALSE(res["timeline"].empty());
  for (const char* k : {"t_s", "kv_used_fraction", "running", "waiting", "preemptions", "prefix_hit_rate"})
    CHECK(res["timeline"][0].contains(k));
  CHECK(res["metric_definitions"]["source"] == "vllm bench serve");
  CHECK(res["metric_definitions"]["tpot"].get<std::string>().find("excluding the first token") != std::string::npos);
  CHECK(res["metric_definitions"]["itl"].get<std::string>().find("pooled") != std::string::npos);
  // output tokens/s = completed x 64 / duration (every request asks for 64 tokens, none truncated)
  CHECK(res["output_tokens_per_s"].get<double>() ==
        Approx(res["completed"].get<double>() * 64 / res["duration_s"].get<double>()).epsilon(1e-9));
  // without an SLO there is no goodput
  const Run n = kvtest::kvplan(base({"--requests", "20", "--format", "json"}));
  REQUIRE(n.exit == 0);
  CHECK_FALSE(json::parse(n.out)["results"].contains("goodput_per_s"));
  CHECK(json::parse(n.out)["inputs"]["workload"]["arrival"] == "all_at_once");
}

TEST_CASE("simulate is deterministic for a seed", "[simulate_cli]") {
  const auto args =
      base({"--rate",          "8",  "--arrival",     "gamma",   "--burstiness",    "0.5", "--prompt-dist", "lognormal",
            "--prompt-spread", "30", "--output-dist", "uniform", "--output-spread", "50",  "--requests",    "150",
            "--seed",          "42", "--format",      "json"});
  const Run a = kvtest::kvplan(args), b = kvtest::kvplan(args);
  REQUIRE(a.exit == 0);
  CHECK(a.out == b.out);
  auto other = args;
  other[other.size() - 3] = "43";  // --seed 43
  const Run c = kvtest::kvplan(other);
  REQUIRE(c.exit == 0);
  CHECK(json::parse(c.out)["results"]["e2e_ms"] != json::parse(a.out)["results"]["e2e_ms"]);
}

TEST_CASE("simulate closed loop with shared prefixes and turns", "[simulate_cli]") {
  const Run r = kvtest::kvplan(base({"--concurrency", "8", "--requests", "64", "--shared-prefix-tokens", "256",
                                     "--prefix-groups", "2", "--turns", "2", "--format", "json"}));
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out);
  CHECK(j["inputs"]["workload"]["mode"] == "closed_loop");
  CHECK(j["inputs"]["workload"]["concurrency"] == 8);
  CHECK(j["inputs"]["workload"]["shared_prefix_tokens"] == 256);
  CHECK(j["results"]["prefix_hit_rate"].get<double>() > 0);
  for (const auto& t : j["results"]["timeline"]) CHECK(t["running"].get<long>() <= 8);
}

TEST_CASE("simulate replays each public trace layout", "[simulate_cli]") {
  for (const char* f : {"azure-llm-2023-code.csv", "burstgpt.csv", "mooncake-conversation.jsonl"}) {
    INFO(f);
    const Run r = kvtest::kvplan(base({"--trace", kTraces + "/" + f, "--format", "json"}));
    INFO(r.err);
    REQUIRE(r.exit == 0);
    const json j = json::parse(r.out);
    CHECK(j["inputs"]["workload"]["source"] == "trace");
    CHECK(j["inputs"]["workload"]["trace"]["rows"] == 20);
    CHECK(j["results"]["requests"] == 20);
  }
  const Run m = kvtest::kvplan(base({"--trace", kTraces + "/mooncake-conversation.jsonl", "--format", "json"}));
  REQUIRE(m.exit == 0);
  CHECK(json::parse(m.out)["results"]["prefix_hit_rate"].get<double>() > 0);  // later turns find earlier turns cached
}

TEST_CASE("bad traces and options exit 2 with one stderr line and nothing on stdout", "[simulate_cli]") {
  struct Bad {
    std::string name, text, expect;
  };
  const std::vector<Bad> bad = {
      {"b-missing.csv", "arrival_s,prompt_tokens\n0,5\n", ":1: no output-token column"},
      {"b-negative.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,3\n1,-4,2\n", ":3: prompt_tokens: negative: '-4'"},
      {"b-unsorted.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,3\n2,4,2\n1,4,2\n",
       ":4: arrival_s: arrivals are not in order"},
      {"b-empty.csv", "", ": the trace is empty"},
      // a number beyond a double: one line naming the row, not the JSON library's exception
      {"b-e400.jsonl", "{\"timestamp\":0,\"input_length\":1e400,\"output_length\":10}\n",
       ":1: not a JSON object: invalid JSON (number overflow parsing '1e400')"},
      // past 10^9 s the clock's milliseconds are gone
      {"b-far.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,3\n1e300,4,2\n", ":3: arrival_s: more than 10^9 s"},
      // two columns for one length: which one is read would be the alias order's choice
      {"b-twice.csv", "arrival_s,prompt_tokens,output_tokens,prompt_tokens\n0,100,10,200\n",
       ":1: prompt_tokens: the header has 2 columns for the prompt length ('prompt_tokens' and 'prompt_tokens')"},
      {"b-alias.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,input_tokens\n0,100,10,200\n",
       ":1: input_tokens: the header has 2 columns for the prompt length ('ContextTokens' and 'input_tokens')"},
  };
  const std::string per = (temp_dir() / "per.csv").string();
  for (const auto& b : bad) {
    INFO(b.name);
    const auto path = write_temp(b.name, b.text);
    const Run r = kvtest::kvplan(base({"--trace", path, "--format", "json", "--per-request", per}));
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("kvplan: error: " + path + b.expect) == 0);
    CHECK_FALSE(std::filesystem::exists(per));  // no partial output file
  }
  {  // a header and no rows: nothing to simulate is bad input, not a run of n/a figures
    const auto path = write_temp("b-header.csv", "arrival_s,prompt_tokens,output_tokens\n");
    const Run r = kvtest::kvplan(base({"--trace", path, "--format", "json", "--per-request", per}));
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "kvplan: error: --trace " + path + ": no request to simulate: the trace has no rows; give it at least one row after its header\n");
    CHECK_FALSE(std::filesystem::exists(per));
  }
  for (const auto& e : std::filesystem::directory_iterator(temp_dir()))
    CHECK(e.path().string().find(".tmp-") == std::string::npos);
  const std::vector<std::pair<std::vector<std::string>, std::string>> opts = {
      {{"--rate", "5", "--concurrency", "4"}, "kvplan: error: --rate: a rate and --concurrency together"},
      {{"--rate", "0"}, "kvplan: error: --rate: must be > 0"},
      {{"--arrival", "gamma"}, "kvplan: error: --arrival: an arrival process needs a rate"},
      {{"--rate", "5", "--arrival", "weibull"}, "kvplan: error: --arrival: unknown arrival process 'weibull'"},
      {{"--prompt-dist", "normal"}, "kvplan: error: --prompt-dist: normal needs a spread"},
      {{"--prompt-spread", "20"}, "kvplan: error: --prompt-spread: a fixed length has no spread"},
      {{"--seed", "-1"}, "kvplan: error: --seed: must be >= 0 (got -1)"},  // it wrapped to 2^64 - 1
      // a bare 0.3 could mean +-30% or +-0.3%: it must say which
      {{"--prompt-dist", "uniform", "--prompt-spread", "0.3"},
       "kvplan: error: --prompt-spread: '0.3' is a percentage, +-0.3% of the mean; write 0.3% if that is meant, "
       "or 30 for +-30%"},
      {{"--trace", kTraces + "/burstgpt.csv", "--rate", "3"},
       "kvplan: error: --rate: the trace gives arrivals and lengths"},
      {{"--scheduling-policy", "lpm"}, "kvplan: error: --scheduling-policy: 'lpm' is not a vLLM scheduling policy; use fcfs or priority"},
      {{"--enable-prefix-caching=maybe"}, "kvplan: error: --enable-prefix-caching: 'maybe' is not true or false"},
      {{"--set", "no-enable-prefix-caching=true"},
       "kvplan: error: --set no-enable-prefix-caching: 'no-enable-prefix-caching' is a flag's spelling, not a setting key; "
       "write --set enable_prefix_caching=false, or the flag itself"},
      {{"--trace", "/nonexistent/trace.csv"}, "kvplan: error: /nonexistent/trace.csv: cannot open the trace file"},
      {{"--html", "/nonexistent/dir/r.html"}, "kvplan: error: --html"},
      // every request at t = 0 waits in memory; a rate that spreads them past 10^9 s loses the clock's milliseconds
      {{"--requests", "20000000"}, "kvplan: error: --requests: at most 10000000 sent all at once"},
      {{"--requests", "200000000", "--rate", "1000"}, "kvplan: error: --requests: at most 100000000 in one run"},
      {{"--rate", "1e-12", "--requests", "5"}, "kvplan: error: --rate: the requests at this rate span more than 10^9 s"},
      {{"--think-s", "1e300", "--turns", "2"}, "kvplan: error: --think-s: must be from 0 to 10^9 seconds"},
      // V0 keeps chunked prefill off by default: the fix turns it on (dropping a flag would not)
      {{"--engine", "vllm@0.7.3", "--max-model-len", "4096", "--max-num-batched-tokens", "2048"},
       "kvplan: error: --max-num-batched-tokens: 2048 is smaller than max_model_len 4096 with chunked prefill off: vLLM "
       "refuses to start (SchedulerConfig: a whole prompt must fit one step); raise --max-num-batched-tokens to at least "
       "4096, lower --max-model-len, or give --enable-chunked-prefill (V0 leaves it off up to a 32K context)"},
      // 12 blocks of 16, one of them vLLM V1's null block: a 192-token request (191 computed: 12 blocks) never fits the 11
      {{"--num-gpu-blocks-override", "12", "--max-model-len", "192", "--requests", "1", "--prompt-tokens", "100", "--output-tokens", "92"},
       "kvplan: error: --prompt-tokens / --output-tokens: no request completed: 1 over_pool (longer than a replica's whole "
       "KV pool (176 tokens, its 12 blocks less vLLM's null block))"},
      // options that only shape another one are refused alone rather than ignored
      {{"--burstiness", "0.5"}, "kvplan: error: --burstiness: shapes the gaps between arrivals at a rate"},
      {{"--think-s", "5"}, "kvplan: error: --think-s: is the pause between the turns of a session"},
      {{"--trace", kTraces + "/burstgpt.csv", "--think-s", "5"}, "kvplan: error: --think-s: the trace gives arrivals and lengths"},
      {{"--prefix-groups", "3"}, "kvplan: error: --prefix-groups: splits the shared system prompt into groups"},
      {{"--prompt-tokens", "500", "--prompt-dist", "histogram", "--prompt-histogram", std::string(KVPLAN_TEST_DATA) + "/sim/histograms/accelmark-sharegpt-standard-v1-300.csv"},
       "kvplan: error: --prompt-histogram: draws the prompt lengths that --prompt-tokens / --context also give"},
      {{"--trace", ""}, "kvplan: error: --trace: empty value; give a value, or leave --trace out"},
      {{"--html", ""}, "kvplan: error: --html: empty value"},
  };
  for (const auto& [extra, expect] : opts) {
    const Run r = kvtest::kvplan(base(extra));
    INFO(extra.front() << ": " << r.err);
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(expect) == 0);
  }
}

TEST_CASE("a deployment that does not start exits 1 with the reason", "[simulate_cli]") {
  const Run r = kvtest::kvplan({"simulate", "llama-3.1-70b", "--gpu", "l4", "--requests", "10", "--format", "json"});
  CHECK(r.exit == 1);
  CHECK(r.err.find("does not start") != std::string::npos);
  const json j = json::parse(r.out);
  CHECK(j["results"]["starts"] == false);
  CHECK_FALSE(j["results"]["limiting_factor"].get<std::string>().empty());
}

TEST_CASE(
    "simulate reads the deployment front door: a pasted engine command "
    "and --set",
    "[simulate_cli]") {
  const Run r = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "40", "--format", "json", "--", "vllm",
                                "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs", "8",
                                "--max-num-batched-tokens", "4096", "--block-size", "32"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out);
  CHECK(j["results"]["pool"]["max_num_seqs"] == 8);
  CHECK(j["results"]["pool"]["max_num_batched_tokens"] == 4096);
  CHECK(j["results"]["pool"]["block_tokens"] == 32);
  for (const auto& t : j["results"]["timeline"]) CHECK(t["running"].get<long>() <= 8);
  const Run s = kvtest::kvplan(base({"--set", "max-num-seqs=4", "--requests", "20", "--format", "json"}));
  REQUIRE(s.exit == 0);
  CHECK(json::parse(s.out)["results"]["pool"]["max_num_seqs"] == 4);
}

TEST_CASE("simulate table and csv output with the HTML report and per-request rows", "[simulate_cli]") {
  const auto html = (temp_dir() / "sim.html").string(), md = (temp_dir() / "sim.md").string(),
             per = (temp_dir() / "per.csv").string();
  const Run r = kvtest::kvplan(
      base({"--rate", "10", "--requests", "100", "--html", html, "--markdown", md, "--per-request", per}));
  INFO(r.err);
  REQUIRE(r.exit == 0);
  CHECK(r.out.find("TTFT") != std::string::npos);
  CHECK(r.out.find("vllm bench serve definitions") != std::string::npos);
  const std::string h = kvtest::slurp(html);
  CHECK(h.find("<svg") != std::string::npos);
  CHECK(h.find("KV-pool use") != std::string::npos);
  CHECK(h.find("Running and waiting requests") != std::string::npos);
  CHECK(h.find("Preemptions") != std::string::npos);
  CHECK(h.find("<polyline") != std::string::npos);
  CHECK(h.find("<script") == std::string::npos);
  CHECK(h.find("http://") == std::string::npos);
  CHECK(kvtest::slurp(md).find("### KV-pool use") != std::string::npos);
  const std::string p = kvtest::slurp(per);
  CHECK(lines(p) == 101);  // header + one row per request
  CHECK(p.rfind("id,arrival_s,first_token_s,finish_s,ttft_s,e2e_s,", 0) == 0);
  if (const char* dir = std::getenv("KVPLAN_REPORT_SAMPLE"))
    std::filesystem::copy_file(html, std::string(dir) + "/simulate-sample.html",
                               std::filesystem::copy_options::overwrite_existing);
  // one output token each: no TPOT to report (n/a in the report's summary as in its table, null in JSON)
  const Run one = kvtest::kvplan(base({"--requests", "5", "--prompt-tokens", "100", "--output-tokens", "1", "--markdown", md}));
  REQUIRE(one.exit == 0);
  CHECK(kvtest::slurp(md).find("| TPOT p50 / p99 | n/a (no request produced two tokens) |") != std::string::npos);
  const Run c = kvtest::kvplan(base({"--requests", "10", "--format", "csv"}));
  REQUIRE(c.exit == 0);
  CHECK(c.out.rfind("key,value\n", 0) == 0);
  CHECK(c.out.find("ttft_ms.p99,") != std::string::npos);
  std::filesystem::remove_all(temp_dir());
}

TEST_CASE("check runs the simulation requirements on the file's traffic", "[simulate_cli]") {
  const auto dir = temp_dir();
  std::filesystem::copy_file(kTraces + "/burstgpt.csv", dir / "burstgpt.csv",
                             std::filesystem::copy_options::overwrite_existing);
  const auto yaml = write_temp(
      "sim-check.yaml",
      "deployments:\n"
      "  - name: chat\n"
      "    model: llama-3.1-8b\n"
      "    gpu: h100\n"
      "    traffic: {prompt_tokens: 1024, output_tokens: 128, rate: 10, requests: 200, seed: 1}\n"
      "    requirements: {max_p99_ttft_ms: 5000, max_p99_tpot_ms: 200, min_goodput: 1, max_preemption_rate: 0.5}\n"
      "  - name: replay\n"
      "    model: llama-3.1-8b\n"
      "    gpu: h100\n"
      "    traffic: {trace: burstgpt.csv}\n"
      "    requirements: {max_p99_ttft_ms: 0.001}\n");
  const Run r = kvtest::kvplan({"check", yaml, "--format", "json"});
  INFO(r.err);
  CHECK(r.exit == 1);  // replay's 1 us p99 TTFT cannot pass
  const json j = json::parse(r.out);
  std::map<std::string, bool> pass;
  for (const auto& d : j["results"]["deployments"])
    for (const auto& q : d["requirements"])
      pass[d["name"].get<std::string>() + ": " + q["requirement"].get<std::string>()] = q["pass"];
  CHECK(pass.at("chat: max p99 TTFT (simulated)"));
  CHECK(pass.at("chat: max p99 TPOT (simulated)"));
  CHECK(pass.at("chat: min goodput (simulated)"));
  CHECK(pass.at("chat: max preemption rate (simulated)"));
  CHECK_FALSE(pass.at("replay: max p99 TTFT (simulated)"));
  // a rate without a concurrency: the static memory check is one request, and its label says so
  CHECK(pass.count("chat: one request fits (1152 tokens; the traffic's load is simulated)") == 1);
  // a bad requirement value is a file error (exit 2)
  const auto bad = write_temp("sim-bad.yaml", "model: llama-3.1-8b\ngpu: h100\nrequirements: {min_goodput: -1}\n");
  const Run b = kvtest::kvplan({"check", bad});
  CHECK(b.exit == 2);
  CHECK(b.out.empty());
  CHECK(b.err.find("min_goodput") != std::string::npos);
  // a rate beside a trace would be ignored: a file error naming it
  const auto both = write_temp("sim-both.yaml", "model: llama-3.1-8b\ngpu: h100\ntraffic: {rate: 10, trace: burstgpt.csv}\n"
                                                "requirements: {max_p99_ttft_ms: 100}\n");
  const Run bt = kvtest::kvplan({"check", both});
  CHECK(bt.exit == 2);
  CHECK(bt.err.find("rate given with trace; the trace gives arrivals and lengths: drop rate or the trace") != std::string::npos);
  // no rate and no trace: a closed loop of `concurrency` clients (deployment-files.md), checked in memory at the lengths
  // it simulates (1,024 + 128), not at max_model_len
  const auto loop = write_temp("sim-loop.yaml", "model: llama-3.1-8b\ngpu: h100\ntraffic: {concurrency: 4, requests: 40}\n"
                                                "requirements: {max_p99_ttft_ms: 100000}\n");
  const Run l = kvtest::kvplan({"check", loop, "--format", "json"});
  INFO(l.err);
  REQUIRE(l.exit == 0);
  const json lj = json::parse(l.out)["results"]["deployments"][0]["requirements"];
  bool fits_row = false, closed = false;
  for (const auto& q : lj) {
    fits_row = fits_row || q["requirement"] == "traffic fits (4 x 1152 tokens)";
    closed = closed || q["detail"].get<std::string>().find("40 req of 1024+128 tok, 4 clients") != std::string::npos;
  }
  CHECK(fits_row);
  CHECK(closed);
  std::filesystem::remove_all(temp_dir());
}

TEST_CASE("simulate counts the engine's front end in TTFT and E2E only", "[simulate][cli]") {
  // an open loop at 4 req/s: raising frontend_s from 0 to 50 ms moves every TTFT and E2E statistic by
  // 50 ms and leaves TPOT and ITL alone; llama-server has its own coefficient (0 unless given)
  auto sim = [](const std::vector<std::string>& extra) {
    std::vector<std::string> a = {"simulate", "llama-3.1-8b", "--gpu", "h100-sxm", "--rate", "4", "--requests",
                                  "100", "--seed", "3", "--format", "json"};
    a.insert(a.end(), extra.begin(), extra.end());
    const Run r = kvtest::kvplan(a);
    REQUIRE(r.exit == 0);
    return json::parse(r.out)["results"];
  };
  const json zero = sim({"--perf-coefficients", R"({"frontend_s": 0})"});
  const json fifty = sim({"--perf-coefficients", R"({"frontend_s": 0.05})"});
  CHECK(zero["pool"]["frontend_s"].get<double>() == 0);
  CHECK(fifty["pool"]["frontend_s"].get<double>() == 0.05);
  for (const char* stat : {"mean", "p50", "p99"}) {
    CHECK(fifty["ttft_ms"][stat].get<double>() == Approx(zero["ttft_ms"][stat].get<double>() + 50));
    CHECK(fifty["e2e_ms"][stat].get<double>() == Approx(zero["e2e_ms"][stat].get<double>() + 50));
    CHECK(fifty["tpot_ms"][stat].get<double>() == Approx(zero["tpot_ms"][stat].get<double>()));
    CHECK(fifty["itl_ms"][stat].get<double>() == Approx(zero["itl_ms"][stat].get<double>()));
  }
  const json llama = sim({"--engine", "llama.cpp", "--perf-coefficients", R"({"frontend_s": 0.05})"});
  CHECK(llama["pool"]["frontend_s"].get<double>() == 0);
  const json llama_set = sim({"--engine", "llama.cpp", "--perf-coefficients", R"({"frontend_llamacpp_s": 0.004})"});
  CHECK(llama_set["pool"]["frontend_s"].get<double>() == 0.004);
  // vLLM in-process (an offline LLM(...) or an AsyncLLMEngine) has no API server: no front end, whatever frontend_s says
  for (const char* ctx : {"llm", "engine"}) {
    const json in_process = sim({"--usage-context", ctx, "--perf-coefficients", R"({"frontend_s": 0.05})"});
    CHECK(in_process["pool"]["frontend_s"].get<double>() == 0);
  }
  const double served = sim({"--usage-context", "serve"})["pool"]["frontend_s"].get<double>();
  CHECK(served > 0);  // vllm serve keeps the fitted frontend_s, as with no --usage-context
  CHECK(served == sim({})["pool"]["frontend_s"].get<double>());
}

TEST_CASE("simulate counts failed requests by kind, and a run where none completes is bad input", "[simulate_cli]") {
  const std::string per = (temp_dir() / "fail-per.csv").string();
  // max-model-len 4096: 4000 + 128 = 4128 tokens, over it on every request: vLLM answers HTTP 400, nothing
  // to measure; one line naming the lengths and the fix, exit 2, no per-request file
  const Run none = kvtest::kvplan(base({"--max-model-len", "4096", "--prompt-tokens", "4000", "--output-tokens", "128",
                                        "--rate", "5", "--requests", "10", "--per-request", per}));
  CHECK(none.exit == 2);
  CHECK(none.out.empty());
  CHECK(lines(none.err) == 1);
  CHECK(none.err.rfind("kvplan: error: --prompt-tokens / --output-tokens: no request completed: 10 over_context "
                       "(prompt + output tokens over max_model_len 4,096",
                       0) == 0);
  CHECK(none.err.find("a larger max-model-len") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(per));
  // a trace with one request of 4,100 + 10 tokens among three: that one fails (over_context), the two others
  // run; a warning says so and the per-request row names the kind
  const auto trace = write_temp("fail-trace.csv",
                                "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,4100,10\n1,200,10\n");
  const Run some = kvtest::kvplan(
      base({"--max-model-len", "4096", "--trace", trace, "--format", "json", "--per-request", per}));
  INFO(some.err);
  REQUIRE(some.exit == 0);
  const json res = json::parse(some.out)["results"];
  CHECK(res["completed"] == 2);
  CHECK(res["failed"] == 1);
  CHECK(res["failures"]["over_context"] == 1);
  CHECK(res["failures"]["over_pool"] == 0);
  CHECK(res["failures"]["terminated"] == 0);
  CHECK(res["ttft_ms"]["count"] == 2);
  REQUIRE(res["warnings"].size() == 1);
  CHECK(res["warnings"][0].get<std::string>().rfind("1 of 3 requests failed: 1 over_context", 0) == 0);
  CHECK(some.err.find("kvplan: warning: 1 of 3 requests failed") != std::string::npos);
  const std::string p = kvtest::slurp(per);
  CHECK(p.find(",failed,truncated,failure\n") != std::string::npos);
  CHECK(p.find(",4100,0,0,0,1,0,over_context\n") != std::string::npos);  // id 1: 4100 prompt, nothing produced
  // the table shows the kind; a metric no request gave reads n/a (one output token each: no TPOT)
  const Run t = kvtest::kvplan(base({"--max-model-len", "4096", "--trace", trace}));
  REQUIRE(t.exit == 0);
  CHECK(t.out.find("failed: over_context") != std::string::npos);
  const auto one = write_temp("one-token.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,1\n1,100,1\n");
  const Run o = kvtest::kvplan(base({"--trace", one}));
  REQUIRE(o.exit == 0);
  CHECK(o.out.find("\nTPOT           n/a    n/a    n/a    n/a\n") != std::string::npos);
  CHECK(o.out.find("\nITL            n/a    n/a    n/a    n/a\n") != std::string::npos);
  std::filesystem::remove_all(temp_dir());
}

TEST_CASE("check fails a simulated requirement when no request completes, and says why", "[simulate_cli]") {
  // every 4,000 + 128-token request is over max_model_len 4096: nothing to measure, so no requirement passes
  // (a p99 TPOT over no requests used to read 0 ms and pass)
  const json reqs = check_requirements("sim-none.yaml",
                                       "model: llama-3.1-8b\n"
                                       "gpu: h100\n"
                                       "settings: {max_model_len: 4096}\n"
                                       "traffic: {prompt_tokens: 4000, output_tokens: 128, rate: 5, requests: 20}\n"
                                       "requirements: {max_p99_ttft_ms: 5000, max_p99_tpot_ms: 200}\n",
                                       1);
  int sim = 0;
  for (const auto& q : reqs) {
    if (q["requirement"].get<std::string>().find("(simulated)") == std::string::npos) continue;
    ++sim;
    CHECK_FALSE(q["pass"].get<bool>());
    CHECK(q["actual"] == "no request completed");
    CHECK(q["detail"].get<std::string>().find("failed: 20 over_context") != std::string::npos);
    CHECK(q["suggestion"].get<std::string>().find("max-model-len") != std::string::npos);
  }
  CHECK(sim == 2);
  std::filesystem::remove_all(temp_dir());
}

TEST_CASE("simulate keeps a tiny --timeline-interval-s to 100,000 samples and says so", "[simulate_cli]") {
  // 1 ns over a run of seconds would be billions of samples (it used to run without end)
  const Run r = kvtest::kvplan(base({"--timeline-interval-s", "1e-9", "--requests", "5", "--format", "json"}));
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json res = json::parse(r.out)["results"];
  CHECK(res["timeline"].size() <= 100000);
  CHECK(res["timeline_interval_s"].get<double>() > 1e-9);
  REQUIRE(res["warnings"].size() == 1);
  CHECK(res["warnings"][0].get<std::string>().rfind("--timeline-interval-s 1e-09 s would keep more than 100,000 samples", 0) == 0);
  const Run d = kvtest::kvplan(base({"--timeline-interval-s", "0.5", "--requests", "5", "--format", "json"}));
  REQUIRE(d.exit == 0);
  CHECK(json::parse(d.out)["results"]["timeline_interval_s"].get<double>() == 0.5);
}

TEST_CASE("SGLang --max-prefill-tokens reaches the simulated scheduler from the flag and a pasted command", "[simulate_cli]") {
  const Run f = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--max-prefill-tokens",
                                "4096", "--requests", "5", "--format", "json"});
  INFO(f.err);
  REQUIRE(f.exit == 0);
  CHECK(json::parse(f.out)["results"]["pool"]["max_prefill_tokens"] == 4096);
  const Run p = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "5", "--format", "json", "--", "python", "-m",
                                "sglang.launch_server", "--model-path", "llama-3.1-8b", "--max-prefill-tokens", "2048"});
  INFO(p.err);
  REQUIRE(p.exit == 0);
  CHECK(json::parse(p.out)["results"]["pool"]["max_prefill_tokens"] == 2048);
  CHECK(p.err.find("--max-prefill-tokens") == std::string::npos);  // modelled now: no "does not model" warning
  // the default, as SGLang's ServerArgs
  const Run d = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--requests", "5",
                                "--format", "json"});
  REQUIRE(d.exit == 0);
  CHECK(json::parse(d.out)["results"]["pool"]["max_prefill_tokens"] == 16384);
  // 0 admits no prompt: one line naming the flag as written, exit 2
  const Run z = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--max-prefill-tokens",
                                "0", "--requests", "5"});
  CHECK(z.exit == 2);
  CHECK(z.out.empty());
  CHECK(z.err == "kvplan: error: --max-prefill-tokens: must be >= 1\n");
}

TEST_CASE("SGLang --enable-mixed-chunk reaches the simulated scheduler, only with chunked prefill", "[simulate_cli]") {
  const auto mixed = [](const Run& r) { return json::parse(r.out)["results"]["pool"]["mixed_chunk"].get<bool>(); };
  const Run f = kvtest::kvplan(base({"--engine", "sglang", "--enable-mixed-chunk", "--requests", "5", "--format", "json"}));
  INFO(f.err);
  REQUIRE(f.exit == 0);
  CHECK(mixed(f));
  const Run p = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "5", "--format", "json", "--", "python", "-m",
                                "sglang.launch_server", "--model-path", "llama-3.1-8b", "--enable-mixed-chunk"});
  INFO(p.err);
  REQUIRE(p.exit == 0);
  CHECK(mixed(p));
  // is_mixed_chunk = chunked_prefill_size is not None and enable_mixed_chunk: off with --chunked-prefill-size -1
  const Run off = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "5", "--format", "json", "--", "python", "-m",
                                  "sglang.launch_server", "--model-path", "llama-3.1-8b", "--enable-mixed-chunk",
                                  "--chunked-prefill-size", "-1"});
  INFO(off.err);
  REQUIRE(off.exit == 0);
  CHECK_FALSE(mixed(off));
  const Run d = kvtest::kvplan(base({"--engine", "sglang", "--requests", "5", "--format", "json"}));
  REQUIRE(d.exit == 0);
  CHECK_FALSE(mixed(d));
  // server_args.py: "Mixed chunked prefill is disabled because of using eagle speculative decoding"
  const Run e = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "5", "--format", "json", "--", "python", "-m",
                                "sglang.launch_server", "--model-path", "llama-3.1-8b", "--enable-mixed-chunk",
                                "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
                                "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"});
  INFO(e.err);
  REQUIRE(e.exit == 0);
  CHECK_FALSE(mixed(e));
}

TEST_CASE("TensorRT-LLM enable_chunked_prefill lets a prompt longer than max_num_tokens run", "[simulate_cli]") {
  // 4,096-token prompts under max_num_tokens 2,048: without chunked context no step holds one (every request
  // fails over_step_budget: exit 2); with it each prompt runs in two chunks and all three complete.
  const std::vector<std::string> w = {"--engine", "trtllm", "--max-num-tokens", "2048", "--prompt-tokens", "4096",
                                      "--output-tokens", "8", "--requests", "3", "--format", "json"};
  const Run off = kvtest::kvplan(base(w));
  CHECK(off.exit == 2);
  CHECK(off.err.find("over_step_budget") != std::string::npos);
  std::vector<std::string> on = w;
  on.push_back("--enable-chunked-prefill");
  const Run f = kvtest::kvplan(base(on));
  INFO(f.err);
  REQUIRE(f.exit == 0);
  const json res = json::parse(f.out)["results"];
  CHECK(res["pool"]["chunked_prefill"] == true);
  CHECK(res["completed"] == 3);
  // the same from the engine's own YAML (--extra_llm_api_options)
  const std::string yml = write_temp("chunked.yml", "enable_chunked_prefill: true\nmax_num_tokens: 2048\n");
  const Run y = kvtest::kvplan({"simulate", "--gpu", "h100", "--prompt-tokens", "4096", "--output-tokens", "8",
                                "--requests", "3", "--format", "json", "--", "trtllm-serve", "llama-3.1-8b",
                                "--extra_llm_api_options", yml});
  INFO(y.err);
  REQUIRE(y.exit == 0);
  CHECK(json::parse(y.out)["results"]["pool"]["chunked_prefill"] == true);
  CHECK(json::parse(y.out)["results"]["pool"]["max_num_batched_tokens"] == 2048);  // the YAML's budget, not the 8,192 default
  CHECK(json::parse(y.out)["results"]["completed"] == 3);
}

TEST_CASE("SGLang --chunked-prefill-size -1 turns chunked prefill off, as SGLang reads it", "[simulate_cli]") {
  // Scheduler: chunked_prefill_size <= 0 means no chunking; server_args.py then reserves activation memory for
  // max(max_prefill_tokens, 2048) tokens (default 16,384) instead of max(chunked_prefill_size, 2048): the same as a
  // 16,384-token chunk, or with --max-prefill-tokens 4096 a 4,096-token one. The simulated step then holds whole
  // prompts (budget = max_model_len).
  const auto plan = [](std::vector<std::string> flags) {
    std::vector<std::string> a = {"plan", "--gpu", "h100", "--format", "json", "--", "python", "-m", "sglang.launch_server",
                                  "--model-path", "llama-3.1-8b"};
    a.insert(a.end(), flags.begin(), flags.end());
    const Run r = kvtest::kvplan(a);
    INFO(r.err);
    REQUIRE(r.exit == 0);
    return json::parse(r.out)["inputs"];
  };
  const json off = plan({"--chunked-prefill-size", "-1"});
  CHECK(off["memory_fraction"] == plan({"--chunked-prefill-size", "16384"})["memory_fraction"]);
  CHECK(off["memory_fraction"] != plan({"--chunked-prefill-size", "2048"})["memory_fraction"]);
  // (8,192, not 4,096: below about 6,000 tokens the 10 GiB floor of an 80 GB GPU hides the difference)
  CHECK(plan({"--chunked-prefill-size", "-1", "--max-prefill-tokens", "8192"})["memory_fraction"] ==
        plan({"--chunked-prefill-size", "8192"})["memory_fraction"]);
  CHECK(plan({"--chunked-prefill-size", "8192"})["memory_fraction"] != plan({"--chunked-prefill-size", "2048"})["memory_fraction"]);
  // the last --chunked-prefill-size wins, as in argparse: -1 then 4096 is chunked at 4,096
  const json again = plan({"--chunked-prefill-size", "-1", "--chunked-prefill-size", "4096"});
  CHECK(again["max_num_batched_tokens"] == 4096);
  CHECK(again["memory_fraction"] == plan({"--chunked-prefill-size", "4096"})["memory_fraction"]);
  CHECK(off["max_num_batched_tokens"] == off["max_model_len"]);
  const Run s = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "5", "--format", "json", "--", "python", "-m",
                                "sglang.launch_server", "--model-path", "llama-3.1-8b", "--chunked-prefill-size", "-1"});
  INFO(s.err);
  REQUIRE(s.exit == 0);
  CHECK(s.err.find("no fixed value") == std::string::npos);
  const json pool = json::parse(s.out)["results"]["pool"];
  CHECK(pool["chunked_prefill"] == false);
  CHECK(pool["max_num_batched_tokens"] == pool["max_model_len"]);
  // kvplan's own spelling does the same
  const Run k = kvtest::kvplan(base({"--engine", "sglang", "--no-enable-chunked-prefill", "--requests", "5", "--format", "json"}));
  INFO(k.err);
  REQUIRE(k.exit == 0);
  CHECK(json::parse(k.out)["results"]["pool"]["chunked_prefill"] == false);
}

TEST_CASE("the prefix cache, queue order and capacity scheduler reach the simulator from flags, commands and YAML",
          "[simulate_cli]") {
  // Two prefix groups of 512 shared tokens ahead of 1,024-token prompts, 20 requests 0.2 s apart: every request but
  // the first of each group hits the group's 32 full blocks of 16, so the hit rate is 18 x 512 / (20 x 1,536) = 0.3.
  const std::vector<std::string> w = {"--prefix-groups", "2", "--shared-prefix-tokens", "512", "--prompt-tokens", "1024",
                                      "--output-tokens", "16", "--requests", "20", "--rate", "5", "--format", "json"};
  const Run on = kvtest::kvplan(base(w));
  REQUIRE(on.exit == 0);
  CHECK(json::parse(on.out)["results"]["prefix_hit_rate"] == Approx(18.0 * 512 / (20 * 1536)));
  CHECK(json::parse(on.out)["results"]["pool"]["prefix_caching"] == true);
  std::vector<std::string> off = w;
  off.push_back("--no-enable-prefix-caching");
  const Run f = kvtest::kvplan(base(off));
  REQUIRE(f.exit == 0);
  CHECK(json::parse(f.out)["results"]["prefix_hit_rate"] == 0);
  CHECK(json::parse(f.out)["results"]["pool"]["prefix_caching"] == false);
  // the engines' own spellings: vLLM --no-enable-prefix-caching, SGLang --disable-radix-cache, TensorRT-LLM's YAML
  const std::vector<std::string> tail = {"--gpu", "h100", "--prefix-groups", "2", "--shared-prefix-tokens", "512",
                                         "--prompt-tokens", "1024", "--output-tokens", "16", "--requests", "20",
                                         "--rate", "5", "--format", "json", "--"};
  const std::string yml = write_temp("reuse.yml",
                                     "kv_cache_config:\n  enable_block_reuse: false\n"
                                     "scheduler_config:\n  capacity_scheduler_policy: MAX_UTILIZATION\n");
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"vllm", "serve", "llama-3.1-8b", "--no-enable-prefix-caching"},
        std::vector<std::string>{"python", "-m", "sglang.launch_server", "--model-path", "llama-3.1-8b", "--disable-radix-cache"},
        std::vector<std::string>{"trtllm-serve", "llama-3.1-8b", "--extra_llm_api_options", yml}}) {
    std::vector<std::string> args = {"simulate"};
    args.insert(args.end(), tail.begin(), tail.end());
    args.insert(args.end(), cmd.begin(), cmd.end());
    const Run r = kvtest::kvplan(args);
    INFO(cmd.front() << ": " << r.err);
    REQUIRE(r.exit == 0);
    const json res = json::parse(r.out)["results"];
    CHECK(res["prefix_hit_rate"] == 0);
    CHECK(res["pool"]["prefix_caching"] == false);
    if (cmd.front() == "trtllm-serve") CHECK(res["pool"]["capacity_scheduler_policy"] == "MAX_UTILIZATION");
  }
  // the options YAML loads CapacitySchedulerPolicy by its value: upper case only there (kvplan's flag takes any case)
  const std::string lower = write_temp("lower.yml", "scheduler_config:\n  capacity_scheduler_policy: max_utilization\n");
  std::vector<std::string> lw = {"simulate"};
  lw.insert(lw.end(), tail.begin(), tail.end());
  lw.insert(lw.end(), {"trtllm-serve", "llama-3.1-8b", "--extra_llm_api_options", lower});
  const Run lr = kvtest::kvplan(lw);
  CHECK(lr.exit == 2);
  CHECK_THAT(lr.err, Catch::Contains("upper case"));
  // a switch's =false is honoured (a callback flag used to drop it), =true likewise
  for (const auto& [flag, caching] : std::vector<std::pair<std::string, bool>>{{"--enable-prefix-caching=false", false},
                                                                          {"--enable-prefix-caching=off", false},
                                                                          {"--no-enable-prefix-caching=false", true},
                                                                          {"--enable-prefix-caching=true", true}}) {
    std::vector<std::string> args = w;
    args.push_back(flag);
    const Run x = kvtest::kvplan(base(args));
    INFO(flag << ": " << x.err);
    REQUIRE(x.exit == 0);
    CHECK(json::parse(x.out)["results"]["pool"]["prefix_caching"] == caching);
  }
  // SGLang without its radix cache runs a cache-aware policy as fcfs (SchedulePolicy._validate_and_adjust_policy)
  const Run nolpm = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--scheduling-policy", "lpm",
                                    "--no-enable-prefix-caching", "--requests", "5", "--format", "json"});
  REQUIRE(nolpm.exit == 0);
  CHECK(json::parse(nolpm.out)["results"]["pool"]["policy"] == "fcfs");
  // SGLang --schedule-policy lpm from a pasted command; a policy kvplan does not simulate is one line naming the flag
  const Run lpm = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "5", "--format", "json", "--", "python", "-m",
                                  "sglang.launch_server", "--model-path", "llama-3.1-8b", "--schedule-policy", "lpm"});
  REQUIRE(lpm.exit == 0);
  CHECK(json::parse(lpm.out)["results"]["pool"]["policy"] == "lpm");
  const Run rnd = kvtest::kvplan({"simulate", "--gpu", "h100", "--requests", "5", "--", "python", "-m",
                                  "sglang.launch_server", "--model-path", "llama-3.1-8b", "--schedule-policy", "random"});
  CHECK(rnd.exit == 2);
  CHECK(rnd.out.empty());
  CHECK(rnd.err == "kvplan: error: command: --schedule-policy: 'random' is not a policy kvplan simulates for sglang; use fcfs or lpm\n");
  // TensorRT-LLM: GUARANTEED_NO_EVICT (the default) starts a request only with blocks for its whole output and never
  // pauses one; MAX_UTILIZATION starts more and pauses the latest started when decode runs out of blocks
  const std::vector<std::string> t = {"simulate", "llama-3.1-8b", "--gpu", "l40s", "--engine", "trtllm", "--max-num-tokens",
                                      "8192", "--rate", "20", "--prompt-tokens", "2000", "--output-tokens", "1500",
                                      "--requests", "200", "--seed", "1", "--format", "json"};
  const Run g = kvtest::kvplan(t);
  REQUIRE(g.exit == 0);
  CHECK(json::parse(g.out)["results"]["preemptions"] == 0);
  CHECK(json::parse(g.out)["results"]["pool"]["capacity_scheduler_policy"] == "GUARANTEED_NO_EVICT");
  std::vector<std::string> mu = t;
  mu.insert(mu.end(), {"--capacity-scheduler-policy", "MAX_UTILIZATION"});
  const Run m = kvtest::kvplan(mu);
  REQUIRE(m.exit == 0);
  CHECK(json::parse(m.out)["results"]["preemptions"] > 0);
  std::vector<std::string> sb = t;
  sb.insert(sb.end(), {"--capacity-scheduler-policy", "STATIC_BATCH"});
  // STATIC_BATCH: never pauses either, but a request arriving while the batch decodes waits for the batch to end
  const Run s = kvtest::kvplan(sb);
  REQUIRE(s.exit == 0);
  CHECK(json::parse(s.out)["results"]["preemptions"] == 0);
  CHECK(json::parse(s.out)["results"]["pool"]["capacity_scheduler_policy"] == "STATIC_BATCH");
  CHECK(json::parse(s.out)["results"]["ttft_ms"]["p50"].get<double>() > 2 * json::parse(g.out)["results"]["ttft_ms"]["p50"].get<double>());
  // plan refuses a vLLM policy vLLM refuses; SGLang's choices change between releases, so plan leaves them to simulate
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--scheduling-policy", "bogus"}).exit == 2);
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--engine", "sglang", "--scheduling-policy", "random"}).exit == 0);
  // --set with a flag's spelling is refused, unless the pasted command names it as a variable
  CHECK(kvtest::kvplan({"plan", "--set", "tp=2", "--", "vllm", "serve", "llama-3.1-8b", "-tp", "$tp"}).exit == 0);
  // kvplan plan does not simulate: it takes STATIC_BATCH, and refuses what TensorRT-LLM would
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--engine", "trtllm", "--capacity-scheduler-policy", "STATIC_BATCH"}).exit == 0);
  const Run bad = kvtest::kvplan({"plan", "llama-3.1-8b", "--engine", "trtllm", "--capacity-scheduler-policy", "greedy"});
  CHECK(bad.exit == 2);
  CHECK(bad.err == "kvplan: error: --capacity-scheduler-policy: 'greedy' is not a TensorRT-LLM capacity scheduler policy; use "
                   "GUARANTEED_NO_EVICT, MAX_UTILIZATION or STATIC_BATCH\n");
}

TEST_CASE("a block shares its hash only with blocks of the same tokens", "[simulate_cli]") {
  // Two sessions of prefix group 0 whose group prefixes end at token 2 and token 3: their first blocks of 16 hold the
  // same 2 or 3 group tokens and then different tokens, so the second request finds nothing cached. The cut inside
  // the block was XORed into the hash with the request's id (session 0, cut 2 and session 2, cut 3 met: 0 ^ 4 = 2 ^ 6)
  // and the second request took a 16-token hit on a block it shares 2 tokens of.
  const std::string trace = write_temp("cut.csv",
                                       "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens,session\n"
                                       "0,20,200,0,2,0\n"
                                       "0.5,20,5,0,3,2\n");
  const std::string per = (temp_dir() / "cut-per.csv").string();
  const Run r = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--trace", trace, "--per-request", per, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  CHECK(json::parse(r.out)["results"]["prefix_hit_rate"] == 0);
}

TEST_CASE("simulate's table header names the length distributions it drew from", "[simulate][cli]") {
  // a histogram of 100 and 300 tokens, weights 1 and 3: mean (100 + 3 x 300) / 4 = 250.0, not --prompt-tokens' 1,024
  const auto hist = write_temp("hist.csv", "tokens,weight\n100,1\n300,3\n");
  const Run r = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100-sxm", "--requests", "8", "--rate", "4", "--prompt-dist", "histogram",
                                "--prompt-histogram", hist, "--output-tokens", "64", "--output-dist", "uniform", "--output-spread", "25", "--seed", "1"});
  REQUIRE(r.exit == 0);
  const std::string head = r.out.substr(0, r.out.find('\n'));
  CHECK(head.find("8 requests of histogram (mean 250.0) prompt + 64 +- 25% (uniform) output tokens") != std::string::npos);
  // fixed lengths read as before; normal and lognormal give their standard deviation
  const Run f = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100-sxm", "--requests", "4", "--prompt-tokens", "512", "--output-tokens", "32",
                                "--output-dist", "lognormal", "--output-spread", "40", "--concurrency", "2", "--seed", "1"});
  REQUIRE(f.exit == 0);
  CHECK(f.out.substr(0, f.out.find('\n')).find("4 requests of 512 prompt + 32 (lognormal, sd 40%) output tokens") != std::string::npos);
}

TEST_CASE("simulate's shared prefix comes before each prompt, and a --context is the whole request", "[simulate_cli]") {
  // the per-request rows' prompt_tokens hold the prefix: --prompt-tokens 300 after a 500-token prefix is 800 (it was
  // refused, the deployment reading the prefix as part of 300 + 128 tokens); --context 1000 with the default 128
  // output tokens leaves 1000 - 128 - 500 = 372 of its own (it gave 872, a 1,500-token request)
  auto prompts = [](const std::vector<std::string>& extra) {
    const std::string per = (temp_dir() / "prefix-rows.csv").string();
    std::vector<std::string> args = extra;
    args.insert(args.end(), {"--shared-prefix", "500", "--requests", "4", "--per-request", per});
    const Run r = kvtest::kvplan(base(args));
    INFO(r.err);
    REQUIRE(r.exit == 0);
    std::ifstream in(per);
    std::string line;
    std::getline(in, line);  // header: ...,prompt_tokens,output_tokens,...
    std::vector<std::pair<long, long>> v;
    while (std::getline(in, line)) {
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
      REQUIRE(cells.size() >= 8);
      v.emplace_back(std::stol(cells[6]), std::stol(cells[7]));
    }
    return v;
  };
  for (const auto& [p, o] : prompts({"--prompt-tokens", "300"})) {
    CHECK(p == 800);
    CHECK(o == 128);
  }
  for (const auto& [p, o] : prompts({"--context", "1000"})) CHECK(p + o == 1000);
  for (const auto& [p, o] : prompts({"--context", "1000", "--prompt-tokens", "300"})) CHECK(o == 200);
  // a context the prefix and the output leave nothing of: one line, exit 2
  const Run bad = kvtest::kvplan(base({"--context", "600", "--shared-prefix", "500"}));
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("--context") != std::string::npos);
}

TEST_CASE("check's simulated traffic keeps the deployment's shared prefix inside its prompts", "[simulate_cli]") {
  // prompt_tokens 1024 with a 512-token shared prefix: each simulated request is 1,024 prompt tokens (512 shared),
  // as plan counts it (the static check: 1,024 + 16 tokens), not 1,536
  const json reqs = check_requirements("prefix-check.yaml",
                                       "model: llama-3.1-8b\ngpu: h100\n"
                                       "traffic: {shared_prefix: 512, prompt_tokens: 1024, output_tokens: 16, rate: 1, requests: 20, seed: 1}\n"
                                       "requirements: {max_p99_ttft_ms: 100000}\n",
                                       0);
  bool seen = false;
  for (const auto& q : reqs)
    if (q["requirement"].get<std::string>().rfind("one request fits (1040 tokens", 0) == 0) seen = true;
    else if (q["requirement"] == "max p99 TTFT (simulated)") CHECK(q["detail"] == "20 req of 1024+16 tok, 1 req/s");
  CHECK(seen);
  // a prefix as long as the prompts leaves none of their own: one line, exit 2
  const auto bad = write_temp("prefix-bad.yaml",
                              "model: llama-3.1-8b\ngpu: h100\n"
                              "traffic: {shared_prefix: 1024, prompt_tokens: 1024, output_tokens: 16, rate: 1, requests: 20}\n"
                              "requirements: {max_p99_ttft_ms: 100000}\n");
  const Run b = kvtest::kvplan({"check", bad});
  CHECK(b.exit == 2);
  CHECK(b.out.empty());
  CHECK(b.err.find("shared prefix") != std::string::npos);
}

TEST_CASE("a trace without prefix groups takes --shared-prefix as every row's system prompt", "[simulate_cli]") {
  // the reader: no prefix_group column or key, default_prefix_tokens 256: every row in group 0 with 256 shared
  // tokens (at most its prompt)
  kvplan::io::TraceOptions o;
  o.default_prefix_tokens = 256;
  const auto csv = write_temp("noprefix.csv", "arrival_s,prompt_tokens,output_tokens\n0,512,8\n10,128,8\n");
  const auto v = read_all(csv, o);
  REQUIRE(v.size() == 2);
  CHECK(v[0].prefix_group == 0);
  CHECK(v[0].prefix_tokens == 256);
  CHECK(v[1].prefix_tokens == 128);
  const auto jl = write_temp("noprefix.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 512, \"output_tokens\": 8}\n");
  const auto w = read_all(jl, o);
  REQUIRE(w.size() == 1);
  CHECK(w[0].prefix_group == 0);
  CHECK(w[0].prefix_tokens == 256);
  // simulated: four 512-token prompts 10 s apart with a 256-token shared prefix: the first misses, the other three
  // find its 16 blocks of 16, so the hit rate is 3 x 256 / (4 x 512) = 0.375; without the prefix, 0
  const auto four = write_temp("four.csv", "arrival_s,prompt_tokens,output_tokens\n0,512,8\n10,512,8\n20,512,8\n30,512,8\n");
  const Run on = kvtest::kvplan(base({"--trace", four, "--shared-prefix", "256", "--format", "json"}));
  INFO(on.err);
  REQUIRE(on.exit == 0);
  CHECK(json::parse(on.out)["results"]["prefix_hit_rate"] == Approx(0.375));
  const Run off = kvtest::kvplan(base({"--trace", four, "--format", "json"}));
  REQUIRE(off.exit == 0);
  CHECK(json::parse(off.out)["results"]["prefix_hit_rate"] == 0);
}

TEST_CASE("a closed loop whose think times carry the clock past 10^9 s exits 2", "[simulate_cli]") {
  // two turns a conversation, one client, 10^9 s of thinking between turns: the second turn of the second
  // conversation is sent past 10^9 s from the first request, where a double's seconds lose their milliseconds
  const std::string per = (temp_dir() / "per-think.csv").string();
  const Run r = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--turns", "2", "--think-s", "1e9", "--concurrency", "1",
                                "--requests", "4", "--format", "json", "--per-request", per});
  CHECK(r.exit == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("kvplan: error: think_s: the simulation's clock passes 10^9 s") == 0);
  CHECK_FALSE(std::filesystem::exists(per));
  // 10^8 s of thinking stays inside the bound: the turns' latencies are those of a run without the thinking
  const auto ttft = [](const std::string& think) {
    const Run ok = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--turns", "2", "--think-s", think, "--concurrency", "1",
                                   "--requests", "4", "--format", "json"});
    REQUIRE(ok.exit == 0);
    return json::parse(ok.out)["results"]["ttft_ms"]["p50"].get<double>();
  };
  CHECK(ttft("1e8") == Approx(ttft("0")).epsilon(1e-6));
}

TEST_CASE("simulate refuses --seed with --trace: a trace replays its rows and nothing is drawn", "[simulate_cli]") {
  const auto path = write_temp("seeded.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n");
  const Run r = kvtest::kvplan(base({"--trace", path, "--seed", "3"}));
  CHECK(r.exit == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "kvplan: error: --seed: seeds the workload generator, which the trace replaces; leave --seed out with --trace\n");
  CHECK(kvtest::kvplan(base({"--trace", path})).exit == 0);
}

TEST_CASE("a control byte in a file name stays one printable line on stderr and in the table title", "[simulate_cli]") {
  const auto bad = write_temp("bad\nname.csv", "arrival_s,prompt_tokens,output_tokens\n0,-4,10\n");
  const Run r = kvtest::kvplan(base({"--trace", bad}));
  CHECK(r.exit == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("bad\\x0aname.csv:2: prompt_tokens: negative") != std::string::npos);
  const auto esc = write_temp("ok\x1bname.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n");
  const Run ok = kvtest::kvplan(base({"--trace", esc}));
  REQUIRE(ok.exit == 0);
  CHECK(ok.out.find('\x1b') == std::string::npos);
  CHECK(ok.out.find("ok\\x1bname.csv") != std::string::npos);
}

TEST_CASE("simulation bounds and latency bounds in a deployment file name their place in it", "[simulate_cli]") {
  const auto err_of = [](const std::string& name, const std::string& block) {
    const std::string path = write_temp(name, "deployments:\n  - name: a\n    model: llama-3.1-8b\n    gpu: h100\n" + block);
    const Run r = kvtest::kvplan({"check", path});
    CHECK(r.exit == 2);
    CHECK(lines(r.err) == 1);
    return std::make_pair(path, r.err);
  };
  {  // the simulator's 10^8 requests, stated as the range the file may hold
    const auto [path, err] = err_of("k-req.yaml", "    traffic:\n      rate: 5\n      requests: 200000000\n");
    CHECK(err == "kvplan: error: " + path + ":7:17: requests: expected an integer in [1, 100000000], got 200000000\n");
  }
  {  // 1,000 requests (the default) at 10^-9 a second span 10^12 s
    const auto [path, err] = err_of("k-rate.yaml", "    traffic:\n      rate: 1e-9\n");
    CHECK(err.find("kvplan: error: " + path + ":6:13: rate: the requests at this rate span more than 10^9 s") == 0);
  }
  {  // a latency bound of 0 is a gate no run passes
    const auto [path, err] = err_of("k-zero.yaml", "    traffic:\n      rate: 5\n    requirements:\n      max_p99_ttft_ms: 0\n");
    CHECK(err == "kvplan: error: " + path + ":8:24: max_p99_ttft_ms: must be > 0 (no run has a latency of 0); give the bound in ms\n");
  }
  // a length past 2^40 tokens names its flag before any sum of lengths overflows
  const Run big = kvtest::kvplan(base({"--requests", "1", "--prompt-tokens", "9223372036854775000", "--output-tokens", "1000"}));
  CHECK(big.exit == 2);
  CHECK(big.err == "kvplan: error: --prompt-tokens: expected at most 2^40 tokens, got 9223372036854775000; give a request length in tokens\n");
  // a run in which no request completes is one line: the deployment's warning about the same prompt is not printed too
  const Run trt = kvtest::kvplan(base({"--engine", "trtllm", "--requests", "20", "--prompt-tokens", "9000"}));
  CHECK(trt.exit == 2);
  CHECK(lines(trt.err) == 1);
  CHECK(trt.err.find("no request completed: 20 over_step_budget") != std::string::npos);
}

TEST_CASE("peak KV-pool use and the timeline share vLLM's denominator: the blocks less the null block", "[simulate_cli]") {
  // vLLM V1's BlockPool.get_usage divides by num_gpu_blocks - 1 (the null block no request gets); a pool of
  // 3e8 bytes (Llama-3.1-8B bf16: 16 x 128 KiB = 2 MiB a block, 143 blocks) fills under 40 requests of 1,000 tokens
  const kvtest::Run r = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100-sxm", "--kv-cache-memory-bytes", "300000000", "--max-model-len", "2048",
                                        "--concurrency", "40", "--prompt-tokens", "1000", "--output-tokens", "200",
                                        "--requests", "80", "--seed", "1", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json res = json::parse(r.out)["results"];
  const double blocks = res["pool"]["blocks"].get<double>();
  CHECK(blocks == std::floor(300000000.0 / (16.0 * 131072.0)));
  const double peak = res["peak_blocks_used"].get<double>();
  CHECK(res["peak_kv_used_fraction"].get<double>() == Approx(peak / (blocks - 1)));
  double timeline_max = 0;
  for (const auto& p : res["timeline"]) timeline_max = std::max(timeline_max, p["kv_used_fraction"].get<double>());
  CHECK(timeline_max > 0.9);  // the pool did fill
  CHECK(timeline_max <= res["peak_kv_used_fraction"].get<double>() + 1e-12);
}

TEST_CASE("a session turn shorter than the history before it starts over: later turns hit only its history", "[simulate_cli]") {
  // turn 1: 1,000 + 100 tokens; turn 2's 500-token prompt cannot repeat those 1,100 (the client cut the conversation),
  // so it shares nothing with turn 1; turn 3 (2,000) repeats turn 2's 500 + 20 = 520 tokens. Cached at turn 3: the
  // full blocks of those 520 (vLLM, 16: 32 blocks = 512; TensorRT-LLM, 32: 16 = 512), the 519 tokens before the last
  // (SGLang page 1 keeps its last token to compute; llama.cpp reuses the common prefix of the slot less one)
  const std::string trace = write_temp("cut-session.csv", "arrival_s,prompt_tokens,output_tokens,session\n0,1000,100,1\n5,500,20,1\n10,2000,20,1\n");
  for (const auto& [engine, want] : std::vector<std::pair<std::string, long long>>{{"vllm", 512}, {"sglang", 519}, {"trtllm", 512}, {"llama.cpp", 519}}) {
    const Run r = kvtest::kvplan({"simulate", "llama-3.1-8b", "--engine", engine, "--trace", trace, "--per-request", "/dev/stdout", "--format", "json"});
    INFO(engine << ": " << r.err);
    REQUIRE(r.exit == 0);
    std::istringstream lines(r.out);
    std::map<std::string, std::vector<std::string>> rows;
    for (std::string line; std::getline(lines, line);)
      if (line.size() > 2 && std::isdigit(static_cast<unsigned char>(line[0])) && line[1] == ',') {
        std::vector<std::string> cells;
        std::istringstream cs(line);
        for (std::string c; std::getline(cs, c, ',');) cells.push_back(c);
        rows[cells[0]] = cells;
      }
    REQUIRE(rows.size() == 3);
    CHECK(rows["1"][8] == "0");  // turn 2: nothing of turn 1
    CHECK(std::stoll(rows["2"][8]) == want);
  }
}

TEST_CASE("llama.cpp -b is the server's step budget, in the inputs and the pool alike", "[simulate_cli]") {
  // llama-server decodes at most n_batch (-b, default 2048) tokens a llama_decode; -ub is capped at it
  for (const auto& [b, want] : std::vector<std::pair<std::string, long long>>{{"", 2048}, {"1024", 1024}, {"256", 256}}) {
    std::vector<std::string> args = {"simulate", "llama-3.1-8b", "--engine", "llama.cpp", "-c", "8192", "-np", "4", "--requests", "5", "--format", "json"};
    if (!b.empty()) args.insert(args.end(), {"-b", b});
    const Run r = kvtest::kvplan(args);
    INFO("-b " << b << ": " << r.err);
    REQUIRE(r.exit == 0);
    const json j = json::parse(r.out);
    CHECK(j["results"]["pool"]["max_num_batched_tokens"] == want);
    CHECK(j["inputs"]["max_num_batched_tokens"] == want);
    CHECK(j["inputs"]["ubatch_size"] == std::min<long long>(512, want));
  }
}
