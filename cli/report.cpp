// Report rendering (stub: being written).
#include "report.hpp"

namespace kvplan::cli {
std::string render_html(const Report&) { return "<!doctype html>\n"; }
std::string render_markdown(const Report&) { return ""; }
}  // namespace kvplan::cli
