// Renders capture trigger functions. Each statement-level trigger reads
// the key columns (and, for UPDATE, the columns readers read) straight from
// the transition tables, typed, and appends one ring row per changed key.
// The statements name the table's leading columns by their place (a column
// alias list over the transition table), so renaming a column leaves them
// reading the same columns. A drop moves places (and a cached statement
// naming a place that is gone would fail the application's write), so each
// function first checks, in one expression over the system caches, that
// every column up to the last one it reads still exists; when one does not,
// it takes a path that reads rows through to_jsonb(alias.*) (".*" so a
// column named like the alias cannot shadow the row), where a missing column
// yields NULL rather than an error: a capture trigger never fails the
// application's statement. The drift check then reinstalls capture for the
// new layout, or pauses the readers when what they read is gone. A key with
// a NULL element is staged anyway; the drain skips it and schema checks
// report it. The functions run as their owner (SECURITY DEFINER) under the
// writer's search_path: a pinned search_path (SET on the function) cost a
// configuration push and pop and a namespace lookup on every statement, so
// instead every function, operator and type their bodies name is qualified
// with pg_catalog, and row values compare with record_image_eq rather than
// IS DISTINCT FROM (whose `=` is looked up by name).
#include "compile/capture.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/sql_text.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/key_codec.hpp"

namespace trellis::compile {

using base::ident;
using base::join;
using base::literal;
using base::qualified;

using catalog::Column;

std::string trigger_name(const std::string& catalog_schema, const std::string& event) {
  std::string name = "trellis_" + event + "_" + catalog_schema;
  return name.substr(0, 63);
}

namespace {

std::string ring_table(const RingShape& ring, int slot) {
  return qualified(ring.catalog_schema, catalog::ring_slot_table(slot));
}

// A partition's functions are its own (its column layout may differ from the
// root's), named by the root's id and the partition's oid.
std::string function_name(const RingShape& ring, const catalog::CapturedTable& t,
                          const std::string& event) {
  if (t.node)
    return qualified(ring.catalog_schema, fmt::format("capture_{}_{}_{}", t.id, t.node, event));
  return qualified(ring.catalog_schema, fmt::format("capture_{}_{}", t.id, event));
}

// Row images of a transition table as jsonb, computed once per row.
std::string images(const std::string& transition) {
  return fmt::format("(SELECT pg_catalog.to_jsonb(__row.*) AS __j FROM {} __row) __r", transition);
}

// The columns readers read beyond the key.
std::vector<Column> non_key(const catalog::CapturedTable& t, const std::vector<Column>& reads) {
  std::vector<Column> out;
  for (const auto& c : reads) {
    bool in_key =
        std::any_of(t.key.begin(), t.key.end(), [&](const Column& k) { return k.name == c.name; });
    if (!in_key) out.push_back(c);
  }
  return out;
}

// The columns the typed statements of `event` name.
std::vector<Column> named_columns(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                                  const std::string& event) {
  std::vector<Column> out = t.key;
  if (event == "upd")
    for (const auto& c : non_key(t, reads)) out.push_back(c);
  return out;
}

// How many leading columns of `layout` cover `columns`; 0 when one of them
// is not in it.
std::size_t places_needed(const std::vector<PlacedColumn>& layout,
                          const std::vector<Column>& columns) {
  std::size_t needed = 0;
  for (const auto& c : columns) {
    auto at = std::find_if(layout.begin(), layout.end(),
                           [&](const PlacedColumn& p) { return p.name == c.name; });
    if (at == layout.end()) return 0;
    needed = std::max(needed, static_cast<std::size_t>(at - layout.begin()) + 1);
  }
  return needed;
}

// The typed reading of one event over the first `n` columns of the layout:
// the column alias list naming them as capture found them, and the check
// that each of them still exists. has_column_privilege by attnum reads the
// system caches, so it sees the catalog as it is now (also in a transaction
// whose snapshot is older than a drop), and yields NULL for a dropped
// column; one expression, no query.
struct TypedReading {
  std::string places;
  std::string guard;
};

TypedReading typed_reading(const std::vector<PlacedColumn>& layout, std::size_t n) {
  TypedReading r;
  for (std::size_t i = 0; i < n; ++i) {
    r.places += (i ? ", " : "(") + ident(layout[i].name);
    r.guard += fmt::format(
        "{}pg_catalog.has_column_privilege(TG_RELID, {}::pg_catalog.int2, 'SELECT') IS "
        "NOT NULL",
        i ? " AND " : "", layout[i].attnum);
  }
  r.places += ")";
  return r;
}

// Keys an UPDATE changed as far as any reader can see, typed: old and new
// rows are paired by their encoded key (so a key whose text changes, numeric
// 1 -> 1.0, pairs with nothing); an unpaired row is a key the statement moved
// away from or to, and a pair counts when a column readers read differs as
// stored, by record_image_eq (so 1 -> 1.00 counts, as written; NULLs compare
// equal to each other, as IS NOT DISTINCT FROM would, but without an `=`
// looked up through the writer's search_path). One hash join over the two
// transition tables.
std::string typed_updated_keys(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                               const std::string& places) {
  auto values = non_key(t, reads);
  auto side = [&](const std::string& transition, const std::string& alias) {
    std::string row = values.empty() ? "" : ", ROW" + key_tuple(values, alias) + " AS v";
    return fmt::format("(SELECT {} AS k{} FROM {} AS {}{}) {}", encode_key(t.key, alias), row,
                       transition, alias, places, alias);
  };
  return fmt::format(
      "SELECT CASE WHEN n.k IS NULL THEN o.k ELSE n.k END AS k FROM {} FULL JOIN {} ON o.k "
      "OPERATOR(pg_catalog.=) n.k WHERE n.k IS NULL OR o.k IS NULL{}",
      side("__trellis_new", "n"), side("__trellis_old", "o"),
      values.empty() ? "" : " OR NOT pg_catalog.record_image_eq(n.v, o.v)");
}

// The same keys from jsonb images, for when a column is gone. Each new image
// counts +1 and each old image -1, grouped by key and the columns readers
// read: a group that does not cancel out is an image that differs, so its key
// (old or new, which covers an update that moves a key) is staged. Values
// compare as JSON text, so 1 -> 1.00 still counts.
std::string json_updated_keys(const catalog::CapturedTable& t, const std::vector<Column>& reads) {
  std::string columns = encode_key_from_json(t.key, "__r.__j");
  for (const auto& c : reads)
    columns +=
        fmt::format(", (__r.__j OPERATOR(pg_catalog.->) {})::pg_catalog.text", literal(c.name));
  std::string positions = "1";
  for (size_t i = 2; i <= reads.size() + 1; ++i) positions += fmt::format(", {}", i);
  std::string both =
      fmt::format("SELECT __r.__j, 1 AS __w FROM {} UNION ALL SELECT __r.__j, -1 FROM {}",
                  images("__trellis_new"), images("__trellis_old"));
  return fmt::format(
      "SELECT d.k FROM (SELECT {} FROM ({}) __r GROUP BY {} HAVING pg_catalog.sum(__r.__w) "
      "OPERATOR(pg_catalog.<>) 0) AS d(k) GROUP BY d.k",
      columns, both, positions);
}

// SELECT producing (tbl, key, bucket, op) rows for one event: typed, over
// the transition tables with the column aliases `places`, or (no places)
// through jsonb images.
std::string staged_rows(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                        const std::string& event, const std::optional<std::string>& places) {
  std::string transition = event == "ins" ? "__trellis_new" : "__trellis_old";
  std::string keys;
  if (event == "upd")
    keys = places ? typed_updated_keys(t, reads, *places) : json_updated_keys(t, reads);
  else if (places)
    keys =
        fmt::format("SELECT {} AS k FROM {} AS r{}", encode_key(t.key, "r"), transition, *places);
  else
    keys = fmt::format("SELECT {} AS k FROM {}", encode_key_from_json(t.key, "__r.__j"),
                       images(transition));
  return fmt::format("SELECT {}, c.k, {}, '{}' FROM ({}) c", t.id,
                     key_bucket("c.k", catalog::kRingBuckets),
                     event[0] == 'i' ? 'i' : (event[0] == 'd' ? 'd' : 'u'), keys);
}

// $tag$body$tag$ with a tag the body does not contain (column names appear
// in the body as literals and may hold anything).
std::string dollar_quote(const std::string& body) {
  std::string tag = "$trellis$";
  for (int n = 1; body.find(tag) != std::string::npos; ++n) tag = fmt::format("$trellis{}$", n);
  return tag + "\n" + body + tag;
}

// IF/ELSIF over the ring slots, each branch a static INSERT of `rows` into
// its slot table, so each keeps a cached plan.
std::string slot_dispatch(const RingShape& ring, const std::string& rows,
                          const std::string& indent) {
  std::string out;
  for (int s = 0; s < catalog::kRingSlots; ++s)
    out += fmt::format(
        "{}{} (s OPERATOR(pg_catalog.%) {}) OPERATOR(pg_catalog.=) {} THEN INSERT INTO {} (tbl, "
        "key, bucket, op) {};\n",
        indent, s == 0 ? "IF" : "ELSIF", catalog::kRingSlots, s, ring_table(ring, s), rows);
  return out + indent + "END IF;\n";
}

// The transaction must hold its xid before the body reads the active slot
// (the fence relies on that order). An INSERT, UPDATE or DELETE trigger
// stages rows only from its transition tables, which hold rows the statement
// wrote, and writing the first of them assigned the xid before the AFTER
// trigger fired; so only the TRUNCATE body and the move guard's (a BEFORE
// trigger, which may run before the statement wrote anything) take it
// themselves (an assignment, not PERFORM, so plpgsql runs it as a simple
// expression instead of a query). With a `guard`, the rows are `typed` while
// it holds and `fallback` otherwise. The move guard returns the row it was
// given, so the update goes on; the others run AFTER and return NULL.
std::string function_sql(const catalog::CapturedTable& t, const RingShape& ring,
                         const std::string& event, const std::string& guard,
                         const std::string& typed, const std::string& fallback,
                         const std::string& after = "") {
  std::string branches;
  if (guard.empty())
    branches = slot_dispatch(ring, typed, "  ");
  else
    branches = "  IF " + guard + " THEN\n" + slot_dispatch(ring, typed, "    ") + "  ELSE\n" +
               slot_dispatch(ring, fallback, "    ") + "  END IF;\n";
  bool takes_xid = event == "trunc" || event == "move";
  std::string body = fmt::format(
      "DECLARE s pg_catalog.int8;{}\nBEGIN\n{}"
      "  s := pg_catalog.pg_sequence_last_value({});\n{}{}  RETURN {};\nEND\n",
      takes_xid ? "\n  x pg_catalog.xid8;" : "",
      takes_xid ? "  x := pg_catalog.pg_current_xact_id();\n" : "",
      literal(qualified(ring.catalog_schema, "active_segment")) + "::pg_catalog.regclass", branches,
      after, event == "move" ? "NEW" : "NULL");
  return fmt::format(
      "CREATE OR REPLACE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS {}",
      function_name(ring, t, event), dollar_quote(body));
}

// A partition's TRUNCATE also lists it as corrected for (its sentinel makes
// the drains re-derive every key its readers hold) until the drains are past
// the segment it went into.
std::string truncated_partition(const catalog::CapturedTable& t, const RingShape& ring) {
  return fmt::format(
      "  INSERT INTO {} (table_id, relid, node_name, reason, staged_through) VALUES ({}, TG_RELID, "
      "TG_TABLE_SCHEMA OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) TG_TABLE_NAME, "
      "'truncated', s);\n",
      qualified(ring.catalog_schema, "partition_corrections"), t.id);
}

// The function of one writing event: typed behind its guard, or only the
// jsonb path when the layout lacks a column it reads.
std::string event_function(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                           const std::vector<PlacedColumn>& layout, const RingShape& ring,
                           const std::string& event) {
  std::string fallback = staged_rows(t, reads, event, std::nullopt);
  std::size_t n = places_needed(layout, named_columns(t, reads, event));
  if (n == 0) return function_sql(t, ring, event, "", fallback, "");
  auto typed = typed_reading(layout, n);
  return function_sql(t, ring, event, typed.guard, staged_rows(t, reads, event, typed.places),
                      fallback);
}

std::string create_trigger(const catalog::CapturedTable& t, const RingShape& ring,
                           const std::string& event) {
  std::string table = qualified(t.schema, t.name);
  std::string name = ident(trigger_name(ring.catalog_schema, event));
  std::string timing, referencing, level = "FOR EACH STATEMENT";
  if (event == "ins") timing = "INSERT", referencing = "REFERENCING NEW TABLE AS __trellis_new";
  if (event == "upd")
    timing = "UPDATE",
    referencing = "REFERENCING OLD TABLE AS __trellis_old NEW TABLE AS __trellis_new";
  if (event == "del") timing = "DELETE", referencing = "REFERENCING OLD TABLE AS __trellis_old";
  if (event == "trunc") timing = "TRUNCATE";
  return fmt::format(
      "CREATE TRIGGER {} AFTER {} ON {} {} {} EXECUTE FUNCTION {}(); "
      "ALTER TABLE {} ENABLE ALWAYS TRIGGER {}",
      name, timing, table, referencing, level, function_name(ring, t, event), table, name);
}

const std::vector<std::string> kEvents = {"ins", "upd", "del", "trunc"};

// The privileges the capture functions need, as CASE items naming each one
// their owner (pg_proc alias p) lacks: the catalog schema, every ring slot,
// the segment sequence.
std::vector<std::string> owner_lacks(const RingShape& ring) {
  auto lacks = [](const std::string& check, const std::string& what) {
    return fmt::format("CASE WHEN NOT {} THEN {} END", check, literal(what));
  };
  std::string schema = ident(ring.catalog_schema);
  std::vector<std::string> out = {lacks(
      fmt::format("has_schema_privilege(p.proowner, {}, 'USAGE')", literal(ring.catalog_schema)),
      "USAGE ON SCHEMA " + schema)};
  for (int slot = 0; slot < catalog::kRingSlots; ++slot) {
    std::string table = qualified(ring.catalog_schema, catalog::ring_slot_table(slot));
    out.push_back(
        lacks(fmt::format("has_table_privilege(p.proowner, {}, 'INSERT')", literal(table)),
              "INSERT ON TABLE " + table));
  }
  std::string sequence = qualified(ring.catalog_schema, "active_segment");
  out.push_back(
      lacks(fmt::format("has_sequence_privilege(p.proowner, {}, 'SELECT')", literal(sequence)),
            "SELECT ON SEQUENCE " + sequence));
  return out;
}

std::string trigger_audit(const catalog::CapturedTable& t, const RingShape& ring) {
  std::string events = join<std::string>(kEvents, ", ", [&](const std::string& e) {
    return fmt::format("({}, {}, to_regprocedure({}))", literal(e),
                       literal(trigger_name(ring.catalog_schema, e)),
                       literal(function_name(ring, t, e) + "()"));
  });
  return fmt::format(
      "SELECT e.event, e.tgname, tg.oid IS NOT NULL, tg.tgenabled::text, tg.tgfoid = e.fn, p.oid "
      "IS NOT NULL, coalesce(p.prosecdef, false), pg_get_userbyid(p.proowner), CASE WHEN p.oid IS "
      "NULL THEN '[]' ELSE to_json(ARRAY(SELECT __x FROM (VALUES {}) __v(__x) WHERE __x IS NOT "
      "NULL))::text END FROM (VALUES {}) e(event, tgname, fn) LEFT JOIN pg_trigger tg ON "
      "tg.tgrelid = "
      "to_regclass({}) AND tg.tgname = e.tgname LEFT JOIN pg_proc p ON p.oid = e.fn ORDER BY "
      "array_position(ARRAY['ins', 'upd', 'del', 'trunc'], e.event)",
      join<std::string>(owner_lacks(ring), ", ",
                        [](const std::string& c) { return "(" + c + ")"; }),
      events, literal(qualified(t.schema, t.name)));
}

}  // namespace

std::string move_guard_trigger(const catalog::CapturedTable& root, const RingShape& ring) {
  // Ends with the root's id, not the instance's schema, so that it matches
  // no pattern of the per-table triggers (trigger_like) and a partitioned
  // table that is itself captured can be attached under another.
  std::string tail = fmt::format("_move_{}", root.id);
  return ("trellis_" + ring.catalog_schema).substr(0, 63 - tail.size()) + tail;
}

// The body reads the row through to_jsonb, so a renamed or dropped key
// column yields a NULL element (staged anyway; the drain skips it and the
// drift check reports it) and never an error.
MoveGuardSql compile_move_guard(const catalog::CapturedTable& root,
                                const std::vector<WatchedColumn>& columns, const RingShape& ring) {
  std::string rows = fmt::format(
      "SELECT DISTINCT {}, c.k, {}, 'u' FROM (SELECT {} AS k FROM (VALUES "
      "(pg_catalog.to_jsonb(OLD)), (pg_catalog.to_jsonb(NEW))) __r(__j)) c",
      root.id, key_bucket("c.k", catalog::kRingBuckets), encode_key_from_json(root.key, "__r.__j"));
  MoveGuardSql sql;
  sql.function = function_sql(root, ring, "move", "", rows, "");
  std::string changed = join<WatchedColumn>(columns, " OR ", [](const WatchedColumn& c) {
    std::string name = ident(c.name);
    if (c.builtin_type) return fmt::format("OLD.{0} IS DISTINCT FROM NEW.{0}", name);
    return fmt::format("NOT pg_catalog.record_image_eq(ROW(OLD.{0}), ROW(NEW.{0}))", name);
  });
  std::string table = qualified(root.schema, root.name);
  std::string name = ident(move_guard_trigger(root, ring));
  sql.create_trigger = fmt::format(
      "DROP TRIGGER IF EXISTS {0} ON {1}; CREATE TRIGGER {0} BEFORE UPDATE ON {1} FOR EACH ROW "
      "WHEN ({2}) EXECUTE FUNCTION {3}(); ALTER TABLE {1} ENABLE ALWAYS TRIGGER {0}",
      name, table, changed, function_name(ring, root, "move"));
  return sql;
}

std::string move_guard_probe(const catalog::CapturedTable& root, const RingShape& ring) {
  return fmt::format(
      "SELECT coalesce(pg_catalog.bool_and(g.tgenabled IS NOT NULL AND g.tgenabled::text = 'A'), "
      "false) FROM pg_catalog.pg_partition_tree(to_regclass({})) t LEFT JOIN pg_catalog.pg_trigger "
      "g ON g.tgrelid = t.relid AND g.tgname = {} AND g.tgfoid = to_regprocedure({})",
      literal(qualified(root.schema, root.name)), literal(move_guard_trigger(root, ring)),
      literal(function_name(ring, root, "move") + "()"));
}

std::string partition_key_columns_sql() {
  return "WITH RECURSIVE tree(relid) AS (SELECT $1::oid UNION ALL SELECT i.inhrelid FROM "
         "pg_inherits i JOIN tree ON i.inhparent = tree.relid), keys AS (SELECT p.partrelid, "
         "p.partattrs::int2[] AS attrs, pg_get_expr(p.partexprs, p.partrelid) AS exprs FROM "
         "pg_partitioned_table p JOIN tree ON tree.relid = p.partrelid) SELECT r.attname, "
         "(SELECT b.typnamespace = 'pg_catalog'::regnamespace FROM pg_type t JOIN pg_type b ON "
         "b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END WHERE t.oid = "
         "r.atttypid) FROM pg_attribute r WHERE r.attrelid = $1::oid AND r.attnum > 0 AND NOT "
         "r.attisdropped AND "
         "EXISTS (SELECT 1 FROM keys k JOIN pg_attribute a ON a.attrelid = k.partrelid AND "
         "a.attname = r.attname WHERE a.attnum = ANY (k.attrs) OR strpos(k.exprs, "
         "quote_ident(a.attname)) > 0) ORDER BY r.attnum";
}

MergeMoveProbe merge_move_probe() {
  MergeMoveProbe probe;
  probe.run =
      "DO $probe$\n"
      "DECLARE seen text := 'error';\n"
      "BEGIN\n"
      "  BEGIN\n"
      "    CREATE TEMP TABLE trellis_move_probe (k int) PARTITION BY LIST (k);\n"
      "    CREATE TEMP TABLE trellis_move_probe_1 PARTITION OF trellis_move_probe FOR VALUES "
      "IN (1);\n"
      "    CREATE TEMP TABLE trellis_move_probe_2 PARTITION OF trellis_move_probe FOR VALUES "
      "IN (2);\n"
      "    INSERT INTO pg_temp.trellis_move_probe VALUES (1);\n"
      "    CREATE FUNCTION pg_temp.trellis_move_probe() RETURNS trigger LANGUAGE plpgsql AS "
      "$f$BEGIN PERFORM pg_catalog.set_config('trellis.move_probe', (SELECT "
      "pg_catalog.count(*) FROM n)::text, true); RETURN NULL; END$f$;\n"
      "    CREATE TRIGGER trellis_move_probe AFTER UPDATE ON pg_temp.trellis_move_probe "
      "REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION "
      "pg_temp.trellis_move_probe();\n"
      "    MERGE INTO pg_temp.trellis_move_probe p USING (VALUES (1)) s(k) ON p.k = s.k WHEN "
      "MATCHED THEN UPDATE SET k = 2;\n"
      "    seen := pg_catalog.current_setting('trellis.move_probe', true);\n"
      "    RAISE EXCEPTION 'trellis move probe done';\n"
      "  EXCEPTION WHEN OTHERS THEN NULL;\n"
      "  END;\n"
      "  PERFORM pg_catalog.set_config('trellis.move_probe_result', seen, false);\n"
      "END\n"
      "$probe$";
  probe.read = "SELECT pg_catalog.current_setting('trellis.move_probe_result')";
  return probe;
}

CaptureObjects capture_objects(const catalog::CapturedTable& t, const RingShape& ring) {
  CaptureObjects o;
  for (const auto& event : kEvents)
    o.drop.push_back(fmt::format("DROP TRIGGER IF EXISTS {} ON {}",
                                 ident(trigger_name(ring.catalog_schema, event)),
                                 qualified(t.schema, t.name)));
  for (const auto& event : kEvents)
    o.drop.push_back(fmt::format("DROP FUNCTION IF EXISTS {}()", function_name(ring, t, event)));
  if (!t.node) {  // a root's move guard, if it has one (a partition's is its root's clone)
    o.drop.push_back(fmt::format("DROP TRIGGER IF EXISTS {} ON {}",
                                 ident(move_guard_trigger(t, ring)), qualified(t.schema, t.name)));
    o.drop.push_back(fmt::format("DROP FUNCTION IF EXISTS {}()", function_name(ring, t, "move")));
  }
  std::string functions;
  for (const auto& event : kEvents)
    functions += (functions.empty() ? "" : ", ") +
                 fmt::format("to_regprocedure({})", literal(function_name(ring, t, event) + "()"));
  o.function_digest = fmt::format(
      "SELECT string_agg(p.proname || ':' || md5(p.prosrc), ',' ORDER BY p.proname) FROM pg_proc "
      "p WHERE p.oid IN ({})",
      functions);
  o.trigger_audit = trigger_audit(t, ring);
  o.trigger_like = "trellis\\_%\\_" + ring.catalog_schema;
  o.catalog_schema = ring.catalog_schema;
  // Triggers of this instance that call this table's own functions: a
  // partition moved here from another captured table still carries that
  // one's triggers, which stage under the other table's id.
  o.own_triggers = fmt::format(
      "SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass({}) AND tgfoid IN ({}) ORDER BY "
      "tgname",
      literal(qualified(t.schema, t.name)), functions);
  o.trigger_probe = fmt::format(
      "SELECT count(*) FROM pg_trigger WHERE tgrelid = {}::regclass AND tgname LIKE {} AND "
      "tgenabled = 'A' AND tgfoid IN ({})",
      literal(qualified(t.schema, t.name)), literal(o.trigger_like), functions);
  return o;
}

std::vector<PlacedColumn> capture_layout(const catalog::CapturedTable& t,
                                         const std::vector<Column>& reads,
                                         const std::vector<PlacedColumn>& columns) {
  std::size_t n = places_needed(columns, named_columns(t, reads, "upd"));
  return {columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(n)};
}

CaptureSql compile_capture(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                           const std::vector<PlacedColumn>& layout, const RingShape& ring) {
  CaptureSql sql;
  for (const auto& event : kEvents) {
    if (event == "trunc")
      sql.functions.push_back(
          function_sql(t, ring, event, "",
                       fmt::format("VALUES ({}, NULL::pg_catalog.text[], 0::pg_catalog.int2, "
                                   "'t'::pg_catalog.\"char\")",
                                   t.id),
                       "", t.node ? truncated_partition(t, ring) : ""));
    else
      sql.functions.push_back(event_function(t, reads, layout, ring, event));
    sql.create_triggers.push_back(create_trigger(t, ring, event));
  }
  sql.objects = capture_objects(t, ring);
  return sql;
}

}  // namespace trellis::compile
