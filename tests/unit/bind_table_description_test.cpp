// The in-memory checks over a table description: which indexes count as
// leading with a set of columns or expressions (the GROUP BY source index
// rule).
#include <gtest/gtest.h>

#include "bind/table_description.hpp"

namespace trellis::bind {
namespace {

// An index over `columns`; nullopt stands for the expression (c + 1),
// whose key text pg_get_indexdef renders as "(c + 1)".
DescribedIndex index_on(std::vector<std::optional<std::string>> columns, std::size_t key_count,
                        bool partial = false) {
  DescribedIndex ix;
  for (const auto& c : columns) ix.key_texts.push_back(c ? "\"" + *c + "\"" : "(c + 1)");
  ix.columns = std::move(columns);
  ix.key_count = key_count;
  ix.partial = partial;
  return ix;
}

TableDescription with(std::vector<DescribedIndex> indexes) {
  TableDescription t;
  t.indexes = std::move(indexes);
  return t;
}

TEST(TableDescription, LeadingColumnsMatchInAnyOrder) {
  auto t = with({index_on({"b", "a", "c"}, 3)});
  EXPECT_TRUE(t.has_index_leading_with({"b"}));
  EXPECT_TRUE(t.has_index_leading_with({"a", "b"}));
  EXPECT_TRUE(t.has_index_leading_with({"c", "b", "a"}));
  EXPECT_FALSE(t.has_index_leading_with({"a"}));
  EXPECT_FALSE(t.has_index_leading_with({"a", "c"}));
  EXPECT_FALSE(t.has_index_leading_with({"a", "b", "c", "d"}));
}

TEST(TableDescription, PartialIndexesAndIncludedColumnsDoNotCount) {
  EXPECT_FALSE(with({index_on({"a"}, 1, true)}).has_index_leading_with({"a"}));
  auto included = with({index_on({"a", "b"}, 1)});  // (a) INCLUDE (b)
  EXPECT_TRUE(included.has_index_leading_with({"a"}));
  EXPECT_FALSE(included.has_index_leading_with({"a", "b"}));
}

TEST(TableDescription, ExpressionsMatchNoColumn) {
  auto t = with({index_on({std::nullopt, "v"}, 2)});  // ((c + 1), v)
  EXPECT_FALSE(t.has_index_leading_with({"v"}));
  EXPECT_FALSE(t.has_index_leading_with({"c", "v"}));
  EXPECT_FALSE(t.has_index_leading_with({"v", "v"}));
}

TEST(TableDescription, ExpressionsMatchByTheirKeyText) {
  auto t = with({index_on({std::nullopt, "v"}, 2)});  // ((c + 1), v)
  EXPECT_TRUE(t.has_index_leading_with({"(c + 1)"}));
  EXPECT_TRUE(t.has_index_leading_with({"v", "(c + 1)"}));
  EXPECT_FALSE(t.has_index_leading_with({"(c + 2)"}));
  // A column matches by its name, never by its key text.
  EXPECT_FALSE(with({index_on({"v"}, 1)}).has_index_leading_with({"\"v\""}));
}

TEST(TableDescription, RepeatedColumnsCountTwice) {
  auto t = with({index_on({"p", "p"}, 2)});
  EXPECT_TRUE(t.has_index_leading_with({"p"}));
  EXPECT_FALSE(t.has_index_leading_with({"p", "q"}));
}

TEST(TableDescription, NoColumnsNeverMatch) {
  EXPECT_FALSE(with({index_on({"a"}, 1)}).has_index_leading_with({}));
  EXPECT_FALSE(with({}).has_index_leading_with({"a"}));
}

TEST(TableDescription, FindsColumnsByExactName) {
  TableDescription t;
  t.columns.push_back({{"Id", "integer", "", true}, "int4", true, true, false, false});
  EXPECT_NE(t.find("Id"), nullptr);
  EXPECT_EQ(t.find("id"), nullptr);
}

}  // namespace
}  // namespace trellis::bind
