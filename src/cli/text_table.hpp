// Plain-text tables with aligned columns, for status and demo output.
#pragma once

#include <string>
#include <vector>

namespace trellis::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  // Every column padded to its widest cell, two spaces apart; the last
  // column is not padded. Each line ends with '\n'.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text (code points; good enough for names and numbers).
size_t display_width(const std::string& text);

}  // namespace trellis::cli
