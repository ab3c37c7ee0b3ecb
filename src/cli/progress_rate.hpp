// Rates for `trellis status --watch`: how fast a build's rows done or the
// ring's backlog move between two screens, smoothed over the screens seen,
// and the time left at that rate.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace trellis::cli {

class ProgressRates {
 public:
  using Clock = std::chrono::steady_clock;
  // Records `value` of `key` (a target's rows done, "ring backlog") at `at`.
  void observe(const std::string& key, double value, Clock::time_point at);
  // Units per second (negative when falling), once two samples are in.
  std::optional<double> per_second(const std::string& key) const;
  // The largest value seen for `key` (0 when none).
  double peak(const std::string& key) const;

 private:
  struct Track {
    double value = 0;
    double peak = 0;
    Clock::time_point at;
    std::optional<double> rate;
  };
  std::map<std::string, Track> tracks_;
};

// "42 s", "3 min 05 s", "2 h 10 min": the time `remaining` units take at
// `per_second`; nullopt when the rate does not move toward it.
std::optional<std::string> eta(double remaining, double per_second);

}  // namespace trellis::cli
