// Parser of the scenario file format; see scenario_file.hpp.
#include "support/scenario_file.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace trellis::test::scenario {

namespace {

struct Line {
  int number = 0;
  std::string text;
};

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

bool blank(const std::string& s) {
  return trim(s).empty();
}
bool comment(const std::string& s) {
  return trim(s).starts_with("#");
}

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> out;
  int number = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back({number++, std::move(line)});
    if (end == text.size()) break;
    start = end + 1;
  }
  return out;
}

// Whitespace-separated words, each with the offset just past it.
std::vector<std::pair<std::string, size_t>> words(const std::string& s) {
  std::vector<std::pair<std::string, size_t>> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) out.emplace_back(s.substr(b, i - b), i);
  }
  return out;
}

int positive(const std::string& word, const std::string& what, const std::string& at) {
  try {
    size_t used = 0;
    int n = std::stoi(word, &used);
    if (used == word.size() && n > 0) return n;
  } catch (const std::exception&) {
  }
  throw FormatError(at + ": " + what + " must be a positive number, got '" + word + "'");
}

class RecordParser {
 public:
  RecordParser(const std::string& path, const std::vector<Line>& header_and_body)
      : path_(path), lines_(header_and_body) {}

  Record parse() {
    const Line& head = lines_.front();
    rec_.line = head.number;
    auto w = words(head.text);
    const std::string& cmd = w[0].first;
    if (cmd == "statement") return statement(w);
    if (cmd == "apply") return apply(w);
    if (cmd == "await") return await(w);
    if (cmd == "query") return query(w);
    if (cmd == "oracle") return targets_only(Kind::oracle, w, 1);
    if (cmd == "restart" && w.size() == 2 && w[1].first == "workers")
      return no_body(Kind::restart_workers);
    if (cmd == "workers" && w.size() == 2 && w[1].first == "off") return no_body(Kind::workers_off);
    if (cmd == "workers" && w.size() == 2 && w[1].first == "on") return no_body(Kind::workers_on);
    if (cmd == "concurrently") return concurrently(w);
    if (cmd == "status") return status(w);
    fail(head.number, "unknown record '" + head.text + "'");
  }

 private:
  using Words = std::vector<std::pair<std::string, size_t>>;

  [[noreturn]] void fail(int line, const std::string& problem) const {
    throw FormatError(path_ + ":" + std::to_string(line) + ": " + problem);
  }
  std::string at() const { return path_ + ":" + std::to_string(rec_.line); }

  // Body lines after the header, comments dropped.
  std::vector<std::string> body_lines() const {
    std::vector<std::string> out;
    for (size_t i = 1; i < lines_.size(); ++i)
      if (!comment(lines_[i].text)) out.push_back(lines_[i].text);
    return out;
  }

  std::string joined_body(const char* what) {
    std::string out;
    for (const auto& l : body_lines()) out += (out.empty() ? "" : "\n") + l;
    if (trim(out).empty()) fail(rec_.line, std::string(what) + " needs a body on the next lines");
    return out;
  }

  Record no_body(Kind kind) {
    rec_.kind = kind;
    if (!body_lines().empty())
      fail(rec_.line + 1, "this record takes no body; separate records with a blank line");
    return rec_;
  }

  Record statement(const Words& w) {
    if (w.size() >= 2 && w[1].first == "ok" && w.size() == 2) {
      rec_.kind = Kind::statement_ok;
    } else if (w.size() >= 2 && w[1].first == "error") {
      rec_.kind = Kind::statement_error;
      rec_.substring = trim(lines_.front().text.substr(w[1].second));
    } else {
      fail(rec_.line, "expected 'statement ok' or 'statement error <substring>'");
    }
    rec_.body = joined_body("statement");
    return rec_;
  }

  Record apply(const Words& w) {
    static const std::set<std::string> kCodes = {
        "parse", "validation", "connectivity", "conflict", "not_found", "timeout", "internal"};
    if (w.size() == 2 && w[1].first == "ok") {
      rec_.kind = Kind::apply_ok;
    } else if (w.size() >= 3 && w[1].first == "error") {
      rec_.kind = Kind::apply_error;
      rec_.error_code = w[2].first;
      if (!kCodes.count(rec_.error_code))
        fail(rec_.line, "unknown error code '" + rec_.error_code + "'");
      rec_.substring = trim(lines_.front().text.substr(w[2].second));
    } else {
      fail(rec_.line, "expected 'apply ok' or 'apply error <code> [<substring>]'");
    }
    rec_.body = joined_body("apply");
    return rec_;
  }

  Record await(const Words& w) {
    if (w.size() == 1) return no_body(Kind::await_converged);
    if (w[1].first == "live") return targets_only(Kind::await_live, w, 2);
    if (w[1].first == "status" && w.size() == 4) {
      rec_.targets = {w[2].first};
      rec_.word = w[3].first;
      return no_body(Kind::await_status);
    }
    fail(rec_.line, "expected 'await', 'await live <target>...' or 'await status <target> <word>'");
  }

  Record targets_only(Kind kind, const Words& w, size_t first) {
    if (w.size() <= first) fail(rec_.line, "name at least one target");
    for (size_t i = first; i < w.size(); ++i) rec_.targets.push_back(w[i].first);
    return no_body(kind);
  }

  Record status(const Words& w) {
    if (w.size() != 3) fail(rec_.line, "expected 'status <target> <word>'");
    rec_.targets = {w[1].first};
    rec_.word = w[2].first;
    return no_body(Kind::status);
  }

  Record concurrently(const Words& w) {
    if (w.size() != 3) fail(rec_.line, "expected 'concurrently <connections> <repeats>'");
    rec_.kind = Kind::concurrently;
    rec_.connections = positive(w[1].first, "connections", at());
    rec_.repeats = positive(w[2].first, "repeats", at());
    rec_.body = joined_body("concurrently");
    return rec_;
  }

  // Expected rows are taken verbatim (a row may start with '#'); only
  // trailing blanks are dropped.
  Record query(const Words& w) {
    rec_.kind = Kind::query;
    if (w.size() == 2 && w[1].first == "sort")
      rec_.sort = true;
    else if (w.size() != 1)
      fail(rec_.line, "expected 'query' or 'query sort'");
    size_t i = 1;
    std::string sql;
    for (; i < lines_.size() && trim(lines_[i].text) != "----"; ++i)
      if (!comment(lines_[i].text)) sql += (sql.empty() ? "" : "\n") + lines_[i].text;
    if (i == lines_.size()) fail(rec_.line, "query needs a '----' line before its expected rows");
    if (trim(sql).empty()) fail(rec_.line, "query needs SQL before '----'");
    rec_.body = sql;
    for (++i; i < lines_.size(); ++i) {
      std::string row = lines_[i].text;
      while (!row.empty() && (row.back() == ' ' || row.back() == '\t')) row.pop_back();
      rec_.expected.push_back(row);
    }
    return rec_;
  }

  const std::string& path_;
  const std::vector<Line>& lines_;
  Record rec_;
};

}  // namespace

File parse(std::string_view text, const std::string& path) {
  File file{path, {}};
  auto lines = split_lines(text);
  size_t i = 0;
  while (i < lines.size()) {
    if (blank(lines[i].text) || comment(lines[i].text)) {
      ++i;
      continue;
    }
    std::vector<Line> chunk;
    while (i < lines.size() && !blank(lines[i].text)) chunk.push_back(lines[i++]);
    file.records.push_back(RecordParser(path, chunk).parse());
  }
  return file;
}

File load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path + ": cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

std::string where(const File& file, const Record& record) {
  return file.path + ":" + std::to_string(record.line);
}

std::string test_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  for (char& c : stem) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) c = '_';
  }
  return stem.empty() ? "_" : stem;
}

}  // namespace trellis::test::scenario
