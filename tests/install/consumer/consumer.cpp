// Uses an installed Trellis from C++: the facade, and trellis::Error thrown
// inside the shared library and caught here with its code.
#include <cstdlib>
#include <iostream>
#include <trellis/trellis.hpp>

int main() {
  const char* url = std::getenv("TRELLIS_DATABASE_URL");
  trellis::Options options;
  options.url = url ? url : "";
  options.schema = "consumer_cpp";
  auto t = trellis::Trellis::connect(options);
  try {
    t->apply("TRANSFORM x FROM no_such_table SELECT a AS b");
    std::cerr << "a transform over a missing table was accepted\n";
    return 1;
  } catch (const trellis::Error& e) {
    if (e.code() != trellis::ErrorCode::not_found) {
      std::cerr << "expected not_found, got " << trellis::to_string(e.code()) << ": " << e.what()
                << "\n";
      return 1;
    }
  }
  if (!t->status_all().empty() || t->status("x")) {
    std::cerr << "status lists a transform that was refused\n";
    return 1;
  }
  t->shutdown();
  std::cout << "consumer_cpp: " << t->definitions().size() << " definitions\n";
  return 0;
}
