// Request traces for `kvplan simulate` (CSV or JSONL), streamed row by row: a RequestSource that holds one
// line at a time, so a trace of 10^8 rows replays in constant memory. Reads the column layouts of the public
// traces (Azure LLM inference 2023/2024, BurstGPT, Mooncake FAST'25) and a plain layout (arrival_s,
// prompt_tokens, output_tokens, prefix_group, prefix_tokens, session). Column names and rules:
// docs/simulation.md, "Trace files".
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kvplan/core/simulate.hpp"

namespace kvplan::io {

struct TraceOptions {
  i64 max_rows = -1;                     // rows to read (-1: all)
  i64 max_tokens = 10'000'000;           // a prompt or output longer than this is an error
  bool require_sorted = true;            // open loop: arrivals must not decrease
  i64 default_prefix_tokens = 0;         // prefix_tokens of a prefix_group row without a prefix_tokens column; in a
                                         // trace with no prefix_group (or hash_ids), every row's, in group 0
  i64 hash_block_tokens = 512;           // Mooncake hash_ids: tokens per hashed block
  i64 max_tracked_hash_ids = 8'000'000;  // memory bound of the hash_ids prefix table (see trace.cpp)
  std::size_t max_line_bytes = 4 << 20;  // a longer line is an error (binary junk has no newlines)
};

/// A trace file streamed as requests. The constructor reads the header (CSV) or first row (JSONL) and throws
/// InputError when the file is missing, empty, binary or lacks a needed column; next() throws InputError for
/// a bad row, naming file:line, the column and the fix.
class TraceSource : public RequestSource {
 public:
  explicit TraceSource(const std::string& path, TraceOptions opts = {});
  ~TraceSource() override;
  TraceSource(const TraceSource&) = delete;
  TraceSource& operator=(const TraceSource&) = delete;

  bool next(SimRequest& out) override;

  /// "csv" or "jsonl".
  const std::string& format() const { return format_; }
  /// Which public layout the columns match: "azure", "burstgpt", "mooncake", "vidur" or "kvplan".
  const std::string& layout() const { return layout_; }
  /// The columns read: arrival, prompt, output (as spelled in the file), and the arrival unit.
  const std::string& arrival_column() const { return arrival_col_; }
  const std::string& prompt_column() const { return prompt_col_; }
  const std::string& output_column() const { return output_col_; }
  const std::string& arrival_unit() const { return arrival_unit_; }  // "s", "ms" or "datetime"
  i64 rows() const { return rows_; }

 private:
  bool read_line(std::string& line);
  [[noreturn]] void fail(const std::string& column, const std::string& what, const std::string& fix) const;
  void open_csv(const std::string& header);
  void open_jsonl(const std::string& first);
  bool parse_csv_row(const std::string& line, SimRequest& out);
  bool parse_jsonl_row(const std::string& line, SimRequest& out);
  // one JSONL line as an object, refusing a key repeated or a field named twice; sets jkey_row_ / jnorm_row_
  nlohmann::json parse_jsonl_object(const std::string& line);
  void set_arrival(double rel_s, const std::string& column, SimRequest& out);
  void apply_hash_ids(const std::vector<std::int64_t>& ids, SimRequest& out);
  // a session or prefix group cell: a whole number >= 0 is that id; other text (a conversation UUID) is a name,
  // numbered in order of first appearance from kNamedIdBase (trace.cpp); empty: -1
  i64 id_of(int field, const std::string& column, const std::string& text);

  std::string path_;
  TraceOptions opts_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;
  std::size_t buf_pos_ = 0, buf_len_ = 0;
  bool eof_ = false;
  i64 line_no_ = 0;
  i64 rows_ = 0;
  std::string pending_;  // the first data line, read while detecting the format (JSONL)
  bool has_pending_ = false;

  std::string format_, layout_, arrival_col_, prompt_col_, output_col_, arrival_unit_;
  // CSV: column indices (-1: absent)
  int ci_arrival_ = -1, ci_prompt_ = -1, ci_output_ = -1, ci_group_ = -1, ci_prefix_ = -1, ci_session_ = -1,
      ci_think_ = -1, ci_priority_ = -1;
  std::size_t ncols_ = 0;
  std::vector<std::string> cells_;
  // JSONL, per field (prompt, output, arrival, prefix_group, prefix_tokens, session, think_s, priority,
  // hash_ids; see trace.cpp): the key naming it, as spelled and normalised, in the first row and in the row being
  // read (empty: absent)
  std::vector<std::string> jkey_first_, jnorm_first_, jkey_row_, jnorm_row_;
  std::vector<std::string> jkeys_last_;  // the keys of the last row resolved into jkey_row_
  // arrival origin: the first row
  bool have_origin_ = false;
  double origin_s_ = 0;
  std::int64_t origin_ns_ = 0;  // datetime: nanoseconds since 1970 (no double rounding on 1.7e9 s)
  double last_arrival_s_ = 0;
  // Mooncake hash_ids: first id -> group; each group's canonical chain of ids
  std::unordered_map<std::int64_t, i64> group_of_first_;
  std::vector<std::vector<std::int64_t>> chains_;
  i64 tracked_ids_ = 0;
  // named sessions and prefix groups (id_of): name -> id, per field
  std::unordered_map<std::string, i64> session_names_, group_names_;
};

/// A length histogram (--prompt-histogram / --output-histogram): one `tokens,weight` row per line, an
/// optional header row, `#` comments. Tokens 1..max_tokens, weights >= 0 and not all 0.
std::vector<std::pair<i64, double>> read_length_histogram(const std::string& path, i64 max_tokens = 10'000'000);

/// Parses "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (also with 'T') into nanoseconds since 1970-01-01
/// UTC; false when `s` is not such a datetime, names a day its month lacks (2023-02-30: Gregorian leap years) or
/// an offset past +-14:00 or with minutes over 59.
bool parse_datetime_ns(const std::string& s, std::int64_t& ns);

}  // namespace kvplan::io
