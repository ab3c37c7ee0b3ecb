// The worker child process and its resource readings; see worker.hpp.
#include "worker.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "spawn.hpp"
#include "trellis/error.hpp"
#include "trellis/trellis.hpp"

namespace trellis::bench {

namespace {

double tv_seconds(const timeval& tv) {
  return tv.tv_sec + tv.tv_usec / 1e6;
}

int64_t vm_hwm_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return 0;
}

}  // namespace

double process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> f;
  for (std::string s; fields >> s;) f.push_back(s);
  // After "pid (comm) ": state is field 3, utime 14 and stime 15 (1-based).
  if (f.size() < 13) return 0;
  double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return (std::stod(f[11]) + std::stod(f[12])) / ticks;
}

std::unique_ptr<Worker> Worker::spawn(const std::string& url, int drain_threads,
                                      std::chrono::milliseconds tick, const std::string& log_path) {
  std::vector<std::string> args = {"trellis_bench", "worker", url, std::to_string(drain_threads),
                                   std::to_string(tick.count())};
  pid_t pid = spawn_logged("/proc/self/exe", args, log_path, true);
  return std::unique_ptr<Worker>(new Worker(pid));
}

Worker::~Worker() {
  stop();
}

WorkerUsage Worker::usage() const {
  if (pid_ <= 0) return final_;
  return {process_cpu_seconds(pid_), vm_hwm_kb(pid_)};
}

WorkerUsage Worker::stop() {
  if (pid_ <= 0) return final_;
  ::kill(pid_, SIGTERM);
  int status = 0;
  rusage ru{};
  while (::wait4(pid_, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  final_ = {tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime), ru.ru_maxrss};
  pid_ = 0;
  return final_;
}

int worker_main(int argc, char** argv) {
  if (argc < 5) return 2;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts
  Options o;
  o.url = argv[2];
  o.staging = true;
  o.drain_threads = std::stoi(argv[3]);
  o.tick = std::chrono::milliseconds(std::stoi(argv[4]));
  o.pool_size = 1;
  auto t = Trellis::connect(o);
  int sig = 0;
  sigwait(&set, &sig);
  t->shutdown();
  return 0;
}

}  // namespace trellis::bench
