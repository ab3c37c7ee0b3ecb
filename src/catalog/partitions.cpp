// Records of partitions under captured roots and of corrections; see
// partitions.hpp. The tree is read from pg_inherits (a plain catalog read,
// no lock on any partition, so a DETACH or DROP in progress never blocks the
// staging worker), leaving out partitions whose detach is pending: a query
// of the root no longer sees their rows.
#include "catalog/partitions.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/transitions.hpp"

namespace trellis::catalog {

std::string PartitionNode::qualified() const {
  return base::qualified(schema, name);
}

std::string PartitionNode::display() const {
  return exists ? schema + "." + name : stored_name;
}

Partitions::Partitions(std::string schema) : schema_(std::move(schema)) {}

std::string Partitions::table(const std::string& name) const {
  return base::qualified(schema_, name);
}

namespace {

// (table_id, relid, schema, name, leaf) of every partition under the roots
// `roots` (a condition over captured_tables alias ct) selects.
std::string tree_sql(const std::string& captured_tables, const std::string& roots) {
  return fmt::format(
      "WITH RECURSIVE t(table_id, relid, link) AS (SELECT ct.id, i.inhrelid, i.xmin::text FROM {} "
      "ct JOIN pg_inherits i ON i.inhparent = ct.relid AND NOT i.inhdetachpending WHERE {} UNION "
      "ALL SELECT t.table_id, i.inhrelid, i.xmin::text FROM t JOIN pg_inherits i ON i.inhparent = "
      "t.relid AND NOT i.inhdetachpending) SELECT t.table_id, t.relid::bigint AS relid, "
      "n.nspname, c.relname, c.relkind <> 'p' AS leaf, t.link FROM t JOIN pg_class c ON c.oid = "
      "t.relid JOIN pg_namespace n ON n.oid = c.relnamespace",
      captured_tables, roots);
}

std::vector<PartitionNode> nodes_from(const pg::Result& r, bool recorded) {
  std::vector<PartitionNode> out;
  for (int i = 0; i < r.rows(); ++i) {
    PartitionNode n;
    n.table_id = static_cast<int>(r.get_int(i, 0));
    n.relid = static_cast<unsigned>(r.get_int(i, 1));
    n.schema = r.get(i, 2);
    n.name = r.get(i, 3);
    n.leaf = r.get_bool(i, 4);
    n.link = r.get(i, 5);
    if (recorded) {
      n.installed_signature = r.get_opt(i, 6);
      n.left_tree = r.get_bool(i, 7);
      n.stored_name = r.get(i, 8);
      n.exists = r.get_bool(i, 9);
    }
    out.push_back(std::move(n));
  }
  return out;
}

// The partition constraint of partition `relid` (ancestors' included), or
// NULL when it or an ancestor is a DEFAULT partition: that constraint moves
// as siblings come and go, so a recorded one could miss keys it held.
std::string constraint_of(const std::string& relid) {
  return fmt::format(
      "CASE WHEN EXISTS (SELECT 1 FROM pg_partition_ancestors({0}) a JOIN pg_class ac ON ac.oid "
      "= a.relid WHERE pg_get_expr(ac.relpartbound, ac.oid) = 'DEFAULT') THEN NULL ELSE "
      "pg_get_partition_constraintdef({0}) END",
      relid);
}

}  // namespace

std::vector<PartitionNode> Partitions::tree(pg::Connection& conn, std::optional<int> table_id) {
  std::string roots = table_id ? fmt::format("ct.id = {}", *table_id)
                               : std::string("ct.installed_signature IS NOT NULL");
  return nodes_from(conn.exec(tree_sql(table("captured_tables"), roots) + " ORDER BY 1, 2"), false);
}

std::vector<PartitionNode> Partitions::recorded(pg::Connection& conn, std::optional<int> table_id) {
  // The name as last seen is split back for the node (it is stored quoted).
  auto r = conn.exec(
      fmt::format("SELECT p.table_id, p.relid::bigint, coalesce(n.nspname, ''), "
                  "coalesce(c.relname, p.node_name), coalesce(c.relkind <> 'p', true), p.link, "
                  "p.installed_signature, p.left_tree, p.node_name, c.oid IS NOT NULL FROM {} p "
                  "LEFT JOIN pg_class c ON c.oid = "
                  "p.relid LEFT JOIN pg_namespace n ON n.oid = c.relnamespace WHERE $1::int IS "
                  "NULL OR p.table_id = $1::int ORDER BY 1, 2",
                  table("captured_partitions")),
      {table_id ? std::optional<std::string>(std::to_string(*table_id)) : std::nullopt});
  return nodes_from(r, true);
}

Partitions::Attention Partitions::attention(pg::Connection& conn) {
  auto r = conn.exec_prepared(fmt::format(
      "WITH now AS ({0}) SELECT EXISTS (SELECT 1 FROM now WHERE NOT EXISTS (SELECT 1 FROM {1} p "
      "WHERE p.table_id = now.table_id AND p.relid = now.relid AND p.link = now.link AND NOT "
      "p.left_tree)) OR EXISTS (SELECT 1 FROM {1} p JOIN {3} ct ON ct.id = p.table_id AND "
      "ct.installed_signature IS NOT NULL WHERE NOT p.left_tree AND NOT EXISTS (SELECT 1 FROM "
      "now WHERE now.table_id = p.table_id AND now.relid = p.relid)), EXISTS (SELECT 1 FROM {1} "
      "p WHERE p.left_tree), EXISTS (SELECT 1 FROM {2})",
      tree_sql(table("captured_tables"), "ct.installed_signature IS NOT NULL"),
      table("captured_partitions"), table("partition_corrections"), table("captured_tables")));
  return {r.get_bool(0, 0), r.get_bool(0, 1), r.get_bool(0, 2)};
}

std::optional<std::string> Partitions::without_capture(pg::Connection& conn, int table_id,
                                                       const std::string& trigger_like) {
  auto r = conn.exec(
      fmt::format("SELECT p.node_name FROM {} p WHERE p.table_id = $1::int AND NOT p.left_tree AND "
                  "p.installed_signature IS NOT NULL AND EXISTS (SELECT 1 FROM pg_class c WHERE "
                  "c.oid = p.relid) AND (SELECT count(*) FROM pg_trigger g WHERE g.tgrelid = "
                  "p.relid AND g.tgname LIKE $2 AND g.tgenabled = 'A') < 4 ORDER BY p.relid "
                  "LIMIT 1",
                  table("captured_partitions")),
      {std::to_string(table_id), trigger_like});
  if (r.rows() == 0) return std::nullopt;
  return r.get(0, 0);
}

void Partitions::refresh_constraints(pg::Connection& conn, int table_id) {
  conn.exec(fmt::format("UPDATE {} p SET constraint_def = {} WHERE p.table_id = $1::int AND NOT "
                        "p.left_tree AND EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = p.relid "
                        "AND c.relispartition)",
                        table("captured_partitions"), constraint_of("p.relid")),
            {std::to_string(table_id)});
}

void Partitions::record_installed(pg::Connection& conn, const PartitionNode& node,
                                  const std::string& signature, const std::string& digest_sql) {
  conn.exec(
      fmt::format("INSERT INTO {} (table_id, relid, node_name, installed_signature, "
                  "installed_digest, constraint_def, link) VALUES ($1::int, $2::oid, $3, $4, ({}), "
                  "{}, $5) ON CONFLICT (table_id, relid) DO UPDATE SET node_name = "
                  "EXCLUDED.node_name, link = EXCLUDED.link, "
                  "installed_signature = EXCLUDED.installed_signature, installed_digest = "
                  "EXCLUDED.installed_digest, constraint_def = EXCLUDED.constraint_def, "
                  "left_tree = false",
                  table("captured_partitions"), digest_sql, constraint_of("$2::oid")),
      {std::to_string(node.table_id), std::to_string(node.relid), node.display(), signature,
       node.link});
}

void Partitions::record_left(pg::Connection& conn, const PartitionNode& node,
                             const std::string& reason) {
  conn.exec(fmt::format("UPDATE {} SET left_tree = true WHERE table_id = $1::int AND relid = "
                        "$2::oid",
                        table("captured_partitions")),
            {std::to_string(node.table_id), std::to_string(node.relid)});
  open_correction(conn, node, reason);
}

void Partitions::forget(pg::Connection& conn, int table_id, unsigned relid) {
  conn.exec(fmt::format("DELETE FROM {} WHERE table_id = $1::int AND relid = $2::oid",
                        table("captured_partitions")),
            {std::to_string(table_id), std::to_string(relid)});
}

void Partitions::forget_all(pg::Connection& conn, int table_id) {
  conn.exec(fmt::format("DELETE FROM {} WHERE table_id = $1::int", table("captured_partitions")),
            {std::to_string(table_id)});
  conn.exec(fmt::format("DELETE FROM {} WHERE table_id = $1::int", table("partition_corrections")),
            {std::to_string(table_id)});
}

void Partitions::open_correction(pg::Connection& conn, const PartitionNode& node,
                                 const std::string& reason) {
  conn.exec(fmt::format("INSERT INTO {} (table_id, relid, node_name, reason, constraint_def) "
                        "VALUES ($1::int, $2::oid, $3, $4, (SELECT constraint_def FROM {} WHERE "
                        "table_id = $1::int AND relid = $2::oid))",
                        table("partition_corrections"), table("captured_partitions")),
            {std::to_string(node.table_id), std::to_string(node.relid), node.display(), reason});
}

void Partitions::open_attached(pg::Connection& conn, const PartitionNode& node) {
  conn.exec(fmt::format("INSERT INTO {} (table_id, relid, node_name, reason) SELECT $1::int, "
                        "$2::oid, $3, 'attached' WHERE NOT EXISTS (SELECT 1 FROM {} WHERE "
                        "table_id = $1::int AND relid = $2::oid AND reason = 'attached' AND "
                        "staged_through IS NULL)",
                        table("partition_corrections"), table("partition_corrections")),
            {std::to_string(node.table_id), std::to_string(node.relid), node.display()});
}

void Partitions::fence_attached(pg::Connection& conn, int table_id, unsigned relid) {
  conn.exec(fmt::format("UPDATE {} SET fence = clock_timestamp(), constraint_def = (SELECT "
                        "constraint_def FROM {} WHERE table_id = $1::int AND relid = $2::oid) "
                        "WHERE table_id = $1::int AND relid = $2::oid AND reason = 'attached' "
                        "AND staged_through IS NULL",
                        table("partition_corrections"), table("captured_partitions")),
            {std::to_string(table_id), std::to_string(relid)});
}

bool Partitions::captured_as_attached(pg::Connection& conn, int table_id, unsigned relid) {
  return conn
      .exec(fmt::format("SELECT EXISTS (SELECT 1 FROM {} p JOIN pg_inherits i ON i.inhrelid = "
                        "p.relid WHERE p.table_id = $1::int AND p.relid = $2::oid AND NOT "
                        "p.left_tree AND p.link = i.xmin::text)",
                        table("captured_partitions")),
            {std::to_string(table_id), std::to_string(relid)})
      .get_bool(0, 0);
}

bool Partitions::is_partition(pg::Connection& conn, unsigned relid) {
  return conn
      .exec("SELECT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = $1::oid)",
            {std::to_string(relid)})
      .get_bool(0, 0);
}

std::vector<PartitionCorrection> Partitions::unstaged(pg::Connection& conn) {
  auto r = conn.exec(fmt::format(
      "SELECT id, table_id, relid::bigint, node_name, reason, "
      "since::text, constraint_def, {} FROM {} pc WHERE staged_through "
      "IS NULL ORDER BY id",
      no_worker_transaction_before("pc.fence", table("workers")), table("partition_corrections")));
  std::vector<PartitionCorrection> out;
  for (int i = 0; i < r.rows(); ++i) {
    PartitionCorrection c;
    c.id = r.get_int(i, 0);
    c.table_id = static_cast<int>(r.get_int(i, 1));
    c.relid = static_cast<unsigned>(r.get_int(i, 2));
    c.node_name = r.get(i, 3);
    c.reason = r.get(i, 4);
    c.since = r.get(i, 5);
    c.constraint_def = r.get_opt(i, 6);
    c.fence_passed = r.get_bool(i, 7);
    out.push_back(std::move(c));
  }
  return out;
}

void Partitions::mark_staged(pg::Connection& conn, int64_t id, int64_t segment, bool rebuilding) {
  conn.exec(fmt::format("UPDATE {} SET staged_through = $2::bigint, rebuilding = $3::bool WHERE "
                        "id = $1::bigint",
                        table("partition_corrections")),
            {std::to_string(id), std::to_string(segment), rebuilding ? "true" : "false"});
}

// Done: every segment up to the one its keys went into is drained (none,
// 0, when nothing was staged), and for a dropped partition no reader of the
// table is still rebuilding.
int Partitions::close_done(pg::Connection& conn) {
  return static_cast<int>(
      conn.exec(fmt::format("DELETE FROM {} pc WHERE pc.staged_through IS NOT NULL AND NOT EXISTS "
                            "(SELECT 1 FROM {} s WHERE s.seg <= pc.staged_through AND s.state NOT "
                            "IN ('drained', 'retired')) AND NOT (pc.rebuilding AND EXISTS (SELECT "
                            "1 FROM {} t WHERE pc.table_id = ANY({}) AND t.status = {}))",
                            table("partition_corrections"), table("segments"), table("transforms"),
                            read_table_ids("t"), literal(Status::backfilling)))
          .affected());
}

}  // namespace trellis::catalog
