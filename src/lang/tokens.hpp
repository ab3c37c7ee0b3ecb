// Tokens of the statement language, produced by PostgreSQL's own scanner
// (libpg_query), so quoting, comments and operators lex exactly as in SQL.
// Also the position helpers every parse error uses (1-based line:column).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trellis::lang {

enum class TokenKind {
  word,          // unquoted identifier or keyword
  quoted_ident,  // "Quoted"
  string,        // '...', E'...', $$...$$, B'...', X'...'
  number,
  param,  // $1
  punct,  // ( ) , . ; [ ] and every operator
};

// How PostgreSQL's grammar treats a word: plain identifiers and unreserved /
// column-name keywords may name tables and columns; the rest may not.
enum class KeywordKind { none, unreserved, col_name, type_func_name, reserved };

struct Token {
  TokenKind kind = TokenKind::punct;
  KeywordKind keyword = KeywordKind::none;
  std::size_t begin = 0;  // byte offsets into the scanned text
  std::size_t end = 0;
  std::string_view text;  // view into the scanned text
};

// Scans `text` with PostgreSQL's lexer. Comments are dropped. Throws
// trellis::Error(parse) with line:column for unterminated quotes or comments.
std::vector<Token> tokenize(std::string_view text);

// True for an unquoted word spelled `lower_word` in any letter case.
bool is_word(const Token& token, std::string_view lower_word);

// True when PostgreSQL would accept the token as a table or column name.
bool is_name(const Token& token);

// The name a token denotes, folded the PostgreSQL way: unquoted words to
// lower case, quoted identifiers unquoted with their case kept.
std::string fold_name(const Token& token);

// Renders "1:24" for a byte offset into `text` (line and code-point column).
std::string line_col(std::string_view text, std::size_t offset);

// Byte offset of the 1-based character position PostgreSQL reports in errors.
std::size_t char_pos_to_offset(std::string_view text, int char_pos);

// A token as quoted in messages: `"WHERE"`, or `end of statement` for none.
std::string describe(const Token* token);

}  // namespace trellis::lang
