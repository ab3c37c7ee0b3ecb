// Throwaway PostgreSQL clusters: initdb/pg_ctl run through fork+exec with
// argument vectors (as the `postgres` user when we are root, since PostgreSQL
// refuses to run as root), plus a reaper for clusters left by crashed runs.
#include "testkit/cluster.hpp"

#include <fcntl.h>
#include <grp.h>
#include <locale.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "pg/connection.hpp"
#include "pg/sql_error.hpp"
#include "testkit/server_bin.hpp"
#include "trellis/error.hpp"

namespace trellis::testkit {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kDirPrefix = "trellis-pg-";
constexpr const char* kReapingTag = ".reaping.";
constexpr int kStartAttempts = 5;
constexpr auto kReadyTimeout = std::chrono::seconds(60);
constexpr auto kOrphanAge = std::chrono::hours(1);

std::atomic<int> g_db_counter{0};

std::string bin(const char* tool) {
  return server_bin_dir() + "/" + tool;
}

[[noreturn]] void internal(const std::string& message) {
  throw Error(ErrorCode::internal, "testkit: " + message);
}

// ---- files ----------------------------------------------------------------

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Written to a temporary name and renamed so a concurrent reader never sees half a file.
void write_text(const fs::path& path, const std::string& text) {
  fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) internal("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
  fs::permissions(path, fs::perms(0644));
}

std::string tail(const fs::path& path, size_t max_lines = 30) {
  std::string text = read_text(path);
  size_t start = text.size();
  for (size_t lines = 0; start > 0; --start) {
    if (text[start - 1] == '\n' && start != text.size() && ++lines == max_lines) break;
  }
  return text.substr(start);
}

uintmax_t file_size_or_zero(const fs::path& path) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// ---- processes ------------------------------------------------------------

struct ProcStat {
  char state = '?';
  unsigned long long start_time = 0;  // clock ticks since boot; 0 when unknown
};

std::optional<ProcStat> proc_stat(pid_t pid) {
  std::string text = read_text("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 1));
  ProcStat st;
  std::string skip;
  fields >> st.state;
  for (int i = 0; i < 18; ++i) fields >> skip;  // fields 4..21
  fields >> st.start_time;
  return st;
}

// A zombie counts as dead: nobody may reap an orphaned postmaster in a container.
bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  auto st = proc_stat(pid);
  return !st || (st->state != 'Z' && st->state != 'X');
}

bool wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (process_alive(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

bool looks_like_postgres(pid_t pid) {
  std::string cmdline = read_text("/proc/" + std::to_string(pid) + "/cmdline");
  return cmdline.find("postgres") != std::string::npos;
}

// Whom initdb/pg_ctl run as: ourselves, or `postgres` when we are root.
struct Credentials {
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

Credentials server_credentials() {
  Credentials cred;
  if (geteuid() != 0) return cred;
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r("postgres", &pw, buf.data(), buf.size(), &found) != 0 || !found) {
    internal("running as root but there is no `postgres` user to run PostgreSQL as");
  }
  cred.drop = true;
  cred.uid = pw.pw_uid;
  cred.gid = pw.pw_gid;
  int n = 64;
  cred.groups.resize(n);
  if (getgrouplist(pw.pw_name, pw.pw_gid, cred.groups.data(), &n) < 0) {
    cred.groups.resize(n);
    getgrouplist(pw.pw_name, pw.pw_gid, cred.groups.data(), &n);
  }
  cred.groups.resize(n);
  return cred;
}

void give_to_server(const fs::path& path, const Credentials& cred) {
  if (cred.drop && chown(path.c_str(), cred.uid, cred.gid) != 0) {
    internal("chown " + path.string() + ": " + std::strerror(errno));
  }
}

void child_fail(const char* what) {
  const char* err = std::strerror(errno);
  [[maybe_unused]] auto r1 = write(2, what, std::strlen(what));
  [[maybe_unused]] auto r2 = write(2, err, std::strlen(err));
  [[maybe_unused]] auto r3 = write(2, "\n", 1);
  _exit(127);
}

// Runs between fork and exec, so only async-signal-safe calls.
[[noreturn]] void exec_child(char* const* argv, int in_fd, int out_fd, const char* cwd,
                             const Credentials& cred, int max_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0) child_fail("dup2: ");
  if (close_range(3, ~0U, 0) != 0) {
    for (int fd = 3; fd < max_fd; ++fd) close(fd);
  }
  if (chdir(cwd) != 0) child_fail("chdir: ");
  if (cred.drop) {
    if (setgroups(cred.groups.size(), cred.groups.data()) != 0) child_fail("setgroups: ");
    if (setgid(cred.gid) != 0) child_fail("setgid: ");
    if (setuid(cred.uid) != 0) child_fail("setuid: ");
  }
  execv(argv[0], argv);
  child_fail("exec: ");
  _exit(127);
}

std::string command_line(const std::vector<std::string>& args) {
  std::string line = "$";
  for (const auto& a : args) line += " " + a;
  return line + "\n";
}

// Runs args[0] with stdout/stderr appended to `log`; returns the exit status.
int run(const std::vector<std::string>& args, const fs::path& log, const Credentials& cred,
        const fs::path& cwd) {
  int out_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd < 0) internal("cannot open " + log.string() + ": " + std::strerror(errno));
  int in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::string header = command_line(args);
  [[maybe_unused]] auto written = write(out_fd, header.data(), header.size());
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::string dir = cwd.string();
  int max_fd = static_cast<int>(std::min<long>(sysconf(_SC_OPEN_MAX), 65536));
  pid_t pid = fork();
  if (pid == 0) exec_child(argv.data(), in_fd, out_fd, dir.c_str(), cred, max_fd);
  close(in_fd);
  close(out_fd);
  if (pid < 0) internal(std::string("fork: ") + std::strerror(errno));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) internal(std::string("waitpid: ") + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---- ports ----------------------------------------------------------------

bool port_free(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  socklen_t len = sizeof addr;
  if (ok && port == 0) ok = getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  return ok;
}

int kernel_assigned_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) close(fd);
  if (port == 0) internal("cannot find a free TCP port on 127.0.0.1");
  return port;
}

// Prefers ports below the kernel's ephemeral range, so a client socket cannot
// grab the port while the server is down during restart().
int pick_free_port() {
  int low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low;
  if (low > 20000) {
    std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<int> dist(15000, low - 1);
    for (int i = 0; i < 50; ++i) {
      int port = dist(rng);
      if (port_free(port)) return port;
    }
  }
  return kernel_assigned_port();
}

// ---- layout ---------------------------------------------------------------

fs::path data_dir(const fs::path& dir) {
  return dir / "data";
}
fs::path sock_dir(const fs::path& dir) {
  return dir / "sock";
}
fs::path server_log(const fs::path& dir) {
  return dir / "server.log";
}
fs::path commands_log(const fs::path& dir) {
  return dir / "commands.log";
}

std::string temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

std::string make_temp_dir() {
  std::string pattern = (fs::path(temp_root()) / kDirPrefix).string() + "XXXXXX";
  if (!mkdtemp(pattern.data())) {
    internal("mkdtemp " + pattern + ": " + std::strerror(errno));
  }
  return pattern;
}

// PostgreSQL (as `postgres`) must be able to walk down to the cluster dir:
// give search-only permission (o+x) on ancestors that lack it.
void make_ancestors_traversable(const fs::path& dir) {
  for (fs::path p = dir.parent_path(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0 && !(st.st_mode & S_IXOTH))
      chmod(p.c_str(), st.st_mode | S_IXOTH);
    if (p == p.root_path()) break;
  }
}

// "pid starttime": the start time tells a dead owner from a recycled pid.
void write_owner(const fs::path& dir) {
  auto st = proc_stat(getpid());
  write_text(dir / "owner.pid",
             std::to_string(getpid()) + " " + std::to_string(st ? st->start_time : 0) + "\n");
}

pid_t read_pid_line(const fs::path& file) {
  std::ifstream in(file);
  long pid = 0;
  return (in >> pid) ? static_cast<pid_t>(pid) : 0;
}

int read_port_from_pidfile(const fs::path& data) {
  std::ifstream in(data / "postmaster.pid");
  std::string line;
  for (int i = 0; i < 4 && std::getline(in, line); ++i) {
  }
  return std::atoi(line.c_str());
}

int read_port_from_conf(const fs::path& data) {
  std::ifstream in(data / "trellis.conf");
  std::string key, eq;
  int port = 0;
  return (in >> key >> eq >> port && key == "port") ? port : 0;
}

std::string conf_quote(const std::string& value) {
  std::string out = "'";
  for (char c : value) out += (c == '\'') ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string conninfo_quote(const std::string& value) {
  bool plain = !value.empty() && value.find_first_of(" '\\\t\n") == std::string::npos;
  if (plain) return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string static_conf(const fs::path& dir) {
  return "\n# trellis testkit: a throwaway cluster, durability traded for speed.\n"
         "fsync = off\n"
         // on, not off: with fsync off it costs nothing measurable, and async commit
         // would lose acknowledged commits across restart(immediate) in crash tests.
         "synchronous_commit = on\n"
         "full_page_writes = off\n"
         "listen_addresses = '127.0.0.1'\n"
         "unix_socket_directories = " +
         conf_quote(sock_dir(dir).string()) +
         "\n"
         "max_connections = 200\n"
         "shared_buffers = 128MB\n"
         "max_locks_per_transaction = 256\n"
         "logging_collector = off\n"
         "include 'trellis.conf'  # port and extra settings, rewritten on each start\n";
}

std::vector<std::string> locale_args() {
  locale_t loc = newlocale(LC_ALL_MASK, "C.UTF-8", static_cast<locale_t>(0));
  if (!loc) return {"--no-locale"};
  freelocale(loc);
  return {"--locale=C.UTF-8"};
}

// Database names: lower-case letters, digits and '_', leaving room for the suffix.
std::string sanitize_prefix(const std::string& prefix) {
  std::string out;
  for (char c : prefix) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (std::isalnum(static_cast<unsigned char>(l)) || l == '_') ? l : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t" + out;
  return out.substr(0, 40);
}

// ---- reaping --------------------------------------------------------------

bool owner_alive(const fs::path& owner_file) {
  std::ifstream in(owner_file);
  long pid = 0;
  unsigned long long start = 0;
  if (!(in >> pid)) return true;  // unreadable: assume alive, never guess
  in >> start;
  if (!process_alive(static_cast<pid_t>(pid))) return false;
  auto st = proc_stat(static_cast<pid_t>(pid));
  return start == 0 || !st || st->start_time == start;
}

bool older_than(const fs::path& path, std::chrono::hours age) {
  std::error_code ec;
  auto mtime = fs::last_write_time(path, ec);
  return !ec && fs::file_time_type::clock::now() - mtime > age;
}

bool is_stale(const fs::path& dir) {
  std::string name = dir.filename().string();
  size_t tag = name.find(kReapingTag);
  if (tag != std::string::npos) {
    return !process_alive(std::atoi(name.c_str() + tag + std::strlen(kReapingTag)));
  }
  if (fs::exists(dir / "keep")) return false;
  if (fs::exists(dir / "owner.pid")) return !owner_alive(dir / "owner.pid");
  fs::path pidfile = data_dir(dir) / "postmaster.pid";
  if (fs::exists(pidfile)) return !process_alive(read_pid_line(pidfile));
  return older_than(dir, kOrphanAge);
}

bool owned_by_us_or_server(const fs::path& dir, const Credentials& cred) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return st.st_uid == geteuid() || (cred.drop && st.st_uid == cred.uid);
}

void stop_stale_server(const fs::path& dir, const Credentials& cred) {
  pid_t pid = read_pid_line(data_dir(dir) / "postmaster.pid");
  if (!process_alive(pid)) return;
  std::string pg_ctl;
  try {
    pg_ctl = bin("pg_ctl");
  } catch (const Error&) {
    // No server programs found: the server is killed below.
  }
  if (!pg_ctl.empty()) {
    run({pg_ctl, "stop", "-D", data_dir(dir).string(), "-m", "immediate", "-w", "-t", "30"},
        commands_log(dir), cred, dir);
  }
  if (!wait_for_exit(pid, std::chrono::seconds(5)) && looks_like_postgres(pid)) {
    kill(pid, SIGKILL);
    wait_for_exit(pid, std::chrono::seconds(5));
  }
}

// Renaming claims the dir, so concurrent reapers never delete the same tree.
void claim_and_remove(const fs::path& dir) {
  std::error_code ec;
  fs::path target = dir;
  if (dir.filename().string().find(kReapingTag) == std::string::npos) {
    target += kReapingTag + std::to_string(getpid());
    if (rename(dir.c_str(), target.c_str()) != 0) return;
  }
  fs::remove_all(target, ec);
}

void reap_dir(const fs::path& dir, const Credentials& cred) {
  if (!owned_by_us_or_server(dir, cred) || !is_stale(dir)) return;
  stop_stale_server(dir, cred);
  claim_and_remove(dir);
}

std::vector<fs::path> temp_roots() {
  std::vector<fs::path> roots{"/tmp"};
  fs::path tmp = temp_root();
  std::error_code ec;
  if (!fs::equivalent(tmp, roots[0], ec)) roots.push_back(tmp);
  return roots;
}

}  // namespace

// ---- Cluster --------------------------------------------------------------

Cluster::Cluster(Key, std::string dir, bool keep, int port)
    : dir_(std::move(dir)), keep_(keep), port_(port) {}

std::unique_ptr<Cluster> Cluster::start(const ClusterOptions& options) {
  server_bin_dir();  // throws, saying where it looked, when PostgreSQL is not installed
  reap_stale_clusters();
  std::string dir = options.base_dir.empty()
                        ? make_temp_dir()
                        : fs::absolute(options.base_dir).lexically_normal().string();
  auto cluster = std::make_unique<Cluster>(Key{}, dir, options.keep, options.port);
  cluster->prepare_dir();
  bool fresh = !fs::exists(data_dir(dir) / "PG_VERSION");
  if (fresh) cluster->init();
  if (!cluster->running()) {
    if (cluster->port_ == 0 && !fresh) cluster->port_ = read_port_from_conf(data_dir(dir));
    cluster->launch(options.extra_conf, options.port == 0);
  } else {
    cluster->port_ = read_port_from_pidfile(data_dir(dir));
    cluster->wait_until_ready();
  }
  return cluster;
}

Cluster::~Cluster() {
  try {
    stop(!keep_);  // a kept cluster gets a clean shutdown: no crash recovery next time
  } catch (...) {
  }
  std::error_code ec;
  if (!keep_) fs::remove_all(dir_, ec);
}

// Owner file first, so a concurrent reaper sees the dir as owned from the start.
void Cluster::prepare_dir() {
  fs::path dir = dir_;
  fs::create_directories(dir);
  write_owner(dir);
  std::error_code ec;
  if (keep_) {
    write_text(dir / "keep", "kept by trellis dev; delete this dir to discard the cluster\n");
  } else {
    fs::remove(dir / "keep", ec);
  }
  fs::create_directories(sock_dir(dir));
  if (sock_dir(dir).string().size() + sizeof("/.s.PGSQL.65535.lock") > 107) {
    internal("path too long for a unix socket: " + sock_dir(dir).string() +
             "; use a shorter base dir");
  }
  Credentials cred = server_credentials();
  fs::permissions(dir, fs::perms(0755));
  fs::permissions(sock_dir(dir), fs::perms(0755));
  give_to_server(dir, cred);
  give_to_server(sock_dir(dir), cred);
  if (cred.drop) make_ancestors_traversable(dir);
}

void Cluster::init() {
  std::vector<std::string> args{bin("initdb"), "-D",       data_dir(dir_).string(), "--auth=trust",
                                "-U",          "postgres", "--encoding=UTF8",       "--no-sync"};
  for (auto& a : locale_args()) args.push_back(a);
  if (run(args, commands_log(dir_), server_credentials(), dir_) != 0) fail("initdb failed");
  std::ofstream conf(data_dir(dir_) / "postgresql.conf", std::ios::app);
  conf << static_conf(dir_);
  if (!conf.flush()) fail("cannot append to postgresql.conf");
}

void Cluster::write_trellis_conf(const std::string& extra_conf) const {
  fs::path path = data_dir(dir_) / "trellis.conf";
  write_text(path, "port = " + std::to_string(port_) + "\n" + extra_conf + "\n");
  give_to_server(path, server_credentials());
}

// A chosen port may be taken between our probe and the server's bind; then
// pick another and try again.
void Cluster::launch(const std::string& extra_conf, bool choose_port) {
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    if (port_ == 0 || (choose_port && attempt > 0) || (choose_port && !port_free(port_))) {
      port_ = pick_free_port();
    }
    write_trellis_conf(extra_conf);
    uintmax_t log_offset = file_size_or_zero(server_log(dir_));
    if (try_start()) {
      wait_until_ready();
      return;
    }
    std::string log = read_text(server_log(dir_)).substr(log_offset);
    bool clash = log.find("Address already in use") != std::string::npos;
    if (!choose_port || !clash) break;
  }
  fail("pg_ctl start failed");
}

bool Cluster::try_start() {
  std::vector<std::string> args{
      bin("pg_ctl"), "start", "-D", data_dir(dir_).string(), "-l", server_log(dir_).string(),
      "-w",          "-t",    "60"};
  return run(args, commands_log(dir_), server_credentials(), dir_) == 0;
}

void Cluster::wait_until_ready() const {
  std::vector<std::string> args{bin("pg_isready"),
                                "-q",
                                "-h",
                                sock_dir(dir_).string(),
                                "-p",
                                std::to_string(port_),
                                "-U",
                                "postgres",
                                "-d",
                                "postgres",
                                "-t",
                                "2"};
  auto deadline = Clock::now() + kReadyTimeout;
  while (run(args, "/dev/null", Credentials{}, dir_) != 0) {
    if (Clock::now() > deadline) fail("server did not accept connections in time");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

bool Cluster::running() const {
  return postmaster_pid() != 0;
}

pid_t Cluster::postmaster_pid() const {
  pid_t pid = read_pid_line(data_dir(dir_) / "postmaster.pid");
  return process_alive(pid) ? pid : 0;
}

void Cluster::stop(bool immediate) {
  pid_t pid = postmaster_pid();
  if (pid == 0) return;
  std::vector<std::string> args{
      bin("pg_ctl"), "stop", "-D", data_dir(dir_).string(), "-m", immediate ? "immediate" : "fast",
      "-w",          "-t",   "60"};
  int rc = run(args, commands_log(dir_), server_credentials(), dir_);
  if (!wait_for_exit(pid, std::chrono::seconds(10))) {
    fail("pg_ctl stop failed (exit " + std::to_string(rc) + ")");
  }
}

void Cluster::restart(bool immediate) {
  if (!running()) {
    if (!try_start()) fail("pg_ctl start failed");
  } else {
    std::vector<std::string> args{bin("pg_ctl"), "restart",
                                  "-D",          data_dir(dir_).string(),
                                  "-m",          immediate ? "immediate" : "fast",
                                  "-l",          server_log(dir_).string(),
                                  "-w",          "-t",
                                  "60"};
    if (run(args, commands_log(dir_), server_credentials(), dir_) != 0) {
      fail("pg_ctl restart failed");
    }
  }
  wait_until_ready();
}

std::string Cluster::url(const std::string& db) const {
  return "host=" + conninfo_quote(sock_dir(dir_).string()) + " port=" + std::to_string(port_) +
         " user=postgres dbname=" + conninfo_quote(db);
}

std::string Cluster::create_database(const std::string& prefix) {
  auto conn = pg::Connection::open(url());
  std::string base = sanitize_prefix(prefix) + "_" + std::to_string(getpid()) + "_";
  for (;;) {
    std::string name = base + std::to_string(++g_db_counter);
    try {
      conn->exec("CREATE DATABASE " + conn->quote_ident(name));
      return url(name);
    } catch (const pg::SqlError& e) {
      if (!pg::is_duplicate_database(e))
        throw;  // duplicate_database: a kept cluster from an old run
    }
  }
}

void Cluster::fail(const std::string& what) const {
  internal(what + " (cluster " + dir_ + ")\n--- commands.log ---\n" + tail(commands_log(dir_)) +
           "--- server.log ---\n" + tail(server_log(dir_)));
}

void reap_stale_clusters() {
  Credentials cred = server_credentials();
  for (const auto& root : temp_roots()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      if (entry.path().filename().string().rfind(kDirPrefix, 0) != 0) continue;
      try {
        reap_dir(entry.path(), cred);
      } catch (const std::exception&) {
        // Best effort: a dir we cannot inspect is left for a later run.
      }
    }
  }
}

}  // namespace trellis::testkit
