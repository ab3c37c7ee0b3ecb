// A throwaway PostgreSQL cluster for tests, `trellis dev` and `trellis demo`:
// initdb into a private directory, serve on a private socket, clean up even after a crash.
// The server programs are found as testkit/server_bin.hpp says.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace trellis::testkit {

struct ClusterOptions {
  std::string base_dir;    // "" = a fresh mkdtemp dir under $TMPDIR or /tmp (prefix "trellis-pg-")
  bool keep = false;       // keep the data dir on destruction (trellis dev)
  int port = 0;            // 0 = pick a free TCP port on 127.0.0.1
  std::string extra_conf;  // appended to postgresql.conf
};

// Layout of dir(): owner.pid (the owning process), keep (marker when kept),
// data/ (PGDATA), sock/ (unix socket), server.log, commands.log (initdb/pg_ctl output).
class Cluster {
 public:
  // Starts a new cluster, or reuses (and starts if stopped) the one already
  // initialised in options.base_dir. Throws trellis::Error(internal) with the
  // tail of the logs when PostgreSQL cannot be initialised or started, and
  // saying where it looked when its server programs are not found.
  static std::unique_ptr<Cluster> start(const ClusterOptions& options = {});
  // Stops the server and removes dir() unless keep. Never throws.
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // libpq keyword string: "host=SOCKDIR port=PORT user=postgres dbname=DB".
  std::string url(const std::string& db = "postgres") const;
  // CREATE DATABASE with a unique name starting with `prefix`; returns its url.
  std::string create_database(const std::string& prefix = "t");
  void stop(bool immediate = false);
  // Restarts (fast or immediate) and waits until the server accepts connections.
  void restart(bool immediate = false);
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // The running postmaster's pid (from postmaster.pid), 0 when not running.
  pid_t postmaster_pid() const;

 private:
  struct Key {};  // keeps construction inside start()

 public:
  Cluster(Key, std::string dir, bool keep, int port);

 private:
  void prepare_dir();
  void init();
  void write_trellis_conf(const std::string& extra_conf) const;
  void launch(const std::string& extra_conf, bool choose_port);
  bool try_start();
  void wait_until_ready() const;
  bool running() const;
  [[noreturn]] void fail(const std::string& what) const;

  std::string dir_;
  bool keep_;
  int port_;
};

// Removes clusters left behind by crashed runs: each $TMPDIR/trellis-pg-* and
// /tmp/trellis-pg-* whose owner process (owner.pid) is dead, or which has no
// owner and a postmaster.pid naming a dead process, gets its server stopped
// and is deleted. Dirs whose owner is alive, or marked keep, are never touched.
void reap_stale_clusters();

}  // namespace trellis::testkit
