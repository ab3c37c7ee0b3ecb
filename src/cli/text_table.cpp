// TextTable: column alignment for the CLI's tables.
#include "cli/text_table.hpp"

#include <algorithm>

namespace trellis::cli {

size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

std::string TextTable::render() const {
  std::vector<size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      text += cell;
      if (i + 1 < widths.size()) text += std::string(widths[i] - display_width(cell) + 2, ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  return out;
}

}  // namespace trellis::cli
