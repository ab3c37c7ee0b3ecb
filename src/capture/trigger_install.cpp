// See trigger_install.hpp.
#include "capture/trigger_install.hpp"

namespace trellis::capture {

void put_capture(pg::Connection& conn, const std::string& qualified,
                 const compile::CaptureSql& sql) {
  conn.exec("LOCK TABLE ONLY " + qualified + " IN SHARE ROW EXCLUSIVE MODE");
  for (const auto& f : sql.functions) conn.exec(f);
  if (conn.exec(sql.objects.trigger_probe).get_int(0, 0) < 4) {
    for (const auto& d : sql.objects.drop) conn.exec_script(d);
    for (const auto& f : sql.functions) conn.exec(f);
    for (const auto& t : sql.create_triggers) conn.exec_script(t);
  }
}

}  // namespace trellis::capture
