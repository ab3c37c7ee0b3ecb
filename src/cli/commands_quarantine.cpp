// `trellis quarantine list TARGET` / `release TARGET TABLE KEY`: the source
// keys held in quarantine for a transform, and re-deriving one of them once
// its cause is fixed.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/text_table.hpp"

namespace trellis::cli {

namespace {

struct QuarantineArgs {
  std::string target;
  std::string table;
  std::string key;
};

int run_list(const GlobalOptions& global, const QuarantineArgs& args) {
  auto trellis = Trellis::connect(handle_options(global));
  TextTable table({"TABLE", "KEY", "CHARGES", "HELD SINCE", "ERROR"});
  std::string cursor;
  for (;;) {
    auto page = trellis->sample_quarantined(args.target, 500, cursor);
    for (const auto& k : page.keys)
      table.add_row({k.table, k.key, std::to_string(k.charges), k.held_at,
                     k.error + " (" + k.sqlstate + ")"});
    if (page.keys.empty()) break;
    cursor = page.cursor;
  }
  trellis->shutdown();
  if (table.empty()) {
    std::cout << "no keys are held for " << args.target << std::endl;
    return kExitOk;
  }
  std::cout << table.render() << "fix the cause, then: trellis quarantine release " << args.target
            << " TABLE 'KEY'" << std::endl;
  return kExitOk;
}

int run_release(const GlobalOptions& global, const QuarantineArgs& args) {
  auto trellis = Trellis::connect(handle_options(global));
  trellis->release_key(args.target, args.table, args.key);
  trellis->shutdown();
  std::cout << "released " << args.key << " of " << args.table << " for " << args.target
            << std::endl;
  return kExitOk;
}

}  // namespace

Command add_quarantine_command(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<QuarantineArgs>();
  auto* sub = app.add_subcommand("quarantine", "source keys held in quarantine");
  sub->require_subcommand(1);
  auto* list = sub->add_subcommand("list", "list the keys held for a target");
  list->add_option("TARGET", args->target, "the transform's target")->required();
  auto* release = sub->add_subcommand("release", "re-derive a held key from its current row");
  release->add_option("TARGET", args->target, "the transform's target")->required();
  release->add_option("TABLE", args->table, "the source table")->required();
  release->add_option("KEY", args->key, "the key as `list` shows it, e.g. '[\"42\"]'")->required();
  return {sub, [&global, args, list] {
            return list->parsed() ? run_list(global, *args) : run_release(global, *args);
          }};
}

}  // namespace trellis::cli
