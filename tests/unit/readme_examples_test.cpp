// README's "Use from C" and "Use from Python" examples are the programs the
// test suite runs (examples/quickstart.c, bindings/python/examples/
// quickstart.py): each must appear in README.md verbatim, in its fence.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kRoot = std::string(TRELLIS_DOCS_DIR) + "/..";

void expect_in_readme(const std::string& fence, const std::string& example) {
  auto readme = read_file(kRoot + "/README.md");
  auto code = read_file(kRoot + "/" + example);
  ASSERT_FALSE(code.empty());
  EXPECT_NE(readme.find("```" + fence + "\n" + code + "```\n"), std::string::npos)
      << "README.md does not show " << example << " verbatim in a ```" << fence << " fence";
}

TEST(ReadmeExamples, UseFromCIsTheTestedQuickstart) {
  expect_in_readme("c", "examples/quickstart.c");
}

TEST(ReadmeExamples, UseFromPythonIsTheTestedQuickstart) {
  expect_in_readme("python", "bindings/python/examples/quickstart.py");
}

}  // namespace
