// Capacity-review reports: HTML is self-contained (no script, no URL), escaped, and draws one heatmap
// cell per (context, concurrency); Markdown carries the same content; charts are skipped for empty
// inputs; output is byte-stable. Set KVPLAN_REPORT_SAMPLE=DIR to also write the sample report to
// DIR/report-sample.html and DIR/report-sample.md (for scripts/screenshot-report.sh).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_run.hpp"
#include "output.hpp"
#include "report.hpp"

using namespace kvplan;
using namespace kvplan::cli;

namespace {

constexpr i64 GiB = i64{1} << 30;

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

ReportSection passing_section() {
  ReportSection s;
  s.title = "llama-3.1-70b on 4 x h100-sxm (vllm)";
  s.status = "PASS";
  s.summary = {{"model", "llama-3.1-70b (bf16 weights, fp8 KV)"}, {"GPUs", "4 x h100-sxm, tensor parallel 4"},
               {"max context at concurrency 16", "32k"}};
  s.contexts = {8 * 1024, 32 * 1024, 128 * 1024};
  s.concurrencies = {1, 4, 16, 64};
  s.fits = {{true, true, true, true}, {true, true, true, false}, {true, true, false, false}};
  s.headroom_fraction = {{0.97, 0.9, 0.61, 0.08}, {0.9, 0.61, 0.42, -0.12}, {0.61, 0.2, -0.56, -2.5}};
  s.budget = {{"weights", 36 * GiB},
              {"KV pool", 30 * GiB},
              {"activations", 2 * GiB},
              {"cuda graphs", 0},  // zero: skipped
              {"runtime", 3 * GiB / 2}};
  s.gpu_total_bytes = 80 * GiB;
  s.throughput = {{1, 38.46}, {4, 140.2}, {16, 480.0}, {64, 1210.7}};
  Table t;
  t.title = "Requirements";
  t.columns = {"context", "concurrency", "KV per GPU"};
  t.right_align = {true, true, true};
  t.rows = {{"32k", "16", "12.50 GiB"}, {"128k", "4", "12.50 GiB"}};
  s.tables.push_back(t);
  s.assumptions = {"KV bytes per token = layers * kv_heads * head_dim * 2 (K+V) * bytes per element",
                   "activation peak < 2 GiB at 8k prefill chunk"};
  return s;
}

ReportSection failing_section() {
  ReportSection s;
  s.title = "Tom's <b>\"big\" & bold</b>";
  s.status = "FAIL";
  s.summary = {{"limiting factor", "weights > GPU memory"}};
  s.contexts = {4096, 1536};
  s.concurrencies = {1, 2};
  s.fits = {{false, false}, {false, false}};
  s.headroom_fraction = {{-0.3, -0.7}, {-0.2, -0.5}};
  s.budget = {{"weights", 90 * GiB}};
  s.gpu_total_bytes = 80 * GiB;
  s.throughput = {{1, 10.0}, {2, 19.5}, {8, 60.25}};  // 8x range: linear x axis
  return s;
}

Report sample_report() {
  Report r;
  r.title = "Capacity review";
  r.generated_by = "kvplan 0.1.0 (test)";
  r.sections = {passing_section(), failing_section()};
  return r;
}

}  // namespace

TEST_CASE("HTML report is self-contained: no script, no URL, inline style and SVG", "[report]") {
  const std::string h = render_html(sample_report());
  CHECK(h.rfind("<!doctype html>\n", 0) == 0);
  CHECK(h.find("<meta charset=\"utf-8\">") != std::string::npos);
  CHECK(h.find("<style>") != std::string::npos);
  CHECK(h.find("<svg") != std::string::npos);
  CHECK(h.find("<script") == std::string::npos);
  CHECK(h.find("http://") == std::string::npos);
  CHECK(h.find("https://") == std::string::npos);
  CHECK(h.find("@import") == std::string::npos);
  CHECK(h.find("url(") == std::string::npos);
  CHECK(h.find("</html>\n") == h.size() - 8);
}

TEST_CASE("HTML report escapes every text value", "[report]") {
  Report r = sample_report();
  r.sections[1].assumptions = {"a < b && c > d"};
  r.sections[1].tables.push_back(Table{"<t>", {"<c>"}, {false}, {{"<v>"}}});
  const std::string h = render_html(r);
  CHECK(h.find("Tom&#39;s &lt;b&gt;&quot;big&quot; &amp; bold&lt;/b&gt;") != std::string::npos);
  CHECK(h.find("<b>") == std::string::npos);
  CHECK(h.find("a &lt; b &amp;&amp; c &gt; d") != std::string::npos);
  CHECK(h.find("<caption>&lt;t&gt;</caption>") != std::string::npos);
  CHECK(h.find("<th>&lt;c&gt;</th>") != std::string::npos);
  CHECK(h.find("<td>&lt;v&gt;</td>") != std::string::npos);
  CHECK(h.find("<v>") == std::string::npos);
}

TEST_CASE("HTML report has status badges and the summary", "[report]") {
  const std::string h = render_html(sample_report());
  CHECK(h.find("<span class=\"badge pass\">PASS</span>") != std::string::npos);
  CHECK(h.find("<span class=\"badge fail\">FAIL</span>") != std::string::npos);
  CHECK(h.find("<dt>GPUs</dt><dd>4 x h100-sxm, tensor parallel 4</dd>") != std::string::npos);
}

TEST_CASE("HTML heatmap draws one cell per context x concurrency", "[report]") {
  const std::string h = render_html(sample_report());
  CHECK(count(h, "class=\"cell ") == 3 * 4 + 2 * 2);  // section 1: 3 contexts x 4 concurrencies; section 2: 2 x 2
  CHECK(count(h, "class=\"cell fit\"") == 4 + 3 + 2);  // fitting cells per row of section 1
  CHECK(count(h, "class=\"cell nofit\"") == 0 + 1 + 2 + 4);
  // human axis labels
  CHECK(h.find(">8k</text>") != std::string::npos);
  CHECK(h.find(">32k</text>") != std::string::npos);
  CHECK(h.find(">128k</text>") != std::string::npos);
  CHECK(h.find(">1.5k</text>") != std::string::npos);  // 1536 = 1.5 * 1024
  // cell labels: headroom percent with the mark
  CHECK(h.find(">✓ 42%</text>") != std::string::npos);
  CHECK(h.find(">✗ -12%</text>") != std::string::npos);
  CHECK(h.find(">✗ -250%</text>") != std::string::npos);
  CHECK(h.find("does not fit</text>") != std::string::npos);  // legend
}

TEST_CASE("HTML budget bar labels each nonzero term in GiB and shows free space", "[report]") {
  const std::string h = render_html(sample_report());
  CHECK(h.find(">weights</text>") != std::string::npos);
  CHECK(h.find(">36.00 GiB</text>") != std::string::npos);
  CHECK(h.find(">KV pool</text>") != std::string::npos);
  CHECK(h.find(">runtime</text>") != std::string::npos);
  CHECK(h.find(">1.50 GiB</text>") != std::string::npos);
  CHECK(h.find("cuda graphs") == std::string::npos);  // 0 bytes: skipped
  CHECK(h.find(">free</text>") != std::string::npos);
  CHECK(h.find(">10.50 GiB</text>") != std::string::npos);  // 80 - (36 + 30 + 2 + 1.5)
  CHECK(h.find(">80.00 GiB</text>") != std::string::npos);
  CHECK(h.find(">45.0%</text>") != std::string::npos);   // 36 / 80
  CHECK(h.find(">13.1%</text>") != std::string::npos);   // 10.5 / 80 = 13.125%
  CHECK(h.find("over the GPU total by") != std::string::npos);  // section 2: 90 GiB on 80
  CHECK(h.find(">10.00 GiB</text>") != std::string::npos);      // 90 - 80
}

TEST_CASE("HTML throughput chart uses a log x axis only beyond a 16x range", "[report]") {
  Report r = sample_report();
  r.sections.resize(1);
  const std::string wide = render_html(r);  // 1 .. 64: 64x
  CHECK(wide.find("(log scale)") != std::string::npos);
  CHECK(wide.find("decode tokens/s per GPU</text>") != std::string::npos);
  CHECK(wide.find(">1,211</text>") != std::string::npos);  // 1210.7 rounded
  CHECK(count(wide, "<g class=\"pt\">") == 4);
  r.sections[0] = failing_section();  // 1 .. 8: 8x
  const std::string narrow = render_html(r);
  CHECK(narrow.find("(log scale)") == std::string::npos);
  CHECK(count(narrow, "<g class=\"pt\">") == 3);
  CHECK(narrow.find(">60.2</text>") != std::string::npos);  // 60.25 to one decimal, ties to even
}

TEST_CASE("Markdown report carries the same content", "[report]") {
  const std::string m = render_markdown(sample_report());
  CHECK(m.rfind("# Capacity review\n", 0) == 0);
  CHECK(m.find("## llama-3.1-70b on 4 x h100-sxm (vllm) — PASS\n") != std::string::npos);
  CHECK(m.find("— FAIL\n") != std::string::npos);
  CHECK(m.find("| GPUs | 4 x h100-sxm, tensor parallel 4 |") != std::string::npos);
  CHECK(m.find("| context / concurrency | 1 | 4 | 16 | 64 |\n| --- | :---: | :---: | :---: | :---: |\n") !=
        std::string::npos);
  CHECK(m.find("| 32k | ✓ 90% | ✓ 61% | ✓ 42% | ✗ -12% |\n") != std::string::npos);
  CHECK(m.find("| 128k | ✓ 61% | ✓ 20% | ✗ -56% | ✗ -250% |\n") != std::string::npos);
  CHECK(count(m, "✓ ") == 4 + 3 + 2 + 2);  // fitting cells of section 1 + the legend line of both heatmaps
  CHECK(m.find("| weights | 36.00 | 45.0% |") != std::string::npos);
  CHECK(m.find("| free | 10.50 | 13.1% |") != std::string::npos);
  CHECK(m.find("| **GPU total** | **80.00** | **100.0%** |") != std::string::npos);
  CHECK(m.find("cuda graphs") == std::string::npos);
  CHECK(m.find("| **over the GPU total by** | **10.00** | **12.5%** |") != std::string::npos);
  CHECK(m.find("| Concurrency | Decode tokens/s per GPU |") != std::string::npos);
  CHECK(m.find("| 64 | 1,211 |") != std::string::npos);
  CHECK(m.find("| 1 | 38.5 |") != std::string::npos);
  CHECK(m.find("### Requirements\n\n| context | concurrency | KV per GPU |") != std::string::npos);
  CHECK(m.find("- activation peak < 2 GiB at 8k prefill chunk\n") != std::string::npos);
}

TEST_CASE("empty inputs skip the charts", "[report]") {
  Report r;
  r.title = "empty";
  ReportSection s;
  s.title = "nothing planned";
  r.sections.push_back(s);
  // degenerate inputs: contexts without concurrencies, zero budget terms, unusable throughput points
  s.title = "degenerate";
  s.contexts = {4096};
  s.budget = {{"weights", 0}};
  s.gpu_total_bytes = 80 * GiB;
  s.throughput = {{0, 10.0}, {-4, 5.0}};
  r.sections.push_back(s);
  const std::string h = render_html(r);
  CHECK(h.find("<svg") == std::string::npos);
  CHECK(h.find("<h3>") == std::string::npos);
  CHECK(h.find("nothing planned") != std::string::npos);
  CHECK(h.find("badge pass") == std::string::npos);
  const std::string m = render_markdown(r);
  CHECK(m.find("###") == std::string::npos);
  CHECK(m.find("## nothing planned\n") != std::string::npos);
  CHECK(m.find("## degenerate\n") != std::string::npos);
  // no sections at all still makes a page
  const std::string bare = render_html(Report{});
  CHECK(bare.find("</html>") != std::string::npos);
  CHECK(bare.find("<svg") == std::string::npos);
}

TEST_CASE("ragged heatmap data draws missing cells as n/a", "[report]") {
  Report r;
  ReportSection s = passing_section();
  s.fits.pop_back();  // last context row has no data
  r.sections.push_back(s);
  const std::string h = render_html(r);
  CHECK(count(h, "class=\"cell ") == 3 * 4);
  CHECK(count(h, "class=\"cell na\"") == 4);
  CHECK(render_markdown(r).find("| 128k | – | – | – | – |") != std::string::npos);
}

TEST_CASE("report output is byte-identical across calls", "[report]") {
  const Report r = sample_report();
  const std::string h1 = render_html(r), h2 = render_html(r);
  const std::string m1 = render_markdown(r), m2 = render_markdown(r);
  CHECK(h1 == h2);
  CHECK(m1 == m2);
  if (const char* dir = std::getenv("KVPLAN_REPORT_SAMPLE")) {
    Report full = r;
    ReportSection empty;
    empty.title = "empty section (charts skipped)";
    full.sections.push_back(empty);
    ReportSection big = passing_section();  // a large grid: 4k .. 1M contexts x 1 .. 512 sequences
    big.title = "large sweep";
    big.contexts.clear();
    big.concurrencies.clear();
    big.fits.clear();
    big.headroom_fraction.clear();
    big.throughput.clear();
    for (i64 c = 4096; c <= 1024 * 1024; c *= 2) big.contexts.push_back(c);
    for (i64 n = 1; n <= 512; n *= 2) {
      big.concurrencies.push_back(n);
      big.throughput.emplace_back(n, 40.0 * static_cast<double>(n) / (1.0 + static_cast<double>(n) / 64.0));
    }
    for (i64 c : big.contexts) {
      big.fits.emplace_back();
      big.headroom_fraction.emplace_back();
      for (i64 n : big.concurrencies) {
        const double h = 1.0 - static_cast<double>(c) * static_cast<double>(n) / (2.0 * 1024 * 1024);
        big.fits.back().push_back(h >= 0);
        big.headroom_fraction.back().push_back(h);
      }
    }
    full.sections.push_back(big);
    std::ofstream(std::string(dir) + "/report-sample.html") << render_html(full);
    std::ofstream(std::string(dir) + "/report-sample.md") << render_markdown(full);
  }
}

TEST_CASE("the report's step formula is the one the engine's step time uses", "[report]") {
  // vLLM and SGLang join the weight read, the GEMMs and the dequantisation as a p-norm (gemm_overlap_p, 1.5);
  // TensorRT-LLM and llama.cpp take the largest (core/perf.cpp)
  auto formula = [](const std::string& engine) {
    const std::string md = kvtest::write_temp("report-formula", engine + ".md", "");
    const auto r = kvtest::kvplan({"report", "llama-3.1-8b", "--gpu", "h100", "--engine", engine, "--markdown", md});
    REQUIRE(r.exit == 0);
    std::ifstream in(md);
    std::string line;
    while (std::getline(in, line))
      if (line.find("decode step = ") != std::string::npos) return line;
    return std::string();
  };
  CHECK(formula("vllm").find("(weights read^p + GEMM FLOPs^p + dequant^p)^(1/p), p = 1.50") != std::string::npos);
  CHECK(formula("trtllm").find("max(weights read, GEMM FLOPs, dequant)") != std::string::npos);
}

TEST_CASE("a terminal table too wide for 100 columns wraps at spaces before it breaks a word", "[report][output]") {
  // check's seven columns with a 28-character deployment name: the name keeps its line, and 'requirement' and
  // 'concurrency' are not cut (they were wrapped at 10 characters: 'requiremen' / 't')
  const char* before = std::getenv("COLUMNS");
  const std::string saved = before ? before : "";
  unsetenv("COLUMNS");
  const auto r = kvtest::kvplan({"check", std::string(KVPLAN_TEST_DATA) + "/../../examples/llama8b-l4-llamacpp.yaml"});
  if (before) setenv("COLUMNS", saved.c_str(), 1);
  REQUIRE(r.exit == 0);
  CHECK(r.out.find("llama-3.1-8b-l4-llama-server  engine") != std::string::npos);
  CHECK(r.out.find("requirement") != std::string::npos);
  CHECK(r.out.find("concurrency") != std::string::npos);
  std::size_t widest = 0;
  for (std::size_t a = 0; a < r.out.size();) {
    const std::size_t b = std::min(r.out.find('\n', a), r.out.size());
    widest = std::max(widest, b - a);
    a = b + 1;
  }
  CHECK(widest <= 100);
}

TEST_CASE("the report's heatmap keeps a shortfall's size past the whole pool", "[report]") {
  // Llama-3.1-8B on one H100 at 8k tokens: the concurrency axis runs past twice what the KV pool holds, so some
  // cell needs more than two pools and reads below -100% (every such cell used to read -100%)
  const std::string md = kvtest::write_temp("report-heat", "heat.md", "");
  const auto r = kvtest::kvplan({"report", "llama-3.1-8b", "--gpu", "h100", "--context", "8k", "--concurrency", "16", "--markdown", md});
  REQUIRE(r.exit == 0);
  std::ifstream in(md);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int below = 0;
  for (std::size_t at = text.find("✗ -"); at != std::string::npos; at = text.find("✗ -", at + 1)) {
    const int pct = std::atoi(text.c_str() + at + std::string("✗ -").size());
    if (pct > 100) ++below;
  }
  CHECK(below > 0);
}

TEST_CASE("a sweep's report speaks of its grid, not of the base deployment's max-model-len", "[report]") {
  // llama-3.1-8b on an H100 under vLLM at 4k: 4,096 x 128 KiB = 512 MiB a request, so the summary's max concurrency is
  // that of the swept 4k (over a hundred), not of the 131,072-token max-model-len the base plans (a few)
  const std::string md = kvtest::write_temp("sweep-report", "grid.md", "");
  const auto r = kvtest::kvplan({"sweep", "llama-3.1-8b", "--context", "1k,4k", "--concurrency", "1,8", "--markdown", md});
  REQUIRE(r.exit == 0);
  std::ifstream in(md);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("| workload | grid: context 1024..4096 (2 values) tokens x concurrency 1..8 (2 values) |") != std::string::npos);
  CHECK(text.find("| fits | 4 of 4 cells |") != std::string::npos);
  CHECK(text.find("max concurrency at 4096 tokens") != std::string::npos);
  CHECK(text.find("131072") == std::string::npos);
}

TEST_CASE("a table that must break words breaks the other columns before the first (the ids users copy)", "[report][output]") {
  // kvplan models at 100 columns: the widest id, llama-4-maverick-17b-128e, stays whole on its line
  const char* before = std::getenv("COLUMNS");
  const std::string saved = before ? before : "";
  unsetenv("COLUMNS");
  const auto r = kvtest::kvplan({"models"});
  if (before) setenv("COLUMNS", saved.c_str(), 1);
  REQUIRE(r.exit == 0);
  CHECK(r.out.find("\nllama-4-maverick-17b-128e ") != std::string::npos);
  CHECK(r.out.find("\nllama-3.3-70b-instruct ") != std::string::npos);
  // a one-word cell in a text column (a model_type users grep) is not broken either: 'mllama_text_mode' / 'l' was
  // printed, a row over two lines; every data line holds the whole row (its source column ends it)
  CHECK(r.out.find(" mllama_text_model ") != std::string::npos);
  CHECK(r.out.find(" qwen3_vl_moe_text ") != std::string::npos);
  std::size_t body = 0, whole = 0;
  bool below_rule = false;
  for (std::size_t a = 0; a < r.out.size();) {
    const std::size_t b = std::min(r.out.find('\n', a), r.out.size());
    const std::string line = r.out.substr(a, b - a);
    if (below_rule && !line.empty()) {
      ++body;
      whole += line.find("built-in") != std::string::npos;
    }
    below_rule = below_rule || line.rfind("---", 0) == 0;
    a = b + 1;
  }
  CHECK(body > 50);
  CHECK(whole == body);  // below the heading's rule, one line a model
}

TEST_CASE("a sentence in a right-aligned column wraps at spaces before the text columns lose their words", "[report][output]") {
  // fit --find-max-rate's answer column holds numbers and sentences: at 100 columns the question column kept
  // about 8 characters ('highest' / 'rate' / 'meeting' ...) while the sentence stayed on one line
  kvplan::cli::set_table_options(100, false);
  kvplan::cli::Table t;
  t.columns = {"question", "answer", "next_limited_by"};
  t.right_align = {false, true, false};
  t.rows = {{"highest rate meeting p99 TPOT <= 100000.0 ms", "33.003 req/s", ""},
            {"at the failing rate", "TTFT 1502.6 ms, TPOT 104.00 ms, falling behind (median TTFT 108 ms early, 979 ms late) (simulated)",
             "falling_behind"}};
  const std::string out = kvplan::cli::render(t, kvplan::cli::Format::table);
  kvplan::cli::set_table_options(0, false);
  CHECK(out.find("highest rate meeting p99 TPOT <= 100000.0 ms") != std::string::npos);  // the question on one line
  CHECK(out.find("falling_behind") != std::string::npos);                                 // the id not broken
  CHECK(out.find("33.003 req/s") != std::string::npos);
  for (std::size_t a = 0; a < out.size();) {
    const std::size_t b = std::min(out.find('\n', a), out.size());
    CHECK(b - a <= 100);
    a = b + 1;
  }
}

TEST_CASE("a table too wide for the terminal never breaks a number, a heading's word or a list inside a number", "[report][output]") {
  // kvplan kv gemma-2-9b at 100 columns printed K bytes as '704,643,07' over '2', the heading 'bytes/laye' over 'r'
  // and the layer list '...,18,2' over '0,22,...'
  kvplan::cli::set_table_options(60, false);
  kvplan::cli::Table t;
  t.columns = {"layers", "kind", "per-token bytes/layer", "K bytes", "V bytes"};
  t.right_align = {false, false, true, true, true};
  t.rows = {{"0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40", "sliding", "16,384", "704,643,072", "704,643,072"}};
  const std::string out = kvplan::cli::render(t, kvplan::cli::Format::table);
  kvplan::cli::set_table_options(0, false);
  INFO(out);
  CHECK(out.find("704,643,072  704,643,072") != std::string::npos);
  CHECK(out.find("bytes/layer") != std::string::npos);
  std::string layers;  // the list's lines, joined back: every line ends at a comma but the last
  for (std::size_t a = 0; a < out.size();) {
    const std::size_t b = std::min(out.find('\n', a), out.size());
    const std::string l = out.substr(a, b - a);
    if (!l.empty() && std::isdigit(static_cast<unsigned char>(l[0]))) {
      const std::string cell = l.substr(0, l.find(' '));
      if (!layers.empty()) CHECK(layers.back() == ',');
      layers += cell;
    }
    a = b + 1;
  }
  CHECK(layers == "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40");
}
