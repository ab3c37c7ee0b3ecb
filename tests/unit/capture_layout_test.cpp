// The layout capture's triggers name columns by, and when the drift check
// finds that a table's columns moved under the installed capture.
#include <gtest/gtest.h>

#include "capture/layout.hpp"

namespace trellis::capture {

namespace {

catalog::CapturedTable table_keyed_by_id() {
  catalog::CapturedTable t;
  t.id = 1;
  t.schema = "public";
  t.name = "src";
  t.key = {{"id", "integer", "", true}};
  return t;
}

const std::vector<catalog::Column> kReads = {{"a", "numeric", "", true},
                                             {"id", "integer", "", true}};

bind::TableDescription described(const std::vector<compile::PlacedColumn>& columns) {
  bind::TableDescription d;
  for (const auto& c : columns) {
    bind::DescribedColumn dc;
    dc.column = {c.name, "integer", "", true};
    dc.attnum = c.attnum;
    d.columns.push_back(dc);
  }
  return d;
}

catalog::CapturedTable installed_on(const std::vector<compile::PlacedColumn>& columns) {
  auto t = table_keyed_by_id();
  t.installed_signature = capture_signature(t, kReads, compile::capture_layout(t, kReads, columns));
  return t;
}

}  // namespace

TEST(CaptureLayout, LeadingColumnsUpToTheLastOneRead) {
  auto t = table_keyed_by_id();
  auto layout =
      compile::capture_layout(t, kReads, {{"id", 1}, {"unread", 2}, {"a", 4}, {"later", 5}});
  ASSERT_EQ(layout.size(), 3u);
  EXPECT_EQ(layout[1].name, "unread");
  EXPECT_EQ(layout[2].attnum, 4);
  EXPECT_TRUE(compile::capture_layout(t, kReads, {{"id", 1}, {"b", 2}}).empty())
      << "a column read is not in the table";
}

TEST(CaptureLayout, MovedOnlyWhenADropOrRenameChangesTheNamedPlaces) {
  std::vector<compile::PlacedColumn> columns = {{"id", 1}, {"unread", 2}, {"a", 3}};
  auto t = installed_on(columns);
  EXPECT_FALSE(layout_moved(t, described(columns)));
  EXPECT_FALSE(layout_moved(t, described({{"id", 1}, {"unread", 2}, {"a", 3}, {"added", 4}})))
      << "a column added at the end";
  EXPECT_TRUE(layout_moved(t, described({{"id", 1}, {"a", 3}}))) << "unread dropped";
  EXPECT_TRUE(layout_moved(t, described({{"id", 1}, {"x", 2}, {"a", 3}}))) << "unread renamed";
  EXPECT_TRUE(layout_moved(t, described({{"id", 1}, {"unread", 2}, {"a2", 3}}))) << "a renamed";

  t.installed_signature = "\"stale\"";
  EXPECT_FALSE(layout_moved(t, described({{"id", 1}, {"a", 3}}))) << "already marked stale";
}

TEST(CaptureLayout, TheMoveGuardIsPartOfTheSignature) {
  std::vector<compile::PlacedColumn> columns = {{"id", 1}, {"unread", 2}, {"a", 3}};
  auto t = table_keyed_by_id();
  auto layout = compile::capture_layout(t, kReads, columns);
  EXPECT_FALSE(installed_move_guard(installed_on(columns)));
  EXPECT_EQ(capture_signature(t, kReads, layout, {}), capture_signature(t, kReads, layout))
      << "no guard: the signature of a table without one";
  t.installed_signature = capture_signature(t, kReads, layout, {{"id", true}});
  EXPECT_TRUE(installed_move_guard(t));
  EXPECT_NE(*t.installed_signature,
            capture_signature(t, kReads, layout, {{"id", true}, {"a", true}}))
      << "a partition key column more reinstalls the guard";
  EXPECT_FALSE(layout_moved(t, described(columns))) << "the guard is not the layout";
}

// The guard's trigger: named so that it matches no per-table trigger
// pattern and keeps the root's id whole, firing only on the watched columns.
TEST(CaptureLayout, TheMoveGuardWatchesThePartitionKeyColumns) {
  auto t = table_keyed_by_id();
  compile::RingShape ring{std::string(60, 's')};
  std::string name = compile::move_guard_trigger(t, ring);
  EXPECT_LE(name.size(), 63u);
  EXPECT_EQ(name.substr(name.size() - 7), "_move_1");
  auto sql = compile::compile_move_guard(t, {{"id", true}, {"a b", false}}, {"trellis"});
  EXPECT_NE(sql.create_trigger.find("BEFORE UPDATE ON \"public\".\"src\" FOR EACH ROW WHEN "
                                    "(OLD.\"id\" IS DISTINCT FROM NEW.\"id\" OR NOT "
                                    "pg_catalog.record_image_eq(ROW(OLD.\"a b\"), "
                                    "ROW(NEW.\"a b\")))"),
            std::string::npos)
      << sql.create_trigger;
  EXPECT_NE(sql.function.find("RETURN NEW;"), std::string::npos) << sql.function;
  EXPECT_NE(sql.function.find("pg_catalog.to_jsonb(OLD)"), std::string::npos) << sql.function;
}

}  // namespace trellis::capture
