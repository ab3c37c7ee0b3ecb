// Which retypes of a read column count as catalog-only widenings (followed in
// place) and which are retypes that pause the readers.
#include <gtest/gtest.h>

#include "capture/widen.hpp"

namespace trellis::capture {

TEST(CatalogOnlyWidening, LongerOrUnboundedVarcharAndText) {
  EXPECT_TRUE(is_catalog_only_widening("character varying(10)", "character varying(50)"));
  EXPECT_TRUE(is_catalog_only_widening("character varying(10)", "character varying(10)"));
  EXPECT_TRUE(is_catalog_only_widening("character varying(10)", "character varying"));
  EXPECT_TRUE(is_catalog_only_widening("character varying(10)", "text"));
  EXPECT_TRUE(is_catalog_only_widening("character varying", "text"));
  EXPECT_FALSE(is_catalog_only_widening("character varying(50)", "character varying(10)"));
  EXPECT_FALSE(is_catalog_only_widening("character varying", "character varying(10)"));
  EXPECT_FALSE(is_catalog_only_widening("character varying(10)", "character(20)"));
  EXPECT_FALSE(is_catalog_only_widening("text", "character varying(10)"));
}

TEST(CatalogOnlyWidening, NumericPrecisionAtTheSameScale) {
  EXPECT_TRUE(is_catalog_only_widening("numeric(8,2)", "numeric(12,2)"));
  EXPECT_TRUE(is_catalog_only_widening("numeric(8,2)", "numeric"));
  EXPECT_FALSE(is_catalog_only_widening("numeric(8,2)", "numeric(12,3)"));  // rewrites values
  EXPECT_FALSE(is_catalog_only_widening("numeric(12,2)", "numeric(8,2)"));
  EXPECT_FALSE(is_catalog_only_widening("numeric", "numeric(12,2)"));
}

TEST(CatalogOnlyWidening, OtherRetypesAreNot) {
  EXPECT_FALSE(is_catalog_only_widening("integer", "bigint"));
  EXPECT_FALSE(is_catalog_only_widening("real", "double precision"));
  EXPECT_FALSE(is_catalog_only_widening("timestamp without time zone", "timestamp with time zone"));
  EXPECT_FALSE(is_catalog_only_widening("integer", "numeric(12,2)"));
}

}  // namespace trellis::capture
