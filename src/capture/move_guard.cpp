// The move guard of a partitioned source; see move_guard.hpp.
#include "capture/move_guard.hpp"

#include <map>
#include <mutex>

namespace trellis::capture {

bool server_hides_merge_moves(pg::Connection& conn) {
  static std::mutex mutex;
  static std::map<std::string, bool> by_version;
  std::string version = conn.exec("SELECT pg_catalog.version()").get(0, 0);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto known = by_version.find(version);
    if (known != by_version.end()) return known->second;
  }
  auto probe = compile::merge_move_probe();
  conn.exec(probe.run);
  bool hides = conn.exec(probe.read).get(0, 0) != "1";
  std::lock_guard<std::mutex> lock(mutex);
  by_version[version] = hides;
  return hides;
}

std::vector<compile::WatchedColumn> move_guard_columns(pg::Connection& conn, unsigned relid) {
  if (!server_hides_merge_moves(conn)) return {};
  auto r = conn.exec(compile::partition_key_columns_sql(), {std::to_string(relid)});
  std::vector<compile::WatchedColumn> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back({r.get(i, 0), r.get_bool(i, 1)});
  return out;
}

void put_move_guard(pg::Connection& conn, const catalog::CapturedTable& root,
                    const std::vector<compile::WatchedColumn>& columns,
                    const compile::RingShape& ring) {
  auto sql = compile::compile_move_guard(root, columns, ring);
  conn.exec(sql.function);
  conn.exec_script(sql.create_trigger);
}

bool move_guard_intact(pg::Connection& conn, const catalog::CapturedTable& root,
                       const compile::RingShape& ring) {
  return conn.exec(compile::move_guard_probe(root, ring)).get_bool(0, 0);
}

}  // namespace trellis::capture
