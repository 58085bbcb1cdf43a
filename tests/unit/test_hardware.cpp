// The hardware database (profiles/gpus): every device of /work/shared/reference/hardware-facts.json has a
// profile with memory, bandwidth, TFLOP/s, links and sources; spot checks against published figures;
// names resolve (shared names by memory); `kvplan gpus --format json` lists every device with the new keys.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

#include "kvplan/io/profiles.hpp"

using namespace kvplan;

namespace {

constexpr i64 GiB = i64{1} << 30;

const io::Profiles& profiles() {
  static const io::Profiles p = io::Profiles::load(std::nullopt);
  return p;
}

// kvplan's JSON for a command line of space-separated words (no shell)
nlohmann::json run_json(const std::string& args) {
  std::vector<std::string> words;
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  return nlohmann::json::parse(kvtest::kvplan(words).out);
}

// One profile per hardware-facts.json device (86), plus the profiles that file does not list.
const std::vector<std::string> kHardwareFactsIds = {
    // NVIDIA data centre
    "h800-sxm", "h800-pcie", "a800-sxm", "h20", "h20-141gb", "l20", "l40", "a40", "a30", "a10", "t4", "gb300", "b300",
    "gb200", "h100-nvl", "gh200", "gh200-144gb", "v100-16gb", "v100-32gb", "p40", "p100-16gb",
    // NVIDIA workstation (rtx-pro-6000 covers the Workstation and Server Editions)
    "rtx-pro-6000", "rtx-pro-6000-max-q", "rtx-pro-5000", "rtx-6000-ada", "rtx-a6000", "rtx-5000-ada",
    // NVIDIA GeForce
    "rtx-3060", "rtx-3070", "rtx-3080-10gb", "rtx-3080-12gb", "rtx-3080-ti", "rtx-3090", "rtx-3090-ti",
    "rtx-4060-ti-16gb", "rtx-4070", "rtx-4070-ti-super", "rtx-4080", "rtx-4080-super", "rtx-4090", "rtx-5060-ti-16gb",
    "rtx-5070-ti", "rtx-5080", "rtx-5090", "gtx-1080-ti",
    // NVIDIA unified / embedded
    "dgx-spark", "jetson-agx-orin-64gb", "jetson-agx-orin-32gb", "jetson-agx-thor",
    // AMD
    "mi210", "mi250x-gcd", "mi250x-package", "mi300x", "mi300a", "mi325x", "mi355x", "rx-7900-xtx", "radeon-pro-w7900",
    "radeon-ai-pro-r9700", "strix-halo",
    // Apple (M2 Max split by GPU cores, as M3 Max and M4 Max)
    "m1", "m1-pro", "m1-max", "m1-ultra", "m2", "m2-pro", "m2-max-30c", "m2-max-38c", "m2-ultra", "m3", "m3-pro",
    "m3-max-30c", "m3-max-40c", "m3-ultra", "m4", "m4-pro", "m4-max-32c", "m4-max-40c",
    // Intel Gaudi
    "gaudi2", "gaudi3",
    // CPU hosts
    "cpu-epyc-9004", "cpu-epyc-9005", "cpu-xeon-sapphire-rapids", "cpu-xeon-emerald-rapids", "cpu-xeon-6900p",
    "cpu-desktop-ddr5"};
const std::vector<std::string> kOtherIds = {"h100-sxm", "h100-pcie", "h200", "b200", "a100-sxm-80gb", "a100-40gb",
                                            "a100-pcie-80gb", "a100-pcie-40gb", "a10g", "l4", "l40s",
                                            // GeForce RTX 20 series and TITAN RTX (Turing, issue #12)
                                            "rtx-2060", "rtx-2060-12gb", "rtx-2060-super", "rtx-2070", "rtx-2070-super",
                                            "rtx-2080", "rtx-2080-super", "rtx-2080-ti", "titan-rtx",
                                            // GeForce RTX 30/40/50 cards hardware-facts.json lacks (issue #12)
                                            "rtx-3050", "rtx-3050-6gb", "rtx-3060-8gb", "rtx-3060-ti", "rtx-3070-ti", "rtx-4060", "rtx-4060-ti-8gb",
                                            "rtx-4070-super", "rtx-4070-ti", "rtx-5050", "rtx-5060", "rtx-5060-ti-8gb", "rtx-5070",
                                            // cards llama.cpp users run that hardware-facts.json lacks (2026-12-06)
                                            "v100-pcie-32gb", "v100-pcie-16gb", "titan-v", "rtx-a4000", "rtx-a5000",
                                            "rtx-4000-ada", "rtx-4500-ada", "rx-9070-xt", "rx-9070", "rx-9060-xt", "rx-9060-xt-8gb", "rx-7900-xt",
                                            "rx-7900-gre", "rx-7800-xt", "radeon-vii", "mi50-16gb", "mi50-32gb", "mi100",
                                            // Apple M5 family (2025-10 and 2026-03), after hardware-facts.json
                                            "m5", "m5-pro", "m5-max-40c"};

}  // namespace

TEST_CASE("every hardware-facts device has a profile", "[hardware]") {
  const auto& p = profiles();
  std::set<std::string> expected(kHardwareFactsIds.begin(), kHardwareFactsIds.end());
  expected.insert(kOtherIds.begin(), kOtherIds.end());
  // 86 devices; the RTX PRO 6000 Workstation and Server Editions share a profile, M2 Max has two
  CHECK(kHardwareFactsIds.size() == 86 - 1 + 1);
  for (const auto& id : expected) {
    INFO(id);
    CHECK(p.gpus().count(id) == 1);
  }
  for (const auto& [id, g] : p.gpus()) {
    INFO(id);
    CHECK(expected.count(id) == 1);  // a new profile joins one of the lists above
  }
}

TEST_CASE("every shipped profile has bandwidth, sources and consistent links", "[hardware]") {
  const std::set<std::string> classes = {"datacenter", "workstation", "consumer", "embedded",
                                         "apple",      "cpu",         "unified"};
  const std::set<std::string> links = {"nvlink", "pcie", "xgmi", "infinity-fabric", "ethernet", "none"};
  for (const auto& [id, g] : profiles().gpus()) {
    INFO(id);
    CHECK(g.memory_bandwidth_bytes_per_s > 0);
    CHECK(g.memory_bytes > 1'000'000'000);
    CHECK_FALSE(g.memory_source.empty());
    CHECK_FALSE(g.compute_source.empty());
    CHECK_FALSE(g.interconnect_source.empty());
    CHECK_FALSE(g.interconnect_generation.empty());
    CHECK(classes.count(g.device_class) == 1);
    CHECK(links.count(g.interconnect) == 1);
    CHECK((g.ecc_mode == "on" || g.ecc_mode == "off" || g.ecc_mode == "none"));
    if (g.interconnect == "none") CHECK(g.interconnect_bytes_per_s == 0);
    else CHECK(g.interconnect_bytes_per_s > 0);
    if (g.interconnect == "pcie") CHECK(g.interconnect_bytes_per_s == g.pcie_bytes_per_s);  // both the raw link
    if (g.unified_memory) CHECK(g.pcie_bytes_per_s == 0);  // no host link: the host is on the same memory
    else CHECK(g.pcie_bytes_per_s > 0);
    if (g.device_class == "apple") {
      CHECK(g.vendor == "apple");
      CHECK(g.memory_bytes_kind == "metal_working_set");
      CHECK(g.interconnect == "none");
    }
    if (g.device_class == "cpu") {
      CHECK(g.memory_bytes_kind == "host_ram");
      CHECK(g.interconnect == "none");
    }
    if (g.device_class == "consumer") CHECK(g.ecc_mode == "none");
    if (g.memory_bytes_kind == "cuda_reported") CHECK(g.cuda_total_bytes == g.memory_bytes);
    for (const auto& v : {g.bf16_dense_tflops, g.fp16_dense_tflops, g.fp8_dense_tflops, g.int8_dense_tops,
                          g.fp4_dense_tflops})
      if (v) CHECK(*v > 0);
    // a clock is a GPU's boost (0.9 to 3.2 GHz for every shipped part) and comes with its SM count (the dequant term)
    if (g.boost_clock_mhz) {
      CHECK(g.sm_count.has_value());
      CHECK(*g.boost_clock_mhz >= 900);
      CHECK(*g.boost_clock_mhz <= 3200);
    }
    if (g.device_class == "cpu") CHECK_FALSE(g.boost_clock_mhz.has_value());
  }
}

TEST_CASE("SM counts and boost clocks from the vendors' datasheets", "[hardware][clock]") {
  const auto& p = profiles();
  // H100 SXM5: 132 SMs, 1980 MHz max boost (deviceQuery '(132) Multiprocessors', 'GPU Max Clock rate: 1980 MHz')
  CHECK(p.gpu("h100-sxm").sm_count == 132);
  CHECK(p.gpu("h100-sxm").boost_clock_mhz == 1980);
  // A100: 108 SMs, 1410 MHz (NVIDIA A100 Tensor Core GPU Architecture whitepaper)
  CHECK(p.gpu("a100-sxm-80gb").sm_count == 108);
  CHECK(p.gpu("a100-sxm-80gb").boost_clock_mhz == 1410);
  // RTX 4090: 128 SMs, 2520 MHz boost (NVIDIA Ada Lovelace architecture whitepaper)
  CHECK(p.gpu("rtx-4090").sm_count == 128);
  CHECK(p.gpu("rtx-4090").boost_clock_mhz == 2520);
  // Tesla P40: 30 SMs (3840 CUDA cores / 128), 1531 MHz boost (NVIDIA Tesla P40 datasheet)
  CHECK(p.gpu("p40").sm_count == 30);
  CHECK(p.gpu("p40").boost_clock_mhz == 1531);
  // M2 Ultra, 76-core GPU at 1398 MHz: 76 x 128 ALUs x 2 x 1.398 GHz = 27.2 TFLOP/s FP32, Apple's published figure
  CHECK(p.gpu("m2-ultra").sm_count == 76);
  CHECK(76 * 128 * 2 * (*p.gpu("m2-ultra").boost_clock_mhz) * 1e6 / 1e12 == Approx(27.2).epsilon(0.01));
  // an Ultra is two Max dies joined by UltraFusion (Apple newsroom: M1 Ultra 2022-03-08, M2 Ultra 2023-06-05,
  // M3 Ultra 2025-03-05); a Max is one die
  for (const char* id : {"m1-ultra", "m2-ultra", "m3-ultra"}) CHECK(p.gpu(id).dies == 2);
  CHECK_FALSE(p.gpu("m2-max-38c").dies.has_value());
}

TEST_CASE("published figures", "[hardware]") {
  const auto& p = profiles();
  // H100 SXM5: 3.35 TB/s HBM3, 989 dense BF16 TFLOP/s (NVIDIA H100 datasheet: 1,979 with sparsity), NVLink 4
  // 900 GB/s bidirectional (glennklockwood.com/garden/processors/h100 '900 GB/s NVLink (D2D)'), PCIe 5.0 x16
  const GpuSpec& h100 = p.gpu("h100-sxm");
  CHECK(h100.memory_bandwidth_bytes_per_s == 3'350'000'000'000);
  CHECK(h100.bf16_dense_tflops.value() == Approx(989));
  CHECK(h100.int8_dense_tops.value() == Approx(3958.0 / 2));  // 3,958 TOPS sparse / 2
  CHECK(h100.interconnect == "nvlink");
  CHECK(h100.interconnect_bytes_per_s == 900e9 / 2);
  CHECK(h100.pcie_bytes_per_s == 16 * 4e9);  // 16 lanes x ~4 GB/s per lane per direction (PCIe 5.0)
  // H800: NVLink capped at 400 GB/s bidirectional (aiconfigurator h800_sxm.yaml intra_node_bw 200e9 per direction)
  CHECK(p.gpu("h800-sxm").interconnect_bytes_per_s == 400e9 / 2);
  CHECK(p.gpu("h800-sxm").bf16_dense_tflops.value() == Approx(989));  // same compute as H100 SXM
  // A100 SXM4: NVLink 3 '300+300 GB/s' (glennklockwood A100 page); the PCIe 40GB card: PCIe 4.0 x16
  CHECK(p.gpu("a100-40gb").interconnect_bytes_per_s == 300e9);
  CHECK(p.gpu("a100-pcie-40gb").interconnect == "pcie");
  CHECK(p.gpu("a100-pcie-40gb").pcie_bytes_per_s == 16 * 2e9);  // 16 lanes x ~2 GB/s (PCIe 4.0)
  // B200: NVLink 5 1.8 TB/s bidirectional; dense FP4 9 PFLOP/s at 1000 W (glennklockwood B200 table)
  CHECK(p.gpu("b200").interconnect_bytes_per_s == 1.8e12 / 2);
  CHECK(p.gpu("b200").fp4_dense_tflops.value() == Approx(18000.0 / 2));
  // Apple M2 Ultra: 800 GB/s (Apple; gamebastion 'M2 Ultra ... memory bandwidth is capped at 800GB/s')
  CHECK(p.gpu("m2-ultra").memory_bandwidth_bytes_per_s == 800'000'000'000);
  // M3 Max with the 30-core GPU: 300 GB/s, the 40-core one 400 GB/s (macrumors 2023-10-31)
  CHECK(p.gpu("m3-max-30c").memory_bandwidth_bytes_per_s == 300'000'000'000);
  CHECK(p.gpu("m3-max-40c").memory_bandwidth_bytes_per_s == 400'000'000'000);
  // Apple working set, macOS 13-15: 3/4 of 128 GB (llama.cpp 'recommendedMaxWorkingSetSize = 103079.22 MB' on
  // an M4 Max 128 GB), 2/3 of 16 GB ('11453.25 MB' on an M4 16 GB)
  CHECK(p.gpu("m4-max-40c").memory_bytes == 128 * GiB * 3 / 4);
  CHECK(p.gpu("m4").memory_bytes == 16 * GiB * 2 / 3);
  // Apple M5 153 GB/s, M5 Pro 307 GB/s, M5 Max 614 GB/s (Apple's announcements, 2025-10-15 and 2026-03-03); the M5 Max
  // 128 GB on macOS 26: 'recommendedMaxWorkingSetSize = 115448.73 MB' (107.52 GiB, antirez/ds4 PR #893)
  CHECK(p.gpu("Apple M5").memory_bandwidth_bytes_per_s == 153'000'000'000);
  CHECK(p.gpu("m5-pro").memory_bandwidth_bytes_per_s == 307'000'000'000);
  CHECK(p.gpu("Apple M5 Max").memory_bandwidth_bytes_per_s == 614'000'000'000);
  CHECK(p.gpu("m5-max").memory_bytes == 115'448'730'000);
  CHECK(p.gpu("m5").sm_count == 10);
  // RTX 5050: 20 Gbps GDDR6 x 128-bit / 8 = 320 GB/s, 20 SMs at 2,572 MHz: 20 x 512 x 2.572 GHz = 26.3 TFLOP/s bf16
  // (NVIDIA's announcement via tweakers.net/nieuws/236558 and io-tech.fi)
  CHECK(p.gpu("NVIDIA GeForce RTX 5050").memory_bandwidth_bytes_per_s == 20'000'000'000LL * 128 / 8);
  CHECK(p.gpu("rtx-5050").bf16_dense_tflops.value() == Approx(20 * 512 * 2.572e9 / 1e12).epsilon(0.002));
  // RTX 4090: 21 Gbps x 384-bit / 8 = 1008 GB/s
  CHECK(p.gpu("rtx-4090").memory_bandwidth_bytes_per_s == 21'000'000'000LL * 384 / 8);
  // RTX 3090 Ti: 21 Gbps x 384-bit = 1008 GB/s, 84 SMs (tweaktown.com/news/84164)
  CHECK(p.gpu("rtx-3090-ti").memory_bandwidth_bytes_per_s == 1'008'000'000'000);
  CHECK(p.gpu("rtx-3090-ti").sm_count == 84);
  // MI300X: 5.3 TB/s HBM3 (AMD; docs.vultr.com ROCm requirements)
  CHECK(p.gpu("mi300x").memory_bandwidth_bytes_per_s == 5'300'000'000'000);
  // MI250X: one GCD is one HIP device of 64 GiB - 16 MiB (Cray ACC 'Total GPU memory 68702699520')
  CHECK(p.gpu("AMD Instinct MI250X").id == "mi250x-gcd");
  CHECK(p.gpu("mi250x-gcd").memory_bytes == 64 * GiB - 16 * (i64{1} << 20));
  // DGX Spark: 273 GB/s LPDDR5x (NVIDIA datasheet via aiconfigurator gb10.yaml), unified, single device
  const GpuSpec& spark = p.gpu("dgx-spark");
  CHECK(spark.memory_bandwidth_bytes_per_s == 273'000'000'000);
  CHECK(spark.unified_memory);
  CHECK(spark.device_class == "unified");
  CHECK(spark.interconnect == "none");
  // Gaudi 3: 21 scale-up ports x 200 Gb/s = 525 GB/s per direction (docs.habana.ai network configuration)
  CHECK(p.gpu("gaudi3").interconnect == "ethernet");
  CHECK(p.gpu("gaudi3").interconnect_bytes_per_s == 21 * 200e9 / 8);
  CHECK(p.gpu("gaudi3").memory_bandwidth_bytes_per_s == 3'670'000'000'000);  // Hot Chips 2024: 3.67 TB/s
  // EPYC 9004 (one socket): 12 channels x DDR5-4800 x 8 B (tomshardware: 460.8 GB/s per socket)
  CHECK(p.gpu("cpu-epyc-9004").memory_bandwidth_bytes_per_s == 12LL * 4800 * 1'000'000 * 8);
}

TEST_CASE("GeForce RTX 20 and TITAN RTX (Turing): no bf16, fp16 at the FP32-accumulate rate", "[hardware][turing]") {
  const auto& p = profiles();
  const GpuSpec& ti = p.gpu("rtx-2080-ti");
  // 14 Gbps GDDR6 x 352-bit / 8 = 616 GB/s (Tom's Hardware TITAN RTX table: 'RTX 2080 Ti FE ... 616 GB/s')
  CHECK(ti.memory_bandwidth_bytes_per_s == 14'000'000'000LL * 352 / 8);
  CHECK(ti.memory_bandwidth_bytes_per_s == 616'000'000'000);
  CHECK(ti.compute_capability == "7.5");
  CHECK(ti.sm_count == 68);
  // no BF16, FP8 or FP4 tensor cores on Turing
  CHECK_FALSE(ti.bf16_dense_tflops.has_value());
  CHECK_FALSE(ti.fp8_dense_tflops.has_value());
  CHECK_FALSE(ti.fp4_dense_tflops.has_value());
  // FP16 with FP32 accumulate, half rate on GeForce: 68 SM x 512 FLOP/clk x 1.545 GHz = 53.8 TFLOP/s (the
  // FP16-accumulate rate is 1024/clk: 107.6; NVIDIA's 113.8 for the 1.635 GHz Founders Edition);
  // INT8 68 x 2048 x 1.545 GHz = 215.2 TOPS
  CHECK(ti.fp16_dense_tflops.value() == Approx(68 * 512 * 1.545e9 / 1e12).margin(0.05));
  CHECK(ti.int8_dense_tops.value() == Approx(68 * 2048 * 1.545e9 / 1e12).margin(0.05));
  // deviceQuery 'Total amount of global memory: 10823 MBytes (11348672512 bytes)' (driver CUDA 12.8);
  // nvidia-smi 11264MiB
  CHECK(ti.memory_bytes == 11'348'672'512);
  CHECK(ti.memory_bytes_kind == "cuda_reported");
  CHECK(ti.nvml_total_bytes == 11264 * (i64{1} << 20));
  // PCIe 3.0 x16: 16 lanes x ~1 GB/s per direction; the 2-card NVLink bridge is named, not counted
  CHECK(ti.interconnect == "pcie");
  CHECK(ti.pcie_bytes_per_s == 16 * 1e9);
  // the names the driver prints, old (no 'NVIDIA ' prefix) and new, and the short forms
  for (const char* n :
       {"NVIDIA GeForce RTX 2080 Ti", "GeForce RTX 2080 Ti", "2080ti", "2080-ti", "geforce-rtx-2080-ti"})
    CHECK(p.gpu(n).id == "rtx-2080-ti");
  // TITAN RTX runs FP32 accumulate at the full tensor rate: 72 x 1024 x 1.77 GHz = 130.5
  // (Tom's Hardware '130.5 TFLOPS')
  CHECK(p.gpu("NVIDIA TITAN RTX").id == "titan-rtx");
  CHECK(p.gpu("titan-rtx").fp16_dense_tflops.value() == Approx(72 * 1024 * 1.77e9 / 1e12).margin(0.05));
  CHECK(p.gpu("titan-rtx").memory_bandwidth_bytes_per_s == 14'000'000'000LL * 384 / 8);  // 672 GB/s
  // RTX 2080 SUPER: 15.5 Gbps x 256-bit / 8 = 496 GB/s; the other 8 GB cards 14 Gbps x 256 / 8 = 448 GB/s
  CHECK(p.gpu("NVIDIA GeForce RTX 2080 SUPER").memory_bandwidth_bytes_per_s == 15'500'000'000LL * 256 / 8);
  CHECK(p.gpu("rtx-2070-super").memory_bandwidth_bytes_per_s == 14'000'000'000LL * 256 / 8);
  // every Turing card: no bf16, fp16 present, PCIe 3.0, no ECC
  for (const char* id : {"rtx-2060", "rtx-2060-12gb", "rtx-2060-super", "rtx-2070", "rtx-2070-super", "rtx-2080",
                         "rtx-2080-super", "rtx-2080-ti", "titan-rtx"}) {
    INFO(id);
    const GpuSpec& g = p.gpu(id);
    CHECK(g.architecture == "turing");
    CHECK_FALSE(g.bf16_dense_tflops.has_value());
    CHECK(g.fp16_dense_tflops.has_value());
    CHECK(g.pcie_bytes_per_s == 16'000'000'000);
    CHECK(g.ecc_mode == "none");
    CHECK(g.memory_bytes < static_cast<i64>(g.datasheet_memory_gb) * GiB);  // CUDA sees less than the binary size
  }
  // the 6 GB and 12 GB RTX 2060 print the same name; the memory total picks one
  CHECK_THROWS_WITH(p.gpu("NVIDIA GeForce RTX 2060"),
                    "'NVIDIA GeForce RTX 2060' is ambiguous: rtx-2060 (6 GB), rtx-2060-12gb (12 GB); name one, or give "
                    "--gpu-memory-bytes");
  CHECK(p.gpu("NVIDIA GeForce RTX 2060", 6 * GiB).id == "rtx-2060");
  CHECK(p.gpu("NVIDIA GeForce RTX 2060", 12 * GiB).id == "rtx-2060-12gb");
  CHECK(p.gpu("2060").id == "rtx-2060");
  // 12 GB card: 12288 MiB less the TU106 NVML-CUDA gap 6144 - 5917 = 227 MiB (RTX 2060, driver 550)
  CHECK(p.gpu("rtx-2060-12gb").memory_bytes == (12288 - (6144 - 5917)) * (i64{1} << 20));
}

TEST_CASE("GeForce RTX 30/40/50 additions: bandwidth, PCIe lanes and shared names by hand", "[hardware][geforce]") {
  const auto& p = profiles();
  constexpr i64 MiB = i64{1} << 20;
  // RTX 4060: 17 Gbps GDDR6 x 128-bit / 8 = 272 GB/s; PCIe 4.0 x8 = 8 lanes x 2 GB/s = 16 GB/s
  const GpuSpec& r4060 = p.gpu("NVIDIA GeForce RTX 4060");
  CHECK(r4060.id == "rtx-4060");
  CHECK(r4060.memory_bandwidth_bytes_per_s == 17'000'000'000LL * 128 / 8);
  CHECK(r4060.memory_bandwidth_bytes_per_s == 272'000'000'000);
  CHECK(r4060.pcie_bytes_per_s == 8 * 2'000'000'000LL);
  // Ada GeForce: 24 SM x 512 FLOP/clk (FP32 accumulate, half rate) x 2.46 GHz = 30.2; fp8 x 1024 = 60.5
  CHECK(r4060.bf16_dense_tflops.value() == Approx(24 * 512 * 2.46e9 / 1e12).margin(0.05));
  CHECK(r4060.fp8_dense_tflops.value() == Approx(24 * 1024 * 2.46e9 / 1e12).margin(0.05));
  // the x8 cards: Ada on PCIe 4.0 (2 GB/s a lane), Blackwell on PCIe 5.0 (4 GB/s a lane)
  for (const char* id : {"rtx-4060", "rtx-4060-ti-8gb", "rtx-4060-ti-16gb"}) {
    INFO(id);
    CHECK(p.gpu(id).pcie_bytes_per_s == 8 * 2'000'000'000LL);
  }
  for (const char* id : {"rtx-5060", "rtx-5060-ti-8gb", "rtx-5060-ti-16gb"}) {
    INFO(id);
    CHECK(p.gpu(id).pcie_bytes_per_s == 8 * 4'000'000'000LL);
    CHECK(p.gpu(id).memory_bandwidth_bytes_per_s == 28'000'000'000LL * 128 / 8);  // 448 GB/s
  }
  // the x16 cards: PCIe 4.0 x16 = 32 GB/s (Ampere, Ada), PCIe 5.0 x16 = 64 GB/s (RTX 5070)
  for (const char* id : {"rtx-3060-ti", "rtx-3070-ti", "rtx-4070-super", "rtx-4070-ti"}) {
    INFO(id);
    CHECK(p.gpu(id).pcie_bytes_per_s == 16 * 2'000'000'000LL);
  }
  CHECK(p.gpu("rtx-5070").pcie_bytes_per_s == 16 * 4'000'000'000LL);
  // RTX 5070: 28 Gbps GDDR7 x 192-bit / 8 = 672 GB/s; fp4 dense = 988 AI TOPS (sparse) / 2
  CHECK(p.gpu("NVIDIA GeForce RTX 5070").memory_bandwidth_bytes_per_s == 28'000'000'000LL * 192 / 8);
  CHECK(p.gpu("rtx-5070").fp4_dense_tflops.value() == Approx(988.0 / 2));
  // RTX 3070 Ti: 19 Gbps GDDR6X x 256 / 8 = 608 GB/s; RTX 3060 Ti: 14 Gbps x 256 / 8 = 448 GB/s
  CHECK(p.gpu("3070ti").memory_bandwidth_bytes_per_s == 19'000'000'000LL * 256 / 8);
  CHECK(p.gpu("3060ti").memory_bandwidth_bytes_per_s == 14'000'000'000LL * 256 / 8);
  // RTX 4070 Ti and 4070 SUPER share 21 Gbps x 192 / 8 = 504 GB/s; 60 and 56 SMs at 2.61 / 2.475 GHz
  CHECK(p.gpu("4070ti").memory_bandwidth_bytes_per_s == 21'000'000'000LL * 192 / 8);
  CHECK(p.gpu("4070-ti").bf16_dense_tflops.value() == Approx(60 * 512 * 2.61e9 / 1e12).margin(0.05));
  CHECK(p.gpu("NVIDIA GeForce RTX 4070 SUPER").bf16_dense_tflops.value() ==
        Approx(56 * 512 * 2.475e9 / 1e12).margin(0.05));
  CHECK(p.gpu("4070-ti-super").id == "rtx-4070-ti-super");  // the Ti SUPER keeps its names
  // deviceQuery 'Total amount of global memory: 7972 MBytes (8359641088 bytes)' (RTX 3060 Ti, CUDA 12.2)
  CHECK(p.gpu("rtx-3060-ti").memory_bytes == 8'359'641'088);
  CHECK(p.gpu("rtx-3060-ti").memory_bytes / MiB == 7972);
  // DERIVED totals: NVML total less a sibling's NVML-CUDA gap, in MiB
  // 4060 Ti 8GB: 8188 - (16380 - 16076) (4060 Ti 16GB nvidia-smi vs deviceQuery)
  CHECK(p.gpu("rtx-4060-ti-8gb").memory_bytes == (8188 - (16380 - 16076)) * MiB);
  // 5060: nvidia-smi 8151 - (16303 - 15841) (5060 Ti 16GB nvidia-smi vs torch)
  CHECK(p.gpu("rtx-5060").memory_bytes == (8151 - (16303 - 15841)) * MiB);
  // 4070 SUPER: 12282 - (16376 - 15974) (4070 Ti SUPER nvidia-smi vs torch on one host)
  CHECK(p.gpu("rtx-4070-super").memory_bytes == (12282 - (16376 - 15974)) * MiB);
  // 5070: Windows CUDA 12226 - (16310 - 15841) (5060 Ti 16GB Windows CUDA vs Linux torch)
  CHECK(p.gpu("rtx-5070").memory_bytes == (12226 - (16310 - 15841)) * MiB);
  // the 8 GB and 16 GB RTX 4060 Ti / 5060 Ti print one name; the memory total picks one
  CHECK_THROWS_WITH(p.gpu("NVIDIA GeForce RTX 4060 Ti"),
                    "'NVIDIA GeForce RTX 4060 Ti' is ambiguous: rtx-4060-ti-16gb (16 GB), rtx-4060-ti-8gb (8 GB); name "
                    "one, or give --gpu-memory-bytes");
  CHECK(p.gpu("NVIDIA GeForce RTX 4060 Ti", 8 * GiB).id == "rtx-4060-ti-8gb");
  CHECK(p.gpu("NVIDIA GeForce RTX 4060 Ti", 16 * GiB).id == "rtx-4060-ti-16gb");
  CHECK(p.gpu("NVIDIA GeForce RTX 5060 Ti", 8 * GiB).id == "rtx-5060-ti-8gb");
  CHECK(p.gpu("NVIDIA GeForce RTX 5060 Ti", 15841 * MiB).id == "rtx-5060-ti-16gb");  // torch total_memory=15841MB
  CHECK(p.gpu("4060ti-8gb").id == "rtx-4060-ti-8gb");
  CHECK(p.gpu("rtx-4060-ti").id == "rtx-4060-ti-16gb");  // the existing short name keeps its profile
  CHECK(p.gpu("5060-ti-8gb").id == "rtx-5060-ti-8gb");
  for (const char* id : {"rtx-3050", "rtx-3050-6gb", "rtx-3060-8gb", "rtx-3060-ti", "rtx-3070-ti", "rtx-4060", "rtx-4060-ti-8gb", "rtx-4070-super", "rtx-4070-ti",
                         "rtx-5060", "rtx-5060-ti-8gb", "rtx-5070"}) {
    INFO(id);
    const GpuSpec& g = p.gpu(id);
    CHECK(g.device_class == "consumer");
    CHECK(g.ecc_mode == "none");
    CHECK(g.interconnect == "pcie");
    CHECK(g.memory_bytes < static_cast<i64>(g.datasheet_memory_gb) * GiB);  // CUDA sees less than the binary size
  }
}

TEST_CASE("the name cpu is the dual-channel DDR5 desktop host", "[hardware]") {
  const GpuSpec& g = profiles().gpu("cpu");
  CHECK(g.id == "cpu-desktop-ddr5");
  CHECK(g.memory_bandwidth_bytes_per_s == 2LL * 5600 * 1'000'000 * 8);  // 2 channels x DDR5-5600 x 8 B
  CHECK(g.memory_bytes == 64 * GiB);                                   // 2 x 32 GiB DIMMs
  CHECK(g.device_class == "cpu");
  CHECK(profiles().gpu("h100").id == "h100-sxm");  // the existing short names keep their profiles
}

TEST_CASE("names shared by variants resolve by memory", "[hardware]") {
  const auto& p = profiles();
  CHECK_THROWS_WITH(p.gpu("Apple M3 Max"),
                    "'Apple M3 Max' is ambiguous: m3-max-30c (36 GB), m3-max-40c (128 GB); name one, or give "
                    "--gpu-memory-bytes");
  CHECK(p.gpu("Apple M3 Max", 36 * GiB).id == "m3-max-30c");
  CHECK(p.gpu("Apple M3 Max", 128 * GiB).id == "m3-max-40c");
  CHECK(p.gpu("m4-max", 36 * GiB).id == "m4-max-32c");
  CHECK(p.gpu("Apple M2 Max", 64 * GiB).id == "m2-max-38c");
  CHECK(p.gpu("Orin", 65893269504).id == "jetson-agx-orin-64gb");  // deviceQuery on the 64 GB module
  CHECK(p.gpu("Orin", 32 * GiB).id == "jetson-agx-orin-32gb");
  CHECK(p.gpu("NVIDIA A100-PCIE-40GB").id == "a100-pcie-40gb");
  CHECK(p.gpu("NVIDIA A100-SXM4-40GB").id == "a100-40gb");
  // ROCm prints one name for both MI50 sizes (llama.cpp: 'AMD Instinct MI60 / MI50')
  CHECK(p.gpu("AMD Instinct MI60 / MI50", 16 * GiB).id == "mi50-16gb");
  CHECK(p.gpu("AMD Instinct MI60 / MI50", 32 * GiB).id == "mi50-32gb");
  // the RTX 3050 8 GB (2022) and 6 GB (2024) print one name; nvidia-smi 8192 MiB on the 8 GB card
  CHECK(p.gpu("NVIDIA GeForce RTX 3050", 8192LL << 20).id == "rtx-3050");
  CHECK(p.gpu("NVIDIA GeForce RTX 3050", 6LL * GiB).id == "rtx-3050-6gb");
  CHECK(p.gpu("3050").id == "rtx-3050");
  // the RTX 3060 12 GB and its 128-bit 8 GB variant (15 Gbps x 128 / 8 = 240 GB/s)
  CHECK(p.gpu("NVIDIA GeForce RTX 3060", 12LL * GiB).id == "rtx-3060");
  CHECK(p.gpu("NVIDIA GeForce RTX 3060", 8LL * GiB).id == "rtx-3060-8gb");
  CHECK(p.gpu("rtx-3060-8gb").memory_bandwidth_bytes_per_s == 15'000'000'000LL * 128 / 8);
  // the RX 9060 XT 16 GB ('VRAM: 16304 MiB' in llama.cpp's HIP log) and 8 GB print one name; 20 Gbps x 128 / 8 = 320 GB/s
  CHECK(p.gpu("AMD Radeon RX 9060 XT", 16304LL << 20).id == "rx-9060-xt");
  CHECK(p.gpu("AMD Radeon RX 9060 XT", 8LL * GiB).id == "rx-9060-xt-8gb");
  CHECK(p.gpu("rx-9060-xt").memory_bytes == 16304LL << 20);
  CHECK(p.gpu("rx-9060-xt-8gb").memory_bandwidth_bytes_per_s == 20'000'000'000LL * 128 / 8);
  // 14 Gbps x 128-bit / 8 = 224 GB/s; x 96-bit = 168 GB/s
  CHECK(p.gpu("rtx-3050").memory_bandwidth_bytes_per_s == 14'000'000'000LL * 128 / 8);
  CHECK(p.gpu("rtx-3050-6gb").memory_bandwidth_bytes_per_s == 14'000'000'000LL * 96 / 8);
  // the PCIe V100 is its own profile: 1380 MHz boost against the SXM2's 1530, 112 FP16 tensor TFLOP/s against 125
  CHECK(p.gpu("Tesla V100-PCIE-32GB").id == "v100-pcie-32gb");
  CHECK(p.gpu("v100-pcie-32gb").boost_clock_mhz == 1380);
  CHECK(p.gpu("v100-pcie-32gb").fp16_dense_tflops == Approx(112));
}

TEST_CASE("no name is claimed by two profiles except the deliberate shared names", "[hardware]") {
  const auto& p = profiles();
  std::map<std::string, std::set<std::string>> claims;  // name key -> ids
  for (const auto& [id, g] : p.gpus()) {
    claims[io::gpu_name_key(id)].insert(id);
    for (const auto& a : g.aliases) claims[io::gpu_name_key(a)].insert(id);
  }
  using Ids = std::set<std::string>;
  const Ids rtx3080 = {"rtx-3080-10gb", "rtx-3080-12gb"}, rtx2060 = {"rtx-2060", "rtx-2060-12gb"},
            m2max = {"m2-max-30c", "m2-max-38c"},
            m3max = {"m3-max-30c", "m3-max-40c"}, m4max = {"m4-max-32c", "m4-max-40c"},
            orin = {"jetson-agx-orin-32gb", "jetson-agx-orin-64gb"},
            rtx4060ti = {"rtx-4060-ti-16gb", "rtx-4060-ti-8gb"}, rtx5060ti = {"rtx-5060-ti-16gb", "rtx-5060-ti-8gb"},
            mi50 = {"mi50-16gb", "mi50-32gb"}, rtx3050 = {"rtx-3050", "rtx-3050-6gb"},
            rtx3060 = {"rtx-3060", "rtx-3060-8gb"}, rx9060xt = {"rx-9060-xt", "rx-9060-xt-8gb"};
  // the device name two cards print, and its short forms
  const std::map<std::string, Ids> shared = {
      {"nvidia-geforce-rtx-3080", rtx3080}, {"rtx-3080", rtx3080}, {"geforce-rtx-3080", rtx3080},
      {"3080", rtx3080},                    {"apple-m2-max", m2max}, {"m2-max", m2max},
      {"apple-m3-max", m3max},              {"m3-max", m3max},       {"apple-m4-max", m4max},
      {"m4-max", m4max},                    {"orin", orin},          {"jetson-agx-orin", orin},
      {"nvidia-geforce-rtx-2060", rtx2060}, {"nvidia-geforce-rtx-4060-ti", rtx4060ti},
      {"nvidia-geforce-rtx-5060-ti", rtx5060ti}, {"amd-instinct-mi60-/-mi50", mi50}, {"amd-instinct-mi50/mi60", mi50},
      {"nvidia-geforce-rtx-3050", rtx3050}, {"nvidia-geforce-rtx-3060", rtx3060},
      {"amd-radeon-rx-9060-xt", rx9060xt}};
  for (const auto& [key, ids] : claims) {
    INFO(key);
    if (const auto it = shared.find(key); it != shared.end()) CHECK(ids == it->second);
    else CHECK(ids.size() == 1);
  }
  for (const auto& [id, g] : p.gpus()) {
    INFO(id);
    CHECK(io::gpu_name_key(id) == id);  // ids are already keys: lower case, '-' separated
  }
}

TEST_CASE("kvplan gpus --format json lists every device with its links and sources", "[hardware]") {
  const auto out = run_json("gpus --format json");
  CHECK(out["schema"]["version"] == "1.2.0");
  const auto& rows = out["results"]["gpus"];
  REQUIRE(rows.size() == profiles().gpus().size());
  for (const auto& r : rows) {
    INFO(r.dump().substr(0, 80));
    for (const char* k : {"id", "name", "memory_bytes", "memory_bytes_kind", "memory_bandwidth_bytes_per_s",
                          "bf16_dense_tflops", "fp16_dense_tflops", "fp8_dense_tflops", "int8_dense_tops",
                          "fp4_dense_tflops", "device_class", "unified_memory", "ecc_mode", "interconnect",
                          "interconnect_generation", "interconnect_bytes_per_s", "pcie_bytes_per_s", "memory_source",
                          "compute_source", "interconnect_source", "sm_count", "boost_clock_mhz"})
      CHECK(r.contains(k));
    CHECK(r["interconnect_bytes_per_s"].is_number_integer());
    CHECK(r["memory_bytes"].get<i64>() == profiles().gpus().at(r["id"].get<std::string>()).memory_bytes);
  }
  const auto h800 = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r["id"] == "h800-sxm"; });
  REQUIRE(h800 != rows.end());
  CHECK((*h800)["interconnect_bytes_per_s"] == 200'000'000'000LL);  // 400 GB/s bidirectional / 2
  // a Turing card: no bf16 (null), its fp16 figure, 14 Gbps x 352-bit / 8, PCIe 3.0 x16
  const auto ti = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r["id"] == "rtx-2080-ti"; });
  REQUIRE(ti != rows.end());
  CHECK((*ti)["bf16_dense_tflops"].is_null());
  CHECK((*ti)["fp8_dense_tflops"].is_null());
  CHECK((*ti)["fp16_dense_tflops"].get<double>() == Approx(68 * 512 * 1.545e9 / 1e12).margin(0.05));
  CHECK((*ti)["memory_bandwidth_bytes_per_s"] == 14'000'000'000LL * 352 / 8);
  CHECK((*ti)["interconnect_bytes_per_s"] == 16'000'000'000LL);
  CHECK((*ti)["sm_count"] == 68);
  CHECK((*ti)["boost_clock_mhz"] == 1545);  // RTX 2080 Ti reference boost (the Founders Edition runs 1635)
}

TEST_CASE("gpu host plans for this machine: RAM from the OS and the probe's measured read bandwidth", "[hardware][host]") {
  const kvtest::Run r = kvtest::kvplan({"plan", "llama-3.2-1b", "--gpu", "host", "--engine", "llama.cpp", "-c", "4096", "--format", "json"});
  REQUIRE((r.exit == 0 || r.exit == 1));
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["inputs"]["gpu"] == "host");
  // MemTotal of /proc/meminfo, read here independently (kB = 1024 bytes)
  long long mem_kb = 0;
  {
    std::ifstream in("/proc/meminfo");
    std::string key;
    in >> key >> mem_kb;
    REQUIRE(key == "MemTotal:");
  }
  CHECK(j["inputs"]["gpu_memory_bytes"].get<long long>() == mem_kb * 1024);
  // the measured contiguous read: a memory system, not a cache (0.5 GB/s .. 2 TB/s covers hosts from a
  // laptop to a 12-channel server); the decode step's weight term is built on it
  const double bw = j["inputs"]["gpu_bandwidth_bytes_per_s"].get<double>();
  CHECK(bw > 0.5e9);
  CHECK(bw < 2e12);
  CHECK(r.err.find("--gpu host: this machine") != std::string::npos);
  // a bandwidth given beside --gpu host wins over the measured one
  const kvtest::Run g = kvtest::kvplan({"plan", "llama-3.2-1b", "--gpu", "host", "--gpu-bandwidth", "5e10", "--engine", "llama.cpp", "-c", "4096", "--format", "json"});
  REQUIRE((g.exit == 0 || g.exit == 1));
  CHECK(nlohmann::json::parse(g.out)["inputs"]["gpu_bandwidth_bytes_per_s"].get<double>() == 5e10);
}

TEST_CASE("a choice setting outside its choices is one line naming the flag, exit 2, nothing on stdout", "[hardware]") {
  // --ecc foo used to read as off on an ECC-on card; --numa and --kv-offloading-backend let any word through
  const std::vector<std::vector<std::string>> bad = {
      {"plan", "llama-3.1-8b", "--gpu", "l40s", "--ecc", "foo"},
      {"plan", "llama-3.1-8b", "--gpu", "cpu", "--engine", "llama.cpp", "--cpu-sockets", "2", "--numa", "foo"},
      {"plan", "llama-3.1-8b", "--kv-offloading-backend", "foo", "--kv-offloading-size", "10"},
      {"plan", "llama-3.1-8b", "--usage-context", "foo"}};
  const char* flags[] = {"--ecc", "--numa", "--kv-offloading-backend", "--usage-context"};
  for (size_t i = 0; i < bad.size(); ++i) {
    const kvtest::Run r = kvtest::kvplan(bad[i]);
    INFO(flags[i] << ": " << r.err);
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(std::string(flags[i]) + ": 'foo' is not one of") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("a GPU without a tensor rate gets its GEMMs from --gpu-tflops: TTFT known, simulate's warning gone", "[hardware]") {
  using nlohmann::json;
  // the P40 has no tensor cores and its profile no TFLOP/s: plan leaves TTFT unknown (null)
  const std::vector<std::string> base = {"plan", "llama-3.1-8b", "--gpu", "p40", "--engine", "llama.cpp", "--prompt-tokens", "2048",
                                         "--output-tokens", "16", "--compute-efficiency", "0.5", "--format", "json"};
  const kvtest::Run none = kvtest::kvplan(base);
  REQUIRE((none.exit == 0 || none.exit == 1));
  CHECK(json::parse(none.out)["results"]["performance"]["ttft_s"].is_null());
  // with 10 TFLOP/s: the prompt's linear layers, 2 x 6,979,588,096 parameters x 2,048 tokens (all but the embedding
  // lookup and the output head) + 2 x 525,336,576 for the head on the one row sampled, at 10e12 x 0.5
  std::vector<std::string> given = base;
  given.insert(given.end(), {"--gpu-tflops", "10"});
  const kvtest::Run r = kvtest::kvplan(given);
  REQUIRE((r.exit == 0 || r.exit == 1));
  const json perf = json::parse(r.out)["results"]["performance"];
  REQUIRE(perf["ttft_s"].is_number());
  double linear = -1;
  for (const auto& t : perf["prefill_terms"])
    if (t["term"] == "linear_compute") linear = t["seconds"].get<double>();
  CHECK(linear == Approx((2.0 * 6979588096.0 * 2048 + 2.0 * 525336576.0) / (10e12 * 0.5)));
  CHECK(perf["ttft_s"].get<double>() >= linear);
  // simulate says when a step has no compute to price, and not once the rate is given
  const std::vector<std::string> sim = {"simulate", "llama-3.1-8b", "--gpu", "p40", "--engine", "llama.cpp", "--prompt-tokens", "512",
                                        "--output-tokens", "8", "--requests", "4", "--concurrency", "1"};
  const kvtest::Run warned = kvtest::kvplan(sim);
  CHECK(warned.exit == 0);
  CHECK(warned.err.find("GPU profile p40 has no dense TFLOP/s") != std::string::npos);
  std::vector<std::string> sim_given = sim;
  sim_given.insert(sim_given.end(), {"--gpu-tflops", "10"});
  const kvtest::Run quiet = kvtest::kvplan(sim_given);
  CHECK(quiet.exit == 0);
  CHECK(quiet.err.find("no dense TFLOP/s") == std::string::npos);
  // a figure in FLOP/s by mistake: one line naming the setting, exit 2
  given.back() = "1e13";
  const kvtest::Run bad = kvtest::kvplan(given);
  CHECK(bad.exit == 2);
  CHECK(bad.err.find("--gpu-tflops") != std::string::npos);
  CHECK(bad.out.empty());
}

TEST_CASE("Apple silicon memory follows the Mac's RAM and iogpu.wired_limit_mb", "[hardware][apple]") {
  auto mem = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"plan", "llama-3.1-8b", "--gpu", "m4-max-40c", "--engine", "llama.cpp", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const kvtest::Run r = kvtest::kvplan(args);
    REQUIRE((r.exit == 0 || r.exit == 1));
    return nlohmann::json::parse(r.out)["inputs"]["gpu_memory_bytes"].get<long long>();
  };
  // Metal's recommendedMaxWorkingSetSize in llama.cpp logs: 28991.03 MB on a 36 GB M4 Max (3/4 of 36 GiB),
  // 11453.25 MB on a 16 GB M4 (2/3 of 16 GiB); iogpu.wired_limit_mb = 114688 -> 112.00 GiB (antirez/ds4 PR #893)
  CHECK(mem({"--ram-gb", "36"}) == 28991029248LL);
  CHECK(mem({"--ram-gb", "16"}) == 11453246122LL);
  CHECK(mem({"--wired-limit-mb", "114688"}) == 112LL << 30);
  const kvtest::Run bad = kvtest::kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--ram-gb", "64"});
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "kvplan: error: --ram-gb: applies to Apple silicon or a CPU host, not h100-sxm; use --gpu-memory-bytes for other devices\n");
}

TEST_CASE("kvplan gpus marks the fp16 rate where a GPU has no bf16 one", "[hardware]") {
  const auto r = kvtest::kvplan({"gpus"});
  REQUIRE(r.exit == 0);
  std::istringstream in(r.out);
  std::map<std::string, std::vector<std::string>> row;  // id -> its cells (memory and GiB are two words)
  for (std::string line; std::getline(in, line);) {
    std::istringstream w(line);
    std::vector<std::string> cells;
    for (std::string c; w >> c;) cells.push_back(c);
    if (!cells.empty()) row[cells[0]] = cells;
  }
  // id class memory GiB kind GB/s bf16 fp8 link: the V100 SXM2 has only FP16 tensor cores (125 TFLOP/s), the H100 bf16
  REQUIRE(row.count("v100-32gb") == 1);
  CHECK(row["v100-32gb"][6] == "125*");
  CHECK(row["h100-sxm"][6] == "989");
}
