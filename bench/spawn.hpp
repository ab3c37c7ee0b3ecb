// Starting a child process (pgbench, the worker) with its stdout and stderr
// sent to a file, without a shell.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace trellis::bench {

// posix_spawn of `path` with `args` (args[0] is the program name); output
// goes to `out_path` (appended or truncated). Throws when it cannot start.
pid_t spawn_logged(const std::string& path, std::vector<std::string> args,
                   const std::string& out_path, bool append);

}  // namespace trellis::bench
