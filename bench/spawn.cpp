// Child processes with their output in a file; see spawn.hpp.
#include "spawn.hpp"

#include <fcntl.h>
#include <spawn.h>

#include "trellis/error.hpp"

extern char** environ;

namespace trellis::bench {

pid_t spawn_logged(const std::string& path, std::vector<std::string> args,
                   const std::string& out_path, bool append) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(),
                                   O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error(ErrorCode::internal, "cannot start " + path);
  return pid;
}

}  // namespace trellis::bench
