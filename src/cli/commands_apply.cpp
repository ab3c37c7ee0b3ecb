// `trellis apply STATEMENT | -f FILE`: apply statements, one result line each.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "lang/statement.hpp"

namespace trellis::cli {

namespace {

struct ApplyArgs {
  std::string statement;
  std::string file;
};

// " (added a, b; dropped c; altered d)" for ALTER TRANSFORM; "" otherwise.
std::string field_changes(const Applied& applied) {
  if (applied.kind != "alter") return "";
  std::vector<std::string> parts;
  auto add = [&](const char* verb, const std::vector<std::string>& names) {
    if (!names.empty()) parts.push_back(fmt::format("{} {}", verb, fmt::join(names, ", ")));
  };
  add("added", applied.added);
  add("dropped", applied.dropped);
  add("altered", applied.altered);
  if (parts.empty()) return " (no change)";
  return fmt::format(" ({})", fmt::join(parts, "; "));
}

int run_apply(const GlobalOptions& global, const ApplyArgs& args) {
  std::string source = args.file.empty() ? "the command line" : args.file;
  std::string text = args.file.empty() ? args.statement : read_input(args.file);
  auto statements = lang::split_statements(text);
  if (statements.empty())
    throw Error(ErrorCode::parse, fmt::format("nothing to apply: {} holds no statement", source));
  auto trellis = Trellis::connect(handle_options(global));
  for (size_t i = 0; i < statements.size(); ++i) {
    try {
      std::cout << applied_line(trellis->apply(statements[i])) << std::endl;
    } catch (const Error& e) {
      if (statements.size() == 1) throw;
      throw Error(e.code(), fmt::format("statement {} of {} in {} (the ones before it were "
                                        "applied): {}",
                                        i + 1, statements.size(), source, e.what()));
    }
  }
  trellis->shutdown();
  return kExitOk;
}

}  // namespace

std::string applied_line(const Applied& applied) {
  auto line = fmt::format("{} {}: {}{}", applied.kind, applied.target, applied.status,
                          field_changes(applied));
  if (!applied.note.empty()) line += "\n  " + applied.note;
  return line;
}

std::string read_input(const std::string& file) {
  if (file == "-") return {std::istreambuf_iterator<char>(std::cin), {}};
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw Error(ErrorCode::not_found, fmt::format("cannot read {}: no such readable file", file));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Command add_apply_command(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<ApplyArgs>();
  auto* sub = app.add_subcommand("apply", "apply statements (TRANSFORM, PAUSE, RESUME, DROP)");
  auto* stmt = sub->add_option("statement", args->statement, "one statement");
  auto* file = sub->add_option("-f,--file", args->file,
                               "file of statements separated by `;` (- reads stdin)");
  stmt->excludes(file);
  sub->require_option(1);
  return {sub, [&global, args] { return run_apply(global, *args); }};
}

}  // namespace trellis::cli
