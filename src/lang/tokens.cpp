// Tokenizer for the statement language. It delegates lexing to PostgreSQL's
// scanner (pg_query_scan) so that every quoting and comment form behaves as
// in SQL, then classifies the tokens for the clause-level parser.
#include "lang/tokens.hpp"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include <cstdint>
#include <memory>

#include "trellis/error.hpp"

namespace trellis::lang {
namespace {

struct ScanResultDeleter {
  void operator()(PgQueryScanResult* result) const {
    pg_query_free_scan_result(*result);
    delete result;
  }
};

struct UnpackedDeleter {
  void operator()(PgQuery__ScanResult* scan) const {
    pg_query__scan_result__free_unpacked(scan, nullptr);
  }
};

[[noreturn]] void fail_at(std::string_view text, std::size_t offset, const std::string& what) {
  throw Error(ErrorCode::parse, what + " at " + line_col(text, offset));
}

KeywordKind keyword_kind(PgQuery__KeywordKind kind) {
  switch (kind) {
    case PG_QUERY__KEYWORD_KIND__UNRESERVED_KEYWORD:
      return KeywordKind::unreserved;
    case PG_QUERY__KEYWORD_KIND__COL_NAME_KEYWORD:
      return KeywordKind::col_name;
    case PG_QUERY__KEYWORD_KIND__TYPE_FUNC_NAME_KEYWORD:
      return KeywordKind::type_func_name;
    case PG_QUERY__KEYWORD_KIND__RESERVED_KEYWORD:
      return KeywordKind::reserved;
    default:
      return KeywordKind::none;
  }
}

bool is_comment(PgQuery__Token token) {
  return token == PG_QUERY__TOKEN__SQL_COMMENT || token == PG_QUERY__TOKEN__C_COMMENT;
}

// Classifies one scanned token; the scanner's own token codes separate the
// literal kinds, and the first character separates quoted from bare words.
TokenKind classify(PgQuery__Token token, std::string_view text) {
  switch (token) {
    case PG_QUERY__TOKEN__IDENT:
      return text.starts_with('"') ? TokenKind::quoted_ident : TokenKind::word;
    case PG_QUERY__TOKEN__SCONST:
    case PG_QUERY__TOKEN__BCONST:
    case PG_QUERY__TOKEN__XCONST:
      return TokenKind::string;
    case PG_QUERY__TOKEN__ICONST:
    case PG_QUERY__TOKEN__FCONST:
      return TokenKind::number;
    case PG_QUERY__TOKEN__PARAM:
      return TokenKind::param;
    default:
      return TokenKind::punct;
  }
}

// libpg_query reports wrong extents for U&'...' and U&"..." tokens, so
// offsets after them cannot be trusted; refuse the form outright.
void refuse_unicode_escapes(std::string_view text, const PgQuery__ScanToken& scanned) {
  if (scanned.token == PG_QUERY__TOKEN__USCONST || scanned.token == PG_QUERY__TOKEN__UIDENT) {
    fail_at(text, static_cast<std::size_t>(scanned.start),
            "Unicode escape literals (U&'...' or U&\"...\") are not supported; write the "
            "characters directly");
  }
}

Token make_token(std::string_view text, const PgQuery__ScanToken& scanned) {
  Token token;
  token.begin = static_cast<std::size_t>(scanned.start);
  token.end = static_cast<std::size_t>(scanned.end);
  token.text = text.substr(token.begin, token.end - token.begin);
  token.keyword = keyword_kind(scanned.keyword_kind);
  token.kind =
      token.keyword != KeywordKind::none ? TokenKind::word : classify(scanned.token, token.text);
  return token;
}

std::unique_ptr<PgQuery__ScanResult, UnpackedDeleter> scan(std::string_view text) {
  std::string input(text);
  std::unique_ptr<PgQueryScanResult, ScanResultDeleter> result(
      new PgQueryScanResult(pg_query_scan(input.c_str())));
  if (result->error != nullptr) {
    std::size_t offset = char_pos_to_offset(text, result->error->cursorpos);
    fail_at(text, offset, std::string(result->error->message));
  }
  auto* unpacked = pg_query__scan_result__unpack(
      nullptr, result->pbuf.len, reinterpret_cast<const uint8_t*>(result->pbuf.data));
  if (unpacked == nullptr) throw Error(ErrorCode::internal, "could not decode the scanner output");
  return std::unique_ptr<PgQuery__ScanResult, UnpackedDeleter>(unpacked);
}

bool is_utf8_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Offset of the first byte that does not start a well-formed UTF-8 sequence
// (overlong forms and surrogates included), or npos.
std::size_t first_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    auto b = static_cast<unsigned char>(text[i]);
    std::size_t len = b < 0x80           ? 1
                      : (b >> 5) == 0x6  ? 2
                      : (b >> 4) == 0xE  ? 3
                      : (b >> 3) == 0x1E ? 4
                                         : 0;
    if (len == 0 || i + len > text.size()) return i;
    uint32_t cp = len == 1 ? b : (b & (0x7F >> len));
    for (std::size_t k = 1; k < len; ++k) {
      if (!is_utf8_continuation(text[i + k])) return i;
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace

std::vector<Token> tokenize(std::string_view text) {
  // The scanner reads a C string; text after a NUL byte would be silently lost.
  if (std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    fail_at(text, nul, "unexpected NUL byte");
  }
  if (std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    fail_at(text, bad, "invalid UTF-8 byte sequence; statements must be UTF-8 text");
  }
  auto scanned = scan(text);
  std::vector<Token> tokens;
  tokens.reserve(scanned->n_tokens);
  for (std::size_t i = 0; i < scanned->n_tokens; ++i) {
    const PgQuery__ScanToken& token = *scanned->tokens[i];
    if (is_comment(token.token)) continue;
    refuse_unicode_escapes(text, token);
    tokens.push_back(make_token(text, token));
  }
  return tokens;
}

bool is_word(const Token& token, std::string_view lower_word) {
  if (token.kind != TokenKind::word || token.text.size() != lower_word.size()) return false;
  for (std::size_t i = 0; i < lower_word.size(); ++i) {
    char c = token.text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower_word[i]) return false;
  }
  return true;
}

bool is_name(const Token& token) {
  if (token.kind == TokenKind::quoted_ident) return true;
  return token.kind == TokenKind::word &&
         (token.keyword == KeywordKind::none || token.keyword == KeywordKind::unreserved ||
          token.keyword == KeywordKind::col_name);
}

std::string fold_name(const Token& token) {
  std::string name;
  if (token.kind == TokenKind::quoted_ident) {
    std::string_view inner = token.text.substr(1, token.text.size() - 2);
    for (std::size_t i = 0; i < inner.size(); ++i) {
      name.push_back(inner[i]);
      if (inner[i] == '"') ++i;  // a doubled quote stands for one
    }
    return name;
  }
  // PostgreSQL folds only ASCII letters in multi-byte encodings such as UTF-8.
  for (char c : token.text) name.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
  return name;
}

std::string line_col(std::string_view text, std::size_t offset) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if (!is_utf8_continuation(text[i])) {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

std::size_t char_pos_to_offset(std::string_view text, int char_pos) {
  int remaining = char_pos - 1;  // characters to skip
  std::size_t offset = 0;
  while (remaining > 0 && offset < text.size()) {
    ++offset;
    while (offset < text.size() && is_utf8_continuation(text[offset])) ++offset;
    --remaining;
  }
  return offset;
}

std::string describe(const Token* token) {
  if (token == nullptr) return "end of statement";
  return "\"" + std::string(token->text) + "\"";
}

}  // namespace trellis::lang
