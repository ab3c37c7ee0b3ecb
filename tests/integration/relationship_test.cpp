// Relationships through the API: what relationships() lists, what apply
// reports, that a transform reading a relationship stores the join it
// stands for (so a DROP RELATIONSHIP leaves it working, through a PAUSE and
// RESUME too), and that writers on both tables with drains running end with
// each target equal to its definition.
#include <random>
#include <thread>

#include "support/harness.hpp"

namespace trellis::test {

class Relationships : public TrellisTest {
 protected:
  void create_blog() {
    sql("CREATE TABLE r_users (id int PRIMARY KEY, name text);"
        "CREATE TABLE r_posts (id int PRIMARY KEY, author_id int, words int);"
        "CREATE INDEX ON r_posts (author_id);"
        "INSERT INTO r_users SELECT g, 'u' || g FROM generate_series(1, 20) g;"
        "INSERT INTO r_posts SELECT g, g % 23, g FROM generate_series(1, 60) g");
  }
};

TEST_F(Relationships, AreListedAndReadByTransformsThatOutliveTheirDrop) {
  create_blog();
  auto t = start(2);
  auto one = t->apply("RELATIONSHIP author FROM r_posts.author_id TO r_users.id");
  EXPECT_EQ(one.kind, "relationship");
  EXPECT_EQ(one.target, "public.r_posts.author");
  EXPECT_EQ(one.status, "to_one");
  auto many = t->apply("RELATIONSHIP posts FROM r_users.id TO r_posts.author_id");
  EXPECT_EQ(many.status, "to_many");
  auto listed = t->relationships();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].name, "author");
  EXPECT_EQ(listed[0].from_table, "public.r_posts");
  EXPECT_EQ(listed[0].from_column, "author_id");
  EXPECT_EQ(listed[0].to_table, "public.r_users");
  EXPECT_EQ(listed[0].to_column, "id");
  EXPECT_EQ(listed[0].cardinality, "to_one");
  EXPECT_EQ(listed[1].cardinality, "to_many");
  EXPECT_FALSE(listed[0].created_at.empty());

  t->apply("TRANSFORM r_named FROM r_posts SELECT author.name AS who, words AS words");
  t->apply("TRANSFORM r_counts FROM r_users SELECT name AS name, COUNT(posts.id) AS n");
  for (const auto& d : t->definitions())
    EXPECT_NE(d.statement.find("LEFT JOIN"), std::string::npos) << d.statement;
  await_status(*t, "r_named", "live");
  await_status(*t, "r_counts", "live");

  auto dropped = t->apply("DROP RELATIONSHIP r_users.posts");
  EXPECT_EQ(dropped.kind, "drop_relationship");
  EXPECT_EQ(t->relationships().size(), 1u);
  // Still maintained, and rebuilt from its stored statement on RESUME.
  t->apply("PAUSE TRANSFORM r_counts");
  sql("UPDATE r_posts SET author_id = 1 WHERE id <= 10; DELETE FROM r_users WHERE id = 2");
  t->apply("RESUME TRANSFORM r_counts");
  await_status(*t, "r_counts", "live");
  await_converged(*t);
  expect_oracle("r_named");
  expect_oracle("r_counts");
  // Posts 1..10 moved to user 1, which had posts 1, 24 and 47.
  EXPECT_EQ(query("SELECT n FROM r_counts WHERE id = 1").get_int(0, 0), 12);
}

TEST_F(Relationships, WritersOnBothSidesConvergeToTheDefinitions) {
  create_blog();
  auto t = start(3);
  t->apply("RELATIONSHIP author FROM r_posts.author_id TO r_users.id");
  t->apply("RELATIONSHIP posts FROM r_users.id TO r_posts.author_id");
  t->apply("TRANSFORM r_named FROM r_posts SELECT author.name AS who, words + 1 AS w");
  t->apply(
      "TRANSFORM r_totals FROM r_users SELECT upper(name) AS big_name, COUNT(posts.id) AS n, "
      "SUM(posts.words) AS words, MAX(posts.id) AS last");
  auto write = [&](int seed) {
    auto conn = pg::Connection::open(url_, {.search_path = "public"});
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> id(1, 30), kind(0, 5);
    for (int i = 0; i < 250; ++i) {
      std::string a = std::to_string(id(rng)), b = std::to_string(id(rng));
      std::string stmt;
      switch (kind(rng)) {
        case 0:
          stmt = "UPDATE r_posts SET author_id = " + b + " WHERE id = " + a;
          break;
        case 1:
          stmt = "INSERT INTO r_posts VALUES (" + a + "00, " + b + ", " + b +
                 ") ON CONFLICT (id) DO UPDATE SET words = r_posts.words + 1";
          break;
        case 2:
          stmt = "DELETE FROM r_posts WHERE id = " + a;
          break;
        case 3:
          stmt = "UPDATE r_users SET name = name || 'x' WHERE id = " + a;
          break;
        case 4:
          stmt = "DELETE FROM r_users WHERE id = " + a;
          break;
        default:
          stmt = "INSERT INTO r_users VALUES (" + a + ", 'n" + b + "') ON CONFLICT DO NOTHING";
      }
      conn->exec_script(stmt);
    }
  };
  std::thread during(write, 1);  // while the builds run
  await_status(*t, "r_named", "live");
  await_status(*t, "r_totals", "live");
  during.join();
  std::thread w1(write, 2), w2(write, 3);
  w1.join();
  w2.join();
  await_converged(*t);
  expect_oracle("r_named");
  expect_oracle("r_totals");
}

}  // namespace trellis::test
