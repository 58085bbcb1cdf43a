// `kvplan gpus`: GPU profiles (and Apple chips, unified-memory boxes, CPU hosts) with exact memory, which tool
// reported it, bandwidth, TFLOP/s per dtype and the links between devices and to the host;
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

// memory_bytes_kind as the table shows it
std::string short_kind(const std::string& kind) {
  if (kind == "cuda_reported") return "cuda";
  if (kind == "nvml_reported") return "nvml";
  if (kind == "metal_working_set") return "metal";
  if (kind == "host_ram") return "host RAM";
  return kind;  // datasheet, derived
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
  if (csv) {
    t.columns = {"id", "name", "memory_bytes", "memory_bytes_kind", "memory_bandwidth_bytes_per_s", "bf16_dense_tflops",
                 "fp8_dense_tflops", "device_class", "int8_dense_tops", "fp4_dense_tflops", "interconnect",
                 "interconnect_bytes_per_s", "pcie_bytes_per_s"};
  } else {
    // one line per device in 100 columns: the name only with --verbose (and in md)
    t.title = "bf16, fp8: dense TFLOP/s (* fp16 where the GPU has no bf16 rate); GB/s: memory bandwidth; link: to the node's other devices, GB/s each way";
    t.columns = {"id", "name", "class", "memory", "kind", "GB/s", "bf16", "fp8", "link"};
    t.right_align = {false, false, false, true, false, true, true, true, false};
    t.verbose_only = {false, true, false, false, false, false, false, false, false};
  }
  auto dump = [](const std::optional<double>& v) { return v ? ojson(*v).dump() : std::string(); };
  ojson rows = ojson::array();
  for (const auto& [id, gp] : profiles.gpus()) {
    const auto link_bytes = static_cast<i64>(gp.interconnect_bytes_per_s);
    const auto pcie_bytes = static_cast<i64>(gp.pcie_bytes_per_s);
    if (csv)
      t.rows.push_back({id, gp.name, std::to_string(gp.memory_bytes), gp.memory_bytes_kind,
                        std::to_string(gp.memory_bandwidth_bytes_per_s), dump(gp.bf16_dense_tflops),
                        dump(gp.fp8_dense_tflops), gp.device_class, dump(gp.int8_dense_tops), dump(gp.fp4_dense_tflops),
                        gp.interconnect, std::to_string(link_bytes), std::to_string(pcie_bytes)});
    else
      t.rows.push_back({id, gp.name, gp.device_class, human_bytes(gp.memory_bytes), short_kind(gp.memory_bytes_kind),
                        grouped((gp.memory_bandwidth_bytes_per_s + 500000000) / 1000000000),  // to the nearest GB/s
                        gp.bf16_dense_tflops || !gp.fp16_dense_tflops ? opt_num(gp.bf16_dense_tflops) : opt_num(gp.fp16_dense_tflops) + "*",
                        opt_num(gp.fp8_dense_tflops),
                        gp.interconnect == "none" ? "none" : gp.interconnect + " " + grouped((link_bytes + 500000000) / 1000000000)});
    rows.push_back({{"id", id},
                    {"name", gp.name},
                    {"aliases", gp.aliases},
                    {"vendor", gp.vendor},
                    {"architecture", gp.architecture},
                    {"compute_capability", gp.compute_capability},
                    {"device_class", gp.device_class},
                    {"memory_type", gp.memory_type},
                    {"unified_memory", gp.unified_memory},
                    {"memory_bytes", gp.memory_bytes},
                    {"memory_bytes_kind", gp.memory_bytes_kind},
                    {"memory_source", gp.memory_source},
                    {"cuda_total_bytes", opt_json(gp.cuda_total_bytes)},
                    {"nvml_total_bytes", opt_json(gp.nvml_total_bytes)},
                    {"datasheet_memory_gb", gp.datasheet_memory_gb},
                    {"ecc_mode", gp.ecc_mode},
                    {"memory_bandwidth_bytes_per_s", gp.memory_bandwidth_bytes_per_s},
                    {"bf16_dense_tflops", opt_json(gp.bf16_dense_tflops)},
                    {"fp16_dense_tflops", opt_json(gp.fp16_dense_tflops)},
                    {"fp8_dense_tflops", opt_json(gp.fp8_dense_tflops)},
                    {"int8_dense_tops", opt_json(gp.int8_dense_tops)},
                    {"fp4_dense_tflops", opt_json(gp.fp4_dense_tflops)},
                    {"sm_count", opt_json(gp.sm_count)},
                    {"boost_clock_mhz", opt_json(gp.boost_clock_mhz)},
                    {"dies", opt_json(gp.dies)},
                    {"compute_source", gp.compute_source},
                    {"interconnect", gp.interconnect},
                    {"interconnect_generation", gp.interconnect_generation},
                    {"interconnect_bytes_per_s", link_bytes},
                    {"pcie_bytes_per_s", pcie_bytes},
                    {"nvlink_bridge_bytes_per_s", gp.nvlink_bridge_bytes_per_s > 0 ? ojson(static_cast<i64>(gp.nvlink_bridge_bytes_per_s)) : ojson(nullptr)},
                    {"nvlink_bridge_default", gp.nvlink_bridge_default},
                    {"interconnect_source", gp.interconnect_source},
                    {"notes", gp.notes}});
  }
  if (fmt == Format::json) {
    std::cout << envelope("kvplan.gpus", "1.2.0", g.argv, profiles.sources(), ojson::object(), {{"gpus", rows}}).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
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
