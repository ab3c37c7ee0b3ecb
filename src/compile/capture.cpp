// Renders capture trigger functions. Rows are read through to_jsonb(alias.*)
// (".*" so a column named like the alias cannot shadow the row), so a
// renamed or dropped column yields NULL rather than an error: a capture
// trigger never fails the application's statement. A key with a NULL element
// is staged anyway; the drain skips it and schema checks report it.
#include "compile/capture.hpp"

#include <fmt/format.h>

#include "base/sql_text.hpp"
#include "catalog/ring_geometry.hpp"
#include "compile/key_codec.hpp"

namespace trellis::compile {

using base::ident;
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

std::string function_name(const RingShape& ring, int table_id, const std::string& event) {
  return qualified(ring.catalog_schema, fmt::format("capture_{}_{}", table_id, event));
}

std::string bucket_of(const std::string& key_expr, int buckets) {
  return fmt::format("((hashtext({}::text) & 2147483647) % {})::int2", key_expr, buckets);
}

// Row images of a transition table as jsonb, computed once per row.
std::string images(const std::string& transition) {
  return fmt::format("(SELECT to_jsonb(__row.*) AS __j FROM {} __row) __r", transition);
}

// Keys an UPDATE changed as far as any reader can see. Each new image counts
// +1 and each old image -1, grouped by key and the columns readers read: a
// group that does not cancel out is an image that differs, so its key (old or
// new, which covers an update that moves a key) is staged. Values compare as
// JSON text, so an update that only changes how a value is written (numeric
// 1 -> 1.00) still counts as a change. One pass over each transition table and
// one hash aggregate: the statement most single-row updates pay for.
std::string updated_keys(const catalog::CapturedTable& t, const std::vector<Column>& reads) {
  std::string columns = encode_key_from_json(t.key, "__r.__j");
  for (const auto& c : reads) columns += fmt::format(", (__r.__j -> {})::text", literal(c.name));
  std::string positions = "1";
  for (size_t i = 2; i <= reads.size() + 1; ++i) positions += fmt::format(", {}", i);
  std::string both =
      fmt::format("SELECT __r.__j, 1 AS __w FROM {} UNION ALL SELECT __r.__j, -1 FROM {}",
                  images("__trellis_new"), images("__trellis_old"));
  return fmt::format(
      "SELECT d.k FROM (SELECT {} FROM ({}) __r GROUP BY {} HAVING sum(__r.__w) <> 0) AS d(k) "
      "GROUP BY d.k",
      columns, both, positions);
}

// SELECT producing (tbl, key, bucket, op) rows for one event.
std::string staged_rows(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                        const std::string& event) {
  std::string keys =
      event == "upd" ? updated_keys(t, reads)
                     : fmt::format("SELECT {} AS k FROM {}", encode_key_from_json(t.key, "__r.__j"),
                                   images(event == "ins" ? "__trellis_new" : "__trellis_old"));
  return fmt::format("SELECT {}, c.k, {}, '{}' FROM ({}) c", t.id,
                     bucket_of("c.k", catalog::kRingBuckets),
                     event[0] == 'i' ? 'i' : (event[0] == 'd' ? 'd' : 'u'), keys);
}

// $tag$body$tag$ with a tag the body does not contain (column names appear
// in the body as literals and may hold anything).
std::string dollar_quote(const std::string& body) {
  std::string tag = "$trellis$";
  for (int n = 1; body.find(tag) != std::string::npos; ++n) tag = fmt::format("$trellis{}$", n);
  return tag + "\n" + body + tag;
}

// The body takes the transaction's xid before it reads the active slot (the
// fence relies on that order); an assignment, not PERFORM, so plpgsql runs it
// as a simple expression instead of a query. It then dispatches on the slot
// with static INSERTs, so each branch keeps a cached plan.
std::string function_sql(const catalog::CapturedTable& t, const RingShape& ring,
                         const std::string& event, const std::string& rows) {
  std::string branches;
  for (int s = 0; s < catalog::kRingSlots; ++s) {
    branches +=
        fmt::format("  {} s % {} = {} THEN INSERT INTO {} (tbl, key, bucket, op) {};\n",
                    s == 0 ? "IF" : "ELSIF", catalog::kRingSlots, s, ring_table(ring, s), rows);
  }
  std::string body = fmt::format(
      "DECLARE s bigint;\n  x xid8;\nBEGIN\n"
      "  x := pg_current_xact_id();\n"
      "  s := pg_sequence_last_value({});\n{}  END IF;\n  RETURN NULL;\nEND\n",
      literal(qualified(ring.catalog_schema, "active_segment")) + "::regclass", branches);
  return fmt::format(
      "CREATE OR REPLACE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
      "SET search_path = pg_catalog, pg_temp AS {}",
      function_name(ring, t.id, event), dollar_quote(body));
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
      name, timing, table, referencing, level, function_name(ring, t.id, event), table, name);
}

const std::vector<std::string> kEvents = {"ins", "upd", "del", "trunc"};

}  // namespace

CaptureSql compile_capture(const catalog::CapturedTable& t, const std::vector<Column>& reads,
                           const RingShape& ring) {
  CaptureSql sql;
  for (const auto& event : kEvents) {
    std::string rows = event == "trunc"
                           ? fmt::format("VALUES ({}, NULL::text[], 0::int2, 't'::\"char\")", t.id)
                           : staged_rows(t, reads, event);
    sql.functions.push_back(function_sql(t, ring, event, rows));
    sql.create_triggers.push_back(create_trigger(t, ring, event));
    sql.drop.push_back(fmt::format("DROP TRIGGER IF EXISTS {} ON {}",
                                   ident(trigger_name(ring.catalog_schema, event)),
                                   qualified(t.schema, t.name)));
  }
  for (const auto& event : kEvents)
    sql.drop.push_back(
        fmt::format("DROP FUNCTION IF EXISTS {}()", function_name(ring, t.id, event)));
  std::string functions;
  for (const auto& event : kEvents)
    functions +=
        (functions.empty() ? "" : ", ") +
        fmt::format("to_regprocedure({})", literal(function_name(ring, t.id, event) + "()"));
  sql.function_digest = fmt::format(
      "SELECT string_agg(p.proname || ':' || md5(p.prosrc), ',' ORDER BY p.proname) FROM pg_proc "
      "p WHERE p.oid IN ({})",
      functions);
  sql.trigger_probe = fmt::format(
      "SELECT count(*) FROM pg_trigger WHERE tgrelid = {}::regclass AND tgname LIKE {} AND "
      "tgenabled = 'A'",
      literal(qualified(t.schema, t.name)), literal("trellis\\_%\\_" + ring.catalog_schema));
  return sql;
}

}  // namespace trellis::compile
