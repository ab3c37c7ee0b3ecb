-- Self-check audits (README, "Auditing a target"): one row per audit of a
-- target, a job any drain thread may take. A job walks the target page by
-- page in key order; each step (the start, one wait, one page) is short and
-- saves where it is, so a job whose backend is gone is taken over where it
-- stopped. At most one unfinished job per transform; a finished one stays
-- until the next audit of its target replaces it.
CREATE TABLE @schema@.self_check_jobs (
  id bigserial PRIMARY KEY,
  transform_id int NOT NULL REFERENCES @schema@.transforms (id) ON DELETE CASCADE,
  version int NOT NULL,                  -- the definition version audited
  mode text NOT NULL CHECK (mode IN ('standard', 'strict')),
  await_timeout_ms int NOT NULL,
  state text NOT NULL DEFAULT 'queued'
    CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  owner_pid int,
  owner_start timestamptz,
  step text NOT NULL DEFAULT 'start'
    CHECK (step IN ('start', 'await', 'compare', 'recheck_await', 'recheck')),
  page_lo text[],                        -- the page starts after this key (NULL: the first)
  page_hi text[],                        -- and ends at this one (NULL: the last page)
  awaiting bigint,                       -- the segment the wait is for
  await_until timestamptz,
  pending jsonb,                         -- a page's differences awaiting their re-check
  rows_compared bigint NOT NULL DEFAULT 0,
  divergences jsonb NOT NULL DEFAULT '[]',
  truncated bool NOT NULL DEFAULT false,
  outcome text CHECK (outcome IN ('converged', 'not_caught_up', 'not_live', 'diverged')),
  status text,                           -- the transform's status, for not_live
  detail text,                           -- why not caught up / not live, in a sentence
  checked_through bigint,                -- the token the audit was caught up with
  error text,                            -- why failed or cancelled
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE UNIQUE INDEX self_check_jobs_unfinished ON @schema@.self_check_jobs (transform_id)
  WHERE state IN ('queued', 'running');
