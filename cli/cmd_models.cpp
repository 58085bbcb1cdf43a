// `kvplan models`: the built-in (and --profiles) model profiles with their cache geometry.
#include <iostream>

#include "commands.hpp"
#include "kvplan/core/kv.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/hf_config.hpp"
#include "kvplan/io/profiles.hpp"
#include "output.hpp"

namespace kvplan::cli {

namespace {

struct ModelsArgs {
  std::string format = "table";
};

void run_models(const ModelsArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  const auto profiles = io::Profiles::load(g.profiles_dir);
  Table t;
  const bool csv = fmt == Format::csv || fmt == Format::jsonl;
  // csv and jsonl carry the JSON's fields (all but the profile's source text); the terminal table a readable subset
  t.columns = csv ? std::vector<std::string>{"id", "model_type", "num_layers", "dtype", "kv_bytes_per_token", "max_context_tokens", "params_total",
                                             "params_active", "origin"}
                  : std::vector<std::string>{"id", "model_type", "layers", "KV bytes/token", "max context", "params", "source"};
  t.right_align = csv ? std::vector<bool>{false, false, true, false, true, true, true, true, false}
                      : std::vector<bool>{false, false, true, true, true, true, false};
  ojson rows = ojson::array();
  for (const auto& [id, p] : profiles.models()) {
    const ModelSpec m = io::model_from_hf_config(p.config, p.origin == "built-in" ? "profiles/models/" + id + ".json" : p.origin, id);
    KvOptions o;
    o.k_format = o.v_format = o.state_format = m.dtype;
    o.context = 1;
    // a profile whose sizes overflow 64-bit bytes (a user's file with 10^5 layers of width 2^24) is named with its file,
    // not as a context or concurrency to reduce
    const auto sized = [&]() -> std::pair<KvResult, ParamCount> {
      try {
        return {compute_kv(m, o), count_params(m)};
      } catch (const InputError& e) {
        if (e.where() != "arithmetic") throw;
        throw InputError(p.origin == "built-in" ? "profiles/models/" + id + ".json" : p.origin, "its sizes overflow: " + e.problem(),
                         "check num_hidden_layers, hidden_size, intermediate_size and vocab_size");
      }
    }();
    const KvResult& kv = sized.first;
    const ParamCount& pc = sized.second;
    if (csv)
      t.rows.push_back({id, m.model_type, std::to_string(decoder_layers(m.layers)), std::string(format_info(m.dtype).name), std::to_string(kv.kv_bytes_per_token),
                        m.max_context > 0 ? std::to_string(m.max_context) : std::string(),  // not known: empty (jsonl null)
                        std::to_string(pc.total), std::to_string(pc.active), p.origin});
    else
      t.rows.push_back({id, m.model_type, std::to_string(decoder_layers(m.layers)), grouped(kv.kv_bytes_per_token),
                        m.max_context > 0 ? grouped(m.max_context) : "-", human_count(pc.total),
                        // the terminal table names a user profile by its folder flag (the path is in csv and json), so
                        // that a long path does not squeeze the ids users copy into broken pieces
                        p.origin == "built-in" ? p.origin : "--profiles"});
    rows.push_back({{"id", id}, {"model_type", m.model_type}, {"num_layers", decoder_layers(m.layers)},
                    {"dtype", format_info(m.dtype).name}, {"kv_bytes_per_token", kv.kv_bytes_per_token},
                    {"max_context_tokens", m.max_context}, {"params_total", pc.total}, {"params_active", pc.active},
                    {"origin", p.origin}, {"source", p.source}});
  }
  if (fmt == Format::json) {
    std::cout << envelope("kvplan.models", "1.0.0", g.argv, profiles.sources(), ojson::object(), {{"models", rows}}).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
    return;
  }
  std::cout << render(t, fmt);
}

}  // namespace

void register_models(CLI::App& app, Globals& g) {
  auto a = std::make_shared<ModelsArgs>();
  auto* c = app.add_subcommand("models", "List model profiles (built-in and --profiles)");
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g] { run_models(*a, g); });
}

}  // namespace kvplan::cli
