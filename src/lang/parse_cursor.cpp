// Token cursor for the clause-level statement parser; every error it raises
// names what was expected, what was found and the 1-based line:column.
#include "lang/parse_cursor.hpp"

#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

std::string upper(std::string_view word) {
  std::string out(word);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// Explains why a found keyword cannot stand where a name was expected.
std::string reserved_hint(const Token* token) {
  if (token == nullptr || token->kind != TokenKind::word || is_name(*token)) return "";
  return " (\"" + std::string(token->text) +
         "\" is a reserved word; write it in double quotes to use it as a name)";
}

}  // namespace

Cursor::Cursor(std::string_view text, std::vector<Token> tokens)
    : text_(text), tokens_(std::move(tokens)) {}

const Token* Cursor::peek(std::size_t ahead) const {
  std::size_t index = pos_ + ahead;
  return index < tokens_.size() ? &tokens_[index] : nullptr;
}

bool Cursor::at_word(std::string_view lower_word, std::size_t ahead) const {
  const Token* token = peek(ahead);
  return token != nullptr && is_word(*token, lower_word);
}

bool Cursor::accept_word(std::string_view lower_word) {
  if (!at_word(lower_word)) return false;
  ++pos_;
  return true;
}

bool Cursor::at_punct(std::string_view symbol) const {
  const Token* token = peek();
  return token != nullptr && token->kind == TokenKind::punct && token->text == symbol;
}

bool Cursor::accept_punct(std::string_view symbol) {
  if (!at_punct(symbol)) return false;
  ++pos_;
  return true;
}

void Cursor::expect_punct(std::string_view symbol, std::string_view after) {
  if (!accept_punct(symbol)) fail_expected("\"" + std::string(symbol) + "\"", after);
}

void Cursor::expect_word(std::string_view lower_word, std::string_view after) {
  if (!accept_word(lower_word)) fail_expected(upper(lower_word), after);
}

std::string Cursor::expect_name(std::string_view what, std::string_view after) {
  const Token* token = peek();
  if (token == nullptr || !is_name(*token)) {
    throw Error(ErrorCode::parse, "expected " + std::string(what) + " after " + std::string(after) +
                                      " at " + where(offset_of(pos_)) + ", found " +
                                      describe(token) + reserved_hint(token));
  }
  std::string name = fold_name(*token);
  if (name.size() > kMaxNameBytes) {
    fail_at(token->begin, "name " + describe(token),
            " is " + std::to_string(name.size()) + " bytes long; PostgreSQL names are at most " +
                std::to_string(kMaxNameBytes) + " bytes");
  }
  if (name.empty()) fail_at(token->begin, "a name cannot be empty");
  ++pos_;
  return name;
}

void Cursor::expect_end(std::string_view after) const {
  if (done()) return;
  throw Error(ErrorCode::parse, "unexpected " + describe(peek()) + " at " + where(offset_of(pos_)) +
                                    " after " + std::string(after) + "; expected end of statement");
}

std::size_t Cursor::offset_of(std::size_t index) const {
  if (index < tokens_.size()) return tokens_[index].begin;
  return tokens_.empty() ? text_.size() : tokens_.back().end;
}

void Cursor::fail_expected(std::string_view expected, std::string_view after) const {
  throw Error(ErrorCode::parse, "expected " + std::string(expected) + " after " +
                                    std::string(after) + " at " + where(offset_of(pos_)) +
                                    ", found " + describe(peek()));
}

void Cursor::fail_at(std::size_t offset, const std::string& subject,
                     const std::string& rest) const {
  throw Error(ErrorCode::parse, subject + " at " + where(offset) + rest);
}

}  // namespace trellis::lang
