// request_backfill (README, "Running against your database"): rebuild every transform that reads a
// table, in place — each goes back to `backfilling` and re-derives every source key and every key
// its target (or ledger) holds, in chunks, with the drain's own statements, while its target stays
// readable and live changes keep flowing. For when a target may have drifted from its source by
// means no capture sees (a restore of the target, a manual edit of it).
#include <fmt/format.h>

#include "api/instance.hpp"
#include "base/event_log.hpp"

namespace trellis::api {

int request_backfill(Trellis::Impl& impl, const std::string& table) {
  auto conn = impl.pool.acquire();
  auto [schema, name] = split_target(impl, table);
  auto not_read = [&] {
    return Error(ErrorCode::not_found,
                 fmt::format("no running transform reads {}.{}; `trellis status` lists the "
                             "transforms (paused ones rebuild with RESUME)",
                             schema, name));
  };
  auto source = impl.store.captured_table(*conn, schema, name);
  if (!source) throw not_read();
  auto rebuilt = impl.lifecycle.rebuild_readers_of(*conn, source->id);
  if (rebuilt.empty()) throw not_read();
  for (const auto& target : rebuilt)
    base::log_event(spdlog::level::info, "rebuilding", target,
                    {{"cause", "request_backfill"}, {"table", schema + "." + name}},
                    fmt::format("transform {} rebuilds in place: request_backfill of {}.{}", target,
                                schema, name));
  impl.store.notify_work(*conn);
  return static_cast<int>(rebuilt.size());
}

}  // namespace trellis::api
