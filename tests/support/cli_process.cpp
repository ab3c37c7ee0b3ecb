// Child processes of the trellis binary for the CLI's tests; see cli_process.hpp.
#include "support/cli_process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace trellis::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const std::string& stem) {
  std::string pattern = (fs::temp_directory_path() / (stem + "XXXXXX")).string();
  int fd = mkstemp(pattern.data());
  if (fd < 0) throw std::runtime_error("mkstemp: " + std::string(std::strerror(errno)));
  close(fd);
  return pattern;
}

CliProcess::CliProcess(const std::vector<std::string>& args, const std::vector<std::string>& env)
    : out_path_(temp_path("trellis-cli-out-")), err_path_(temp_path("trellis-cli-err-")) {
  std::vector<std::string> argv_text{TRELLIS_CLI_PATH};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "TRELLIS_DATABASE_URL=", 21) != 0) env_text.push_back(*e);
  env_text.insert(env_text.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  int out = open(out_path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  int err = open(err_path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_ = fork();
  if (pid_ == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out);
  close(err);
  close(in);
  if (pid_ < 0) throw std::runtime_error("fork failed");
}

CliProcess::~CliProcess() {
  if (!code_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

std::optional<int> CliProcess::wait(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!code_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(10ms);
  }
  return code_;
}

void CliProcess::signal(int sig) {
  kill(pid_, sig);
}

Outcome run_trellis(std::vector<std::string> args, const std::string& url,
                    std::chrono::seconds timeout) {
  args.push_back("-d");
  args.push_back(url);
  CliProcess p(args);
  auto code = p.wait(timeout);
  EXPECT_TRUE(code.has_value()) << "trellis did not finish within " << timeout.count() << " s";
  return {code.value_or(-1), p.out(), p.err()};
}

}  // namespace trellis::test
