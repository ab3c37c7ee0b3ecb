// Where the PostgreSQL server programs the testkit runs are installed.
#pragma once

#include <string>

namespace trellis::testkit {

// The environment variable that names the directory of the server programs.
inline constexpr const char* kServerBinDirVariable = "TRELLIS_PG_BINDIR";

// The directory holding initdb, pg_ctl, postgres and pg_isready, the first of:
//  1. $TRELLIS_PG_BINDIR, when set (it must hold them: nothing else is tried);
//  2. `pg_config --bindir`, when that directory holds them (libpq-dev's
//     pg_config names one, /usr/bin on some Debian setups, that may not);
//  3. the directory the first `initdb` on PATH resolves to (symlinks followed);
//  4. the newest /usr/lib/postgresql/<version>/bin that holds them.
// Throws trellis::Error(internal) saying what was searched and naming
// TRELLIS_PG_BINDIR when none does. Looks again on every call.
std::string find_server_bin_dir();
// The same with `packaged_root` searched in place of /usr/lib/postgresql.
std::string find_server_bin_dir(const std::string& packaged_root);

// find_server_bin_dir() as found by the first call that succeeded.
const std::string& server_bin_dir();

}  // namespace trellis::testkit
