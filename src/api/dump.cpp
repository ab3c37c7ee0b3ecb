// dump() (README, "Dump and restore"): the instance's relationships and
// transforms as statements, in the order that applies them, for `trellis
// restore` (or apply) against another database holding the same tables.
// Each transform is its stored statement, which define normalises (every
// name schema-qualified, relationship paths written as the joins they stand
// for) and ALTER TRANSFORM rewrites, so it is the definition as it is now.
// A relationship comes once the tables it links exist, a transform after
// every transform whose target it reads; otherwise in definition order.
// PAUSE statements for what an operator paused follow the definitions;
// failure states are noted in comments only.
#include <fmt/format.h>

#include <map>
#include <set>

#include "api/instance.hpp"
#include "base/sql_text.hpp"
#include "catalog/migrate.hpp"
#include "catalog/relationships.hpp"

namespace trellis::api {

namespace {

using catalog::TransformDef;

std::string statement_name(const std::string& schema, const std::string& table) {
  return base::ident(schema) + "." + base::ident(table);
}

std::string relationship_statement(const catalog::Relationship& r) {
  return fmt::format("RELATIONSHIP {} FROM {}.{} TO {}.{}", base::ident(r.name),
                     statement_name(r.from_schema, r.from_table), base::ident(r.from_col),
                     statement_name(r.to_schema, r.to_table), base::ident(r.to_col));
}

// The tables a transform reads (its source and each joined table).
std::vector<std::string> tables_read(const TransformDef& d) {
  std::vector<std::string> out{d.source_name()};
  for (const auto& j : d.joins) out.push_back(j.name());
  return out;
}

// A shell word for a pg_dump table or schema pattern naming exactly `name`
// (its parts double-quoted, so neither case nor pattern characters count).
std::string dump_pattern(const std::string& schema, const std::optional<std::string>& table) {
  std::string pattern = base::ident(schema);
  if (table) pattern += "." + base::ident(*table);
  std::string out = "'";
  for (char c : pattern) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The tables define created for `d`: its target and the side tables beside it.
std::vector<std::string> created_tables(const TransformDef& d) {
  std::vector<std::string> out{d.target_table};
  if (d.shape == catalog::Shape::aggregate) out.push_back(d.ledger_table());
  if (!d.rejecting_joins.empty()) out.push_back(d.rejected_table());
  return out;
}

// One entry of the script: a relationship or a transform, and the targets
// it needs defined first.
struct Entry {
  std::string statement;
  std::string note;  // a comment line before it ("" for none)
  std::set<std::string> needs;
};

// Orders `entries` (given in definition order) so each follows the
// transforms whose targets it needs: repeatedly the first entry whose
// needs are all defined, which keeps definition order where nothing
// forces another. `defines[i]` is the target entry i defines ("" for a
// relationship); a need no entry defines (a plain table) is met already.
std::vector<size_t> dependency_order(const std::vector<Entry>& entries,
                                     const std::vector<std::string>& defines) {
  std::set<std::string> pending(defines.begin(), defines.end());
  pending.erase("");
  std::vector<size_t> order;
  std::vector<bool> placed(entries.size(), false);
  while (order.size() < entries.size()) {
    size_t next = entries.size();
    for (size_t i = 0; i < entries.size() && next == entries.size(); ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (const auto& n : entries[i].needs)
        if (n != defines[i] && pending.count(n)) ready = false;
      if (ready) next = i;
    }
    // A cycle cannot be defined; should the catalog hold one anyway, the
    // rest follow in definition order.
    if (next == entries.size())
      for (size_t i = 0; i < entries.size() && next == entries.size(); ++i)
        if (!placed[i]) next = i;
    placed[next] = true;
    pending.erase(defines[next]);
    order.push_back(next);
  }
  return order;
}

std::string header(const Trellis::Impl& impl, pg::Connection& conn, size_t relationships,
                   const std::vector<TransformDef>& transforms) {
  auto at = conn.exec(
      "SELECT current_database(), to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')");
  std::string out = fmt::format(
      "-- Trellis definitions of instance \"{}\" (the catalog schema; target schema \"{}\";\n"
      "-- catalog format {}),\n"
      "-- dumped from database \"{}\" at {} UTC: {} relationship(s), {} "
      "transform(s).\n"
      "--\n"
      "-- The statements in the order that applies them: a relationship once the tables it\n"
      "-- links exist, a transform after every transform whose target it reads. Each transform\n"
      "-- is its definition as it is now (ALTER TRANSFORM included), every name qualified with\n"
      "-- its schema, so the script means the same whatever --target-schema applies it.\n"
      "--\n"
      "-- Into another database holding the same source tables (the targets must not exist):\n"
      "--   trellis restore FILE -d URL\n"
      "-- Restore defines a transform that reads another's target once that one is live\n"
      "-- (running workers itself when none run); `trellis apply -f FILE` cannot wait for that.\n",
      impl.options.schema, impl.options.target_schema, catalog::latest_format_version(),
      at.get(0, 0), at.get(0, 1), relationships, transforms.size());
  std::string excluded = "--exclude-schema=" + dump_pattern(impl.options.schema, std::nullopt);
  for (const auto& d : transforms)
    for (const auto& t : created_tables(d)) excluded += " -T " + dump_pattern(d.target_schema, t);
  out += fmt::format(
      "--\n"
      "-- A whole database with pg_dump: leave Trellis's catalog, targets and capture triggers\n"
      "-- out, restore the rest, then restore this script, which rebuilds the targets:\n"
      "--   pg_dump -Fc -f app.dump {} DB\n"
      "--   pg_restore -l app.dump | grep -v ' TRIGGER .* trellis_[a-z]*_{} ' > app.list\n"
      "--   pg_restore -L app.list -d NEWDB app.dump\n"
      "--   trellis restore FILE -d NEWDB\n",
      excluded, impl.options.schema);
  return out;
}

// `text` on one comment line (a failure's message may span lines).
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// Comments for what an operator's PAUSE does not describe: a failure that
// stopped the transform or froze a column.
std::string failure_notes(const TransformDef& d, const Status* s) {
  if (!s) return "";
  std::string out;
  if (s->status == "quarantined")
    out += fmt::format(
        "-- {} is quarantined ({} held keys) here: a failure, not part of the "
        "definition; the restored transform builds as usual.\n",
        d.target_name(), s->held_keys ? s->held_keys->count : 0);
  else if (s->status == "paused" && s->capture_failure)
    out += fmt::format(
        "-- {} is paused by a failure here ({}: {}): not part of the "
        "definition; the restored transform builds as usual.\n",
        d.target_name(), s->capture_failure->kind, one_line(s->capture_failure->error));
  for (const auto& c : s->paused_columns)
    if (c.cause != "operator")
      out += fmt::format(
          "-- field \"{}\" of {} is paused by the column fuse here ({}): not part "
          "of the definition.\n",
          c.column, d.target_name(), one_line(c.error));
  return out;
}

// PAUSE statements for what an operator paused.
std::vector<std::string> operator_pauses(const TransformDef& d, const Status* s) {
  std::vector<std::string> out;
  if (!s) return out;
  // Fields first: a field is paused while its transform runs.
  for (const auto& c : s->paused_columns)
    if (c.cause == "operator")
      out.push_back("PAUSE TRANSFORM " + statement_name(d.target_schema, d.target_table) + "." +
                    base::ident(c.column));
  if (s->status == "paused" && !s->capture_failure)
    out.push_back("PAUSE TRANSFORM " + statement_name(d.target_schema, d.target_table));
  return out;
}

}  // namespace

std::string dump(Trellis::Impl& impl) {
  auto conn = impl.pool.acquire();
  auto relationships = catalog::Relationships(impl.store.schema()).all(*conn);
  auto transforms = impl.store.transforms(*conn);
  std::map<std::string, Status> statuses;
  for (auto& s : read_status(impl, std::nullopt)) statuses[s.target] = s;

  std::vector<Entry> entries;
  std::vector<std::string> defines;
  for (const auto& r : relationships) {
    entries.push_back({relationship_statement(r),
                       "",
                       {r.from_schema + "." + r.from_table, r.to_schema + "." + r.to_table}});
    defines.push_back("");
  }
  std::vector<std::string> pauses;
  for (const auto& d : transforms) {
    auto found = statuses.find(d.target_name());
    const Status* s = found == statuses.end() ? nullptr : &found->second;
    auto reads = tables_read(d);
    entries.push_back({d.statement, failure_notes(d, s), {reads.begin(), reads.end()}});
    defines.push_back(d.target_name());
    for (auto& p : operator_pauses(d, s)) pauses.push_back(std::move(p));
  }

  std::string out = header(impl, *conn, relationships.size(), transforms);
  for (size_t i : dependency_order(entries, defines))
    out += "\n" + entries[i].note + entries[i].statement + ";\n";
  if (!pauses.empty()) {
    out +=
        "\n-- Paused by an operator (PAUSE TRANSFORM): paused again once defined. `trellis "
        "restore`\n-- waits until each is live first, so a paused target or field holds the "
        "values of the\n-- restore; RESUME TRANSFORM rebuilds it.\n";
    for (const auto& p : pauses) out += p + ";\n";
  }
  return out;
}

}  // namespace trellis::api
