// Request traces (see trace.hpp): a buffered line reader that never holds more than one line, a small RFC
// 4180 cell splitter, column aliases for the public trace layouts, and the Mooncake hash_ids -> shared-prefix
// rule. Every error names file:line, the column and the fix.
#include "kvplan/io/trace.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kvplan/core/error.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

namespace {

constexpr std::size_t kChunk = 1 << 16;
// Session and prefix-group ids given as numbers are 0 .. kNamedIdBase - 1; names (a conversation UUID, "sys-a")
// are numbered from kNamedIdBase, so a name never takes a number's id (the block hashes keep ids below 2^62)
constexpr i64 kNamedIdBase = i64{1} << 61;

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
  return s.substr(a, b - a);
}

/// Column names compared case-blind, with spaces and dashes as underscores ("Request tokens" ->
/// request_tokens).
std::string norm(const std::string& s) {
  std::string o;
  for (char c : trim(s))
    o += (c == ' ' || c == '-') ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

// Aliases: kvplan's own name first, then the public traces' (Azure, BurstGPT, Mooncake, Vidur's processed
// Azure).
const std::vector<std::string> kArrivalS = {"arrival_s", "arrival_time", "arrived_at", "timestamp", "time_s"};
const std::vector<std::string> kArrivalMs = {"arrival_ms", "timestamp_ms"};
const std::vector<std::string> kPrompt = {"prompt_tokens", "contexttokens", "request_tokens",
                                          "input_length",  "input_tokens",  "num_prefill_tokens"};
const std::vector<std::string> kOutput = {"output_tokens", "generatedtokens", "response_tokens", "output_length",
                                          "num_decode_tokens"};
const std::vector<std::string> kSession = {"session", "session_id"};

constexpr const char* kPromptNames =
    "prompt_tokens, ContextTokens (Azure), Request tokens (BurstGPT), "
    "input_length (Mooncake)";
constexpr const char* kOutputNames =
    "output_tokens, GeneratedTokens (Azure), Response tokens (BurstGPT), "
    "output_length (Mooncake)";
constexpr const char* kArrivalNames =
    "arrival_s, TIMESTAMP (Azure), Timestamp (BurstGPT), timestamp in ms "
    "(Mooncake JSONL)";

// JSONL: the fields a row's keys name, each with its aliases (normalised as CSV header names are) and what an error
// calls it. One field named by two keys (input_length beside prompt_tokens, timestamp beside arrival_s) is refused
// as a CSV header with two such columns is: which one is read would be the alias order's choice.
enum JField { kJPrompt, kJOutput, kJArrival, kJGroup, kJPrefix, kJSession, kJThink, kJPriority, kJHash, kJFields };

struct JFieldDef {
  const char* role;
  std::vector<std::string> names;
};

const std::vector<JFieldDef>& jsonl_fields() {
  static const std::vector<JFieldDef> f = [] {
    std::vector<std::string> arrival = kArrivalMs;
    arrival.insert(arrival.end(), kArrivalS.begin(), kArrivalS.end());
    // in JField's order
    return std::vector<JFieldDef>{{"prompt length", kPrompt},
                                  {"output length", kOutput},
                                  {"arrival time", arrival},
                                  {"prefix group", {"prefix_group"}},
                                  {"prefix length", {"prefix_tokens"}},
                                  {"session", kSession},
                                  {"think time", {"think_s"}},
                                  {"priority", {"priority"}},
                                  {"hash ids", {"hash_ids"}}};
  }();
  return f;
}

/// The field a normalised key names, or -1 (a key kvplan does not read).
int jsonl_field(const std::string& normed) {
  for (std::size_t f = 0; f < jsonl_fields().size(); ++f)
    for (const auto& n : jsonl_fields()[f].names)
      if (n == normed) return static_cast<int>(f);
  return -1;
}

/// Splits one CSV line (RFC 4180 quotes; no newlines inside quotes); false on an unterminated quote.
bool split_csv(const std::string& line, std::vector<std::string>& cells) {
  cells.clear();
  std::string cur;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"' && trim(cur).empty() && !was_quoted) {
      cur.clear();
      quoted = was_quoted = true;
    } else if (c == ',') {
      cells.push_back(was_quoted ? cur : trim(cur));
      cur.clear();
      was_quoted = false;
    } else {
      cur += c;
    }
  }
  if (quoted) return false;
  cells.push_back(was_quoted ? cur : trim(cur));
  return true;
}

bool parse_double(const std::string& s, double& v) {
  const std::string t = trim(s);
  if (t.empty()) return false;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  return ec == std::errc() && p == e && std::isfinite(v);
}

std::string shown(const std::string& s) {
  std::string t = s.size() > 40 ? s.substr(0, 40) + "..." : s;
  for (char& c : t)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return "'" + t + "'";
}

i64 days_from_civil(i64 y, i64 m,
                    i64 d) {  // H. Hinnant's algorithm: days since 1970-01-01
  y -= m <= 2;
  const i64 era = (y >= 0 ? y : y - 399) / 400;
  const i64 yoe = y - era * 400;
  const i64 doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const i64 doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/// Days in month m (1..12) of year y, Gregorian leap years (every 4th year, not centuries, but every 400th).
i64 days_in_month(i64 y, i64 m) {
  static constexpr i64 kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

bool parse_datetime_ns(const std::string& text, std::int64_t& ns) {
  const std::string s = trim(text);
  auto digits = [&](std::size_t at, std::size_t n, i64& v) {
    if (at + n > s.size()) return false;
    v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
      v = v * 10 + (s[i] - '0');
    }
    return true;
  };
  i64 y, mo, d, h, mi, se;
  if (!digits(0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(5, 2, mo) || s[7] != '-' || !digits(8, 2, d) ||
      (s[10] != ' ' && s[10] != 'T') || !digits(11, 2, h) || s[13] != ':' || !digits(14, 2, mi) || s[16] != ':' ||
      !digits(17, 2, se))
    return false;
  // a day the month lacks (2023-02-30) would roll into the next month: not a datetime
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 60) return false;
  std::size_t i = 19;
  i64 frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    i64 scale = 100'000'000;
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      frac_ns += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start) return false;
  }
  i64 offset_s = 0;
  if (i < s.size()) {
    if (s[i] == 'Z' && i + 1 == s.size()) {
      ++i;
    } else if ((s[i] == '+' || s[i] == '-') && s.size() == i + 6 && s[i + 3] == ':') {
      i64 oh, om;
      if (!digits(i + 1, 2, oh) || !digits(i + 4, 2, om)) return false;
      // the offsets in use run from -12:00 to +14:00; ISO 8601 / RFC 3339 allow HH:MM with minutes < 60, so
      // anything past +-14:00 (+25:00, +99:99) is a typo, not a zone
      if (om > 59 || oh * 60 + om > 14 * 60) return false;
      offset_s = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      i = s.size();
    } else {
      return false;
    }
  }
  const i64 secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
  ns = secs * 1'000'000'000 + frac_ns;
  return true;
}

TraceSource::TraceSource(const std::string& path, TraceOptions opts) : path_(path), opts_(opts), buf_(kChunk) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, "is a folder, not a trace file", "give a CSV or JSONL trace file");
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) throw InputError(path, "cannot open the trace file", "check the path (--trace FILE: CSV or JSONL)");
  std::string line;
  bool first = true;
  while (read_line(line)) {
    if (first && line.size() >= 3 && static_cast<unsigned char>(line[0]) == 0xEF &&
        static_cast<unsigned char>(line[1]) == 0xBB && static_cast<unsigned char>(line[2]) == 0xBF)
      line.erase(0, 3);  // UTF-8 byte-order mark
    first = false;
    if (trim(line).empty()) continue;
    if (trim(line)[0] == '{')
      open_jsonl(line);
    else
      open_csv(line);
    return;
  }
  line_no_ = 0;
  fail("", "the trace is empty",
       "write a CSV with a header row (arrival_s,prompt_tokens,output_tokens) "
       "or JSONL with one request object per line");
}

TraceSource::~TraceSource() {
  if (f_) std::fclose(f_);
}

void TraceSource::fail(const std::string& column, const std::string& what, const std::string& fix) const {
  std::string where = path_;
  if (line_no_ > 0) where += ":" + std::to_string(line_no_);
  if (!column.empty()) where += ": " + column;
  throw InputError(where, what, fix);
}

bool TraceSource::read_line(std::string& line) {
  line.clear();
  if (eof_ && buf_pos_ >= buf_len_) return false;
  bool any = false;
  for (;;) {
    if (buf_pos_ >= buf_len_) {
      if (eof_) break;
      buf_len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
      buf_pos_ = 0;
      if (buf_len_ == 0) {
        if (std::ferror(f_)) throw RuntimeFailure(path_ + ": read error");
        eof_ = true;
        break;
      }
    }
    any = true;
    const char* b = buf_.data() + buf_pos_;
    const char* e = buf_.data() + buf_len_;
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', static_cast<std::size_t>(e - b)));
    const char* stop = nl ? nl : e;
    line.append(b, stop);
    buf_pos_ += static_cast<std::size_t>(stop - b) + (nl ? 1 : 0);
    if (line.size() > opts_.max_line_bytes) {
      ++line_no_;
      fail("",
           "line longer than " + std::to_string(opts_.max_line_bytes >> 20) +
               " MiB (binary data or not a line-based file?)",
           "a trace is CSV or JSONL text with one request per line");
    }
    if (nl) break;
  }
  if (!any && line.empty()) return false;
  ++line_no_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  for (char c : line) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t')
      fail("",
           "binary data (control byte 0x" + std::string(1, "0123456789abcdef"[u >> 4]) + "0123456789abcdef"[u & 15] +
               "), not a CSV or JSONL trace",
           "give a text trace: CSV with a header row or JSONL with one request "
           "per line");
  }
  return true;
}

void TraceSource::open_csv(const std::string& header) {
  format_ = "csv";
  std::vector<std::string> h;
  if (!split_csv(header, h)) fail("", "unterminated quote in the header row", "close the quote");
  ncols_ = h.size();
  auto find = [&](const std::vector<std::string>& names, std::string* spelled) {
    for (const auto& n : names)
      for (std::size_t i = 0; i < h.size(); ++i)
        if (norm(h[i]) == n) {
          if (spelled) *spelled = trim(h[i]);
          return static_cast<int>(i);
        }
    return -1;
  };
  // two columns for one role (prompt_tokens twice, or ContextTokens beside prompt_tokens) would leave the one read
  // to the alias order: ambiguous
  auto single = [&](const std::vector<std::string>& names, const char* role) {
    std::vector<std::string> seen;
    for (const auto& cell : h)
      if (std::find(names.begin(), names.end(), norm(cell)) != names.end()) seen.push_back(trim(cell));
    if (seen.size() > 1)
      fail(seen[1], std::string("the header has ") + std::to_string(seen.size()) + " columns for the " + role + " ('" + seen[0] + "' and '" +
                        seen[1] + "')",
           "keep one of them");
  };
  single(kPrompt, "prompt length");
  single(kOutput, "output length");
  {
    std::vector<std::string> arrival = kArrivalMs;
    arrival.insert(arrival.end(), kArrivalS.begin(), kArrivalS.end());
    single(arrival, "arrival time");
  }
  single({"prefix_group"}, "prefix group");
  single({"prefix_tokens"}, "prefix length");
  single(kSession, "session");
  single({"think_s"}, "think time");
  single({"priority"}, "priority");
  std::string unused;
  ci_prompt_ = find(kPrompt, &prompt_col_);
  ci_output_ = find(kOutput, &output_col_);
  ci_arrival_ = find(kArrivalMs, &arrival_col_);
  if (ci_arrival_ >= 0)
    arrival_unit_ = "ms";
  else
    ci_arrival_ = find(kArrivalS,
                       &arrival_col_);  // unit (seconds or datetime) from the first row
  ci_group_ = find({"prefix_group"}, nullptr);
  ci_prefix_ = find({"prefix_tokens"}, nullptr);
  ci_session_ = find(kSession, nullptr);
  ci_think_ = find({"think_s"}, nullptr);
  ci_priority_ = find({"priority"}, nullptr);
  layout_ = find({"contexttokens"}, nullptr) >= 0        ? "azure"
            : find({"request_tokens"}, nullptr) >= 0     ? "burstgpt"
            : find({"num_prefill_tokens"}, nullptr) >= 0 ? "vidur"
                                                         : "kvplan";
  const std::string fix = "name the columns as docs/simulation.md lists (a header row comes first)";
  if (ci_prompt_ < 0) fail("", std::string("no prompt-token column (one of ") + kPromptNames + ")", fix);
  if (ci_output_ < 0) fail("", std::string("no output-token column (one of ") + kOutputNames + ")", fix);
  if (ci_arrival_ < 0 && opts_.require_sorted)
    fail("", std::string("no arrival-time column (one of ") + kArrivalNames + ")",
         fix + ", or replay the lengths in a closed loop with --concurrency N");
  if (ci_group_ >= 0 && ci_prefix_ < 0 && opts_.default_prefix_tokens <= 0)
    fail("prefix_group", "a prefix group needs its shared length",
         "add a prefix_tokens column or give --shared-prefix N (tokens every "
         "request of a group shares)");
}

nlohmann::json TraceSource::parse_jsonl_object(const std::string& line) {
  nlohmann::json j;
  try {
    j = parse_json_text_unique_keys(line, "row");
  } catch (const InputError& e) {
    try {  // syntax, or a number beyond a double (1e400)
      parse_json_text(line, "row");
    } catch (const InputError& syntax) {
      fail("", "not a JSON object: " + syntax.problem(), "write one JSON object per line (JSONL)");
    }
    fail("", e.problem(), e.fix());  // valid JSON: a key repeated in one object, whose last value would win
  }
  if (!j.is_object()) fail("", "not a JSON object", "write one JSON object per line (JSONL)");
  // the rows of a trace share their keys: resolve them when they change (sorted: nlohmann::json keeps a std::map)
  bool same = j.size() == jkeys_last_.size();
  auto last = jkeys_last_.begin();
  for (auto it = j.begin(); same && it != j.end(); ++it, ++last) same = it.key() == *last;
  if (same) return j;
  std::vector<std::string> keys;
  keys.reserve(j.size());
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  const auto& fields = jsonl_fields();
  jkey_row_.assign(fields.size(), "");
  jnorm_row_.assign(fields.size(), "");
  for (const auto& k : keys) {
    std::string n = norm(k);
    const int f = jsonl_field(n);
    if (f < 0) continue;
    const auto fi = static_cast<std::size_t>(f);
    if (!jkey_row_[fi].empty()) {
      const auto count =
          std::count_if(keys.begin(), keys.end(), [&](const std::string& o) { return jsonl_field(norm(o)) == f; });
      fail(k,
           "the row has " + std::to_string(count) + " keys for the " + fields[fi].role + " ('" + jkey_row_[fi] +
               "' and '" + k + "')",
           "keep one of them");
    }
    jkey_row_[fi] = k;
    jnorm_row_[fi] = std::move(n);
  }
  jkeys_last_ = std::move(keys);
  return j;
}

void TraceSource::open_jsonl(const std::string& first) {
  format_ = "jsonl";
  layout_ = "kvplan";
  parse_jsonl_object(first);
  jkey_first_ = jkey_row_;
  jnorm_first_ = jnorm_row_;
  prompt_col_ = jkey_first_[kJPrompt];
  output_col_ = jkey_first_[kJOutput];
  arrival_col_ = jkey_first_[kJArrival];
  if (!arrival_col_.empty()) {
    const std::string& n = jnorm_first_[kJArrival];
    // Mooncake's timestamp is milliseconds
    const bool ms = n == "timestamp" || std::find(kArrivalMs.begin(), kArrivalMs.end(), n) != kArrivalMs.end();
    arrival_unit_ = ms ? "ms" : "s";
  }
  if (!jkey_first_[kJHash].empty() || jnorm_first_[kJPrompt] == "input_length") layout_ = "mooncake";
  const std::string fix = "name the keys as docs/simulation.md lists";
  if (prompt_col_.empty()) fail("", std::string("no prompt-token key (one of ") + kPromptNames + ")", fix);
  if (output_col_.empty()) fail("", std::string("no output-token key (one of ") + kOutputNames + ")", fix);
  if (arrival_col_.empty() && opts_.require_sorted)
    fail("", std::string("no arrival-time key (one of ") + kArrivalNames + ")",
         fix + ", or replay the lengths in a closed loop with --concurrency N");
  // hash_ids give every row's shared blocks: --shared-prefix would be ignored without a word
  if (!jkey_first_[kJHash].empty() && opts_.default_prefix_tokens > 0)
    fail(jkey_first_[kJHash], "the hash ids give the rows' shared prefixes, so a --shared-prefix length would be ignored",
         "leave --shared-prefix out with a hash_ids trace");
  if (!jkey_first_[kJGroup].empty() && jkey_first_[kJPrefix].empty() && opts_.default_prefix_tokens <= 0)
    fail(jkey_first_[kJGroup], "a prefix group needs its shared length",
         "add a prefix_tokens key or give --shared-prefix N (tokens every "
         "request of a group shares)");
  pending_ = first;
  has_pending_ = true;
}

void TraceSource::set_arrival(double rel_s, const std::string& column, SimRequest& out) {
  if (std::abs(rel_s) > kMaxSimClockS)
    fail(column, "more than 10^9 s from the first arrival, where the clock loses its milliseconds",
         "give arrivals in seconds (or the unit the column names) within 31 years of each other");
  if (opts_.require_sorted && rows_ > 0 && rel_s < last_arrival_s_)
    fail(column, "arrivals are not in order (this row arrives before the previous one)",
         "sort the trace by arrival time (an open-loop replay needs "
         "non-decreasing arrivals), or replay it closed-loop with "
         "--concurrency N");
  last_arrival_s_ = std::max(last_arrival_s_, rel_s);
  // a closed-loop replay issues requests as slots free, not at their times: a row before the first one is at 0
  out.arrival_s = opts_.require_sorted ? rel_s : std::max(rel_s, 0.0);
}

// Mooncake hash_ids (one id per 512-token block of the prompt; equal ids mean equal blocks): requests whose
// first id matches form one prefix group, whose canonical chain is the first request's ids, extended by a
// later request that matches the whole chain and goes on (a multi-turn conversation). A request's
// prefix_tokens = block x (its leading run of ids on the chain, including ids it adds), capped at its prompt.
// Branches off the chain are not shared (a group holds one chain), so hits are never over-counted. The table
// keeps at most max_tracked_hash_ids ids; past that, new groups start no more and chains stop growing
// (requests without a group then have no shared prefix).
void TraceSource::apply_hash_ids(const std::vector<std::int64_t>& ids, SimRequest& out) {
  if (ids.empty()) return;
  const i64 block = opts_.hash_block_tokens;
  auto it = group_of_first_.find(ids.front());
  i64 run = 0;
  if (it == group_of_first_.end()) {
    if (tracked_ids_ + static_cast<i64>(ids.size()) > opts_.max_tracked_hash_ids) return;
    const i64 g = static_cast<i64>(chains_.size());
    group_of_first_.emplace(ids.front(), g);
    chains_.push_back(ids);
    tracked_ids_ += static_cast<i64>(ids.size());
    out.prefix_group = g;
    run = static_cast<i64>(ids.size());
  } else {
    std::vector<std::int64_t>& chain = chains_[static_cast<std::size_t>(it->second)];
    std::size_t m = 0;
    while (m < ids.size() && m < chain.size() && ids[m] == chain[m]) ++m;
    if (m == chain.size() && ids.size() > m &&
        tracked_ids_ + static_cast<i64>(ids.size() - m) <= opts_.max_tracked_hash_ids) {
      chain.insert(chain.end(), ids.begin() + static_cast<std::ptrdiff_t>(m), ids.end());
      tracked_ids_ += static_cast<i64>(ids.size() - m);
      m = ids.size();
    }
    out.prefix_group = it->second;
    run = static_cast<i64>(m);
  }
  out.prefix_tokens = std::min(out.prompt_tokens,
                               run * block);  // run <= max_tokens / block + 1: no overflow
}

bool TraceSource::next(SimRequest& out) {
  if (opts_.max_rows >= 0 && rows_ >= opts_.max_rows) return false;
  std::string line;
  for (;;) {
    if (has_pending_) {
      line = std::move(pending_);
      has_pending_ = false;
      // line_no_ already counts it: the first line was the last one read
    } else if (!read_line(line)) {
      return false;
    }
    if (!trim(line).empty()) break;
  }
  out = SimRequest{};
  out.id = rows_;
  const bool ok = format_ == "csv" ? parse_csv_row(line, out) : parse_jsonl_row(line, out);
  if (ok) ++rows_;
  return ok;
}

namespace {

enum class IntErr { ok, empty, not_number, not_whole, too_small, too_big };

IntErr to_int(const std::string& cell, i64 lo, i64 hi, i64& v) {
  const std::string t = trim(cell);
  if (t.empty()) return IntErr::empty;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e) {
    double d;
    if (!parse_double(t, d)) return IntErr::not_number;
    if (d != std::floor(d)) return IntErr::not_whole;
    if (d < static_cast<double>(lo)) return IntErr::too_small;
    if (d > static_cast<double>(hi)) return IntErr::too_big;
    v = static_cast<i64>(d);
  }
  if (v < lo) return IntErr::too_small;
  if (v > hi) return IntErr::too_big;
  return IntErr::ok;
}

std::string int_problem(IntErr e, const std::string& text, i64 lo, i64 hi, const std::string& what) {
  switch (e) {
    case IntErr::empty:
      return "empty; expected " + what;
    case IntErr::not_number:
      return "expected " + what + ", got " + shown(text);
    case IntErr::not_whole:
      return "expected a whole number, got " + shown(text);
    case IntErr::too_small:
      return (text.find('-') != std::string::npos && lo >= 0 ? "negative: " : "too small: ") + shown(text) +
             " (expected >= " + std::to_string(lo) + ")";
    case IntErr::too_big:
      return shown(text) + " exceeds the limit of " + std::to_string(hi);
    case IntErr::ok:
      break;
  }
  return "";
}

}  // namespace

i64 TraceSource::id_of(int field, const std::string& column, const std::string& text) {
  const std::string t = trim(text);
  if (t.empty()) return -1;
  double d;
  if (parse_double(t, d)) {  // a number must be a whole one >= 0: 1.5 or -3 is a slip, not a name
    i64 v = 0;
    const IntErr e = to_int(t, 0, kNamedIdBase - 1, v);
    if (e != IntErr::ok)
      fail(column, int_problem(e, t, 0, kNamedIdBase - 1, "a whole number"),
           "give a whole number >= 0, a name, or leave it empty");
    return v;
  }
  auto& names = field == kJSession ? session_names_ : group_names_;
  const i64 next = kNamedIdBase + static_cast<i64>(names.size());
  return names.try_emplace(t, next).first->second;
}

bool TraceSource::parse_csv_row(const std::string& line, SimRequest& out) {
  if (!split_csv(line, cells_)) fail("", "unterminated quote", "close the quote");
  if (cells_.size() != ncols_)
    fail("", "expected " + std::to_string(ncols_) + " columns as in the header, found " + std::to_string(cells_.size()),
         "give every row the header's columns");
  auto length = [&](int ci, const std::string& col, i64 lo) {
    i64 v = 0;
    const std::string& cell = cells_[static_cast<std::size_t>(ci)];
    const IntErr e = to_int(cell, lo, opts_.max_tokens, v);
    if (e != IntErr::ok)
      fail(col, int_problem(e, cell, lo, opts_.max_tokens, "a whole number of tokens"),
           lo >= 1 ? "give a whole number of tokens from 1 to " + std::to_string(opts_.max_tokens) + ", or drop the row"
                   : "give a whole number of tokens, or drop the row");
    return v;
  };
  out.prompt_tokens = length(ci_prompt_, prompt_col_, 1);
  out.output_tokens = length(ci_output_, output_col_, 1);
  if (ci_arrival_ >= 0) {
    const std::string& cell = cells_[static_cast<std::size_t>(ci_arrival_)];
    double rel = 0;
    if (arrival_unit_.empty()) {  // decided by the first row: seconds or a datetime
      std::int64_t ns;
      double d;
      if (parse_double(cell, d))
        arrival_unit_ = "s";
      else if (parse_datetime_ns(cell, ns))
        arrival_unit_ = "datetime";
      else
        fail(arrival_col_, "expected seconds or a datetime (2023-11-16 18:15:46.68), got " + shown(cell),
             "fix the row");
    }
    if (arrival_unit_ == "datetime") {
      std::int64_t ns;
      if (!parse_datetime_ns(cell, ns))
        fail(arrival_col_,
             "expected a datetime like the first row's (2023-11-16 "
             "18:15:46.68), got " +
                 shown(cell),
             "fix the row");
      if (!have_origin_) origin_ns_ = ns;
      rel = static_cast<double>(ns - origin_ns_) * 1e-9;
    } else {
      double d;
      if (!parse_double(cell, d))
        fail(arrival_col_,
             std::string("expected a number of ") + (arrival_unit_ == "ms" ? "milliseconds" : "seconds") + ", got " +
                 shown(cell),
             "fix the row");
      if (arrival_unit_ == "ms") d *= 1e-3;
      if (!have_origin_) origin_s_ = d;
      rel = d - origin_s_;
    }
    have_origin_ = true;
    set_arrival(rel, arrival_col_, out);
  }
  auto opt_int = [&](int ci, const std::string& col, i64 lo, i64 hi, i64& dst) {
    if (ci < 0) return false;
    const std::string& cell = cells_[static_cast<std::size_t>(ci)];
    if (trim(cell).empty()) return false;
    i64 v = 0;
    const IntErr e = to_int(cell, lo, hi, v);
    if (e != IntErr::ok)
      fail(col, int_problem(e, cell, lo, hi, "a whole number"),
           "give a whole number >= " + std::to_string(lo) + " or leave it empty");
    dst = v;
    return true;
  };
  const i64 group = ci_group_ >= 0 ? id_of(kJGroup, "prefix_group", cells_[static_cast<std::size_t>(ci_group_)]) : -1;
  if (group >= 0) {
    out.prefix_group = group;
    out.prefix_tokens = std::min(opts_.default_prefix_tokens, out.prompt_tokens);
    if (opt_int(ci_prefix_, "prefix_tokens", 0, opts_.max_tokens, out.prefix_tokens) &&
        out.prefix_tokens > out.prompt_tokens)
      fail("prefix_tokens",
           std::to_string(out.prefix_tokens) + " exceeds the row's " + std::to_string(out.prompt_tokens) +
               " prompt tokens",
           "the shared prefix is part of the prompt");
  } else if (ci_group_ < 0 && opts_.default_prefix_tokens > 0) {
    // no prefix_group column: --shared-prefix N makes the first N tokens of every row one shared system prompt
    out.prefix_group = 0;
    out.prefix_tokens = std::min(opts_.default_prefix_tokens, out.prompt_tokens);
  }
  if (ci_session_ >= 0) {
    const i64 id = id_of(kJSession, "session", cells_[static_cast<std::size_t>(ci_session_)]);
    if (id >= 0) out.session = id;
  }
  opt_int(ci_priority_, "priority", -(i64{1} << 62), i64{1} << 62, out.priority);
  if (ci_think_ >= 0 && !trim(cells_[static_cast<std::size_t>(ci_think_)]).empty()) {
    double d;
    if (!parse_double(cells_[static_cast<std::size_t>(ci_think_)], d) || !(d >= 0 && d <= kMaxSimClockS))
      fail("think_s", "expected seconds in 0..10^9, got " + shown(cells_[static_cast<std::size_t>(ci_think_)]),
           "fix the row (the simulator's clock keeps its milliseconds up to 10^9 s)");
    out.think_s = d;
  }
  return true;
}

bool TraceSource::parse_jsonl_row(const std::string& line, SimRequest& out) {
  const nlohmann::json j = parse_jsonl_object(line);
  // a field's value: under the key the first row named it with, spelled in any case ("Input Length" is
  // input_length); null when absent
  auto value = [&](JField f) -> const nlohmann::json* {
    if (jnorm_first_[f].empty() || jnorm_row_[f] != jnorm_first_[f]) return nullptr;
    const auto it = j.find(jkey_row_[f]);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  };
  // the key as this row spells it (or the first row, where this row lacks it)
  auto label = [&](JField f) -> const std::string& {
    return jnorm_row_[f] == jnorm_first_[f] ? jkey_row_[f] : jkey_first_[f];
  };
  auto integer = [&](JField f, i64 lo, i64 hi, const std::string& fix) -> i64 {
    const nlohmann::json* p = value(f);
    if (!p) fail(label(f), "missing", "give every row the first row's keys");
    const nlohmann::json& v = *p;
    const std::string text = v.dump();
    i64 x = 0;
    IntErr e = IntErr::ok;
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(hi))
        e = IntErr::too_big;
      else
        x = static_cast<i64>(u);
    } else if (v.is_number_integer()) {
      x = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      if (d != std::floor(d))
        e = IntErr::not_whole;
      else if (d < static_cast<double>(lo))
        e = IntErr::too_small;
      else if (d > static_cast<double>(hi))
        e = IntErr::too_big;
      else
        x = static_cast<i64>(d);
    } else {
      e = IntErr::not_number;
    }
    if (e == IntErr::ok && x < lo) e = IntErr::too_small;
    if (e == IntErr::ok && x > hi) e = IntErr::too_big;
    if (e != IntErr::ok) fail(label(f), int_problem(e, text, lo, hi, "a whole number"), fix);
    return x;
  };
  const std::string len_fix =
      "give a whole number of tokens from 1 to " + std::to_string(opts_.max_tokens) + ", or drop the row";
  out.prompt_tokens = integer(kJPrompt, 1, opts_.max_tokens, len_fix);
  out.output_tokens = integer(kJOutput, 1, opts_.max_tokens, len_fix);
  if (!arrival_col_.empty()) {
    const nlohmann::json* a = value(kJArrival);
    if (!a || !a->is_number())
      fail(label(kJArrival), !a ? "missing" : "expected a number, got " + shown(a->dump()),
           "give every row an arrival time");
    double d = a->get<double>();
    if (!std::isfinite(d)) fail(label(kJArrival), "not a finite number", "fix the row");
    if (arrival_unit_ == "ms") d *= 1e-3;
    if (!have_origin_) origin_s_ = d;
    have_origin_ = true;
    set_arrival(d - origin_s_, label(kJArrival), out);
  }
  // a session or prefix group: a number, or a name given as a string
  auto id = [&](JField f) -> i64 {
    const nlohmann::json* v = value(f);
    if (!v) return -1;
    if (v->is_string()) return id_of(f, label(f), v->get<std::string>());
    if (!v->is_number())
      fail(label(f), "expected a whole number or a name, got " + shown(v->dump()), "give a number >= 0 or a string");
    return integer(f, 0, kNamedIdBase - 1, "give a whole number >= 0, a name as a string, or leave it out");
  };
  if (const i64 group = id(kJGroup); group >= 0) {
    out.prefix_group = group;
    out.prefix_tokens = std::min(opts_.default_prefix_tokens, out.prompt_tokens);
    if (value(kJPrefix)) {
      out.prefix_tokens = integer(kJPrefix, 0, opts_.max_tokens, "give a whole number of tokens");
      if (out.prefix_tokens > out.prompt_tokens)
        fail(label(kJPrefix),
             std::to_string(out.prefix_tokens) + " exceeds the row's " + std::to_string(out.prompt_tokens) +
                 " prompt tokens",
             "the shared prefix is part of the prompt");
    }
  } else if (const nlohmann::json* h = value(kJHash)) {
    if (!h->is_array()) fail(label(kJHash), "expected an array of integers", "write hash_ids as [1, 2, 3]");
    const std::size_t most = static_cast<std::size_t>(opts_.max_tokens / opts_.hash_block_tokens + 1);
    if (h->size() > most)
      fail(label(kJHash),
           std::to_string(h->size()) + " ids exceed the " + std::to_string(most) +
               " a prompt within the token limit has",
           "fix the row");
    std::vector<std::int64_t> ids;
    ids.reserve(h->size());
    for (const auto& x : *h) {
      if (!x.is_number_integer())
        fail(label(kJHash), "expected an array of integers, found " + shown(x.dump()), "write hash_ids as [1, 2, 3]");
      ids.push_back(x.is_number_unsigned() ? static_cast<std::int64_t>(x.get<std::uint64_t>()) : x.get<std::int64_t>());
    }
    apply_hash_ids(ids, out);
  } else if (jnorm_first_[kJGroup].empty() && jnorm_first_[kJHash].empty() && opts_.default_prefix_tokens > 0) {
    // no prefix_group (or hash_ids) key: --shared-prefix N makes the first N tokens of every row one shared prompt
    out.prefix_group = 0;
    out.prefix_tokens = std::min(opts_.default_prefix_tokens, out.prompt_tokens);
  }
  if (const i64 session = id(kJSession); session >= 0) out.session = session;
  if (value(kJPriority)) out.priority = integer(kJPriority, -(i64{1} << 62), i64{1} << 62, "give a whole number");
  if (const nlohmann::json* t = value(kJThink)) {
    if (!t->is_number() || !(t->get<double>() >= 0 && t->get<double>() <= kMaxSimClockS))
      fail(label(kJThink), "expected seconds in 0..10^9",
           "fix the row (the simulator's clock keeps its milliseconds up to 10^9 s)");
    out.think_s = t->get<double>();
  }
  return true;
}

std::vector<std::pair<i64, double>> read_length_histogram(const std::string& path, i64 max_tokens) {
  const std::string text = read_text_file(path, 16 << 20);
  std::vector<std::pair<i64, double>> h;
  double total = 0;
  std::size_t pos = 0;
  i64 line_no = 0;
  std::vector<std::string> cells;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line_no);
    if (!split_csv(t, cells) || cells.size() != 2)
      throw InputError(where, "expected two columns, tokens,weight, got " + shown(t),
                       "write one `tokens,weight` row per line");
    i64 tokens = 0;
    double w = 0;
    const IntErr e = to_int(cells[0], 1, max_tokens, tokens);
    if (e != IntErr::ok) {
      if (h.empty() && !parse_double(cells[0], w)) continue;  // a header row
      throw InputError(where + ": tokens", int_problem(e, cells[0], 1, max_tokens, "a whole number of tokens"),
                       "give a whole number of tokens from 1 to " + std::to_string(max_tokens));
    }
    if (!parse_double(cells[1], w) || w < 0)
      throw InputError(where + ": weight", "expected a number >= 0, got " + shown(cells[1]), "give a count or a share");
    h.emplace_back(tokens, w);
    total += w;
    if (!std::isfinite(total))  // weights of 1e308: the sum overflows and every draw lands on the last row
      throw InputError(where + ": weight", "the weights so far sum beyond a double", "scale the weights down (they are relative)");
  }
  if (h.empty() || !(total > 0))
    throw InputError(path, h.empty() ? "no rows" : "every weight is 0",
                     "write `tokens,weight` rows with a positive weight");
  return h;
}

}  // namespace kvplan::io
