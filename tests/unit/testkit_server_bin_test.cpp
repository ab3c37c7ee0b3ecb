// Where the testkit looks for PostgreSQL's server programs: TRELLIS_PG_BINDIR
// first (and only, when set), then pg_config, then initdb on PATH, then the
// newest /usr/lib/postgresql/<version>/bin.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "testkit/server_bin.hpp"
#include "trellis/error.hpp"

namespace trellis::testkit {
namespace {

namespace fs = std::filesystem;

// Saves an environment variable and puts it back afterwards.
class SavedEnv {
 public:
  explicit SavedEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) value_ = v;
  }
  ~SavedEnv() {
    if (value_)
      setenv(name_, value_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> value_;
};

class ServerBinDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "trellis-bin-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // A directory holding executable stand-ins for `programs`.
  fs::path fake_bin(const std::string& name, const std::vector<std::string>& programs) {
    fs::path dir = root_ / name;
    fs::create_directories(dir);
    for (const auto& p : programs) {
      std::ofstream(dir / p) << "#!/bin/sh\nexit 0\n";
      fs::permissions(dir / p, fs::perms::owner_all);
    }
    return fs::canonical(dir);
  }

  fs::path root_;
  SavedEnv bindir_{kServerBinDirVariable};
  SavedEnv path_{"PATH"};
};

const std::vector<std::string> kAll = {"initdb", "pg_ctl", "postgres", "pg_isready"};

TEST_F(ServerBinDir, TheVariableWins) {
  fs::path dir = fake_bin("server", kAll);
  setenv(kServerBinDirVariable, dir.c_str(), 1);
  EXPECT_EQ(find_server_bin_dir(), dir.string());
}

TEST_F(ServerBinDir, TheVariableNamingAnIncompleteDirectoryIsAnError) {
  fs::path dir = fake_bin("server", {"initdb", "pg_ctl", "postgres"});
  setenv(kServerBinDirVariable, dir.c_str(), 1);
  try {
    find_server_bin_dir();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::internal);
    EXPECT_NE(msg.find("TRELLIS_PG_BINDIR"), std::string::npos) << msg;
    EXPECT_NE(msg.find(dir.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("no pg_isready"), std::string::npos) << msg;
  }
}

// Without the variable and without pg_config, the directory initdb on PATH
// resolves to (through a symlink, as /usr/local/bin often has).
TEST_F(ServerBinDir, InitdbOnPathThroughASymlink) {
  unsetenv(kServerBinDirVariable);
  fs::path server = fake_bin("server", kAll);
  fs::path path_dir = root_ / "path";
  fs::create_directories(path_dir);
  fs::create_symlink(server / "initdb", path_dir / "initdb");
  setenv("PATH", path_dir.c_str(), 1);
  EXPECT_EQ(find_server_bin_dir(), server.string());
}

// The newest version under the packaged root that has every program.
TEST_F(ServerBinDir, NewestPackagedVersion) {
  unsetenv(kServerBinDirVariable);
  setenv("PATH", fake_bin("empty", {}).c_str(), 1);
  fs::path packaged = root_ / "packaged";
  fake_bin("packaged/9.6/bin", kAll);
  fs::path v15 = fake_bin("packaged/15/bin", kAll);
  fake_bin("packaged/16/bin", {"pg_isready"});  // a client-only install
  fake_bin("packaged/common/bin", kAll);        // not a version
  EXPECT_EQ(find_server_bin_dir(packaged.string()), v15.string());
}

// An initdb on PATH whose directory lacks the other programs is passed over,
// and the error (when nothing has them) says what was searched and names
// the variable.
TEST_F(ServerBinDir, WhatWasSearchedIsReported) {
  unsetenv(kServerBinDirVariable);
  fs::path path_dir = fake_bin("path", {"initdb"});
  setenv("PATH", path_dir.c_str(), 1);
  fs::path packaged = root_ / "packaged";
  fs::path v16 = fake_bin("packaged/16/bin", {"pg_isready"});
  try {
    std::string found = find_server_bin_dir(packaged.string());
    FAIL() << "expected an error, found " << found;
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::internal);
    EXPECT_NE(msg.find("pg_config --bindir (pg_config not found on PATH)"), std::string::npos)
        << msg;
    EXPECT_NE(
        msg.find("initdb on PATH: " + path_dir.string() + " (no pg_ctl, postgres, pg_isready)"),
        std::string::npos)
        << msg;
    EXPECT_NE(msg.find(v16.string() + " (no initdb, pg_ctl, postgres)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("TRELLIS_PG_BINDIR"), std::string::npos) << msg;
  }
}

TEST_F(ServerBinDir, NothingUnderThePackagedRoot) {
  unsetenv(kServerBinDirVariable);
  setenv("PATH", fake_bin("empty", {}).c_str(), 1);
  std::string packaged = (root_ / "nothing").string();
  try {
    find_server_bin_dir(packaged);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("initdb on PATH (none)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(packaged + "/*/bin (none)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("set TRELLIS_PG_BINDIR"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace trellis::testkit
