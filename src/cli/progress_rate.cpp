// Progress rates; see progress_rate.hpp. The rate is an exponential moving
// average (half the weight on the newest interval), so one slow second
// does not swing the ETA.
#include "cli/progress_rate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace trellis::cli {

void ProgressRates::observe(const std::string& key, double value, Clock::time_point at) {
  auto it = tracks_.find(key);
  if (it == tracks_.end()) {
    tracks_[key] = {value, value, at, std::nullopt};
    return;
  }
  Track& t = it->second;
  double seconds = std::chrono::duration<double>(at - t.at).count();
  if (seconds > 0) {
    double now = (value - t.value) / seconds;
    t.rate = t.rate ? 0.5 * *t.rate + 0.5 * now : now;
  }
  t.value = value;
  t.peak = std::max(t.peak, value);
  t.at = at;
}

std::optional<double> ProgressRates::per_second(const std::string& key) const {
  auto it = tracks_.find(key);
  return it == tracks_.end() ? std::nullopt : it->second.rate;
}

double ProgressRates::peak(const std::string& key) const {
  auto it = tracks_.find(key);
  return it == tracks_.end() ? 0 : it->second.peak;
}

std::optional<std::string> eta(double remaining, double per_second) {
  if (remaining <= 0) return "0 s";
  if (per_second <= 0 || !std::isfinite(per_second)) return std::nullopt;
  auto s = static_cast<int64_t>(std::ceil(remaining / per_second));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, (s % 3600) / 60);
}

}  // namespace trellis::cli
