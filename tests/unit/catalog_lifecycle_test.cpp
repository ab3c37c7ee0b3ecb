// The lifecycle table (catalog/transitions) against its documentation and
// against itself: docs/architecture.md lists exactly the operations, from-
// and to-statuses the code enforces; every operation's SQL guard names
// exactly its from-statuses and its SET list the status it leaves; a walk
// of every operation from every status agrees with allowed(); the build's
// phases run in the documented order; and the catalog words of every enum
// go both ways.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "catalog/states.hpp"
#include "catalog/transitions.hpp"
#include "trellis/error.hpp"
#include "trellis/status.hpp"

namespace trellis::catalog {

namespace {

const std::vector<Status> kAll = {Status::waiting_to_backfill, Status::backfilling, Status::live,
                                  Status::paused, Status::quarantined};

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(' ');
  auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line.substr(1));
  std::string cell;
  while (std::getline(in, cell, '|')) out.push_back(trim(cell));
  return out;
}

std::string statuses(const std::vector<Status>& list) {
  if (list.empty()) return "—";
  std::string out;
  for (auto s : list) out += (out.empty() ? "" : ", ") + std::string(name(s));
  return out;
}

// operation -> {from, to} as docs/architecture.md's lifecycle table gives them.
std::map<std::string, std::pair<std::string, std::string>> documented() {
  std::ifstream in(std::string(TRELLIS_DOCS_DIR) + "/architecture.md");
  EXPECT_TRUE(in) << "docs/architecture.md not found under " << TRELLIS_DOCS_DIR;
  std::map<std::string, std::pair<std::string, std::string>> rows;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("<!-- lifecycle table", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') {
      if (!rows.empty()) break;
      continue;
    }
    auto c = cells(line);
    if (c.size() < 3 || c[0] == "operation" || c[0].rfind("---", 0) == 0) continue;
    rows[c[0]] = {c[1], c[2]};
  }
  return rows;
}

}  // namespace

TEST(Lifecycle, DocumentedTableIsTheTableTheCodeEnforces) {
  auto docs = documented();
  ASSERT_FALSE(docs.empty()) << "no lifecycle table in docs/architecture.md";
  EXPECT_EQ(docs.size(), transitions().size());
  for (const auto& t : transitions()) {
    auto it = docs.find(std::string(t.name));
    ASSERT_NE(it, docs.end()) << "operation \"" << t.name << "\" missing from the docs";
    EXPECT_EQ(it->second.first, statuses(t.from)) << t.name;
    EXPECT_EQ(it->second.second, t.to ? std::string(name(*t.to)) : "—") << t.name;
  }
}

TEST(Lifecycle, EveryOperationIsInTheTableOnce) {
  std::set<int> ops;
  for (const auto& t : transitions()) EXPECT_TRUE(ops.insert(static_cast<int>(t.op)).second);
  EXPECT_EQ(ops.size(), static_cast<size_t>(Operation::drop) + 1);
  for (const auto& t : transitions()) EXPECT_EQ(&transition(t.op), &t);
}

TEST(Lifecycle, WalkEveryOperationFromEveryStatus) {
  for (const auto& t : transitions()) {
    std::string guard = from_condition(t.op, "t");
    for (auto s : kAll) {
      bool listed = std::find(t.from.begin(), t.from.end(), s) != t.from.end();
      EXPECT_EQ(allowed(t.op, s), listed) << t.name << " from " << name(s);
      // The SQL guard names the status exactly when the operation may start there.
      EXPECT_EQ(guard.find(literal(s)) != std::string::npos, listed)
          << t.name << " from " << name(s) << ": " << guard;
    }
    EXPECT_EQ(guard.rfind("t.status IN (", 0), 0u) << guard;
  }
}

TEST(Lifecycle, EachUpdateSetsTheStatusItLeaves) {
  for (const auto& t : transitions()) {
    if (t.op == Operation::define || t.op == Operation::drop) {
      EXPECT_TRUE(t.set.empty()) << t.name;
      continue;
    }
    ASSERT_TRUE(t.to) << t.name;
    EXPECT_NE(t.set.find("status = " + literal(*t.to)), std::string::npos)
        << t.name << ": " << t.set;
    // Exactly one status assignment.
    EXPECT_EQ(t.set.find("status = "), t.set.rfind("status = ")) << t.name;
  }
}

TEST(Lifecycle, OnlyResumeLeavesPausedOrQuarantined) {
  for (const auto& t : transitions()) {
    if (allowed(t.op, Status::quarantined) && t.to != Status::paused) {
      EXPECT_EQ(t.op, Operation::resume) << t.name;
    }
  }
  EXPECT_TRUE(allowed(Operation::resume, Status::paused));
  EXPECT_FALSE(allowed(Operation::resume, Status::live));
  EXPECT_FALSE(allowed(Operation::drop, Status::live));
  EXPECT_TRUE(allowed(Operation::drop, Status::paused));
}

TEST(Lifecycle, PausingReleasesTheBuildClaim) {
  for (auto op : {Operation::pause, Operation::pause_on_drift, Operation::halt})
    EXPECT_NE(transition(op).set.find("build_owner_pid = NULL"), std::string::npos);
}

TEST(Lifecycle, BuildPhasesRunInOrder) {
  using P = BuildPhase;
  EXPECT_EQ(first_phase(), P::ranges);
  for (bool sweep : {false, true}) {
    for (auto shape : {Shape::one_to_one, Shape::aggregate})
      EXPECT_EQ(next_phase(P::ranges, sweep, shape),
                shape == Shape::aggregate ? P::group_ranges : P::parked);
    EXPECT_EQ(next_phase(P::parked, sweep, Shape::one_to_one), std::nullopt);
    EXPECT_EQ(next_phase(P::group_ranges, sweep, Shape::aggregate), P::parked);
    EXPECT_EQ(next_phase(P::parked, sweep, Shape::aggregate), std::nullopt);
  }
  EXPECT_EQ(next_phase(P::source, false, Shape::one_to_one), std::nullopt);
  EXPECT_EQ(next_phase(P::source, true, Shape::one_to_one), P::target);
  EXPECT_EQ(next_phase(P::target, true, Shape::one_to_one), std::nullopt);
  EXPECT_EQ(next_phase(P::source, false, Shape::aggregate), P::groups);
  EXPECT_EQ(next_phase(P::source, true, Shape::aggregate), P::target);
  EXPECT_EQ(next_phase(P::target, true, Shape::aggregate), P::groups);
  EXPECT_EQ(next_phase(P::groups, true, Shape::aggregate), std::nullopt);
  EXPECT_EQ(next_phase(P::fields, false, Shape::one_to_one), std::nullopt);
}

TEST(Lifecycle, RunningIsBackfillingOrLive) {
  for (auto s : kAll)
    EXPECT_EQ(running(s), s == Status::backfilling || s == Status::live) << name(s);
  EXPECT_EQ(running("t"), "t.status IN ('backfilling', 'live')");
}

TEST(LifecycleWords, RoundTrip) {
  for (auto s : kAll) EXPECT_EQ(status_named(name(s)), s);
  for (auto s : {Shape::one_to_one, Shape::aggregate}) EXPECT_EQ(shape_named(name(s)), s);
  for (auto p : {BuildPhase::awaiting_capture, BuildPhase::ranges, BuildPhase::parked,
                 BuildPhase::source, BuildPhase::target, BuildPhase::groups, BuildPhase::fields})
    EXPECT_EQ(phase_named(name(p)), p);
  EXPECT_EQ(name(FailureKind::halt), "halt");
  EXPECT_EQ(literal(Status::live), "'live'");
}

// The public API's words are the catalog's.
TEST(LifecycleWords, PublicWordsAreTheCatalogs) {
  trellis::CaptureFailure f;
  f.kind = std::string(name(FailureKind::halt));
  EXPECT_TRUE(f.is(trellis::CaptureFailureKind::halt));
  EXPECT_FALSE(f.is(trellis::CaptureFailureKind::disruption));
  f.kind = std::string(name(FailureKind::disruption));
  EXPECT_TRUE(f.is(trellis::CaptureFailureKind::disruption));
  f.kind = std::string(name(FailureKind::capture));
  EXPECT_TRUE(f.is(trellis::CaptureFailureKind::capture));
  for (auto s : kAll) {
    trellis::Status st;
    st.status = std::string(name(s));
    ASSERT_TRUE(trellis::lifecycle_named(st.status)) << st.status;
    EXPECT_EQ(trellis::word(*trellis::lifecycle_named(st.status)), st.status);
  }
}

TEST(LifecycleWords, UnknownWordIsAnError) {
  EXPECT_THROW(status_named("catching_up"), Error);
  EXPECT_THROW(shape_named("join"), Error);
  EXPECT_THROW(phase_named(""), Error);
}

}  // namespace trellis::catalog
