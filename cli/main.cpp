// kvplan entry point: builds the CLI, registers subcommands, maps errors to exit codes
// (0 ok / fits, 1 does not fit, 2 bad input or usage, 3 runtime failure).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <iostream>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "output.hpp"
#include "kvplan/core/error.hpp"
#include "kvplan/core/suggest.hpp"
#include "version.hpp"

namespace {

// inf, infinity or nan (any case, optional sign): what strtod accepts and no option of kvplan means
bool non_finite_word(std::string v) {
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) v.erase(0, 1);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v == "inf" || v == "infinity" || v == "nan";
}

// A C hexadecimal number (0x10, 0x1p4): the parsers take it (strtod), a user who wrote it meant something else
bool hex_number(std::string v) {
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) v.erase(0, 1);
  if (v.size() < 3 || v[0] != '0' || (v[1] != 'x' && v[1] != 'X')) return false;
  return v.find_first_not_of("0123456789abcdefABCDEF.pP+-", 2) == std::string::npos;
}

// Every number kvplan takes is finite: an option value (--rate inf, --x=nan, --set key=inf) that is not is refused
// before any option parses it, so no command runs on it (a gamma sampler with an infinite shape never returns).
// An empty option value is refused too.
void reject_non_finite(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.') continue;
    std::string flag = a, value;
    if (const auto eq = a.find('='); eq != std::string::npos) {
      flag = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[i + 1];
    }
    // an empty value (--trace "", --html=) would silently mean "not given"
    if (a.find('=') != std::string::npos ? value.empty() : (i + 1 < args.size() && args[i + 1].empty()))
      throw kvplan::InputError(flag, "empty value", "give a value, or leave " + flag + " out");
    if (flag == "--set") value = value.substr(value.find('=') == std::string::npos ? 0 : value.find('=') + 1);
    if (non_finite_word(value))
      throw kvplan::InputError(flag, "'" + value + "' is not a finite number", "give a finite value");
    if (hex_number(value)) throw kvplan::InputError(flag, "'" + value + "' is a hexadecimal number", "give it in decimal");
  }
}

// CLI11's words for two mistakes, said as kvplan says the others (the flag first, then the fix): an unknown flag
// gets the subcommand's closest one ("--contxt: not a kvplan plan flag; did you mean --context?"), and one setting
// given twice under two spellings (--kv-cache-dtype and --kv-dtype) says so. "" keeps CLI11's message.
std::string friendlier_parse_error(CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args) {
  const std::string what = e.what();
  const std::string sub = kvplan::cli::named_subcommand(args);
  CLI::App* cmd = nullptr;
  if (!sub.empty()) {
    try {
      cmd = app.get_subcommand(sub);
    } catch (const CLI::OptionNotFound&) {
      cmd = nullptr;
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && cmd != nullptr) {
    std::string unknown;  // the first word of the command line CLI11 did not expect that looks like a flag
    const auto colon = what.find(": ");
    std::vector<std::string> words;
    for (size_t i = colon == std::string::npos ? 0 : colon + 2; i < what.size();) {
      const size_t j = what.find(' ', i);
      words.push_back(what.substr(i, j == std::string::npos ? std::string::npos : j - i));
      i = j == std::string::npos ? what.size() : j + 1;
    }
    for (const auto& a : args) {
      const std::string flag = a.substr(0, a.find('='));
      if (flag.size() > 1 && flag[0] == '-' && std::find(words.begin(), words.end(), a) != words.end()) {
        unknown = flag;
        break;
      }
    }
    if (unknown.empty()) return "";
    std::vector<std::string> names;
    std::function<void(CLI::App*)> collect = [&](CLI::App* at) {  // its options and its option groups' (CLI11 apps)
      for (const CLI::Option* o : at->get_options()) {
        for (const auto& l : o->get_lnames()) names.push_back("--" + l);
        for (const auto& sn : o->get_snames()) names.push_back("-" + sn);
      }
      for (CLI::App* group : at->get_subcommands([](CLI::App* g) { return g->get_name().empty(); })) collect(group);
    };
    collect(cmd);
    const auto near = kvplan::closest(unknown, names);
    return unknown + ": not a kvplan " + sub + " flag; " + (near ? "did you mean " + *near + "?" : "see kvplan " + sub + " --help");
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && what.find("At Most 1 required but received") != std::string::npos) {
    const std::string flag = what.substr(0, what.find(':'));
    return flag + ": given more than once (under this or another of its spellings); give it once";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kvplan;
  cli::Globals g;
  for (int i = 0; i < argc; ++i) g.argv.emplace_back(argv[i]);
  CLI::App app{
      "kvplan: how much GPU memory an LLM's KV cache needs, and what fits.\n"
      "Exit codes: 0 success (fits), 1 does not fit (simulate: does not start), 2 bad input or usage, 3 runtime failure."};
  app.set_version_flag("--version", std::string(cli::kVersion) + " (" + cli::kGitSha + ")");
  app.add_option("--profiles", g.profiles_dir, "Folder with models/<id>.json and gpus/<id>.json that add to and override the built-in profiles");
  app.require_subcommand(1, 1);
  app.fallthrough();  // --profiles and --verbose also after the subcommand
  bool verbose = false;
  app.add_flag("--verbose", verbose, "Terminal tables also show derivations and bases (tables fit $COLUMNS, else the terminal's width, else 100, otherwise)");
  // only the named subcommand's deployment flags are registered (see deploy_options_only_for); with none named
  // (--version, --help, a typo) no subcommand parses any
  cli::deploy_options_only_for(cli::named_subcommand(std::vector<std::string>(argv + 1, argv + argc)));
  cli::register_plan(app, g);
  cli::register_sweep(app, g);
  cli::register_fit(app, g);
  cli::register_check(app, g);
  cli::register_report(app, g);
  cli::register_simulate(app, g);
  cli::register_probe(app, g);
  cli::register_log(app, g);
  cli::register_kv(app, g);
  cli::register_models(app, g);
  cli::register_gpus(app, g);
  std::vector<std::string> after_flash_attn;  // words after a bare --flash-attn that are no value of it
  try {
    // an engine command pasted after `--` is read by the deployment commands, not by CLI11
    std::vector<std::string> args(argv + 1, argv + argc);
    if (const auto dd = std::find(args.begin(), args.end(), "--"); dd != args.end()) {
      g.pasted.assign(dd + 1, args.end());
      args.erase(dd, args.end());
    }
    if (!g.pasted.empty()) {  // only the deployment commands read an engine command
      for (const auto& a : args) {
        if (a == "kv" || a == "models" || a == "gpus" || a == "calibrate")
          throw InputError("--", "kvplan " + a + " takes no engine command after --", "paste the command after plan, sweep, fit, check, report, simulate or probe");
        if (a == "plan" || a == "sweep" || a == "fit" || a == "check" || a == "report" || a == "simulate" || a == "probe") break;
      }
    }
    args = cli::rewrite_engine_spellings(args, &after_flash_attn);
    reject_non_finite(args);
    cli::set_table_options(0, std::find(args.begin(), args.end(), "--verbose") != args.end());
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // --flash-attn takes an optional value: a word after it that CLI11 finds unexpected was meant as one
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      const std::string what = e.what();
      for (const auto& w : after_flash_attn)
        if (what.size() >= w.size() && (what.compare(what.size() - w.size(), w.size(), w) == 0 || what.find(": " + w + " ") != std::string::npos)) {
          std::cerr << "kvplan: error: --flash-attn: expected on, off or auto, got '" << w << "' (alone, --flash-attn means on)\n";
          return 2;
        }
    }
    if (const std::string line = friendlier_parse_error(app, e, std::vector<std::string>(argv + 1, argv + argc)); !line.empty()) {
      std::cerr << "kvplan: error: " << cli::one_line(line) << "\n";
      return 2;
    }
    std::cerr << "kvplan: error: " << cli::one_line(e.what()) << "; see kvplan --help\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "kvplan: error: " << cli::one_line(e.what()) << "\n";
    return 2;
  } catch (const RuntimeFailure& e) {
    std::cerr << "kvplan: error: " << cli::one_line(e.what()) << "\n";
    return 3;
  } catch (const std::bad_alloc&) {
    std::cerr << "kvplan: error: out of memory\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "kvplan: error: " << cli::one_line(e.what()) << "\n";
    return 3;
  }
  // data that never reached stdout (a full disk, a closed descriptor) is a failed run, not a pass with no output
  std::cout.flush();
  const bool stdio_failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;  // sweep streams through stdio
  if (!std::cout || stdio_failed) {
    std::cerr << "kvplan: error: stdout: the output could not be written (a full disk or a closed stream); write it "
                 "somewhere with room\n";
    return 3;
  }
  return g.exit_code;
}
