// Capture on the partitions of partitioned tables, and the corrections for
// partition events; see partitions.hpp.
#include "capture/partitions.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "base/event_log.hpp"
#include "base/sql_text.hpp"
#include "bind/table_description.hpp"
#include "capture/layout.hpp"
#include "capture/trigger_install.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/partition_sql.hpp"
#include "compile/transform_sql.hpp"
#include "pg/lock_timeout.hpp"
#include "pg/sql_error.hpp"

namespace trellis::capture {

using catalog::PartitionNode;

PartitionCapture::PartitionCapture(catalog::Store& store, compile::RingShape ring)
    : store_(store), partitions_(store.schema()), lifecycle_(store), ring_(std::move(ring)) {}

catalog::CapturedTable captured_partition(const catalog::CapturedTable& root,
                                          const PartitionNode& node) {
  catalog::CapturedTable t = root;
  t.schema = node.schema;
  t.name = node.name;
  t.relid = node.relid;
  t.node = node.relid;
  return t;
}

bool PartitionCapture::install(pg::Connection& conn, const catalog::CapturedTable& root,
                               const std::vector<catalog::Column>& reads) {
  auto now = partitions_.tree(conn, root.id);
  std::map<unsigned, PartitionNode> recorded;
  for (auto& n : partitions_.recorded(conn, root.id)) recorded[n.relid] = n;
  // Partitions that left the tree since the last look: corrected for by
  // correct(), which also removes their capture.
  std::set<unsigned> present;
  for (const auto& n : now) present.insert(n.relid);
  for (const auto& [relid, n] : recorded) {
    if (n.left_tree || present.count(relid)) continue;
    pg::Transaction txn(conn);
    partitions_.record_left(conn, n, n.exists ? "detached" : "dropped");
    txn.commit();
    base::log_event(
        spdlog::level::info, "partition_left", "",
        {{"table", root.schema + "." + root.name}, {"partition", n.display()}},
        fmt::format("partition {} left {}.{} ({}); its readers are corrected for it", n.display(),
                    root.schema, root.name, n.exists ? "detached" : "dropped"));
  }
  partitions_.refresh_constraints(conn, root.id);
  std::vector<bind::TableName> names;
  for (const auto& n : now) names.push_back({n.schema, n.name});
  auto described = bind::describe_tables(conn, names);
  bool all = true;
  int installed = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const auto& node = now[i];
    if (!described[i]) continue;  // gone meanwhile: the next look records it
    auto as = captured_partition(root, node);
    auto layout = compile::capture_layout(as, reads, placed_columns(*described[i]));
    std::string signature = capture_signature(as, reads, layout);
    auto was = recorded.find(node.relid);
    // Detached and attached again between two looks: its rows were away
    // meanwhile (and drains may have deleted theirs from the targets).
    bool known = was != recorded.end() && !was->second.left_tree && was->second.link == node.link;
    if (known && was->second.installed_signature == signature) continue;
    // A partition new under a root already captured may hold rows no
    // trigger saw (created, or attached with rows, or written straight into
    // before this install): its keys are re-derived.
    bool attached = !known && root.installed_signature.has_value();
    if (attached) {  // listed as correcting from now on, while its install may wait
      pg::Transaction txn(conn);
      partitions_.open_attached(conn, node);
      txn.commit();
    }
    if (install_node(conn, as, node, reads, layout, attached))
      ++installed;
    else
      all = false;
  }
  if (installed > 0)
    base::log_event(spdlog::level::info, "capture_installed", "",
                    {{"table", root.schema + "." + root.name}, {"partitions", installed}},
                    fmt::format("capture installed on {} partition{} of {}.{}", installed,
                                installed == 1 ? "" : "s", root.schema, root.name));
  return all;
}

bool PartitionCapture::install_node(pg::Connection& conn, const catalog::CapturedTable& as,
                                    const PartitionNode& node,
                                    const std::vector<catalog::Column>& reads,
                                    const std::vector<compile::PlacedColumn>& layout,
                                    bool attached) {
  auto sql = compile::compile_capture(as, reads, layout, ring_);
  std::string qualified = node.qualified();
  std::string signature = capture_signature(as, reads, layout);
  bool installed = pg::try_under_lock_timeout(conn, [&] {
    put_capture(conn, qualified, sql);
    partitions_.record_installed(conn, node, signature, sql.objects.function_digest);
    if (attached) partitions_.fence_attached(conn, node.table_id, node.relid);
  });
  if (!installed) {
    spdlog::info(
        "capture on partition {} waits for a lock another session holds; retried on "
        "the next tick",
        qualified);
    return false;
  }
  spdlog::debug("capture installed on partition {}", qualified);
  return true;
}

bool PartitionCapture::remove_node(pg::Connection& conn, const catalog::CapturedTable& root,
                                   const PartitionNode& node) {
  auto as = captured_partition(root, node);
  auto objects = compile::capture_objects(as, ring_);
  try {
    return pg::try_under_lock_timeout(conn, [&] {
      // Only the triggers calling this root's functions: a partition that
      // moved to another captured table carries that one's, of the same
      // names. A dropped table took its triggers along.
      if (node.exists) {
        auto own = conn.exec(objects.own_triggers);
        for (int i = 0; i < own.rows(); ++i)
          conn.exec(
              fmt::format("DROP TRIGGER {} ON {}", base::ident(own.get(i, 0)), node.qualified()));
      }
      for (const auto& d : objects.drop)
        if (d.rfind("DROP FUNCTION", 0) == 0) conn.exec(d);
      partitions_.forget(conn, node.table_id, node.relid);
    });
  } catch (const pg::SqlError& e) {
    if (!conn.healthy()) throw;
    spdlog::warn("removing capture from partition {} failed: {}", node.display(), e.what());
    return false;
  }
}

bool PartitionCapture::uninstall(pg::Connection& conn, const catalog::CapturedTable& root) {
  bool all = true;
  for (const auto& n : partitions_.recorded(conn, root.id)) all = remove_node(conn, root, n) && all;
  if (all) {
    pg::Transaction txn(conn);
    partitions_.forget_all(conn, root.id);
    txn.commit();
  }
  return all;
}

PartitionCapture::Attention PartitionCapture::attention(pg::Connection& conn) {
  auto a = partitions_.attention(conn);
  return {a.tree_changed, a.departed || a.corrections};
}

// The keys a partition holds or held, staged as changes of its root: the
// rows it stores now (a new or detached partition), and the keys each
// transform reading the root as its source holds that satisfy the
// partition's constraint (a dropped partition's rows are gone; a row written
// into a new partition through the root and then deleted straight from it
// before its capture was installed left no trace but in the target). What
// no key list can reach is rebuilt in place instead: a reader that joins
// the table (a new partition's rows may have joined rows no trigger saw; a
// dropped one's are gone), and any reader when the constraint is unknown
// (under a DEFAULT partition) or cannot be evaluated any more.
bool PartitionCapture::stage(pg::Connection& conn, const catalog::CapturedTable& root,
                             const catalog::PartitionCorrection& c) {
  if (!c.fence_passed) return false;  // a drain that read before the event may still write
  // A new partition's keys are read only once its own capture is in place,
  // so a write straight into it is either staged or read here (one that
  // left again first goes on without: its constraint was never recorded,
  // so its source readers rebuild).
  if (c.reason == "attached" && !partitions_.captured_as_attached(conn, root.id, c.relid) &&
      partitions_.is_partition(conn, c.relid))
    return false;
  auto where = conn.exec(
      "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON "
      "n.oid = c.relnamespace WHERE c.oid = $1::oid",
      {std::to_string(c.relid)});
  bool exists = where.rows() > 0;
  std::vector<int> rebuild;
  std::vector<std::pair<const catalog::TransformDef*, std::string>> by_constraint;
  auto readers = store_.running_transforms(conn);
  for (const auto& d : readers) {
    if (!d.reads_table(root.id)) continue;
    bool joins_it = false;
    for (const auto& j : d.joins) joins_it = joins_it || j.table_id == root.id;
    if (joins_it && c.reason != "detached") {
      rebuild.push_back(d.id);
    } else if (d.source_table_id == root.id) {
      if (c.constraint_def)
        by_constraint.push_back({&d, compile::compile_transform(d).held_keys_from});
      else if (c.reason != "detached")  // a detached one's rows list its keys
        rebuild.push_back(d.id);
    }
  }
  int64_t keys = 0;
  std::vector<std::string> rebuilt;  // readers rebuilt in place
  auto stage_all = [&] {
    // The xid first, then the active segment, as a capture trigger does
    // (the fence relies on that order).
    conn.exec("SELECT pg_current_xact_id()");
    int64_t seg = conn.exec(fmt::format("SELECT pg_sequence_last_value({}::regclass)",
                                        base::literal(store_.table("active_segment"))))
                      .get_int(0, 0);
    std::vector<compile::HeldKeys> held;
    for (const auto& [d, held_from] : by_constraint) held.push_back({d->key, held_from});
    keys = conn.exec(compile::stage_partition_keys(
                         root, exists ? base::qualified(where.get(0, 0), where.get(0, 1)) : "",
                         held, c.constraint_def.value_or("false"), ring_, catalog::ring_slot(seg)))
               .affected();
    rebuilt = lifecycle_.rebuild(conn, rebuild);
    partitions_.mark_staged(conn, c.id, keys > 0 ? seg : 0, !rebuilt.empty());
  };
  bool staged = false;
  try {
    staged = pg::try_under_lock_timeout(conn, stage_all);
  } catch (const pg::SqlError& e) {
    // A constraint that no longer evaluates (a hash partition's names its
    // parent, which may be gone): every reader rebuilds.
    if (!conn.healthy() || by_constraint.empty()) throw;
    spdlog::info(
        "partition {} of {}.{}: its constraint no longer evaluates ({}); its readers "
        "rebuild",
        c.node_name, root.schema, root.name, e.what());
    for (const auto& [d, held_from] : by_constraint) rebuild.push_back(d->id);
    by_constraint.clear();
    keys = 0;
    staged = pg::try_under_lock_timeout(conn, stage_all);
  }
  if (!staged) return false;
  base::log_event(spdlog::level::info, "partition_corrected", "",
                  {{"table", root.schema + "." + root.name},
                   {"partition", c.node_name},
                   {"reason", c.reason},
                   {"keys", keys},
                   {"rebuilt", rebuild.size()}},
                  fmt::format("partition {} of {}.{} was {}: {} key{} re-derived{}", c.node_name,
                              root.schema, root.name, c.reason, keys, keys == 1 ? "" : "s",
                              rebuild.empty() ? ""
                                              : fmt::format(", {} reader{} rebuilt", rebuild.size(),
                                                            rebuild.size() == 1 ? "" : "s")));
  for (const auto& target : rebuilt)
    base::log_event(spdlog::level::info, "rebuilding", target,
                    {{"cause", "partition"},
                     {"table", root.schema + "." + root.name},
                     {"partition", c.node_name}},
                    fmt::format("transform {} rebuilds in place: partition {} of {}.{} was {}",
                                target, c.node_name, root.schema, root.name, c.reason));
  return true;
}

void PartitionCapture::correct(pg::Connection& conn) {
  std::map<int, catalog::CapturedTable> roots;
  for (auto& t : store_.captured_tables(conn)) roots[t.id] = t;
  std::set<std::pair<int, unsigned>> unstaged;
  for (const auto& c : partitions_.unstaged(conn)) {
    auto root = roots.find(c.table_id);
    if (root == roots.end()) continue;
    if (!stage(conn, root->second, c)) unstaged.insert({c.table_id, c.relid});
  }
  // A departed partition keeps its triggers until its keys are read: a
  // write to it meanwhile is still staged.
  for (const auto& n : partitions_.recorded(conn)) {
    if (!n.left_tree || unstaged.count({n.table_id, n.relid})) continue;
    auto root = roots.find(n.table_id);
    if (root != roots.end()) remove_node(conn, root->second, n);
  }
  partitions_.close_done(conn);
}

}  // namespace trellis::capture
