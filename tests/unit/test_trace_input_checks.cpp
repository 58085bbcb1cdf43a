// Trace input checks (trace.cpp): a JSONL row that names one field twice (two aliases, or one key repeated in its
// object) exits 2 naming the keys, as a CSV header with two such columns does; JSONL keys are normalised as CSV
// column names are; a datetime naming a day its month lacks or an offset past +-14:00 is refused, not rolled over.
#include <catch2/catch.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "kvplan/core/error.hpp"
#include "kvplan/io/trace.hpp"

using kvtest::Run;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  return kvtest::write_temp("tracechk", name, text);
}

// `kvplan simulate` on a trace: Llama-3.1-8B on one H100 (vLLM), a small, fast deployment
Run simulate(const std::string& trace) {
  return kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--trace", trace, "--format", "json"});
}

// A bad trace: exit 2, nothing on stdout, exactly this one line on stderr.
void check_refused(const std::string& name, const std::string& text, const std::string& line_after_path) {
  INFO(name);
  const std::string path = write_temp(name, text);
  const Run r = simulate(path);
  CHECK(r.exit == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "kvplan: error: " + path + line_after_path + "\n");
}

std::vector<kvplan::SimRequest> read_all(const std::string& path) {
  kvplan::io::TraceSource t(path);
  std::vector<kvplan::SimRequest> v;
  kvplan::SimRequest r;
  while (t.next(r)) v.push_back(r);
  return v;
}

std::int64_t ns_of(const std::string& datetime) {
  std::int64_t ns = 0;
  REQUIRE(kvplan::io::parse_datetime_ns(datetime, ns));
  return ns;
}

const std::string kDatetimeRefused =  // the first row's arrival decides seconds or datetime
    ": TIMESTAMP: expected seconds or a datetime (2023-11-16 18:15:46.68), got ";

}  // namespace

TEST_CASE("JSONL trace: two keys for one field exit 2 naming both as a CSV header does", "[trace]") {
  // keys are listed in the order the JSON object keeps them (sorted); the error names the second as its column
  check_refused("two-prompts.jsonl",
                "{\"timestamp\": 0, \"input_length\": 100, \"prompt_tokens\": 5000, \"output_length\": 10}\n",
                ":1: prompt_tokens: the row has 2 keys for the prompt length ('input_length' and 'prompt_tokens'); "
                "keep one of them");
  check_refused(
      "two-arrivals.jsonl", "{\"timestamp\": 0, \"arrival_s\": 3, \"input_length\": 100, \"output_length\": 10}\n",
      ":1: timestamp: the row has 2 keys for the arrival time ('arrival_s' and 'timestamp'); keep one of them");
  check_refused("two-outputs.jsonl",
                "{\"arrival_s\": 0, \"prompt_tokens\": 100, \"output_tokens\": 10, \"GeneratedTokens\": 20}\n",
                ":1: output_tokens: the row has 2 keys for the output length ('GeneratedTokens' and 'output_tokens'); "
                "keep one of them");
  // one name in two spellings is two keys for one field once normalised
  check_refused("two-spellings.jsonl",
                "{\"timestamp\": 0, \"Input Length\": 100, \"input_length\": 90000, \"output_length\": 10}\n",
                ":1: input_length: the row has 2 keys for the prompt length ('Input Length' and 'input_length'); "
                "keep one of them");
  // a later row is checked as the first is
  check_refused("second-row.jsonl",
                "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10}\n"
                "{\"timestamp\": 5, \"input_length\": 100, \"output_length\": 10, \"prompt_tokens\": 7}\n",
                ":2: prompt_tokens: the row has 2 keys for the prompt length ('input_length' and 'prompt_tokens'); "
                "keep one of them");
  // the CSV reader's refusal, for comparison (same form)
  check_refused(
      "two-prompts.csv", "arrival_s,prompt_tokens,output_tokens,input_length\n0,100,10,5000\n",
      ":1: input_length: the header has 2 columns for the prompt length ('prompt_tokens' and 'input_length'); "
      "keep one of them");
  check_refused("two-think.csv", "arrival_s,prompt_tokens,output_tokens,think_s,Think S\n0,100,10,1,2\n",
                ":1: Think S: the header has 2 columns for the think time ('think_s' and 'Think S'); keep one of them");
}

TEST_CASE("JSONL trace: a key repeated in one object exits 2 naming the key and line", "[trace]") {
  check_refused("repeated.jsonl",
                "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10, \"input_length\": 90000}\n",
                ":1: key \"input_length\" appears twice in one object (the last would silently win); keep one of them");
  check_refused(
      "repeated-row3.jsonl",
      "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10}\n"
      "{\"timestamp\": 1, \"input_length\": 100, \"output_length\": 10}\n"
      "{\"timestamp\": 2, \"input_length\": 100, \"output_length\": 10, \"output_length\": 1}\n",
      ":3: key \"output_length\" appears twice in one object (the last would silently win); keep one of them");
  // a key kvplan does not read is refused too: the row says two things
  check_refused("repeated-other.jsonl",
                "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10, \"m\": 1, \"m\": 2}\n",
                ":1: key \"m\" appears twice in one object (the last would silently win); keep one of them");
  // a syntax error is still one: not a JSON object
  check_refused(
      "syntax.jsonl", "{\"timestamp\": 0, \"input_length\": 100 \"output_length\": 10}\n",
      ":1: not a JSON object: line 1, column 52: invalid JSON (syntax error while parsing object - unexpected "
      "string literal; expected '}'); write one JSON object per line (JSONL)");
}

TEST_CASE("JSONL trace: keys compared case-blind with spaces and dashes as underscores", "[trace]") {
  const std::string path = write_temp("spelled.jsonl",
                                      "{\"Timestamp\": 1000, \"Input Length\": 100, \"output-length\": 10}\n"
                                      "{\"TIMESTAMP\": 3500, \"input-length\": 200, \"Output Length\": 20}\n");
  kvplan::io::TraceSource t(path);
  CHECK(t.prompt_column() == "Input Length");  // as the first row spells it
  CHECK(t.output_column() == "output-length");
  CHECK(t.arrival_column() == "Timestamp");
  CHECK(t.arrival_unit() == "ms");  // JSONL timestamp: Mooncake's milliseconds
  CHECK(t.layout() == "mooncake");
  const auto rows = read_all(path);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].prompt_tokens == 100);
  CHECK(rows[0].output_tokens == 10);
  CHECK(rows[0].arrival_s == 0.0);
  CHECK(rows[1].prompt_tokens == 200);
  CHECK(rows[1].output_tokens == 20);
  CHECK(rows[1].arrival_s == Approx((3500 - 1000) * 1e-3));  // ms after the first row
  const Run r = simulate(path);
  INFO(r.err);
  CHECK(r.exit == 0);
  CHECK(nlohmann::json::parse(r.out)["inputs"]["workload"]["trace"]["rows"] == 2);
  // an error names the key as the row spells it
  check_refused(
      "spelled-bad.jsonl",
      "{\"timestamp\": 0, \"Input Length\": 100, \"output_length\": 10}\n"
      "{\"timestamp\": 1, \"INPUT-LENGTH\": -4, \"output_length\": 10}\n",
      ":2: INPUT-LENGTH: negative: '-4' (expected >= 1); give a whole number of tokens from 1 to 10000000, or "
      "drop the row");
}

TEST_CASE("trace datetimes: a day the month lacks exits 2 instead of rolling into the next month", "[trace]") {
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";  // the Azure trace's columns
  check_refused("feb30.csv", header + "2023-02-30 00:00:00,100,10\n",
                ":2" + kDatetimeRefused + "'2023-02-30 00:00:00'; fix the row");
  check_refused("apr31.csv", header + "2023-04-31 00:00:00,100,10\n",
                ":2" + kDatetimeRefused + "'2023-04-31 00:00:00'; fix the row");
  check_refused("feb29-2023.csv", header + "2023-02-29 12:00:00,100,10\n",
                ":2" + kDatetimeRefused + "'2023-02-29 12:00:00'; fix the row");
  check_refused("feb29-2100.csv", header + "2100-02-29 12:00:00,100,10\n",  // a century: not a leap year
                ":2" + kDatetimeRefused + "'2100-02-29 12:00:00'; fix the row");
  // was "arrivals are not in order" on line 3: Feb 31 had become Mar 3
  check_refused("feb31-mar1.csv", header + "2023-02-31 00:00:00,100,10\n2023-03-01 00:00:00,100,10\n",
                ":2" + kDatetimeRefused + "'2023-02-31 00:00:00'; fix the row");
  check_refused("row3.csv", header + "2023-06-29 00:00:00,100,10\n2023-06-31 00:00:00,100,10\n",
                ":3: TIMESTAMP: expected a datetime like the first row's (2023-11-16 18:15:46.68), got '2023-06-31 "
                "00:00:00'; fix the row");
}

TEST_CASE("trace datetimes: leap days by the Gregorian rule are read", "[trace]") {
  const std::int64_t day = std::int64_t{86400} * 1'000'000'000;
  CHECK(ns_of("2024-02-29 00:00:00") - ns_of("2024-02-28 00:00:00") == day);
  CHECK(ns_of("2024-03-01 00:00:00") - ns_of("2024-02-29 00:00:00") == day);
  CHECK(ns_of("2000-02-29 00:00:00") - ns_of("2000-02-28 00:00:00") == day);  // every 400th year is a leap year
  CHECK(ns_of("2023-03-01 00:00:00") - ns_of("2023-02-28 00:00:00") == day);  // 2023 has no Feb 29
  CHECK(ns_of("2023-12-31 00:00:00") - ns_of("2023-11-30 00:00:00") == 31 * day);
  std::int64_t ns = 0;
  for (const char* s : {"2023-02-29 00:00:00", "2100-02-29 00:00:00", "2023-04-31 00:00:00", "2023-06-31 00:00:00",
                        "2023-09-31 00:00:00", "2023-11-31 00:00:00", "2023-01-32 00:00:00", "2023-02-00 00:00:00"}) {
    INFO(s);
    CHECK_FALSE(kvplan::io::parse_datetime_ns(s, ns));
  }
  const std::string path = write_temp("leap.csv",
                                      "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-02-28 23:59:59,100,10\n"
                                      "2024-02-29 00:00:00.5,100,10\n2024-03-01 00:00:01,100,10\n");
  const auto rows = read_all(path);
  REQUIRE(rows.size() == 3);
  CHECK(rows[1].arrival_s == Approx(1.5));
  CHECK(rows[2].arrival_s == Approx(1 + 86400 + 1));  // 23:59:59 -> 00:00:00, a day, then 1 s
  const Run r = simulate(path);
  INFO(r.err);
  CHECK(r.exit == 0);
}

TEST_CASE("trace datetimes: offsets up to +-14:00 with minutes under 60 and no further", "[trace]") {
  const std::int64_t hour = std::int64_t{3600} * 1'000'000'000;
  const std::int64_t utc = ns_of("2023-06-01 12:00:00Z");
  CHECK(ns_of("2023-06-01 12:00:00+14:00") == utc - 14 * hour);  // Kiribati, the easternmost zone
  CHECK(ns_of("2023-06-01 12:00:00-12:00") == utc + 12 * hour);
  CHECK(ns_of("2023-06-01 12:00:00-14:00") == utc + 14 * hour);
  CHECK(ns_of("2023-06-01 12:00:00+05:45") == utc - 5 * hour - hour / 60 * 45);  // Nepal
  CHECK(ns_of("2023-06-01 12:00:00+00:00") == utc);
  std::int64_t ns = 0;
  for (const char* s : {"2023-06-01 12:00:00+99:99", "2023-06-01 12:00:00+25:00", "2023-06-01 12:00:00+14:01",
                        "2023-06-01 12:00:00-15:00", "2023-06-01 12:00:00+05:60", "2023-06-01 12:00:00+00:99"}) {
    INFO(s);
    CHECK_FALSE(kvplan::io::parse_datetime_ns(s, ns));
  }
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  check_refused("offset-99.csv", header + "2023-02-01 00:00:00+99:99,100,10\n",
                ":2" + kDatetimeRefused + "'2023-02-01 00:00:00+99:99'; fix the row");
  check_refused("offset-25.csv", header + "2023-02-01T00:00:00-25:00,100,10\n",
                ":2" + kDatetimeRefused + "'2023-02-01T00:00:00-25:00'; fix the row");
}

TEST_CASE("a hash_ids trace refuses --shared-prefix: its hashes give the shared prefixes", "[trace]") {
  // Mooncake rows: the shared blocks are the hash ids the rows have in common; a --shared-prefix length beside
  // them was ignored (and reported in the workload) without a word
  const std::string path = write_temp("hashed.jsonl", "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 10, \"hash_ids\": [1, 2]}\n"
                                                      "{\"timestamp\": 1000, \"input_length\": 1000, \"output_length\": 10, \"hash_ids\": [7, 8]}\n");
  const Run r = kvtest::kvplan({"simulate", "llama-3.1-8b", "--gpu", "h100", "--trace", path, "--shared-prefix", "900", "--format", "json"});
  CHECK(r.exit == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "kvplan: error: " + path +
                     ":1: hash_ids: the hash ids give the rows' shared prefixes, so a --shared-prefix length would be ignored; leave --shared-prefix "
                     "out with a hash_ids trace\n");
  CHECK(simulate(path).exit == 0);
}

TEST_CASE("trace sessions and prefix groups may be names: one id per distinct name, numbers kept", "[trace]") {
  // ShareGPT-style conversation ids and named system prompts: equal names are one session (one group), a whole number
  // keeps its value, and a name never takes a number's id
  const auto csv = write_temp("named.csv",
                              "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens,session\n"
                              "0,100,10,sys-a,40,conv-9f2c\n1,200,10,sys-b,40,conv-1b7e\n2,300,10,sys-a,40,conv-9f2c\n"
                              "3,400,10,0,40,0\n4,500,10,\"sys b\",40,7\n");
  const auto v = read_all(csv);
  REQUIRE(v.size() == 5);
  CHECK(v[0].session == v[2].session);
  CHECK(v[0].session != v[1].session);
  CHECK(v[0].prefix_group == v[2].prefix_group);
  CHECK(v[0].prefix_group != v[1].prefix_group);
  CHECK(v[3].session == 0);
  CHECK(v[3].prefix_group == 0);
  CHECK(v[4].session == 7);
  CHECK(v[4].prefix_group != v[1].prefix_group);  // "sys b" is not "sys-b"
  for (const auto& r : v) {
    CHECK(r.session >= 0);
    CHECK(r.prefix_group >= 0);
  }
  for (std::size_t i : {0u, 1u})
    for (const auto& n : {v[3], v[4]}) {
      CHECK(v[i].session != n.session);
      CHECK(v[i].prefix_group != n.prefix_group);
    }
  // JSONL: a string names, a number (or a string holding one) is the number
  const auto jl = write_temp("named.jsonl",
                             "{\"arrival_s\": 0, \"prompt_tokens\": 50, \"output_tokens\": 5, \"session_id\": \"u-1\"}\n"
                             "{\"arrival_s\": 1, \"prompt_tokens\": 60, \"output_tokens\": 5, \"session_id\": 3}\n"
                             "{\"arrival_s\": 2, \"prompt_tokens\": 70, \"output_tokens\": 5, \"session_id\": \"3\"}\n"
                             "{\"arrival_s\": 3, \"prompt_tokens\": 80, \"output_tokens\": 5, \"session_id\": \"u-1\"}\n");
  const auto w = read_all(jl);
  REQUIRE(w.size() == 4);
  CHECK(w[1].session == 3);
  CHECK(w[2].session == 3);
  CHECK(w[0].session == w[3].session);
  CHECK(w[0].session != 3);
}

TEST_CASE("trace sessions: a number that is not a whole one >= 0 is refused, not taken for a name", "[trace]") {
  const std::string head = "arrival_s,prompt_tokens,output_tokens,session\n0,100,10,1\n";
  const std::string fix = "; give a whole number >= 0, a name, or leave it empty";
  check_refused("neg-session.csv", head + "1,100,10,-3\n", ":3: session: negative: '-3' (expected >= 0)" + fix);
  check_refused("half-session.csv", head + "1,100,10,1.5\n", ":3: session: expected a whole number, got '1.5'" + fix);
  check_refused("bool-session.jsonl",
                "{\"arrival_s\": 0, \"prompt_tokens\": 50, \"output_tokens\": 5, \"session\": true}\n",
                ":1: session: expected a whole number or a name, got 'true'; give a number >= 0 or a string");
}
