// The partitions of partitioned captured tables and the corrections under
// way for them (migration 0012; docs/architecture.md, "Partitioned sources").
// A partition's capture is recorded here, not in captured_tables: its ring
// rows carry the root's id, so drains and readers see only the root. The
// corrections are what status() lists as `correcting`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pg/connection.hpp"

namespace trellis::catalog {

// A partition (a leaf or a partitioned middle) under a captured root.
struct PartitionNode {
  int table_id = 0;  // the root's captured_tables.id
  unsigned relid = 0;
  std::string schema;
  std::string name;
  bool leaf = true;
  std::string link;  // the xmin of its pg_inherits row (a new one after a re-attach)
  std::optional<std::string> installed_signature;  // recorded nodes only
  bool left_tree = false;                          // recorded nodes only
  std::string stored_name;                         // recorded nodes: schema.name as last seen
  bool exists = true;                              // false: the table was dropped
  std::string qualified() const;                   // "schema"."name", for SQL (exists only)
  std::string display() const;                     // schema.name, or as last seen if dropped
};

// One correction: a partition event the readers of table_id are corrected for.
struct PartitionCorrection {
  int64_t id = 0;
  int table_id = 0;
  unsigned relid = 0;
  std::string node_name;
  std::string reason;  // attached, detached, dropped, truncated
  std::string since;
  std::optional<int64_t> staged_through;
  // The partition's constraint when the correction was opened (NULL under a
  // DEFAULT partition).
  std::optional<std::string> constraint_def;
  // No worker transaction older than the event is open any more: its keys
  // may be read (unstaged() only).
  bool fence_passed = false;
};

class Partitions {
 public:
  explicit Partitions(std::string schema);

  // Every partition now under a captured root with capture installed (or
  // about to be: `table_id`, when given, only that table), roots excluded.
  std::vector<PartitionNode> tree(pg::Connection& conn, std::optional<int> table_id = {});
  // The partitions recorded for captured table `table_id` (all, when none).
  std::vector<PartitionNode> recorded(pg::Connection& conn, std::optional<int> table_id = {});
  // One read, so the staging worker and await can look often: whether some
  // root's tree differs from its records (a partition event not noticed
  // yet), whether departed partitions keep their capture still, and
  // whether corrections are open.
  struct Attention {
    bool tree_changed = false;
    bool departed = false;
    bool corrections = false;
  };
  Attention attention(pg::Connection& conn);

  // The first recorded partition of `table_id` (still in its tree) that does
  // not carry four enabled-ALWAYS triggers named like `trigger_like`.
  std::optional<std::string> without_capture(pg::Connection& conn, int table_id,
                                             const std::string& trigger_like);
  // Records the current partition constraint of every partition of
  // `table_id` still in its tree.
  void refresh_constraints(pg::Connection& conn, int table_id);
  // Capture is installed on `node` from `signature`; `digest_sql` gives the
  // digest of its functions.
  void record_installed(pg::Connection& conn, const PartitionNode& node,
                        const std::string& signature, const std::string& digest_sql);
  // `node` left its root's tree: mark it and open its correction, in the
  // caller's transaction.
  void record_left(pg::Connection& conn, const PartitionNode& node, const std::string& reason);
  void forget(pg::Connection& conn, int table_id, unsigned relid);
  void forget_all(pg::Connection& conn, int table_id);

  // Opens a correction whose keys are still to stage.
  void open_correction(pg::Connection& conn, const PartitionNode& node, const std::string& reason);
  // Opens an `attached` correction for `node` unless one is open and not
  // staged yet: listed from the moment a new partition is seen, while its
  // capture may still wait for a lock.
  void open_attached(pg::Connection& conn, const PartitionNode& node);
  // Capture on the partition of an open `attached` correction is installed
  // now: its keys may be read once the worker transactions older than this
  // commit have ended, so the fence moves here.
  void fence_attached(pg::Connection& conn, int table_id, unsigned relid);
  // Whether capture on partition `relid` is installed for its current
  // attachment (its recorded link is its pg_inherits row's xmin now).
  bool captured_as_attached(pg::Connection& conn, int table_id, unsigned relid);
  // Whether table `relid` is a partition of anything now.
  bool is_partition(pg::Connection& conn, unsigned relid);
  std::vector<PartitionCorrection> unstaged(pg::Connection& conn);
  void mark_staged(pg::Connection& conn, int64_t id, int64_t segment, bool rebuilding);
  // Deletes the corrections the drains are done with; returns how many.
  int close_done(pg::Connection& conn);

 private:
  std::string table(const std::string& name) const;
  std::string schema_;
};

}  // namespace trellis::catalog
