// The SQL compile/ renders for a few definitions, against golden files, so a
// change to generated SQL shows in review as a diff of tests/unit/golden/.
// Each <name>.json is a resolved definition as the catalog stores it
// (transforms.definition); <name>.sql is every statement compile_transform
// and the oracle render for it, and capture.sql the capture triggers of the
// source both read. After an intended change, regenerate them with
//   TRELLIS_UPDATE_GOLDEN=1 ./build/unit_tests --gtest_filter='CompileGolden*'
// and review the diff.
#include <gtest/gtest.h>
#include <pg_query.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "catalog/definition.hpp"
#include "compile/capture.hpp"
#include "compile/oracle.hpp"
#include "compile/transform_sql.hpp"

namespace trellis::compile {

namespace {

const std::string kDir = std::string(TRELLIS_GOLDEN_DIR);

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

catalog::TransformDef definition(const std::string& name, int id) {
  auto text = read_file(kDir + "/" + name + ".json");
  EXPECT_FALSE(text.empty()) << "no " << name << ".json in " << kDir;
  auto def = catalog::transform_from_json(nlohmann::json::parse(text));
  def.id = id;
  def.source_table_id = 1;
  return def;
}

void section(std::string& out, const std::string& title, const std::string& sql) {
  out += "-- " + title + "\n" + (sql.empty() ? "(none)" : sql) + "\n\n";
}

void sections(std::string& out, const std::string& title, const std::vector<std::string>& list) {
  if (list.empty()) section(out, title, "");
  for (size_t i = 0; i < list.size(); ++i)
    section(out, title + " " + std::to_string(i + 1), list[i]);
}

std::string render(const catalog::TransformDef& def) {
  auto sql = compile_transform(def);
  std::string out;
  sections(out, "create", sql.create);
  sections(out, "ledger group index", sql.ledger.group_indexes);
  section(out, "ledger key index", sql.ledger.key_index);
  section(out, "ledger key missing", sql.ledger.key_missing);
  section(out, "ledger group indexes missing", sql.ledger.group_indexes_missing);
  sections(out, "drop", sql.drop);
  sections(out, "drain step", sql.steps);
  section(out, "page all held keys", sql.page_all_held_keys);
  section(out, "source chunk bound", sql.source_chunk_bound);
  section(out, "sweep chunk bound", sql.sweep_chunk_bound);
  section(out, "page source range", sql.page_source_range);
  section(out, "page sweep range", sql.page_sweep_range);
  sections(out, "build step", sql.build_steps);
  section(out, "range insert", sql.range_insert);
  section(out, "range rewrite", sql.range_rewrite);
  section(out, "group chunk bound", sql.group_chunk_bound);
  section(out, "page group range", sql.page_group_range);
  section(out, "group range bound", sql.group_range_bound);
  section(out, "group range insert", sql.group_range_insert);
  section(out, "group range rewrite", sql.group_range_rewrite);
  section(out, "group split bound", sql.group_split_bound);
  section(out, "group fold check", sql.group_fold_check);
  section(out, "group fold sample", sql.group_fold_sample);
  section(out, "fold range bound", sql.fold_range_bound);
  section(out, "fold range insert", sql.fold_range_insert);
  sections(out, "group step", sql.group_steps);
  section(out, "oracle select", sql.oracle_select);
  section(out, "oracle diff", oracle_diff_sql(def, 10));
  return out;
}

// Every statement of a rendering (the text between section headers) is
// valid PostgreSQL syntax, as PostgreSQL's own parser reads it.
void expect_parses(const std::string& rendering) {
  std::stringstream in(rendering);
  std::string line, title, statement;
  auto check = [&] {
    if (statement.empty() || statement == "(none)") return;
    PgQueryParseResult r = pg_query_parse(statement.c_str());
    EXPECT_EQ(r.error, nullptr) << title << ": " << (r.error ? r.error->message : "") << "\n"
                                << statement;
    pg_query_free_parse_result(r);
  };
  while (std::getline(in, line)) {
    if (line.rfind("-- ", 0) == 0) {
      check();
      title = line;
      statement.clear();
    } else if (!line.empty()) {
      statement += (statement.empty() ? "" : "\n") + line;
    }
  }
  check();
}

// Compares `actual` with golden file `file`, or rewrites it when asked.
void expect_golden(const std::string& file, const std::string& actual) {
  expect_parses(actual);
  std::string path = kDir + "/" + file;
  if (std::getenv("TRELLIS_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    return;
  }
  std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing; run with TRELLIS_UPDATE_GOLDEN=1";
  EXPECT_EQ(expected, actual) << "the SQL rendered for " << file
                              << " changed; if intended, regenerate with "
                                 "TRELLIS_UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace

TEST(CompileGolden, OneToOneWithWhere) {
  expect_golden("order_view.sql", render(definition("order_view", 1)));
}

TEST(CompileGolden, AggregateWithIncrementalAndRecomputedFields) {
  expect_golden("order_totals.sql", render(definition("order_totals", 2)));
}

// Every field is computed from running state: a page folds the deltas with
// one upsert instead of locking the groups and then updating them.
TEST(CompileGolden, AggregateOfRunningStateOnly) {
  expect_golden("order_counts.sql", render(definition("order_counts", 3)));
}

TEST(CompileGolden, CaptureOfTheSourceBothRead) {
  auto view = definition("order_view", 1);
  auto totals = definition("order_totals", 2);
  std::map<std::string, catalog::Column> reads;
  for (const auto* d : {&view, &totals})
    for (const auto& c : d->reads) reads.emplace(c.name, c);
  std::vector<catalog::Column> columns;
  for (const auto& [name, c] : reads) columns.push_back(c);
  catalog::CapturedTable table;
  table.id = 1;
  table.schema = "public";
  table.name = "orders";
  table.key = view.key;
  // The table's columns in attnum order: attnum 3 was dropped, created_at
  // comes after every column read.
  std::vector<PlacedColumn> placed = {{"id", 1},     {"customer_id", 2}, {"status", 4},
                                      {"amount", 5}, {"note", 6},        {"created_at", 7}};
  auto sql =
      compile_capture(table, columns, capture_layout(table, columns, placed), RingShape{"trellis"});
  std::string out;
  sections(out, "function", sql.functions);
  sections(out, "trigger", sql.create_triggers);
  sections(out, "drop", sql.objects.drop);
  section(out, "trigger probe", sql.objects.trigger_probe);
  section(out, "function digest", sql.objects.function_digest);
  expect_golden("capture.sql", out);
}

}  // namespace trellis::compile
