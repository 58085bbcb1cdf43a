// JSON reading: syntax errors with line and column, NaN/Infinity, nesting and file errors.
#include <catch2/catch.hpp>

#include "kvplan/io/json_read.hpp"

using namespace kvplan;

namespace {
std::string parse_error(const std::string& text) {
  try {
    io::parse_json_text(text, "c.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("syntax errors name line and column", "[json]") {
  CHECK(parse_error("{\n  \"a\": 1,\n  \"b\": }").rfind("c.json: line 3, column 8: invalid JSON", 0) == 0);
  CHECK(parse_error("") == "c.json: line 1, column 1: invalid JSON (empty document); fix the JSON syntax");
  CHECK(parse_error("{\"a\": 1").rfind("c.json: line 1, column ", 0) == 0);
}

TEST_CASE("NaN and Infinity outside strings become marked strings, inside strings they stay", "[json]") {
  const auto j = io::parse_json_text(R"({"a": NaN, "b": [0.0, Infinity, -Infinity], "c": "NaN Infinity"})", "c.json");
  CHECK(j["a"] == "NaN");
  CHECK(j["b"][1] == "Infinity");
  CHECK(j["b"][2] == "-Infinity");
  CHECK(j["c"] == "NaN Infinity");
}

TEST_CASE("deep nesting is refused before parsing", "[json]") {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  CHECK(parse_error(deep) == "c.json: line 1, column 257: nesting deeper than 256 levels; flatten the document");
}

TEST_CASE("missing files and directories are errors naming the path", "[json]") {
  CHECK_THROWS_WITH(io::parse_json_file("/nonexistent/config.json"), "/nonexistent/config.json: no such file; check the path");
  CHECK_THROWS_WITH(io::parse_json_file("/tmp"), "/tmp: is a directory, expected a file; name the file itself");
}

TEST_CASE("a settings document refuses a key given twice in one object", "[json]") {
  const auto unique_error = [](const std::string& text) -> std::string {
    try {
      io::parse_json_text_unique_keys(text, "d.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  CHECK(unique_error(R"({"r": {"max_p99_ttft_ms": 50, "max_p99_ttft_ms": 5000}})") ==
        "d.json: key \"max_p99_ttft_ms\" appears twice in one object (the last would silently win); keep one of them");
  // the same key in two objects, or in objects inside a list, is no repeat
  CHECK(unique_error(R"({"a": {"k": 1}, "b": {"k": 2}, "l": [{"k": 1}, {"k": 2}], "k": 3})") == "(no error)");
  CHECK(unique_error(R"([{"k": 1, "x": [1, {"k": 2}], "k": 3}])").find("key \"k\" appears twice") != std::string::npos);
  // model configs read as the engines read them (json.load: the last wins)
  CHECK(io::parse_json_text(R"({"k": 1, "k": 2})", "config.json")["k"] == 2);
}
