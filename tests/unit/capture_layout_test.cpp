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

}  // namespace trellis::capture
