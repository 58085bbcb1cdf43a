// `kvplan gpus`: GPU profiles with exact memory, which tool reported it, bandwidth and TFLOP/s;
// `kvplan gpus --template`: an empty GPU profile to fill in for a GPU kvplan has no profile for.
#include <iostream>

#include "commands.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/profiles.hpp"
#include "output.hpp"

namespace kvplan::cli {

namespace {

struct GpusArgs {
  std::string format = "table";
  bool template_ = false;
};

std::string opt_num(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", *v);
  return buf;
}

ojson opt_json(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }
ojson opt_json(const std::optional<i64>& v) { return v ? ojson(*v) : ojson(nullptr); }

void run_gpus(const GpusArgs& a, Globals& g) {
  if (a.template_) {
    std::cout << io::gpu_profile_template();
    return;
  }
  const Format fmt = parse_format_flag(a.format);
  const auto profiles = io::Profiles::load(g.profiles_dir);
  Table t;
  const bool csv = fmt == Format::csv || fmt == Format::jsonl;
  t.columns = csv ? std::vector<std::string>{"id", "name", "memory_bytes", "memory_bytes_kind", "memory_bandwidth_bytes_per_s",
                                             "bf16_dense_tflops", "fp8_dense_tflops"}
                  : std::vector<std::string>{"id", "name", "memory bytes", "memory", "reported by", "bandwidth GB/s", "bf16 TFLOP/s", "fp8 TFLOP/s"};
  t.right_align = {false, false, true, true, false, true, true, true};
  ojson rows = ojson::array();
  for (const auto& [id, gp] : profiles.gpus()) {
    if (csv)
      t.rows.push_back({id, gp.name, std::to_string(gp.memory_bytes), gp.memory_bytes_kind, std::to_string(gp.memory_bandwidth_bytes_per_s),
                        gp.bf16_dense_tflops ? ojson(*gp.bf16_dense_tflops).dump() : "", gp.fp8_dense_tflops ? ojson(*gp.fp8_dense_tflops).dump() : ""});
    else
    t.rows.push_back({id, gp.name, grouped(gp.memory_bytes), human_bytes(gp.memory_bytes), gp.memory_bytes_kind,
                      grouped(gp.memory_bandwidth_bytes_per_s / 1000000000), opt_num(gp.bf16_dense_tflops),
                      opt_num(gp.fp8_dense_tflops)});
    rows.push_back({{"id", id}, {"name", gp.name}, {"aliases", gp.aliases}, {"vendor", gp.vendor},
                    {"architecture", gp.architecture}, {"memory_bytes", gp.memory_bytes},
                    {"memory_bytes_kind", gp.memory_bytes_kind}, {"memory_source", gp.memory_source},
                    {"cuda_total_bytes", opt_json(gp.cuda_total_bytes)}, {"nvml_total_bytes", opt_json(gp.nvml_total_bytes)},
                    {"datasheet_memory_gb", gp.datasheet_memory_gb},
                    {"memory_bandwidth_bytes_per_s", gp.memory_bandwidth_bytes_per_s},
                    {"bf16_dense_tflops", opt_json(gp.bf16_dense_tflops)}, {"fp16_dense_tflops", opt_json(gp.fp16_dense_tflops)},
                    {"fp8_dense_tflops", opt_json(gp.fp8_dense_tflops)}, {"compute_source", gp.compute_source}});
  }
  if (fmt == Format::json) {
    std::cout << envelope("kvplan.gpus", "1.0.0", g.argv, profiles.sources(), ojson::object(), {{"gpus", rows}}).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
    return;
  }
  std::cout << render(t, fmt);
}

}  // namespace

void register_gpus(CLI::App& app, Globals& g) {
  auto a = std::make_shared<GpusArgs>();
  auto* c = app.add_subcommand("gpus", "List GPU profiles (built-in and --profiles)");
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->add_flag("--template", a->template_,
              "Print an empty GPU profile to fill in and save as DIR/gpus/<id>.json for --profiles DIR "
              "(every key is required; null where profiles/README-gpus.md allows)");
  c->callback([a, &g] { run_gpus(*a, g); });
}

}  // namespace kvplan::cli
