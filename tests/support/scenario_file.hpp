// The scenario file format (tests/sql/*.test, described in tests/sql/README.md):
// a pure parser from text to records, with no database, so format mistakes are
// reported with their file and line before anything runs.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trellis::test::scenario {

enum class Kind {
  statement_ok,     // statement ok            + SQL lines
  statement_error,  // statement error <text>  + SQL lines
  apply_ok,         // apply ok                + one Trellis statement
  apply_error,      // apply error <code> [<text>] + one Trellis statement
  await_live,       // await live <target> ...
  await_converged,  // await
  await_status,     // await status <target> <status>
  query,            // query [sort] + SQL + ---- + expected rows
  oracle,           // oracle <target> ...
  restart_workers,  // restart workers
  workers_off,      // workers off
  workers_on,       // workers on
  concurrently,     // concurrently <connections> <repeats> + SQL lines
  status,           // status <target> <word>
};

struct Record {
  Kind kind = Kind::statement_ok;
  int line = 0;                       // 1-based line of the record's first line
  std::vector<std::string> targets;   // await live / await status / oracle / status
  std::string word;                   // await status / status: the status word
  std::string error_code;             // apply error
  std::string substring;              // statement error / apply error (may be empty)
  std::string body;                   // SQL or Trellis statement, lines joined by '\n'
  bool sort = false;                  // query sort
  std::vector<std::string> expected;  // query: expected rows
  int connections = 0;                // concurrently
  int repeats = 0;                    // concurrently
};

struct File {
  std::string path;
  std::vector<Record> records;
};

// A malformed file; what() reads "<path>:<line>: <problem>".
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

File parse(std::string_view text, const std::string& path);
File load(const std::string& path);

// "<path>:<line>", the prefix of every message about a record.
std::string where(const File& file, const Record& record);

// A gtest-safe name for the file: its stem with every byte outside
// [A-Za-z0-9_] replaced by '_'.
std::string test_name(const std::string& path);

}  // namespace trellis::test::scenario
