// JSON (de)serialisation of resolved definitions for the catalog, and the
// one rendering of a definition's FROM clause (source and joins).
#include "catalog/definition.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/sql_text.hpp"

namespace trellis::catalog {

namespace {

nlohmann::json column_json(const Column& c) {
  return {
      {"name", c.name}, {"type", c.type}, {"collation", c.collation}, {"comparable", c.comparable}};
}

Column column_from(const nlohmann::json& j) {
  Column c;
  c.name = j.at("name").get<std::string>();
  c.type = j.at("type").get<std::string>();
  c.collation = j.value("collation", "");
  c.comparable = j.value("comparable", true);
  return c;
}

nlohmann::json field_json(const Field& f) {
  nlohmann::json j = {{"name", f.name}, {"sql", f.sql}, {"column", column_json(f.column)}};
  if (!f.incremental) return j;
  auto calls = nlohmann::json::array();
  for (const auto& c : f.calls)
    calls.push_back({{"begin", c.begin},
                     {"end", c.end},
                     {"kind", c.kind},
                     {"accumulator", c.accumulator},
                     {"column", c.column}});
  j["calls"] = calls;
  return j;
}

Field field_from(const nlohmann::json& j) {
  Field f;
  f.name = j.at("name");
  f.sql = j.at("sql");
  f.column = column_from(j.at("column"));
  if (!j.contains("calls")) return f;
  f.incremental = true;
  for (const auto& c : j.at("calls"))
    f.calls.push_back(
        {c.at("begin"), c.at("end"), c.at("kind"), c.at("accumulator"), c.value("column", "")});
  return f;
}

}  // namespace

bool TransformDef::group_is_expression(size_t i) const {
  return i < group_exprs.size() && !group_exprs[i].sql.empty();
}

bool TransformDef::any_incremental() const {
  for (const auto& f : fields)
    if (f.incremental) return true;
  return false;
}

bool TransformDef::any_recomputed() const {
  for (const auto& f : fields)
    if (!f.incremental) return true;
  return false;
}

std::vector<int> TransformDef::table_ids() const {
  std::vector<int> ids{source_table_id};
  for (const auto& j : joins)
    if (std::find(ids.begin(), ids.end(), j.table_id) == ids.end()) ids.push_back(j.table_id);
  return ids;
}

std::set<int> TransformDef::fanning_table_ids() const {
  std::set<int> ids;
  for (const auto& j : joins)
    if (j.fans) ids.insert(j.table_id);
  return ids;
}

bool TransformDef::reads_table(int table_id) const {
  auto ids = table_ids();
  return std::find(ids.begin(), ids.end(), table_id) != ids.end();
}

std::vector<Column> TransformDef::reads_of(int table_id) const {
  std::vector<Column> out;
  auto add = [&](const std::vector<Column>& cols) {
    for (const auto& c : cols)
      if (std::none_of(out.begin(), out.end(), [&](const Column& o) { return o.name == c.name; }))
        out.push_back(c);
  };
  if (table_id == source_table_id) add(reads);
  for (const auto& j : joins)
    if (j.table_id == table_id) add(j.reads);
  std::sort(out.begin(), out.end(),
            [](const Column& a, const Column& b) { return a.name < b.name; });
  return out;
}

nlohmann::json columns_to_json(const std::vector<Column>& cols) {
  auto arr = nlohmann::json::array();
  for (const auto& c : cols) arr.push_back(column_json(c));
  return arr;
}

std::vector<Column> columns_from_json(const nlohmann::json& j) {
  std::vector<Column> cols;
  for (const auto& c : j) cols.push_back(column_from(c));
  return cols;
}

bool TransformDef::paused(const std::string& field) const {
  return std::find(paused_columns.begin(), paused_columns.end(), field) != paused_columns.end();
}

bool TransformDef::identifies(const std::string& field) const {
  return std::find(identity.begin(), identity.end(), field) != identity.end();
}

nlohmann::json to_json(const TransformDef& d) {
  auto fields = nlohmann::json::array();
  for (const auto& f : d.fields) fields.push_back(field_json(f));
  auto accumulators = nlohmann::json::array();
  for (const auto& a : d.accumulators)
    accumulators.push_back({{"arg", a.arg_sql}, {"type", a.arg_type}, {"summed", a.summed}});
  nlohmann::json j = {{"target_schema", d.target_schema},
                      {"target_table", d.target_table},
                      {"source_schema", d.source_schema},
                      {"source_table", d.source_table},
                      {"alias", d.alias},
                      {"key", columns_to_json(d.key)},
                      {"reads", columns_to_json(d.reads)},
                      {"fields", fields},
                      {"shape", std::string(name(d.shape))},
                      {"group", columns_to_json(d.group)},
                      {"ledger", columns_to_json(d.ledger)},
                      {"accumulators", accumulators},
                      {"without_source_index", d.without_source_index},
                      {"group_key", d.compare_group_text ? "json_text" : "text_array"}};
  if (!d.group_exprs.empty()) {
    auto exprs = nlohmann::json::array();
    for (const auto& g : d.group_exprs)
      exprs.push_back(
          {{"sql", g.sql}, {"index_key", g.index_key}, {"joined_alias", g.joined_alias}});
    j["group_exprs"] = exprs;
  }
  if (!d.joins.empty()) {
    auto joins = nlohmann::json::array();
    for (const auto& jd : d.joins) {
      auto on = nlohmann::json::array();
      for (const auto& e : jd.on)
        on.push_back({{"column", e.column},
                      {"other_alias", e.other_alias},
                      {"other_column", e.other_column}});
      joins.push_back({{"left", jd.left_outer},
                       {"schema", jd.schema},
                       {"table", jd.table},
                       {"alias", jd.alias},
                       {"table_id", jd.table_id},
                       {"key", columns_to_json(jd.key)},
                       {"reads", columns_to_json(jd.reads)},
                       {"on", on},
                       {"fans", jd.fans},
                       {"held", jd.held}});
    }
    j["joins"] = joins;
  }
  if (!d.identity.empty()) j["identity"] = d.identity;
  if (!d.rejecting_joins.empty()) j["rejecting_joins"] = d.rejecting_joins;
  j["where"] = d.where_sql ? nlohmann::json(*d.where_sql) : nlohmann::json();
  return j;
}

TransformDef transform_from_json(const nlohmann::json& j) {
  TransformDef d;
  d.target_schema = j.at("target_schema");
  d.target_table = j.at("target_table");
  d.source_schema = j.at("source_schema");
  d.source_table = j.at("source_table");
  d.alias = j.at("alias");
  d.key = columns_from_json(j.at("key"));
  d.reads = columns_from_json(j.at("reads"));
  for (const auto& f : j.at("fields")) d.fields.push_back(field_from(f));
  for (const auto& a : j.value("accumulators", nlohmann::json::array()))
    d.accumulators.push_back({a.at("arg"), a.at("type"), a.at("summed")});
  if (j.contains("where") && !j.at("where").is_null()) d.where_sql = j.at("where");
  d.shape = shape_named(j.value("shape", std::string(name(Shape::one_to_one))));
  if (j.contains("group")) d.group = columns_from_json(j.at("group"));
  for (const auto& g : j.value("group_exprs", nlohmann::json::array()))
    d.group_exprs.push_back({g.at("sql"), g.at("index_key"), g.value("joined_alias", "")});
  for (const auto& jj : j.value("joins", nlohmann::json::array())) {
    JoinDef jd;
    jd.left_outer = jj.at("left");
    jd.schema = jj.at("schema");
    jd.table = jj.at("table");
    jd.alias = jj.at("alias");
    jd.table_id = jj.at("table_id");
    jd.key = columns_from_json(jj.at("key"));
    jd.reads = columns_from_json(jj.at("reads"));
    for (const auto& e : jj.at("on"))
      jd.on.push_back({e.at("column"), e.at("other_alias"), e.at("other_column")});
    jd.fans = jj.value("fans", false);
    jd.held = jj.value("held", false);
    d.joins.push_back(std::move(jd));
  }
  if (j.contains("ledger")) d.ledger = columns_from_json(j.at("ledger"));
  d.without_source_index = j.value("without_source_index", false);
  d.identity = j.value("identity", std::vector<std::string>{});
  d.rejecting_joins = j.value("rejecting_joins", std::vector<std::string>{});
  d.compare_group_text = j.value("group_key", std::string("text_array")) == "json_text";
  return d;
}

std::string on_condition(const JoinDef& j, const std::vector<JoinDef::Equality>& on) {
  std::string out;
  for (const auto& e : on)
    out +=
        fmt::format("{}{}.{} = {}.{}", out.empty() ? "" : " AND ", base::ident(j.alias),
                    base::ident(e.column), base::ident(e.other_alias), base::ident(e.other_column));
  return out;
}

std::string join_item(const JoinDef& j, bool left_outer) {
  return fmt::format(" {} {} AS {} ON {}", left_outer ? "LEFT JOIN" : "JOIN",
                     base::qualified(j.schema, j.table), base::ident(j.alias),
                     on_condition(j, j.on));
}

std::string fan_column_name(const JoinDef& j, const Column& c) {
  return j.alias + "_" + c.name;
}

std::string ledger_fan_column_name(const JoinDef& j, const Column& c) {
  return "__key." + j.alias + "." + c.name;
}

bool TransformDef::fans_out() const {
  return fanning_joins() > 0;
}

size_t TransformDef::fanning_joins() const {
  return std::count_if(joins.begin(), joins.end(), [](const JoinDef& j) { return j.fans; });
}

namespace {

// The key columns of each join `which` keeps, in FROM order, named by
// `name`.
std::vector<TransformDef::FanColumn> fan_columns(const std::vector<JoinDef>& joins,
                                                 std::string (*name)(const JoinDef&, const Column&),
                                                 bool JoinDef::*which = &JoinDef::fans) {
  std::vector<TransformDef::FanColumn> out;
  for (const auto& j : joins) {
    if (!(j.*which)) continue;
    for (const auto& k : j.key) {
      Column c = k;
      c.name = name(j, k);
      out.push_back({c, j.alias, k.name, j.left_outer});
    }
  }
  return out;
}

}  // namespace

std::vector<TransformDef::FanColumn> TransformDef::fan_key() const {
  return fan_columns(joins, fan_column_name);
}

std::vector<TransformDef::FanColumn> TransformDef::ledger_fan_key() const {
  return fan_columns(joins, ledger_fan_column_name);
}

std::vector<TransformDef::FanColumn> TransformDef::held_key() const {
  auto out = fan_columns(joins, ledger_fan_column_name, &JoinDef::held);
  for (auto& f : out) f.nullable = true;
  return out;
}

std::vector<Column> TransformDef::target_key() const {
  std::vector<Column> out = key;
  for (const auto& f : fan_key()) out.push_back(f.column);
  return out;
}

bool TransformDef::group_reads_join() const {
  return std::any_of(group_exprs.begin(), group_exprs.end(),
                     [](const GroupExpr& g) { return !g.joined_alias.empty(); });
}

std::string TransformDef::source_item() const {
  return base::qualified(source_schema, source_table) + " AS " + base::ident(alias);
}

std::string TransformDef::from_clause() const {
  std::string out = source_item();
  for (const auto& j : joins) out += join_item(j, j.left_outer);
  return out;
}

}  // namespace trellis::catalog
