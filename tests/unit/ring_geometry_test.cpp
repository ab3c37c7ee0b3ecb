// The ring's slot tables are created by the catalog migrations, which are
// byte-stable SQL files, while every statement over them is rendered from
// catalog/ring_geometry.hpp: the two must name the same tables.
#include "catalog/ring_geometry.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "catalog/migrate.hpp"

namespace trellis::catalog {
namespace {

std::set<std::string> geometry_slot_tables() {
  std::set<std::string> out;
  for (int s = 0; s < kRingSlots; ++s) out.insert(ring_slot_table(s));
  return out;
}

TEST(RingGeometry, MigrationsCreateExactlyTheSlotTables) {
  static const std::regex kCreate(R"(CREATE\s+TABLE\s+@schema@\.(ring_\w+)[\s(])",
                                  std::regex::icase);
  std::set<std::string> created;
  for (const auto& [version, sql] : embedded_migrations()) {
    std::string text(sql);
    for (std::sregex_iterator it(text.begin(), text.end(), kCreate), end; it != end; ++it)
      EXPECT_TRUE(created.insert((*it)[1]).second)
          << "migration " << version << " creates " << (*it)[1] << " again";
  }
  EXPECT_EQ(created, geometry_slot_tables());
}

TEST(RingGeometry, MigrationsDropOrRenameNoSlotTable) {
  static const std::regex kChange(R"((DROP|ALTER)\s+TABLE\s+(IF\s+EXISTS\s+)?@schema@\.ring_)",
                                  std::regex::icase);
  for (const auto& [version, sql] : embedded_migrations()) {
    std::string text(sql);
    EXPECT_FALSE(std::regex_search(text, kChange)) << "migration " << version;
  }
}

// Every slot table a migration mentions is one the geometry knows.
TEST(RingGeometry, MigrationsMentionOnlyKnownSlotTables) {
  static const std::regex kSlot(R"(@schema@\.(ring_\d+)\b)");
  auto known = geometry_slot_tables();
  for (const auto& [version, sql] : embedded_migrations()) {
    std::string text(sql);
    for (std::sregex_iterator it(text.begin(), text.end(), kSlot), end; it != end; ++it)
      EXPECT_TRUE(known.count((*it)[1])) << "migration " << version << " names " << (*it)[1];
  }
}

TEST(RingGeometry, SegmentsCycleThroughTheSlots) {
  for (int64_t seg = 1; seg <= 3 * kRingSlots; ++seg) {
    EXPECT_GE(ring_slot(seg), 0);
    EXPECT_LT(ring_slot(seg), kRingSlots);
    EXPECT_EQ(ring_slot(seg + kRingSlots), ring_slot(seg));
  }
  EXPECT_EQ(ring_slot_table(0), "ring_0");
}

}  // namespace
}  // namespace trellis::catalog
