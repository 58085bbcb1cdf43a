// Device settings that change a profile: a CPU host described by its memory system (--cpu-sockets,
// --memory-channels, --memory-speed, --ram-gb, llama.cpp --numa: bandwidth = sockets read x channels x MT/s x 8 B,
// memory = the RAM) and --ecc on a GDDR card (1/16 of the DRAM). Figures worked by hand or published.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using nlohmann::json;

namespace {

json plan_json(const std::vector<std::string>& extra, const std::string& gpu = "cpu") {
  std::vector<std::string> args = {"plan", "llama-3.1-8b", "--gpu", gpu, "--engine", "llama.cpp", "-c", "8192", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const kvtest::Run r = kvtest::kvplan(args);
  INFO(r.err);
  REQUIRE((r.exit == 0 || r.exit == 1));
  return json::parse(r.out);
}

double weights_term_s(const json& j) {
  for (const auto& t : j["results"]["performance"]["decode_terms"])
    if (t["term"] == "weights") return t["seconds"].get<double>();
  FAIL("no weights term");
  return 0;
}

}  // namespace

TEST_CASE("a CPU host's bandwidth is sockets x channels x MT/s x 8 B, every socket only under --numa distribute", "[hardware][cpu_host]") {
  const std::vector<std::string> genoa2 = {"--cpu-sockets", "2", "--memory-channels", "12", "--memory-speed", "4800", "--ram-gb", "1536"};
  std::vector<std::string> spread = genoa2;
  spread.insert(spread.end(), {"--numa", "distribute"});
  const json both = plan_json(spread);
  // 2 sockets x 12 channels x 4800 MT/s x 8 B = 921.6 GB/s; 1536 GiB of RAM is the budget
  CHECK(both["inputs"]["gpu_bandwidth_bytes_per_s"].get<double>() == 2.0 * 12 * 4800e6 * 8);
  CHECK(both["inputs"]["gpu_memory_bytes"].get<long long>() == 1536LL << 30);

  const json one = plan_json(genoa2);  // no --numa: the pages sit on one node, one socket's 460.8 GB/s
  CHECK(one["inputs"]["gpu_bandwidth_bytes_per_s"].get<double>() == 12 * 4800e6 * 8);
  CHECK(one["inputs"]["gpu_memory_bytes"].get<long long>() == 1536LL << 30);
  std::vector<std::string> isolate = genoa2;
  isolate.insert(isolate.end(), {"--numa", "isolate"});
  CHECK(plan_json(isolate)["inputs"]["gpu_bandwidth_bytes_per_s"].get<double>() == 12 * 4800e6 * 8);

  // the same weights read at twice the bandwidth: the decode's weights term halves
  CHECK(weights_term_s(one) == Approx(2 * weights_term_s(both)).epsilon(1e-9));
}

TEST_CASE("a desktop host by its DIMMs and a CPU profile scaled by sockets", "[hardware][cpu_host]") {
  // 4 channels of DDR5-6400 (a workstation board): 4 x 6400e6 x 8 = 204.8 GB/s; 256 GiB
  const json ws = plan_json({"--memory-channels", "4", "--memory-speed", "6400", "--ram-gb", "256"});
  CHECK(ws["inputs"]["gpu_bandwidth_bytes_per_s"].get<double>() == 204.8e9);
  CHECK(ws["inputs"]["gpu_memory_bytes"].get<long long>() == 256LL << 30);
  // cpu-epyc-9004 is one socket of 12 x DDR5-4800 with 768 GiB: two sockets hold 1536 GiB and, with numactl,
  // read at 2 x 460.8 GB/s
  const json two = plan_json({"--cpu-sockets", "2", "--numa", "numactl"}, "cpu-epyc-9004");
  CHECK(two["inputs"]["gpu_memory_bytes"].get<long long>() == 2 * (768LL << 30));
  CHECK(two["inputs"]["gpu_bandwidth_bytes_per_s"].get<double>() == 2 * 460.8e9);
  // a CPU-only llama.cpp creates no GPU context: nothing is budgeted for one
  for (const auto& t : ws["results"]["budget"])
    if (t["term"] == "cuda_context") CHECK(t["bytes"].get<long long>() == 0);
  // --gpu-memory-bytes (what is free) wins over the installed RAM
  const json freed = plan_json({"--ram-gb", "256", "--gpu-memory-bytes", "200GiB"});
  CHECK(freed["inputs"]["gpu_memory_bytes"].get<long long>() == 200LL << 30);
}

TEST_CASE("CPU host settings refuse what they cannot describe", "[hardware][cpu_host]") {
  auto err = [](const std::vector<std::string>& extra, const std::string& gpu = "cpu") {
    std::vector<std::string> args = {"plan", "llama-3.1-8b", "--gpu", gpu, "--engine", "llama.cpp"};
    args.insert(args.end(), extra.begin(), extra.end());
    const kvtest::Run r = kvtest::kvplan(args);
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  CHECK(err({"--memory-channels", "12"}) ==
        "kvplan: error: --memory-channels: a CPU host's bandwidth needs both the channels and their data rate; give "
        "--memory-channels N and --memory-speed MT/s (e.g. 12 and 4800)\n");
  CHECK(err({"--memory-channels", "8", "--memory-speed", "3200"}, "h100") ==
        "kvplan: error: --memory-channels: describes a CPU host, not h100-sxm; use --gpu cpu (or a CPU profile: kvplan "
        "gpus) for CPU inference\n");
  CHECK(err({"--memory-channels", "8", "--memory-speed", "32"}) ==
        "kvplan: error: --memory-speed: expected a DDR data rate in MT/s (800 to 17600, e.g. 5600), got 32\n");
  CHECK(err({"--cpu-sockets", "0"}) == "kvplan: error: --cpu-sockets: expected 1 to 8 sockets, got 0\n");
}

TEST_CASE("ECC on or off moves a GDDR card's memory by a sixteenth of its DRAM as two published boards show", "[hardware][ecc]") {
  auto mem = [](const std::string& gpu, const std::string& ecc) {
    const json j = plan_json({"--ecc", ecc}, gpu);
    return j["inputs"]["gpu_memory_bytes"].get<long long>();
  };
  // RTX 6000 Ada, ECC off: deviceQuery 51,002,867,712 B; ECC on keeps 48 GiB / 16 = 3,221,225,472 B
  const long long ada_on = mem("rtx-6000-ada", "on");
  CHECK(ada_on == 51002867712LL - 3221225472LL);
  // the L40S is the same AD102 board with 48 GB, ECC on: deviceQuery 47,803,596,800 B (thamada/gls L40S_deviceQuery)
  CHECK(std::abs(static_cast<double>(ada_on) / 47803596800.0 - 1) < 0.001);
  CHECK(mem("l40s", "off") == 47803596800LL + 3221225472LL);
  CHECK(mem("l40s", "on") == 47803596800LL);          // the mode the profile describes: unchanged
  CHECK(mem("h100-sxm", "off") == 85045477376LL);     // HBM: ECC is out of band, no capacity change
  // GDDR7: NVML reports 97,887 MiB on RTX PRO 6000s with ECC on (Server Edition) and off (Max-Q): the torch total
  // 97,250 MiB (101,974,016,000 B) either way, never above the board's memory
  CHECK(mem("rtx-pro-6000", "off") == 97250LL * 1048576);
  CHECK(mem("rtx-pro-6000", "on") == 97250LL * 1048576);
  CHECK(mem("rtx-pro-6000-max-q", "on") == mem("rtx-pro-6000-max-q", "off"));
  const kvtest::Run r = kvtest::kvplan({"plan", "llama-3.1-8b", "--gpu", "rtx-3090", "--ecc", "on"});
  CHECK(r.exit == 2);
  CHECK(r.err == "kvplan: error: --ecc: rtx-3090 has no ECC mode to switch; leave --ecc out for this GPU\n");
}
