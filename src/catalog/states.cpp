// Catalog words of the lifecycle enums (states.hpp), both ways.
#include "catalog/states.hpp"

#include <array>
#include <utility>

#include "trellis/error.hpp"

namespace trellis::catalog {

namespace {

template <typename E, size_t N>
using Words = std::array<std::pair<E, std::string_view>, N>;

constexpr Words<Shape, 2> kShapes{
    {{Shape::one_to_one, "one_to_one"}, {Shape::aggregate, "aggregate"}}};
constexpr Words<Status, 5> kStatuses{{{Status::waiting_to_backfill, "waiting_to_backfill"},
                                      {Status::backfilling, "backfilling"},
                                      {Status::live, "live"},
                                      {Status::paused, "paused"},
                                      {Status::quarantined, "quarantined"}}};
constexpr Words<BuildPhase, 8> kPhases{{{BuildPhase::awaiting_capture, "awaiting_capture"},
                                        {BuildPhase::ranges, "ranges"},
                                        {BuildPhase::group_ranges, "group_ranges"},
                                        {BuildPhase::parked, "parked"},
                                        {BuildPhase::source, "source"},
                                        {BuildPhase::target, "target"},
                                        {BuildPhase::groups, "groups"},
                                        {BuildPhase::fields, "fields"}}};
constexpr Words<FailureKind, 3> kKinds{{{FailureKind::capture, "capture"},
                                        {FailureKind::halt, "halt"},
                                        {FailureKind::disruption, "disruption"}}};

template <typename E, size_t N>
std::string_view word_of(const Words<E, N>& words, E value) {
  for (const auto& [e, w] : words)
    if (e == value) return w;
  return "?";
}

template <typename E, size_t N>
E named(const Words<E, N>& words, std::string_view word, const char* what) {
  for (const auto& [e, w] : words)
    if (w == word) return e;
  throw Error(ErrorCode::internal,
              std::string("the catalog holds an unknown ") + what + " \"" + std::string(word) +
                  "\"; it was written by a newer Trellis, so upgrade this one");
}

std::string quoted(std::string_view word) {
  return "'" + std::string(word) + "'";
}

}  // namespace

std::string_view name(Shape shape) {
  return word_of(kShapes, shape);
}
std::string_view name(Status status) {
  return word_of(kStatuses, status);
}
std::string_view name(BuildPhase phase) {
  return word_of(kPhases, phase);
}
std::string_view name(FailureKind kind) {
  return word_of(kKinds, kind);
}

Shape shape_named(std::string_view word) {
  return named(kShapes, word, "transform shape");
}
Status status_named(std::string_view word) {
  return named(kStatuses, word, "transform status");
}
BuildPhase phase_named(std::string_view word) {
  return named(kPhases, word, "build phase");
}

std::string literal(Status status) {
  return quoted(name(status));
}
std::string literal(Shape shape) {
  return quoted(name(shape));
}
std::string literal(BuildPhase phase) {
  return quoted(name(phase));
}
std::string literal(FailureKind kind) {
  return quoted(name(kind));
}

}  // namespace trellis::catalog
