// Internal to lang/: a cursor over one statement's tokens with the helpers
// the clause-level parser needs (keyword matching, names, error messages
// that say what was expected, what was found and where).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lang/tokens.hpp"

namespace trellis::lang {

class Cursor {
 public:
  Cursor(std::string_view text, std::vector<Token> tokens);

  std::string_view text() const { return text_; }
  const std::vector<Token>& tokens() const { return tokens_; }
  std::size_t pos() const { return pos_; }
  void seek(std::size_t pos) { pos_ = pos; }
  bool done() const { return pos_ >= tokens_.size(); }

  // The token `ahead` places on, or nullptr past the end.
  const Token* peek(std::size_t ahead = 0) const;
  bool at_word(std::string_view lower_word, std::size_t ahead = 0) const;
  bool accept_word(std::string_view lower_word);
  bool at_punct(std::string_view symbol) const;
  bool accept_punct(std::string_view symbol);
  void expect_punct(std::string_view symbol, std::string_view after);

  // Consumes `lower_word` or throws "expected WORD after <after> at L:C, found ...".
  void expect_word(std::string_view lower_word, std::string_view after);
  // Consumes one table/column name (folded) or throws naming `what`.
  std::string expect_name(std::string_view what, std::string_view after);
  // Throws unless every token has been consumed.
  void expect_end(std::string_view after) const;

  // Byte offset where the token at `index` starts (the text end past the last).
  std::size_t offset_of(std::size_t index) const;
  // "1:24" for a byte offset of the statement.
  std::string where(std::size_t offset) const { return line_col(text_, offset); }

  [[noreturn]] void fail_expected(std::string_view expected, std::string_view after) const;
  // Throws "<subject> at L:C<rest>".
  [[noreturn]] void fail_at(std::size_t offset, const std::string& subject,
                            const std::string& rest = "") const;

 private:
  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

// PostgreSQL truncates names beyond this many bytes; Trellis refuses them.
inline constexpr std::size_t kMaxNameBytes = 63;

}  // namespace trellis::lang
