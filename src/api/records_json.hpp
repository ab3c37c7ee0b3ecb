// The JSON form of the facade's records (include/trellis/): one rendering
// shared by `trellis ... --json` and the C interface (include/trellis/trellis.h),
// so a record reads the same from the command line, C and Python. Field names
// are the C++ records' field names; an empty hold-up is null, an empty list [].
#pragma once

#include <nlohmann/json.hpp>

#include "trellis/status.hpp"
#include "trellis/trellis.hpp"

namespace trellis::api {

using ojson = nlohmann::ordered_json;

// The status record's fields plus "target", "paused_columns",
// "upstream_waits", "build_rows_done" and "build_rows_estimate".
ojson status_json(const Status& status);
ojson applied_json(const Applied& applied);
ojson definition_json(const Definition& definition);
ojson relationship_json(const Relationship& relationship);
ojson quarantine_page_json(const QuarantinePage& page);
ojson test_reset_json(const TestResetReport& report);
ojson divergence_json(const Divergence& divergence);
// The job with its report's fields beside its own ("outcome", "divergences",
// ...; null until the job is done).
ojson self_check_job_json(const SelfCheckJob& job);

}  // namespace trellis::api
