// HTTP GET and Prometheus text lookup for tests; see http_get.hpp.
#include "support/http_get.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <sstream>
#include <vector>

namespace trellis::test {

HttpResponse http_get(const std::string& host, int port, const std::string& path) {
  HttpResponse out;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return out;
  }
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return out;
  }
  std::string raw;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  auto split = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/", 0) != 0 || split == std::string::npos) return out;
  out.status = std::stoi(raw.substr(raw.find(' ') + 1, 3));
  out.headers = raw.substr(0, split);
  out.body = raw.substr(split + 4);
  return out;
}

std::optional<double> sample(const std::string& text, const std::string& metric,
                             const std::vector<std::string>& labels) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(metric + "{", 0) != 0 && line.rfind(metric + " ", 0) != 0) continue;
    auto close = line.rfind('}');
    std::string label_text = close == std::string::npos ? "" : line.substr(0, close);
    bool all = true;
    for (const auto& l : labels) all = all && label_text.find(l) != std::string::npos;
    if (all) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

}  // namespace trellis::test
