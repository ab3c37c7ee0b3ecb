// `trellis_bench`: runs the benchmarks (all, or those named) in quick or full
// mode, one JSON line per configuration, and exits non-zero when any
// configuration failed its oracle check or did not finish. `trellis_bench
// worker ...` is the worker child process the benchmarks start; `trellis_bench
// sql` prints the in-backend measure's fixture (scripts/capture_profile.sh).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

#include "benchmarks.hpp"
#include "worker.hpp"

namespace {

using namespace trellis::bench;

const std::vector<std::pair<std::string, std::function<void(Run&)>>> kBenchmarks = {
    {"write_tax", write_tax}, {"throughput", throughput},   {"latency", latency},
    {"build", build},         {"refresh", refresh},         {"idle", idle},
    {"memory", memory},       {"join_fanout", join_fanout}, {"self_check", self_check},
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

int64_t mem_total_mb() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  in >> key >> kb;
  return kb / 1024;
}

int usage() {
  std::cerr << "usage: trellis_bench [--full] [--out FILE] [--tick MS] [--explain MS] [--rows N] "
               "[--shape NAME]... [--set 'NAME = VALUE']... [BENCHMARK...]\n"
               "benchmarks:";
  for (auto& [name, _] : kBenchmarks) std::cerr << " " << name;
  std::cerr << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "worker") == 0) return worker_main(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "sql") == 0) {
    std::cout << write_tax_fixture_sql();
    return 0;
  }
  spdlog::set_level(spdlog::level::warn);
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--full") {
      settings.full = true;
    } else if (a == "--out" && i + 1 < argc) {
      settings.out_path = argv[++i];
    } else if (a == "--explain" && i + 1 < argc) {
      settings.explain_ms = std::stoi(argv[++i]);
    } else if (a == "--rows" && i + 1 < argc) {
      settings.rows = std::stoll(argv[++i]);
    } else if (a == "--shape" && i + 1 < argc) {
      settings.shapes.push_back(argv[++i]);
    } else if (a == "--set" && i + 1 < argc) {
      settings.server_settings.push_back(argv[++i]);
    } else if (a == "--tick" && i + 1 < argc) {
      settings.tick = std::chrono::milliseconds(std::stoi(argv[++i]));
    } else if (std::any_of(kBenchmarks.begin(), kBenchmarks.end(),
                           [&](const auto& b) { return b.first == a; })) {
      settings.only.push_back(a);
    } else {
      return usage();
    }
  }
  Run run(settings);
  utsname uts{};
  uname(&uts);
  run.emit("machine", {{"cpus", sysconf(_SC_NPROCESSORS_ONLN)},
                       {"cpu", cpu_model()},
                       {"memory_mb", mem_total_mb()},
                       {"kernel", uts.release},
                       {"tick_ms", settings.tick.count()},
                       {"server_settings", settings.server_settings}});
  auto t0 = Clock::now();
  for (auto& [name, fn] : kBenchmarks) {
    if (!settings.only.empty() &&
        std::find(settings.only.begin(), settings.only.end(), name) == settings.only.end())
      continue;
    auto b0 = Clock::now();
    try {
      fn(run);
    } catch (const std::exception& e) {
      run.fail(name, {}, e.what());
    }
    std::cerr << fmt::format("# {} done in {:.1f}s", name, seconds_since(b0)) << std::endl;
  }
  run.emit(
      "summary",
      {{"seconds", seconds_since(t0)}, {"failures", run.failures()}, {"ok", run.failures() == 0}});
  return run.failures() == 0 ? 0 : 1;
}
