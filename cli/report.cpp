// Capacity-review reports (see report.hpp): a self-contained HTML page with inline CSS and hand-drawn
// SVG charts, and the same content as Markdown. Output is a pure function of the Report: no clock,
// no locale (numbers go through std::to_chars), no script, no external URL.
#include "report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>

namespace kvplan::cli {

namespace {

// ---------------------------------------------------------------------------------------------
// Text and number formatting (locale-independent, so output is byte-stable)
// ---------------------------------------------------------------------------------------------

/// HTML/XML escaping of text content and attribute values.
std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

/// Fixed-point with `prec` decimals; "-0.0" is printed as "0.0". Non-finite values print "n/a".
std::string fixed(double v, int prec) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, prec);
  if (ec != std::errc()) return "n/a";
  std::string s(buf, end);
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(i64 bytes) { return fixed(static_cast<double>(bytes) / kGiB, 2) + " GiB"; }

/// Token and sequence counts as people write them: 32768 -> "32k", 1536 -> "1.5k", 1048576 -> "1M", 100 -> "100".
std::string human_num(i64 v) {
  const i64 a = v < 0 ? -v : v;
  const std::string sign = v < 0 ? "-" : "";
  constexpr i64 K = 1024, M = 1024 * 1024;
  if (a >= M && a % (M / 2) == 0) return sign + (a % M ? fixed(static_cast<double>(a) / M, 1) : std::to_string(a / M)) + "M";
  if (a >= K && a % (K / 2) == 0) return sign + (a % K ? fixed(static_cast<double>(a) / K, 1) : std::to_string(a / K)) + "k";
  return sign + grouped(a);
}

/// Headroom fraction as a whole percentage: 0.424 -> "42%".
std::string pct0(double f) {
  if (!std::isfinite(f)) return "n/a";
  return fixed(std::round(f * 100.0), 0) + "%";
}

/// Tokens per second: "1,234" from 100 up, "12.3" below.
std::string rate(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (std::fabs(v) >= 100.0) return grouped(std::llround(v));
  return fixed(v, 1);
}

/// SVG coordinate.
std::string px(double v) { return fixed(v, 1); }

/// One line of free text for Markdown: newlines become spaces.
std::string md_line(const std::string& s) {
  std::string out = s;
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return out;
}

/// A Markdown table cell: one line, '|' escaped.
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : md_line(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

/// A "nice" step (1, 2 or 5 x 10^n) that splits [0, span] into about `n` intervals.
double nice_step(double span, int n) {
  if (!(span > 0) || !std::isfinite(span)) return 1.0;
  const double raw = span / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  const double m = r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 5.0 ? 5.0 : 10.0;
  return m * mag;
}

/// Tick label for a value on an axis whose ticks are `step` apart.
std::string tick_label(double v, double step) {
  if (step >= 1.0) return grouped(std::llround(v));
  const int dec = std::clamp(static_cast<int>(std::ceil(-std::log10(step))), 1, 6);
  return fixed(v, dec);
}

// ---------------------------------------------------------------------------------------------
// Heatmap data access (tolerates ragged inputs: a missing cell is drawn as "n/a")
// ---------------------------------------------------------------------------------------------

struct Cell {
  bool known = false;  // fits[i][j] present
  bool fits = false;
  double headroom = std::nan("");  // NaN when absent
};

Cell cell_at(const ReportSection& s, size_t i, size_t j) {
  Cell c;
  if (i < s.fits.size() && j < s.fits[i].size()) {
    c.known = true;
    c.fits = s.fits[i][j];
  }
  if (i < s.headroom_fraction.size() && j < s.headroom_fraction[i].size()) c.headroom = s.headroom_fraction[i][j];
  return c;
}

bool has_heatmap(const ReportSection& s) { return !s.contexts.empty() && !s.concurrencies.empty(); }

std::string cell_mark(const Cell& c) {
  if (!c.known) return "–";
  return std::string(c.fits ? "✓ " : "✗ ") + pct0(c.headroom);
}

// ---------------------------------------------------------------------------------------------
// Budget bar data
// ---------------------------------------------------------------------------------------------

struct Budget {
  std::vector<std::pair<std::string, i64>> terms;  // bytes > 0 only
  i64 used = 0;
  i64 total = 0;  // gpu_total_bytes (0 when unknown)
  std::string device = "GPU";  // ReportSection::device
  i64 free() const { return total > used ? total - used : 0; }
  i64 over() const { return total > 0 && used > total ? used - total : 0; }
  i64 scale() const { return std::max(used, total); }
};

std::optional<Budget> budget_of(const ReportSection& s) {
  Budget b;
  b.total = std::max<i64>(s.gpu_total_bytes, 0);
  b.device = s.device;
  for (const auto& [name, bytes] : s.budget) {
    if (bytes <= 0) continue;
    b.terms.emplace_back(name, bytes);
    b.used = add(b.used, bytes, "report budget");
  }
  if (b.terms.empty()) return std::nullopt;
  return b;
}

std::string pct_of_total(i64 bytes, i64 total) {
  if (total <= 0) return "n/a";
  return fixed(100.0 * static_cast<double>(bytes) / static_cast<double>(total), 1) + "%";
}

// ---------------------------------------------------------------------------------------------
// Throughput data: finite rates at positive concurrencies, sorted by concurrency
// ---------------------------------------------------------------------------------------------

std::vector<std::pair<i64, double>> throughput_points(const ReportSection& s) {
  std::vector<std::pair<i64, double>> p;
  for (const auto& pt : s.throughput)
    if (pt.first > 0 && std::isfinite(pt.second)) p.push_back(pt);
  std::stable_sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return p;
}

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

constexpr const char* kCss = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #ffffff; color: #1f2328;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 32px 48px; }
header.report { border-bottom: 2px solid #d0d7de; margin-bottom: 8px; padding-bottom: 8px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 0 0 12px; display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
h3 { font-size: 16px; margin: 24px 0 8px; color: #24292f; }
.generated { color: #57606a; font-size: 13px; margin: 0; }
nav.toc ol { margin: 8px 0 0; padding-left: 22px; }
nav.toc a { color: #0b5cad; text-decoration: none; }
section.deployment { border-top: 1px solid #d0d7de; padding-top: 24px; margin-top: 28px; }
header.report + section.deployment { border-top: none; padding-top: 8px; margin-top: 16px; }
.badge { display: inline-block; font-size: 13px; font-weight: 700; letter-spacing: .04em; padding: 2px 10px;
  border-radius: 999px; border: 1px solid; vertical-align: middle; }
.badge.pass { background: #dafbe1; color: #116329; border-color: #4ac26b; }
.badge.fail { background: #ffebe9; color: #a40e26; border-color: #ff8182; }
.badge.other { background: #f6f8fa; color: #57606a; border-color: #d0d7de; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: 4px 20px; margin: 0;
  padding: 12px 16px; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; }
dl.summary dt { font-weight: 600; color: #424a53; }
dl.summary dd { margin: 0; font-variant-numeric: tabular-nums; }
figure { margin: 0; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #57606a; font-size: 13px; margin-top: 4px; }
svg text { font-family: inherit; }
table.data { border-collapse: collapse; margin: 24px 0 8px; font-size: 14px; }
table.data caption { text-align: left; font-weight: 600; font-size: 16px; padding-bottom: 8px; color: #24292f; }
table.data th, table.data td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; }
table.data th { background: #f6f8fa; }
table.data td.num, table.data th.num { text-align: right; font-variant-numeric: tabular-nums; }
ul.assumptions { margin: 0; padding-left: 22px; color: #24292f; }
ul.assumptions li { margin: 2px 0; }
footer { color: #57606a; font-size: 13px; margin-top: 40px; border-top: 1px solid #d0d7de; padding-top: 8px; }
@media print {
  main { max-width: none; padding: 0; }
  body { font-size: 12px; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  section.deployment { break-before: page; border-top: none; margin-top: 0; }
  section.deployment:first-of-type { break-before: auto; }
  figure, table.data, dl.summary { break-inside: avoid; }
  nav.toc { display: none; }
}
)css";

struct Rgb {
  int r, g, b;
};

std::string hex(Rgb c) {
  static const char* d = "0123456789abcdef";
  std::string s = "#";
  for (int v : {c.r, c.g, c.b}) {
    v = std::clamp(v, 0, 255);
    s += d[v / 16];
    s += d[v % 16];
  }
  return s;
}

Rgb mix(Rgb a, Rgb b, double t) {
  auto m = [t](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * t)); };
  return {m(a.r, b.r), m(a.g, b.g), m(a.b, b.b)};
}

constexpr Rgb kGreenLow{0xd3, 0xef, 0xd8};   // fits with 0% headroom
constexpr Rgb kGreenHigh{0x1a, 0x7f, 0x37};  // fits with 100% headroom
constexpr const char* kRed = "#f4a3a3";      // does not fit
constexpr const char* kRedText = "#7a1010";
constexpr const char* kNa = "#eaeef2";

double green_t(double headroom) { return std::isfinite(headroom) ? std::clamp(headroom, 0.0, 1.0) : 0.0; }
std::string green_fill(double headroom) { return hex(mix(kGreenLow, kGreenHigh, green_t(headroom))); }
const char* green_text(double headroom) { return green_t(headroom) > 0.5 ? "#ffffff" : "#0f3d1c"; }

/// Rough text width in px for label placement (average glyph width ~0.6 em).
double text_w(const std::string& s, double font) {
  size_t glyphs = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++glyphs;  // count UTF-8 lead bytes only
  return static_cast<double>(glyphs) * font * 0.6;
}

void html_heatmap(std::ostringstream& o, const ReportSection& s) {
  const size_t nr = s.contexts.size(), nc = s.concurrencies.size();
  const double cw = std::clamp(860.0 / static_cast<double>(nc), 54.0, 84.0), ch = 30.0;
  const double ml = 84.0, mt = 50.0;
  const double grid_w = cw * static_cast<double>(nc), grid_h = ch * static_cast<double>(nr);
  const double legend_y = mt + grid_h + 22.0;
  const double width = std::max(ml + grid_w + 16.0, 620.0), height = legend_y + 46.0;
  // cell labels shrink (down to 9 px) so the longest one fits its cell
  double label_w = 0;
  for (size_t i = 0; i < nr; ++i)
    for (size_t j = 0; j < nc; ++j) label_w = std::max(label_w, text_w(cell_mark(cell_at(s, i, j)), 12));
  const double cell_font = std::clamp(12.0 * (cw - 8) / std::max(label_w, 1.0), 9.0, 12.0);

  o << "<figure class=\"heatmap\">\n<svg role=\"img\" aria-label=\"fit and headroom by context and concurrency\" width=\""
    << px(width) << "\" height=\"" << px(height) << "\" viewBox=\"0 0 " << px(width) << " " << px(height) << "\">\n";
  // axis titles
  o << "<text x=\"" << px(ml + grid_w / 2) << "\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"600\" "
       "fill=\"#424a53\">concurrent sequences</text>\n";
  o << "<text transform=\"translate(16 " << px(mt + grid_h / 2) << ") rotate(-90)\" text-anchor=\"middle\" "
       "font-size=\"13\" font-weight=\"600\" fill=\"#424a53\">context (tokens)</text>\n";
  // column and row labels
  for (size_t j = 0; j < nc; ++j)
    o << "<text x=\"" << px(ml + cw * (static_cast<double>(j) + 0.5)) << "\" y=\"" << px(mt - 10)
      << "\" text-anchor=\"middle\" font-size=\"12\" fill=\"#24292f\">" << esc(human_num(s.concurrencies[j]))
      << "</text>\n";
  for (size_t i = 0; i < nr; ++i)
    o << "<text x=\"" << px(ml - 8) << "\" y=\"" << px(mt + ch * (static_cast<double>(i) + 0.5) + 4)
      << "\" text-anchor=\"end\" font-size=\"12\" fill=\"#24292f\">" << esc(human_num(s.contexts[i])) << "</text>\n";
  // cells
  for (size_t i = 0; i < nr; ++i) {
    for (size_t j = 0; j < nc; ++j) {
      const Cell c = cell_at(s, i, j);
      const double x = ml + cw * static_cast<double>(j), y = mt + ch * static_cast<double>(i);
      std::string cls = "cell na", fill = kNa, text_fill = "#57606a", tip;
      tip = "context " + human_num(s.contexts[i]) + ", concurrency " + human_num(s.concurrencies[j]) + ": ";
      if (!c.known) {
        tip += "no data";
      } else if (c.fits) {
        cls = "cell fit";
        fill = green_fill(c.headroom);
        text_fill = green_text(c.headroom);
        tip += "fits, headroom " + pct0(c.headroom) + " of the KV pool";
      } else {
        cls = "cell nofit";
        fill = kRed;
        text_fill = kRedText;
        tip += "does not fit, headroom " + pct0(c.headroom) + " of the KV pool";
      }
      if (nr * nc > 1600) {  // a big grid: no per-cell labels, short tips (the report stays a few MB)
        o << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(cw) << "\" height=\"" << px(ch) << "\" fill=\"" << fill
          << "\"><title>" << esc(human_num(s.contexts[i]) + " x " + human_num(s.concurrencies[j]) + ": " + cell_mark(c)) << "</title></rect>\n";
        continue;
      }
      o << "<g class=\"" << cls << "\"><rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(cw)
        << "\" height=\"" << px(ch) << "\" fill=\"" << fill << "\" stroke=\"#ffffff\" stroke-width=\"2\"><title>"
        << esc(tip) << "</title></rect><text x=\"" << px(x + cw / 2) << "\" y=\"" << px(y + ch / 2 + 4)
        << "\" text-anchor=\"middle\" font-size=\"" << fixed(cell_font, 1) << "\" fill=\"" << text_fill << "\">" << esc(cell_mark(c))
        << "</text></g>\n";
    }
  }
  // legend: five headroom steps, then "does not fit"
  double lx = ml;
  o << "<text x=\"" << px(lx) << "\" y=\"" << px(legend_y + 12) << "\" font-size=\"12\" fill=\"#424a53\">"
    << "headroom (share of the KV pool):</text>\n";
  lx = ml;
  const double sy = legend_y + 20;
  for (int k = 0; k <= 4; ++k) {
    const double h = k / 4.0;
    o << "<rect x=\"" << px(lx) << "\" y=\"" << px(sy) << "\" width=\"44\" height=\"18\" fill=\"" << green_fill(h)
      << "\"/><text x=\"" << px(lx + 22) << "\" y=\"" << px(sy + 13) << "\" text-anchor=\"middle\" font-size=\"11\" fill=\""
      << green_text(h) << "\">" << pct0(h) << "</text>\n";
    lx += 46;
  }
  lx += 14;
  o << "<rect x=\"" << px(lx) << "\" y=\"" << px(sy) << "\" width=\"18\" height=\"18\" fill=\"" << kRed
    << "\"/><text x=\"" << px(lx + 24) << "\" y=\"" << px(sy + 13) << "\" font-size=\"12\" fill=\"#24292f\">"
    << "✗ does not fit</text>\n";
  o << "</svg>\n<figcaption>✓ fits, ✗ does not fit; the number is the headroom as a share of the KV-cache pool "
       "(negative: the shortfall).</figcaption>\n</figure>\n";
}

struct Swatch {
  const char* fill;
  const char* text;
};
// Tableau 10, with a readable text colour for labels drawn on each.
constexpr Swatch kPalette[] = {{"#4e79a7", "#ffffff"}, {"#f28e2b", "#1f2328"}, {"#59a14f", "#ffffff"},
                               {"#b07aa1", "#ffffff"}, {"#edc948", "#1f2328"}, {"#76b7b2", "#1f2328"},
                               {"#ff9da7", "#1f2328"}, {"#9c755f", "#ffffff"}, {"#e15759", "#ffffff"},
                               {"#bab0ac", "#1f2328"}};
constexpr size_t kPaletteN = sizeof kPalette / sizeof kPalette[0];


void html_budget(std::ostringstream& o, const Budget& b) {
  const double bw = 960.0, bar_y = 8.0, bar_h = 46.0, ml = 8.0;
  const double scale = static_cast<double>(b.scale());
  auto xof = [&](i64 bytes) { return ml + bw * static_cast<double>(bytes) / scale; };
  const size_t rows = b.terms.size() + (b.total > 0 ? 2 : 1);  // terms, free or over, total
  const double axis_y = bar_y + bar_h, legend_y = axis_y + 40.0, row_h = 20.0;
  const double height = legend_y + row_h * static_cast<double>(rows) + 8.0, width = ml + bw + 40.0;  // room for "80 GiB"

  o << "<figure class=\"budget\">\n<svg role=\"img\" aria-label=\"per-" << esc(b.device) << " memory budget\" width=\"" << px(width)
    << "\" height=\"" << px(height) << "\" viewBox=\"0 0 " << px(width) << " " << px(height) << "\">\n";
  // segments
  i64 at = 0;
  for (size_t k = 0; k < b.terms.size(); ++k) {
    const auto& [name, bytes] = b.terms[k];
    const Swatch sw = kPalette[k % kPaletteN];
    const double x0 = xof(at), x1 = xof(at + bytes), w = x1 - x0;
    o << "<g class=\"seg\"><rect x=\"" << px(x0) << "\" y=\"" << px(bar_y) << "\" width=\"" << px(w) << "\" height=\""
      << px(bar_h) << "\" fill=\"" << sw.fill << "\" stroke=\"#ffffff\" stroke-width=\"1\"><title>" << esc(name)
      << ": " << gib(bytes) << " (" << pct_of_total(bytes, b.total) << " of the " << esc(b.device) << ")</title></rect>";
    const std::string val = gib(bytes);
    if (w >= std::max(text_w(name, 12), text_w(val, 11)) + 10) {
      o << "<text x=\"" << px(x0 + w / 2) << "\" y=\"" << px(bar_y + 19) << "\" text-anchor=\"middle\" font-size=\"12\" "
        << "font-weight=\"600\" fill=\"" << sw.text << "\">" << esc(name) << "</text><text x=\"" << px(x0 + w / 2)
        << "\" y=\"" << px(bar_y + 35) << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"" << sw.text << "\">" << val
        << "</text>";
    }
    o << "</g>\n";
    at += bytes;
  }
  if (b.free() > 0) {
    const double x0 = xof(b.used), w = xof(b.total) - x0;
    o << "<g class=\"seg free\"><rect x=\"" << px(x0 + 0.5) << "\" y=\"" << px(bar_y + 0.5) << "\" width=\""
      << px(std::max(w - 1, 0.0)) << "\" height=\"" << px(bar_h - 1)
      << "\" fill=\"#f6f8fa\" stroke=\"#8c959f\" stroke-dasharray=\"4 3\"><title>free: " << gib(b.free())
      << "</title></rect>";
    if (w >= text_w("free " + gib(b.free()), 12) + 10)
      o << "<text x=\"" << px(x0 + w / 2) << "\" y=\"" << px(bar_y + bar_h / 2 + 4)
        << "\" text-anchor=\"middle\" font-size=\"12\" fill=\"#57606a\">free " << gib(b.free()) << "</text>";
    o << "</g>\n";
  }
  if (b.over() > 0) {  // the GPU total line sits inside the bar; everything right of it does not fit
    const double x = xof(b.total);
    o << "<line x1=\"" << px(x) << "\" y1=\"" << px(bar_y - 6) << "\" x2=\"" << px(x) << "\" y2=\"" << px(axis_y + 4)
      << "\" stroke=\"#a40e26\" stroke-width=\"2.5\"/>\n";
  }
  // axis: GiB ticks
  const double scale_gib = scale / kGiB;
  const double step = nice_step(scale_gib, 6);
  o << "<line x1=\"" << px(ml) << "\" y1=\"" << px(axis_y + 4) << "\" x2=\"" << px(ml + bw) << "\" y2=\""
    << px(axis_y + 4) << "\" stroke=\"#8c959f\"/>\n";
  for (int k = 0;; ++k) {
    const double v = step * k;
    if (v > scale_gib * (1 + 1e-9)) break;
    const double x = ml + bw * v / scale_gib;
    o << "<line x1=\"" << px(x) << "\" y1=\"" << px(axis_y + 4) << "\" x2=\"" << px(x) << "\" y2=\"" << px(axis_y + 9)
      << "\" stroke=\"#8c959f\"/><text x=\"" << px(x) << "\" y=\"" << px(axis_y + 22)
      << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#57606a\">" << tick_label(v, step) << (k ? " GiB" : "")
      << "</text>\n";
  }
  // legend table: swatch, term, GiB, % of GPU
  const double c_name = ml + 24, c_gib = ml + 420, c_pct = ml + 500;
  double y = legend_y;
  auto row = [&](const std::string& swatch, const std::string& name, const std::string& val, const std::string& pct,
                 bool bold, const char* color) {
    if (!swatch.empty()) o << swatch;
    const char* fw = bold ? " font-weight=\"700\"" : "";
    o << "<text x=\"" << px(c_name) << "\" y=\"" << px(y + 13) << "\" font-size=\"13\"" << fw << " fill=\"" << color
      << "\">" << esc(name) << "</text><text x=\"" << px(c_gib) << "\" y=\"" << px(y + 13)
      << "\" text-anchor=\"end\" font-size=\"13\"" << fw << " fill=\"" << color << "\">" << val << "</text><text x=\""
      << px(c_pct) << "\" y=\"" << px(y + 13) << "\" text-anchor=\"end\" font-size=\"13\"" << fw << " fill=\"" << color
      << "\">" << pct << "</text>\n";
    y += row_h;
  };
  for (size_t k = 0; k < b.terms.size(); ++k) {
    const std::string sw = "<rect x=\"" + px(ml) + "\" y=\"" + px(y + 2) + "\" width=\"14\" height=\"14\" fill=\"" +
                           kPalette[k % kPaletteN].fill + "\"/>";
    row(sw, b.terms[k].first, gib(b.terms[k].second), pct_of_total(b.terms[k].second, b.total), false, "#24292f");
  }
  if (b.total > 0) {
    if (b.over() > 0) {
      const std::string sw = "<rect x=\"" + px(ml + 6) + "\" y=\"" + px(y + 1) + "\" width=\"2.5\" height=\"16\" fill=\"#a40e26\"/>";
      row(sw, "over the " + b.device + " total by", gib(b.over()), pct_of_total(b.over(), b.total), true, "#a40e26");
    } else {
      const std::string sw = "<rect x=\"" + px(ml + 0.5) + "\" y=\"" + px(y + 2.5) +
                             "\" width=\"13\" height=\"13\" fill=\"#f6f8fa\" stroke=\"#8c959f\" stroke-dasharray=\"3 2\"/>";
      row(sw, "free", gib(b.free()), pct_of_total(b.free(), b.total), false, "#57606a");
    }
    row("", b.device + " total", gib(b.total), "100.0%", true, "#24292f");
  } else {
    row("", "total (" + b.device + " size unknown)", gib(b.used), "", true, "#24292f");
  }
  o << "</svg>\n<figcaption>Memory of the " << (b.device == "GPU" ? "most loaded GPU" : esc(b.device)) << ", term by term, against its total.</figcaption>\n</figure>\n";
}

void html_throughput(std::ostringstream& o, const std::vector<std::pair<i64, double>>& pts, const std::string& device) {
  const double width = 820, height = 340, ml = 84, mr = 28, mt = 24, mb = 56;
  const double pw = width - ml - mr, ph = height - mt - mb;
  const i64 cmin = pts.front().first, cmax = pts.back().first;
  const bool logx = static_cast<double>(cmax) / static_cast<double>(cmin) > 16.0;

  // x domain and ticks
  std::vector<double> xt;
  double x0 = 0, x1 = 1;
  if (logx) {
    const int e0 = static_cast<int>(std::floor(std::log2(static_cast<double>(cmin)) + 1e-9));
    const int e1 = static_cast<int>(std::ceil(std::log2(static_cast<double>(cmax)) - 1e-9));
    const int stride = std::max(1, (e1 - e0 + 9) / 10);  // at most about 10 ticks
    for (int e = e0; e <= e1; e += stride) xt.push_back(std::ldexp(1.0, e));
    x0 = e0;
    x1 = std::max(e1, e0 + 1);
  } else {
    const double step = std::max(1.0, nice_step(static_cast<double>(cmax), 6));
    const double top = std::ceil(static_cast<double>(cmax) / step) * step;
    for (double v = 0; v <= top + 1e-9; v += step) xt.push_back(v);
    x0 = 0;
    x1 = top > 0 ? top : 1;
  }
  auto xpos = [&](double c) {
    const double u = logx ? std::log2(c) : c;
    return ml + pw * (u - x0) / (x1 - x0);
  };
  // y domain and ticks (from 0)
  double ymax = 0;
  for (const auto& p : pts) ymax = std::max(ymax, p.second);
  const double ystep = nice_step(ymax > 0 ? ymax * 1.08 : 1.0, 5);
  const double ytop = std::max(ystep, std::ceil((ymax > 0 ? ymax * 1.08 : 1.0) / ystep) * ystep);
  auto ypos = [&](double v) { return mt + ph * (1.0 - std::max(v, 0.0) / ytop); };

  o << "<figure class=\"throughput\">\n<svg role=\"img\" aria-label=\"decode throughput per " << esc(device) << " against concurrency\" "
       "width=\""
    << px(width) << "\" height=\"" << px(height) << "\" viewBox=\"0 0 " << px(width) << " " << px(height) << "\">\n";
  // grid and y ticks
  for (int k = 0;; ++k) {
    const double v = ystep * k;
    if (v > ytop * (1 + 1e-9)) break;
    const double y = ypos(v);
    o << "<line x1=\"" << px(ml) << "\" y1=\"" << px(y) << "\" x2=\"" << px(ml + pw) << "\" y2=\"" << px(y)
      << "\" stroke=\"" << (k == 0 ? "#8c959f" : "#eaeef2") << "\"/><text x=\"" << px(ml - 8) << "\" y=\"" << px(y + 4)
      << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#57606a\">" << tick_label(v, ystep) << "</text>\n";
  }
  // x ticks
  o << "<line x1=\"" << px(ml) << "\" y1=\"" << px(mt) << "\" x2=\"" << px(ml) << "\" y2=\"" << px(mt + ph)
    << "\" stroke=\"#8c959f\"/>\n";
  for (double v : xt) {
    const double x = xpos(v);
    o << "<line x1=\"" << px(x) << "\" y1=\"" << px(mt + ph) << "\" x2=\"" << px(x) << "\" y2=\"" << px(mt + ph + 5)
      << "\" stroke=\"#8c959f\"/><text x=\"" << px(x) << "\" y=\"" << px(mt + ph + 18)
      << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#57606a\">" << human_num(std::llround(v)) << "</text>\n";
  }
  // axis titles
  o << "<text x=\"" << px(ml + pw / 2) << "\" y=\"" << px(height - 10)
    << "\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"600\" fill=\"#424a53\">concurrent sequences"
    << (logx ? " (log scale)" : "") << "</text>\n";
  o << "<text transform=\"translate(18 " << px(mt + ph / 2) << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" "
       "font-weight=\"600\" fill=\"#424a53\">decode tokens/s per " << esc(device) << "</text>\n";
  // line and points
  o << "<polyline fill=\"none\" stroke=\"#0b5cad\" stroke-width=\"2\" points=\"";
  for (size_t k = 0; k < pts.size(); ++k)
    o << (k ? " " : "") << px(xpos(static_cast<double>(pts[k].first))) << "," << px(ypos(pts[k].second));
  o << "\"/>\n";
  const bool labels = pts.size() <= 16;
  for (const auto& [c, v] : pts) {
    const double x = xpos(static_cast<double>(c)), y = ypos(v);
    o << "<g class=\"pt\"><circle cx=\"" << px(x) << "\" cy=\"" << px(y) << "\" r=\"4\" fill=\"#0b5cad\" "
      << "stroke=\"#ffffff\" stroke-width=\"1.5\"><title>concurrency " << grouped(c) << ": " << rate(v)
      << " tokens/s per " << esc(device) << "</title></circle>";
    if (labels)
      o << "<text x=\"" << px(x) << "\" y=\"" << px(y - 9) << "\" text-anchor=\"middle\" font-size=\"11\" "
        << "fill=\"#24292f\">" << rate(v) << "</text>";
    o << "</g>\n";
  }
  o << "</svg>\n<figcaption>Estimated decode throughput of one " << esc(device) << " at each concurrency.</figcaption>\n</figure>\n";
}

/// Finite (x, y) pairs of one line; a line shorter than x is cut where it ends.
std::vector<std::pair<double, double>> series_points(const SeriesChart& c, const std::vector<double>& ys) {
  std::vector<std::pair<double, double>> p;
  for (size_t k = 0; k < c.x.size() && k < ys.size(); ++k)
    if (std::isfinite(c.x[k]) && std::isfinite(ys[k])) p.emplace_back(c.x[k], ys[k]);
  return p;
}

bool has_series(const SeriesChart& c) {
  for (const auto& l : c.lines)
    if (!series_points(c, l.second).empty()) return true;
  return false;
}

/// Line chart of time series: linear x from the first to the last sample, y from 0, one colour per line.
void html_series(std::ostringstream& o, const SeriesChart& c) {
  const double width = 820, ml = 84, mr = 28, mt = 24, mb = 56;
  const double legend_h = c.lines.size() > 1 ? 22.0 : 0.0;
  const double height = 300 + legend_h, ph = height - mt - mb - legend_h, pw = width - ml - mr;
  double x0 = 0, x1 = 0, ymax = 0;
  bool first = true;
  for (const auto& l : c.lines)
    for (const auto& [x, y] : series_points(c, l.second)) {
      x0 = first ? x : std::min(x0, x);
      x1 = first ? x : std::max(x1, x);
      ymax = std::max(ymax, y);
      first = false;
    }
  if (x0 > 0) x0 = 0;  // time from the start
  if (!(x1 > x0)) x1 = x0 + 1;
  bool counts = !c.percent;  // whole numbers (requests, preemptions): whole-number ticks
  for (const auto& l : c.lines)
    for (double y : l.second) counts = counts && (!std::isfinite(y) || y == std::floor(y));
  const double scale = c.percent ? 100.0 : 1.0;
  const double yspan = c.percent ? 1.0 : (ymax > 0 ? ymax * 1.08 : 1.0);
  const double ystep = counts ? std::max(1.0, nice_step(yspan, 5)) : nice_step(yspan * scale, 5) / scale;
  const double ytop = c.percent ? 1.0 : std::max(ystep, std::ceil(yspan / ystep) * ystep);
  auto xpos = [&](double x) { return ml + pw * (x - x0) / (x1 - x0); };
  auto ypos = [&](double y) { return mt + ph * (1.0 - std::clamp(y, 0.0, ytop) / ytop); };
  auto ylabel = [&](double v) { return c.percent ? fixed(v * 100.0, 0) + "%" : tick_label(v, ystep); };

  o << "<figure class=\"series\">\n<svg role=\"img\" aria-label=\"" << esc(c.title) << "\" width=\"" << px(width) << "\" height=\""
    << px(height) << "\" viewBox=\"0 0 " << px(width) << " " << px(height) << "\">\n";
  for (int k = 0;; ++k) {
    const double v = ystep * k;
    if (v > ytop * (1 + 1e-9)) break;
    const double y = ypos(v);
    o << "<line x1=\"" << px(ml) << "\" y1=\"" << px(y) << "\" x2=\"" << px(ml + pw) << "\" y2=\"" << px(y) << "\" stroke=\""
      << (k == 0 ? "#8c959f" : "#eaeef2") << "\"/><text x=\"" << px(ml - 8) << "\" y=\"" << px(y + 4)
      << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#57606a\">" << ylabel(v) << "</text>\n";
  }
  o << "<line x1=\"" << px(ml) << "\" y1=\"" << px(mt) << "\" x2=\"" << px(ml) << "\" y2=\"" << px(mt + ph) << "\" stroke=\"#8c959f\"/>\n";
  const double xstep = nice_step(x1 - x0, 8);
  for (double v = std::ceil(x0 / xstep) * xstep; v <= x1 * (1 + 1e-9) + 1e-12; v += xstep) {
    const double x = xpos(v);
    o << "<line x1=\"" << px(x) << "\" y1=\"" << px(mt + ph) << "\" x2=\"" << px(x) << "\" y2=\"" << px(mt + ph + 5)
      << "\" stroke=\"#8c959f\"/><text x=\"" << px(x) << "\" y=\"" << px(mt + ph + 18)
      << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#57606a\">" << tick_label(v, xstep) << "</text>\n";
  }
  o << "<text x=\"" << px(ml + pw / 2) << "\" y=\"" << px(mt + ph + 42)
    << "\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"600\" fill=\"#424a53\">" << esc(c.x_label) << "</text>\n";
  o << "<text transform=\"translate(18 " << px(mt + ph / 2) << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" "
       "font-weight=\"600\" fill=\"#424a53\">"
    << esc(c.y_label) << "</text>\n";
  for (size_t li = 0; li < c.lines.size(); ++li) {
    const auto pts = series_points(c, c.lines[li].second);
    if (pts.empty()) continue;
    o << "<polyline class=\"line\" fill=\"none\" stroke=\"" << kPalette[li % kPaletteN].fill
      << "\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"";
    for (size_t k = 0; k < pts.size(); ++k) o << (k ? " " : "") << px(xpos(pts[k].first)) << "," << px(ypos(pts[k].second));
    o << "\"><title>" << esc(c.lines[li].first) << "</title></polyline>\n";
  }
  if (c.lines.size() > 1) {
    double lx = ml;
    const double ly = height - legend_h + 2;
    for (size_t li = 0; li < c.lines.size(); ++li) {
      o << "<rect x=\"" << px(lx) << "\" y=\"" << px(ly) << "\" width=\"14\" height=\"4\" fill=\"" << kPalette[li % kPaletteN].fill
        << "\"/><text x=\"" << px(lx + 20) << "\" y=\"" << px(ly + 6) << "\" font-size=\"12\" fill=\"#24292f\">"
        << esc(c.lines[li].first) << "</text>\n";
      lx += 40 + text_w(c.lines[li].first, 12);
    }
  }
  o << "</svg>\n";
  if (!c.caption.empty()) o << "<figcaption>" << esc(c.caption) << "</figcaption>\n";
  o << "</figure>\n";
}

void html_table(std::ostringstream& o, const Table& t) {
  auto right = [&](size_t i) { return i < t.right_align.size() && t.right_align[i]; };
  o << "<table class=\"data\">\n";
  if (!t.title.empty()) o << "<caption>" << esc(t.title) << "</caption>\n";
  o << "<thead><tr>";
  for (size_t i = 0; i < t.columns.size(); ++i)
    o << "<th" << (right(i) ? " class=\"num\"" : "") << ">" << esc(t.columns[i]) << "</th>";
  o << "</tr></thead>\n<tbody>\n";
  for (const auto& r : t.rows) {
    o << "<tr>";
    for (size_t i = 0; i < t.columns.size(); ++i)
      o << "<td" << (right(i) ? " class=\"num\"" : "") << ">" << esc(i < r.size() ? r[i] : "") << "</td>";
    o << "</tr>\n";
  }
  o << "</tbody>\n</table>\n";
}

std::string badge_class(const std::string& status) {
  if (status == "PASS") return "pass";
  if (status == "FAIL") return "fail";
  return "other";
}

void html_section(std::ostringstream& o, const ReportSection& s, size_t index) {
  o << "<section class=\"deployment\" id=\"section-" << index + 1 << "\">\n<h2><span>" << esc(s.title) << "</span>";
  if (!s.status.empty()) o << "<span class=\"badge " << badge_class(s.status) << "\">" << esc(s.status) << "</span>";
  o << "</h2>\n";
  if (!s.summary.empty()) {
    o << "<dl class=\"summary\">\n";
    for (const auto& [k, v] : s.summary) o << "<dt>" << esc(k) << "</dt><dd>" << esc(v) << "</dd>\n";
    o << "</dl>\n";
  }
  if (has_heatmap(s)) {
    o << "<h3>Fit and headroom</h3>\n";
    html_heatmap(o, s);
  }
  if (const auto b = budget_of(s)) {
    o << "<h3>Per-" << esc(s.device) << " memory budget</h3>\n";
    html_budget(o, *b);
  }
  if (const auto pts = throughput_points(s); !pts.empty()) {
    o << "<h3>Decode throughput</h3>\n";
    html_throughput(o, pts, s.device);
  }
  for (const auto& c : s.charts) {
    if (!has_series(c)) continue;
    o << "<h3>" << esc(c.title) << "</h3>\n";
    html_series(o, c);
  }
  for (const auto& t : s.tables) html_table(o, t);
  if (!s.assumptions.empty()) {
    o << "<h3>Assumptions</h3>\n<ul class=\"assumptions\">\n";
    for (const auto& a : s.assumptions) o << "<li>" << esc(a) << "</li>\n";
    o << "</ul>\n";
  }
  o << "</section>\n";
}

}  // namespace

std::string render_html(const Report& r) {
  std::ostringstream o;
  const std::string title = r.title.empty() ? "kvplan report" : r.title;
  o << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
    << esc(title) << "</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n<main>\n";
  o << "<header class=\"report\">\n<h1>" << esc(title) << "</h1>\n";
  if (!r.generated_by.empty()) o << "<p class=\"generated\">Generated by " << esc(r.generated_by) << "</p>\n";
  o << "</header>\n";
  if (r.sections.size() > 1) {
    o << "<nav class=\"toc\"><ol>\n";
    for (size_t i = 0; i < r.sections.size(); ++i) {
      const auto& s = r.sections[i];
      o << "<li><a href=\"#section-" << i + 1 << "\">" << esc(s.title) << "</a>";
      if (!s.status.empty()) o << " <span class=\"badge " << badge_class(s.status) << "\">" << esc(s.status) << "</span>";
      o << "</li>\n";
    }
    o << "</ol></nav>\n";
  }
  for (size_t i = 0; i < r.sections.size(); ++i) html_section(o, r.sections[i], i);
  o << "<footer>";
  if (!r.generated_by.empty()) o << esc(r.generated_by) << ". ";
  o << "Estimates from a capacity model; check against measurements before committing hardware.</footer>\n";
  o << "</main>\n</body>\n</html>\n";
  return o.str();
}

std::string render_markdown(const Report& r) {
  std::ostringstream o;
  o << "# " << md_line(r.title.empty() ? "kvplan report" : r.title) << "\n\n";
  if (!r.generated_by.empty()) o << "Generated by " << md_line(r.generated_by) << "\n\n";
  for (const auto& s : r.sections) {
    o << "## " << md_line(s.title);
    if (!s.status.empty()) o << " — " << md_line(s.status);
    o << "\n\n";
    if (!s.summary.empty()) {
      o << "| Item | Value |\n| --- | --- |\n";
      for (const auto& [k, v] : s.summary) o << "| " << md_cell(k) << " | " << md_cell(v) << " |\n";
      o << "\n";
    }
    if (has_heatmap(s)) {
      o << "### Fit and headroom\n\n✓ fits, ✗ does not fit; the number is the headroom as a share of the KV-cache "
           "pool (negative: the shortfall).\n\n| context / concurrency |";
      for (i64 c : s.concurrencies) o << " " << human_num(c) << " |";
      o << "\n| --- |";
      for (size_t j = 0; j < s.concurrencies.size(); ++j) o << " :---: |";
      o << "\n";
      for (size_t i = 0; i < s.contexts.size(); ++i) {
        o << "| " << human_num(s.contexts[i]) << " |";
        for (size_t j = 0; j < s.concurrencies.size(); ++j) o << " " << cell_mark(cell_at(s, i, j)) << " |";
        o << "\n";
      }
      o << "\n";
    }
    if (const auto b = budget_of(s)) {
      o << "### Per-" << b->device << " memory budget\n\n| Term | GiB | % of " << b->device << " |\n| --- | ---: | ---: |\n";
      auto gib_num = [](i64 bytes) { return fixed(static_cast<double>(bytes) / kGiB, 2); };
      for (const auto& [name, bytes] : b->terms)
        o << "| " << md_cell(name) << " | " << gib_num(bytes) << " | " << pct_of_total(bytes, b->total) << " |\n";
      if (b->total > 0) {
        if (b->over() > 0)
          o << "| **over the " << b->device << " total by** | **" << gib_num(b->over()) << "** | **" << pct_of_total(b->over(), b->total)
            << "** |\n";
        else
          o << "| free | " << gib_num(b->free()) << " | " << pct_of_total(b->free(), b->total) << " |\n";
        o << "| **" << b->device << " total** | **" << gib_num(b->total) << "** | **100.0%** |\n";
      } else {
        o << "| **total (" << b->device << " size unknown)** | **" << gib_num(b->used) << "** | n/a |\n";
      }
      o << "\n";
    }
    if (const auto pts = throughput_points(s); !pts.empty()) {
      o << "### Decode throughput\n\n| Concurrency | Decode tokens/s per " << s.device << " |\n| ---: | ---: |\n";
      for (const auto& [c, v] : pts) o << "| " << grouped(c) << " | " << rate(v) << " |\n";
      o << "\n";
    }
    for (const auto& c : s.charts) {  // a time series as a table of at most 11 evenly spaced samples
      if (!has_series(c)) continue;
      o << "### " << md_line(c.title) << "\n\n| " << md_cell(c.x_label) << " |";
      for (const auto& l : c.lines) o << " " << md_cell(l.first) << " |";
      o << "\n| ---: |";
      for (size_t k = 0; k < c.lines.size(); ++k) o << " ---: |";
      o << "\n";
      const size_t n = c.x.size(), rows = std::min<size_t>(n, 11);
      for (size_t ri = 0; ri < rows; ++ri) {
        const size_t k = rows > 1 ? ri * (n - 1) / (rows - 1) : 0;
        o << "| " << fixed(c.x[k], 2) << " |";
        for (const auto& l : c.lines) {
          const double v = k < l.second.size() ? l.second[k] : std::nan("");
          o << " " << (c.percent ? fixed(v * 100.0, 1) + "%" : (std::isfinite(v) && v == std::floor(v) ? grouped(std::llround(v)) : fixed(v, 2))) << " |";
        }
        o << "\n";
      }
      o << "\n";
    }
    for (const auto& t : s.tables) o << render(t, Format::md) << "\n";
    if (!s.assumptions.empty()) {
      o << "### Assumptions\n\n";
      for (const auto& a : s.assumptions) o << "- " << md_line(a) << "\n";
      o << "\n";
    }
  }
  return o.str();
}

}  // namespace kvplan::cli
