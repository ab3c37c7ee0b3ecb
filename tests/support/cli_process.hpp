// Runs the built `trellis` binary (TRELLIS_CLI_PATH) as a child process for
// the CLI's integration tests, its stdout and stderr captured in files.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace trellis::test {

// The whole content of the file at `path` ("" when unreadable).
std::string slurp(const std::string& path);
// A new empty file in the temporary directory, named `stem` + 6 characters.
std::string temp_path(const std::string& stem);

// One run of the trellis binary, stdout and stderr captured in files.
class CliProcess {
 public:
  // `env` entries ("NAME=value") are added to the environment, in which
  // TRELLIS_DATABASE_URL is unset unless given there.
  explicit CliProcess(const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {});
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  // The exit code (128 + signal when killed), or nullopt while it still runs after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout);

  void signal(int sig);
  std::string out() const { return slurp(out_path_); }
  std::string err() const { return slurp(err_path_); }

 private:
  std::string out_path_;
  std::string err_path_;
  pid_t pid_ = -1;
  std::optional<int> code_;
};

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs trellis with `-d url` appended and waits for it; fails the test when
// it does not finish within `timeout` (code -1).
Outcome run_trellis(std::vector<std::string> args, const std::string& url,
                    std::chrono::seconds timeout);

}  // namespace trellis::test
