// Finding the PostgreSQL server programs; see server_bin.hpp.
#include "testkit/server_bin.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <vector>

#include "trellis/error.hpp"

namespace trellis::testkit {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPackagedRoot = "/usr/lib/postgresql";
const std::vector<std::string> kPrograms = {"initdb", "pg_ctl", "postgres", "pg_isready"};

[[noreturn]] void internal(const std::string& message) {
  throw Error(ErrorCode::internal, "testkit: " + message);
}

bool executable(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> missing_programs(const fs::path& dir) {
  std::vector<std::string> missing;
  for (const auto& p : kPrograms)
    if (!executable(dir / p)) missing.push_back(p);
  return missing;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// "<dir> (no initdb, pg_ctl)": what a searched directory lacked.
std::string lacking(const fs::path& dir, const std::vector<std::string>& missing) {
  return dir.string() + " (no " + join(missing, ", ") + ")";
}

// What `pg_config --bindir` prints, "" when pg_config cannot be run.
std::string pg_config_bindir() {
  FILE* out = popen("pg_config --bindir 2>/dev/null", "r");
  if (!out) return "";
  std::string text;
  char buf[512];
  while (fgets(buf, sizeof buf, out)) text += buf;
  pclose(out);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// The directory the first `initdb` on PATH resolves to.
std::optional<fs::path> initdb_on_path() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path initdb = fs::path(dir) / "initdb";
    if (!executable(initdb)) continue;
    std::error_code ec;
    fs::path real = fs::canonical(initdb, ec);
    return (ec ? initdb : real).parent_path();
  }
  return std::nullopt;
}

// The bin directories of the versions under `root`, newest first ("16" before "9.6").
std::vector<fs::path> packaged_bin_dirs(const fs::path& root) {
  std::vector<std::pair<std::vector<int>, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    std::vector<int> version;
    std::istringstream parts(entry.path().filename().string());
    std::string part;
    bool numeric = true;
    while (numeric && std::getline(parts, part, '.')) {
      numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                             [](unsigned char c) { return std::isdigit(c); });
      if (numeric) version.push_back(std::atoi(part.c_str()));
    }
    if (numeric && !version.empty()) found.emplace_back(version, entry.path() / "bin");
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace

std::string find_server_bin_dir() {
  return find_server_bin_dir(kPackagedRoot);
}

std::string find_server_bin_dir(const std::string& packaged_root) {
  const std::string programs = join(kPrograms, ", ");
  if (const char* env = std::getenv(kServerBinDirVariable); env && *env) {
    fs::path dir = fs::absolute(env).lexically_normal();
    auto missing = missing_programs(dir);
    if (missing.empty()) return dir.string();
    internal(std::string(kServerBinDirVariable) + " is " + lacking(dir, missing) +
             "; set it to the directory that holds the PostgreSQL server programs (" + programs +
             ")");
  }
  std::vector<std::string> searched;
  std::string configured = pg_config_bindir();
  if (configured.empty()) {
    searched.push_back("pg_config --bindir (pg_config not found on PATH)");
  } else {
    auto missing = missing_programs(configured);
    if (missing.empty()) return configured;
    searched.push_back("pg_config --bindir: " + lacking(configured, missing));
  }
  if (auto dir = initdb_on_path()) {
    auto missing = missing_programs(*dir);
    if (missing.empty()) return dir->string();
    searched.push_back("initdb on PATH: " + lacking(*dir, missing));
  } else {
    searched.push_back("initdb on PATH (none)");
  }
  auto packaged = packaged_bin_dirs(packaged_root);
  if (packaged.empty()) searched.push_back(packaged_root + "/*/bin (none)");
  for (const auto& dir : packaged) {
    auto missing = missing_programs(dir);
    if (missing.empty()) return dir.string();
    searched.push_back(lacking(dir, missing));
  }
  internal("PostgreSQL server programs (" + programs + ") not found; searched " +
           join(searched, "; ") +
           ". Install the PostgreSQL server (postgresql-15 on Debian) or set " +
           kServerBinDirVariable + " to the directory that holds them");
}

const std::string& server_bin_dir() {
  static const std::string dir = find_server_bin_dir();
  return dir;
}

}  // namespace trellis::testkit
