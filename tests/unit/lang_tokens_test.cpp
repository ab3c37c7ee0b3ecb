// Tests for the tokenizer built on PostgreSQL's scanner and for the
// position helpers behind every parse error message.
#include <gtest/gtest.h>

#include <string>

#include "lang/tokens.hpp"
#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

TEST(LangTokens, ClassifiesTokensAndDropsComments) {
  const std::string text = "SELECT \"Q\"\"x\" -- c\n 'it''s' /* c */ 1.5 $1 <> key";
  auto tokens = tokenize(text);
  ASSERT_EQ(tokens.size(), 7u);
  EXPECT_EQ(tokens[0].kind, TokenKind::word);
  EXPECT_EQ(tokens[0].keyword, KeywordKind::reserved);
  EXPECT_EQ(tokens[1].kind, TokenKind::quoted_ident);
  EXPECT_EQ(tokens[1].text, "\"Q\"\"x\"");
  EXPECT_EQ(tokens[2].kind, TokenKind::string);
  EXPECT_EQ(tokens[2].text, "'it''s'");
  EXPECT_EQ(tokens[3].kind, TokenKind::number);
  EXPECT_EQ(tokens[4].kind, TokenKind::param);
  EXPECT_EQ(tokens[5].kind, TokenKind::punct);
  EXPECT_EQ(tokens[5].text, "<>");
  EXPECT_EQ(tokens[6].keyword, KeywordKind::unreserved);
  EXPECT_EQ(tokens[6].begin, text.size() - 3);
  EXPECT_EQ(tokens[6].end, text.size());
}

TEST(LangTokens, DollarAndEscapeStringsAreSingleTokens) {
  auto tokens = tokenize("$tag$ a; 'b' $tag$ E'\\'' $$;$$");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[0].text, "$tag$ a; 'b' $tag$");
  EXPECT_EQ(tokens[1].text, "E'\\''");
  EXPECT_EQ(tokens[2].text, "$$;$$");
}

TEST(LangTokens, NamesFoldLikePostgres) {
  auto tokens = tokenize("MixedCase \"Keep Case\" \"a\"\"b\" ÉtÉ");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(fold_name(tokens[0]), "mixedcase");
  EXPECT_EQ(fold_name(tokens[1]), "Keep Case");
  EXPECT_EQ(fold_name(tokens[2]), "a\"b");
  EXPECT_EQ(fold_name(tokens[3]), "ÉtÉ");  // only ASCII letters fold in UTF-8
}

TEST(LangTokens, NameRulesFollowKeywordCategories) {
  auto tokens = tokenize("plain key int select left \"select\"");
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_TRUE(is_name(tokens[0]));
  EXPECT_TRUE(is_name(tokens[1]));   // unreserved keyword
  EXPECT_TRUE(is_name(tokens[2]));   // column-name keyword
  EXPECT_FALSE(is_name(tokens[3]));  // reserved
  EXPECT_FALSE(is_name(tokens[4]));  // type/function-name keyword
  EXPECT_TRUE(is_name(tokens[5]));
  EXPECT_TRUE(is_word(tokens[3], "select"));
  EXPECT_FALSE(is_word(tokens[5], "select"));
}

TEST(LangTokens, LineAndColumnCountCharacters) {
  const std::string text = "ab\nçd é";
  EXPECT_EQ(line_col(text, 0), "1:1");
  EXPECT_EQ(line_col(text, 3), "2:1");
  EXPECT_EQ(line_col(text, text.find("é")), "2:4");
  EXPECT_EQ(char_pos_to_offset(text, 5), text.find("d"));
  EXPECT_EQ(char_pos_to_offset(text, 7), text.find("é"));
}

TEST(LangTokens, UnterminatedQuotesAreParseErrorsWithPosition) {
  for (const std::string text : {"a\n  'abc", "a\n  \"abc", "a\n  $$abc", "a\n  /* abc"}) {
    try {
      tokenize(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::parse);
      EXPECT_NE(std::string(error.what()).find("unterminated"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("at 2:3"), std::string::npos) << error.what();
    }
  }
}

TEST(LangTokens, RefusesNulBytesInsteadOfIgnoringWhatFollows) {
  const std::string text("a\0; DROP TABLE x", 16);
  try {
    tokenize(text);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("NUL byte at 1:2"), std::string::npos) << error.what();
  }
}

TEST(LangTokens, RefusesUnicodeEscapeLiterals) {
  EXPECT_THROW(tokenize("a || U&'\\0041'"), Error);
}

}  // namespace
}  // namespace trellis::lang
