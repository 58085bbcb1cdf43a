// `kvplan kv MODEL`: KV bytes per token and per sequence, the K/V split, recurrent state, a
// derivation per layer group, parameter counts and weight bytes.
#include <iostream>

#include "commands.hpp"
#include "kvplan/core/kv.hpp"
#include "kvplan/core/transform.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/profiles.hpp"
#include "model_options.hpp"
#include "output.hpp"

namespace kvplan::cli {

namespace {

struct KvArgs {
  ModelArgs model;
  std::string context;
  std::string encoder_tokens = "0";
  std::string format = "table";
};

std::string join(const std::vector<i64>& idx) {
  // "0-4,6-10": consecutive runs collapsed
  std::string s;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(idx[i]);
    if (j > i) s += "-" + std::to_string(idx[j]);
    i = j + 1;
  }
  return s;
}

void run_kv(const KvArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  const auto profiles = io::Profiles::load(g.profiles_dir);
  ResolvedModel rm = resolve_model(a.model, profiles);
  const ModelSpec& m = rm.spec;

  KvOptions o = rm.kv_options;
  if (!a.context.empty()) {
    o.context = parse_count(a.context, "--context");
    if (o.context < 1) throw InputError("--context", "must be >= 1 token");  // as plan
  } else {
    if (m.max_context <= 0)
      throw InputError("--context", "the model config has no max_position_embeddings", "pass --context N (e.g. 4096 or 32k)");
    o.context = m.max_context;
  }
  o.encoder_tokens = parse_count(a.encoder_tokens, "--encoder-tokens");
  const KvResult kv = compute_kv(m, o);
  const ParamCount pc = count_params(m);
  const WeightBytes wb = weight_bytes(m, pc);

  for (const auto& w : m.warnings) warn(w);

  ojson inputs = model_inputs_json(rm);
  inputs["context_tokens"] = o.context;
  inputs["context_source"] = a.context.empty() ? "max_position_embeddings" : "--context";
  inputs["encoder_tokens"] = o.encoder_tokens;

  ojson groups = ojson::array();
  for (const auto& gr : kv.groups) {
    groups.push_back({{"kind", kv_kind_name(gr.kind)},
                      {"layers", join(gr.layer_indices)},
                      {"layer_count", gr.layer_indices.size()},
                      {"kv_heads", gr.kv_heads},
                      {"k_head_dim", gr.k_head_dim},
                      {"v_head_dim", gr.v_head_dim},
                      {"window_tokens", gr.window},
                      {"k_bytes_per_token_per_layer", gr.k_bytes_per_token},
                      {"v_bytes_per_token_per_layer", gr.v_bytes_per_token},
                      {"tokens_held", gr.tokens_held},
                      {"k_bytes", gr.k_bytes},
                      {"v_bytes", gr.v_bytes},
                      {"state_bytes", gr.state_bytes},
                      {"formula", gr.formula}});
  }
  ojson params = ojson::object();
  for (const auto& p : pc.parts) params[p.name] = p.total();
  ojson results = {{"kv_bytes_per_token", kv.kv_bytes_per_token},
                   {"k_bytes_per_token", kv.k_bytes_per_token},
                   {"v_bytes_per_token", kv.v_bytes_per_token},
                   {"sequence_kv_bytes", kv.sequence_kv_bytes},
                   {"k_bytes", kv.k_bytes},
                   {"v_bytes", kv.v_bytes},
                   {"state_bytes", kv.state_bytes},
                   {"params_total", pc.total},
                   {"params_active", pc.active},
                   {"params_text", pc.text_total},
                   {"weight_bytes", wb.total},
                   {"weight_basis", wb.basis},
                   {"params_by_component", params},
                   {"layer_groups", groups},
                   {"vision_basis", m.vision.present ? ojson(m.vision.basis) : ojson(nullptr)},
                   {"warnings", m.warnings},
                   {"notes", m.notes}};

  if (fmt == Format::json) {
    std::cout << envelope("kvplan.kv", "1.0.0", g.argv, profiles.sources(), inputs, results).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
    return;
  }
  if (fmt == Format::jsonl) {
    // one record a line under the JSON's own keys: the model's totals first, then one per layer group
    ojson summary = {{"record", "model"}};
    for (auto it = results.begin(); it != results.end(); ++it)
      if (it.key() != "layer_groups" && it.key() != "params_by_component") summary[it.key()] = it.value();
    std::cout << summary.dump(-1, ' ', false, ojson::error_handler_t::replace) << "\n";
    for (const auto& gr : results["layer_groups"]) {
      ojson rec = {{"record", "layer_group"}};
      rec.update(gr);
      std::cout << rec.dump(-1, ' ', false, ojson::error_handler_t::replace) << "\n";
    }
    return;
  }

  Table groups_t;
  groups_t.title = "KV cache by layer group";
  groups_t.columns = {"layers", "kind", "count", "per-token bytes/layer", "tokens held", "K bytes", "V bytes", "state bytes", "derivation"};
  groups_t.right_align = {false, false, true, true, true, true, true, true, false};
  groups_t.verbose_only = {false, false, false, false, false, false, false, false, true};
  // CSV carries plain integers for machines; table and Markdown group digits for people
  auto num = [&](i64 v) { return fmt == Format::csv ? std::to_string(v) : grouped(v); };
  for (const auto& gr : kv.groups)
    groups_t.rows.push_back({join(gr.layer_indices), kv_kind_name(gr.kind), std::to_string(gr.layer_indices.size()),
                             num(gr.k_bytes_per_token + gr.v_bytes_per_token), num(gr.tokens_held), num(gr.k_bytes),
                             num(gr.v_bytes), num(gr.state_bytes), gr.formula});
  if (fmt == Format::csv) {  // one table: the layer groups (the model's totals are their sums; json and jsonl carry both)
    std::cout << render(groups_t, fmt);
    return;
  }
  Table s;
  s.title = m.id + " (" + m.model_type + ") at " + grouped(o.context) + " tokens, " +
            (is_turboquant(o.k_format) ? kv_pair_name(o.k_format, o.v_format) + " (" : "") + "K " + std::string(format_info(o.k_format).name) +
            " / V " + std::string(format_info(o.v_format).name) + (is_turboquant(o.k_format) ? ")" : "");
  s.columns = {"quantity", "bytes", "human"};
  s.right_align = {false, true, true};
  auto row = [&](const std::string& k, i64 v) { s.rows.push_back({k, grouped(v), human_bytes(v)}); };
  row("KV bytes per token", kv.kv_bytes_per_token);
  row("  K per token", kv.k_bytes_per_token);
  row("  V per token", kv.v_bytes_per_token);
  row("sequence KV (K + V)", kv.sequence_kv_bytes);
  row("  K", kv.k_bytes);
  row("  V", kv.v_bytes);
  row("recurrent state per sequence", kv.state_bytes);
  row("weights (" + wb.basis + ")", wb.total);
  s.rows.push_back({"parameters total", grouped(pc.total), human_count(pc.total)});
  s.rows.push_back({"parameters active per token", grouped(pc.active), human_count(pc.active)});
  std::cout << render(s, fmt) << "\n" << render(groups_t, fmt);
  if (m.vision.present) std::cout << "\nvision tower: " << grouped(m.vision.params) << " params (" << m.vision.basis << ")\n";
  for (const auto& n : m.notes) std::cout << (fmt == Format::md ? "\n- " : "\nnote: ") << n << "\n";
}

}  // namespace

void register_kv(CLI::App& app, Globals& g) {
  auto a = std::make_shared<KvArgs>();
  auto* c = app.add_subcommand("kv", "KV-cache bytes per token and per sequence, with the derivation, parameters and weights");
  add_model_options(c, a->model);
  c->add_option("--context", a->context, "Tokens of one sequence (4096, 32k, 1m); default: the model's max_position_embeddings");
  c->add_option("--encoder-tokens", a->encoder_tokens, "Encoder tokens cross-attention layers hold (mllama); default 0");
  c->add_option("--format", a->format, "table | md | csv (the layer groups) | json | jsonl (the model's totals, then a record per layer group)")->capture_default_str();
  c->callback([a, &g] { run_kv(*a, g); });
}

}  // namespace kvplan::cli
