// `trellis dump [-o FILE]`: the instance's relationships and transforms as a
// script of statements (Trellis::dump), on stdout or into a file.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"

namespace trellis::cli {

namespace {

int run_dump(const GlobalOptions& global, const std::string& output) {
  auto trellis = Trellis::connect(handle_options(global));
  std::string script = trellis->dump();
  trellis->shutdown();
  if (output.empty() || output == "-") {
    std::cout << script << std::flush;
    return kExitOk;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << script;
  out.close();
  if (!out)
    throw Error(ErrorCode::not_found,
                fmt::format("cannot write {}: no such writable file", output));
  return kExitOk;
}

}  // namespace

Command add_dump_command(CLI::App& app, const GlobalOptions& global) {
  auto output = std::make_shared<std::string>();
  auto* sub = app.add_subcommand(
      "dump",
      "print the relationships and transforms as statements in the order that applies them "
      "(for `trellis restore`)");
  sub->add_option("-o,--output", *output, "write the script to FILE instead of stdout");
  return {sub, [&global, output] { return run_dump(global, *output); }};
}

}  // namespace trellis::cli
