"""Every method of a handle that runs the workers in this process
(staging=True, drain_threads=2), against real sources: statements, records,
convergence after writes, quarantine, rebuilds, self-checks, test_reset,
metrics and the ring; and a second handle without workers that reads."""

from __future__ import annotations

import dataclasses
import subprocess
from typing import Iterator

import pytest

import trellis
from support import Psql, wait_for

CATALOG = "trellis_py_flow"
TOTALS_QUERY = (
    "SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n FROM pyf_orders GROUP BY customer_id"
)
BIG_QUERY = "SELECT id, amount * 2 AS doubled FROM pyf_orders WHERE amount > 100"
REGION_QUERY = (
    "SELECT o.id, c.region AS region FROM pyf_orders o LEFT JOIN pyf_customers c "
    "ON c.id = o.customer_id"
)
LIFECYCLE = {"waiting_to_backfill", "backfilling", "catching_up", "live", "paused", "quarantined"}


@pytest.fixture(scope="module")
def t(database_url: str, db: Psql) -> Iterator[trellis.Trellis]:
    db.drop(CATALOG, "pyf_")
    db.run(
        """
        CREATE TABLE pyf_customers (id int PRIMARY KEY, region text NOT NULL);
        CREATE TABLE pyf_orders (id bigint PRIMARY KEY, customer_id int NOT NULL,
                                 amount numeric(12,2) NOT NULL);
        CREATE INDEX ON pyf_orders (customer_id);
        CREATE TABLE pyf_ratio_src (id int PRIMARY KEY, d int NOT NULL);
        CREATE TABLE pyf_lonely (id int PRIMARY KEY);
        CREATE TABLE pyf_locked (id int PRIMARY KEY, v int NOT NULL);
        INSERT INTO pyf_locked SELECT g, g FROM generate_series(1, 10) g;
        INSERT INTO pyf_customers SELECT g, 'r' || (g % 3) FROM generate_series(1, 20) g;
        INSERT INTO pyf_orders SELECT g, 1 + g % 20, g * 1.5 FROM generate_series(1, 2000) g;
        INSERT INTO pyf_ratio_src SELECT g, g FROM generate_series(1, 10) g;
        """
    )
    handle = trellis.connect(
        database_url, schema=CATALOG, staging=True, drain_threads=2, tick=0.05
    )
    with handle:
        handle.apply(
            "TRANSFORM pyf_totals FROM pyf_orders GROUP BY customer_id "
            "SELECT SUM(amount) AS total, COUNT(*) AS n"
        )
        handle.apply(
            "TRANSFORM pyf_big FROM pyf_orders SELECT amount * 2 AS doubled WHERE amount > 100"
        )
        yield handle


def converge(t: trellis.Trellis, timeout: float = 60) -> None:
    """Every transform that is not paused is built and live, and every
    change committed so far has reached the targets."""
    for status in t.status_all():
        if status.status not in ("paused", "quarantined"):
            t.await_live(status.target, timeout=timeout)
    token = t.watermark_token()
    assert t.await_converged(token, timeout=timeout), f"not converged within {timeout} s"


def test_apply_group_by_gives_an_applied_record(t: trellis.Trellis, db: Psql) -> None:
    applied = t.apply("TRANSFORM pyf_tmp FROM pyf_orders GROUP BY customer_id SELECT MAX(amount) AS top")
    assert isinstance(applied, trellis.Applied)
    assert applied.kind == "transform"
    assert applied.target == "public.pyf_tmp"
    assert applied.status in LIFECYCLE
    assert applied.added == () and applied.dropped == () and applied.altered == ()
    assert applied.note == ""
    converge(t)
    assert db.differences(
        "pyf_tmp", "SELECT customer_id, MAX(amount) AS top FROM pyf_orders GROUP BY customer_id"
    ) == 0


def test_pause_resume_and_drop(t: trellis.Trellis) -> None:
    paused = t.apply("PAUSE TRANSFORM pyf_tmp")
    assert (paused.kind, paused.status) == ("pause", "paused")
    assert t.status("pyf_tmp").status == "paused"
    with pytest.raises(trellis.ConflictError, match="RESUME"):
        t.await_live("pyf_tmp", timeout=5)
    resumed = t.apply("RESUME TRANSFORM pyf_tmp")
    assert resumed.kind == "resume" and resumed.status in LIFECYCLE - {"paused"}
    t.apply("PAUSE TRANSFORM pyf_tmp")
    dropped = t.apply("DROP TRANSFORM pyf_tmp")
    assert dropped.kind == "drop"
    assert t.status("pyf_tmp") is None


def test_await_live_waits_for_the_build(t: trellis.Trellis, db: Psql) -> None:
    applied = t.apply("TRANSFORM pyf_live FROM pyf_orders SELECT amount AS a WHERE id % 2 = 0")
    status = t.await_live(applied.target, timeout=60)
    assert isinstance(status, trellis.Status) and status.status == "live"
    assert db.differences("pyf_live", "SELECT id, amount AS a FROM pyf_orders WHERE id % 2 = 0") == 0
    with pytest.raises(trellis.NotFoundError, match="pyf_nowhere"):
        t.await_live("pyf_nowhere", timeout=1)
    t.apply("PAUSE TRANSFORM pyf_live")
    t.apply("DROP TRANSFORM pyf_live")


def test_a_capture_wait_shows_and_await_live_times_out(
    t: trellis.Trellis, db: Psql, database_url: str
) -> None:
    # A session that wrote to the source and has not committed holds a lock
    # that installing capture (a trigger) must wait for.
    writer = subprocess.Popen(
        [db.program, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", database_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdin is not None and writer.stdout is not None
        writer.stdin.write("BEGIN; INSERT INTO pyf_locked VALUES (100, 100); SELECT 'holding';\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "holding"
        t.apply("TRANSFORM pyf_locked_view FROM pyf_locked SELECT v + 1 AS w")
        status = wait_for(
            lambda: (lambda s: s if s.capture_wait else None)(t.status("pyf_locked_view")),
            60,
            "the capture wait to show",
        )
        wait = status.capture_wait
        assert isinstance(wait, trellis.CaptureWait)
        assert "pyf_locked" in (wait.table or "")
        assert wait.lock_mode and wait.blocking_pids and wait.since
        with pytest.raises(trellis.TimeoutError, match="pyf_locked_view") as caught:
            t.await_live("pyf_locked_view", timeout=0.3)
        assert isinstance(caught.value, TimeoutError) and caught.value.code == "timeout"
        # The library's own timeout error comes as the same class.
        with pytest.raises(trellis.TimeoutError, match="pyf_locked_view") as reset:
            t.test_reset(timeout=1)
        assert reset.value.code == "timeout"
        writer.stdin.write("COMMIT;\n")
        writer.stdin.close()
        assert writer.wait(timeout=60) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    status = t.await_live("pyf_locked_view", timeout=60)
    assert status.capture_wait is None
    assert db.differences("pyf_locked_view", "SELECT id, v + 1 AS w FROM pyf_locked") == 0


def test_a_statement_that_does_not_parse_is_a_parse_error(t: trellis.Trellis) -> None:
    with pytest.raises(trellis.ParseError) as caught:
        t.apply("TRANSFORM FROM")
    assert caught.value.code == "parse" and str(caught.value)


def test_a_refused_statement_is_a_validation_error_naming_the_object(t: trellis.Trellis) -> None:
    with pytest.raises(trellis.ValidationError) as caught:
        t.apply("TRANSFORM pyf_x FROM pyf_orders SELECT amount + no_such_column AS b")
    assert "no_such_column" in str(caught.value)
    assert caught.value.code == "validation"
    with pytest.raises(trellis.NotFoundError) as missing:
        t.apply("TRANSFORM pyf_x FROM pyf_missing SELECT a AS b")
    assert "pyf_missing" in str(missing.value)
    with pytest.raises(trellis.ValidationError, match="statement"):
        t.apply(None)  # type: ignore[arg-type]


def test_relationships_are_applied_and_listed(t: trellis.Trellis, db: Psql) -> None:
    applied = t.apply("RELATIONSHIP customer FROM pyf_orders.customer_id TO pyf_customers.id")
    assert applied.kind == "relationship"
    t.apply("TRANSFORM pyf_region_view FROM pyf_orders SELECT customer.region AS region")
    relationships = t.relationships()
    assert [r.name for r in relationships] == ["customer"]
    r = relationships[0]
    assert isinstance(r, trellis.Relationship)
    assert (r.from_table, r.from_column, r.to_table, r.to_column, r.cardinality) == (
        "public.pyf_orders",
        "customer_id",
        "public.pyf_customers",
        "id",
        "to_one",
    )
    assert r.created_at
    converge(t)
    assert db.differences("pyf_region_view", REGION_QUERY) == 0


def test_targets_equal_their_definitions_after_writes(t: trellis.Trellis, db: Psql) -> None:
    converge(t)
    assert db.differences("pyf_totals", TOTALS_QUERY) == 0
    assert db.differences("pyf_big", BIG_QUERY) == 0
    db.run(
        """
        UPDATE pyf_orders SET amount = amount + 1 WHERE id % 7 = 0;
        DELETE FROM pyf_orders WHERE id % 11 = 0;
        INSERT INTO pyf_orders VALUES (5000, 3, 999.99), (5001, 21, 5.00);
        UPDATE pyf_customers SET region = 'moved' WHERE id = 4;
        """
    )
    converge(t)
    assert db.differences("pyf_totals", TOTALS_QUERY) == 0
    assert db.differences("pyf_big", BIG_QUERY) == 0
    assert db.differences("pyf_region_view", REGION_QUERY) == 0


def test_status_records(t: trellis.Trellis) -> None:
    converge(t)
    status = t.status("pyf_totals")
    assert isinstance(status, trellis.Status)
    assert dataclasses.is_dataclass(status)
    assert status.target == "public.pyf_totals"
    assert status.status == "live" and status.live
    assert status.source_index_gaps == () and status.correcting == ()
    assert status.held_keys is None and status.backfill_failure is None
    assert status.paused_columns == () and status.upstream_waits == ()
    assert isinstance(status.build_rows_done, int) and isinstance(status.build_rows_estimate, int)
    with pytest.raises(dataclasses.FrozenInstanceError):
        status.status = "paused"  # type: ignore[misc]
    assert t.status("public.pyf_totals").target == status.target
    assert t.status("pyf_no_such_target") is None
    everything = t.status_all()
    assert all(isinstance(s, trellis.Status) for s in everything)
    assert {"public.pyf_totals", "public.pyf_big"} <= {s.target for s in everything}


def test_definitions(t: trellis.Trellis) -> None:
    definitions = {d.target: d for d in t.definitions()}
    totals = definitions["public.pyf_totals"]
    assert isinstance(totals, trellis.Definition)
    assert totals.shape == "aggregate"
    assert 'GROUP BY "customer_id"' in totals.statement
    assert totals.sources == ("public.pyf_orders",)
    assert totals.halt is None
    assert definitions["public.pyf_big"].shape == "one_to_one"


def test_alter_reports_the_fields_it_changed(t: trellis.Trellis, db: Psql) -> None:
    applied = t.apply("ALTER TRANSFORM pyf_big ADD amount + 1 AS plus_one")
    assert applied.kind == "alter"
    assert applied.added == ("plus_one",)
    converge(t)
    wait_for(lambda: t.status("pyf_big").live, 60, "pyf_big to be live after ALTER")
    assert db.differences(
        "pyf_big", "SELECT id, amount * 2 AS doubled, amount + 1 AS plus_one FROM pyf_orders WHERE amount > 100"
    ) == 0
    dropped = t.apply("ALTER TRANSFORM pyf_big DROP plus_one")
    assert dropped.dropped == ("plus_one",)
    wait_for(lambda: t.status("pyf_big").live, 60, "pyf_big to be live after ALTER DROP")


def test_a_paused_field_shows_in_status(t: trellis.Trellis) -> None:
    t.apply("PAUSE TRANSFORM pyf_big.doubled")
    status = t.status("pyf_big")
    assert [c.column for c in status.paused_columns] == ["doubled"]
    column = status.paused_columns[0]
    assert isinstance(column, trellis.PausedColumn)
    assert column.cause == "operator" and column.since
    definition = next(d for d in t.definitions() if d.target == "public.pyf_big")
    assert definition.paused_columns == ("doubled",)
    t.apply("RESUME TRANSFORM pyf_big.doubled")
    wait_for(lambda: t.status("pyf_big").paused_columns == (), 60, "the field to resume")


def test_watermark_tokens_and_a_wait_that_times_out(t: trellis.Trellis, db: Psql) -> None:
    first = t.watermark_token()
    assert isinstance(first, trellis.Token)
    db.run("INSERT INTO pyf_orders VALUES (6000, 2, 1.00)")
    second = t.watermark_token()
    assert second.segment >= first.segment
    assert t.await_converged(second, timeout=60) is True
    assert t.await_converged(second.segment, timeout=60) is True  # a bare int works too
    with pytest.raises(trellis.ValidationError, match="timeout"):
        t.await_converged(second, timeout="soon")  # type: ignore[arg-type]


def test_nothing_held_and_releasing_an_unheld_key(t: trellis.Trellis) -> None:
    page = t.sample_quarantined("pyf_totals", limit=10)
    assert isinstance(page, trellis.QuarantinePage)
    assert page.keys == ()
    with pytest.raises(trellis.NotFoundError) as caught:
        t.release_key("pyf_totals", "pyf_orders", "1")
    assert caught.value.code == "not_found"


def test_a_failing_key_is_held_sampled_and_released(t: trellis.Trellis, db: Psql) -> None:
    t.apply("TRANSFORM pyf_ratio FROM pyf_ratio_src GROUP BY id SELECT SUM(100 / d) AS r")
    converge(t)
    db.run("UPDATE pyf_ratio_src SET d = 0 WHERE id = 7")
    status = wait_for(
        lambda: (lambda s: s if s.held_keys else None)(t.status("pyf_ratio")),
        60,
        "the key of id 7 to be held",
    )
    assert isinstance(status.held_keys, trellis.HeldKeys) and status.held_keys.count == 1
    # A held change keeps the tokens covering it from converging.
    assert t.await_converged(t.watermark_token(), timeout=0.3) is False
    page = t.sample_quarantined("pyf_ratio", limit=5)
    assert len(page.keys) == 1
    key = page.keys[0]
    assert isinstance(key, trellis.QuarantinedKey)
    assert key.table == "public.pyf_ratio_src"
    assert "7" in key.key
    assert "division by zero" in key.error and key.sqlstate == "22012"
    assert key.charges >= 1 and key.held_at
    # The next page (from the cursor) is empty.
    assert t.sample_quarantined("pyf_ratio", limit=5, cursor=page.cursor).keys == ()
    # Still failing: releasing it is a conflict.
    with pytest.raises(trellis.ConflictError):
        t.release_key("pyf_ratio", key.table, key.key)
    db.run("UPDATE pyf_ratio_src SET d = 4 WHERE id = 7")
    t.release_key("pyf_ratio", key.table, key.key)
    assert t.status("pyf_ratio").held_keys is None
    converge(t)
    assert db.differences(
        "pyf_ratio", "SELECT id, SUM(100 / d) AS r FROM pyf_ratio_src GROUP BY id"
    ) == 0


def test_request_backfill(t: trellis.Trellis, db: Psql) -> None:
    readers = [d for d in t.definitions() if "public.pyf_orders" in d.sources and d.status != "paused"]
    assert t.request_backfill("pyf_orders") == len(readers) >= 2
    with pytest.raises(trellis.NotFoundError, match="pyf_lonely"):
        t.request_backfill("pyf_lonely")
    converge(t)
    wait_for(lambda: t.status("pyf_totals").live, 60, "pyf_totals to be live after the rebuild")
    assert db.differences("pyf_totals", TOTALS_QUERY) == 0


def test_self_check_of_a_converged_target(t: trellis.Trellis) -> None:
    converge(t)
    job = t.self_check("pyf_totals")
    assert isinstance(job, trellis.SelfCheckJob)
    assert job.target == "public.pyf_totals" and job.mode == "standard" and job.id > 0
    done = t.await_self_check(job.id, timeout=60)
    assert done.finished and done.state == "done"
    assert done.outcome == "converged", done
    assert done.divergences == () and done.truncated is False
    assert isinstance(done.checked_through, trellis.Token)
    assert done.rows_compared > 0 and done.finished_at
    again = t.self_check_job(job)
    assert again is not None and again.state == "done" and again.id == job.id
    assert t.self_check_job(10**15) is None
    with pytest.raises(trellis.NotFoundError):
        t.await_self_check(10**15, timeout=1)


def test_self_check_refusals(t: trellis.Trellis) -> None:
    with pytest.raises(trellis.ValidationError, match="sloppy"):
        t.self_check("pyf_totals", mode="sloppy")
    with pytest.raises(trellis.NotFoundError, match="pyf_nothing_here"):
        t.self_check("pyf_nothing_here")


def test_a_tampered_target_diverges_and_test_reset_repairs_it(t: trellis.Trellis, db: Psql) -> None:
    converge(t)
    db.run("UPDATE pyf_totals SET total = total + 1 WHERE customer_id = 5")
    job = t.self_check("pyf_totals", mode="strict", await_timeout=30)
    assert job.mode == "strict"
    done = t.await_self_check(job, timeout=60)
    assert done.outcome == "diverged", done
    assert len(done.divergences) == 1
    divergence = done.divergences[0]
    assert isinstance(divergence, trellis.Divergence)
    assert divergence.kind == "cell" and divergence.column == "total"
    assert divergence.key is not None and str(divergence.key["customer_id"]) == "5"
    assert divergence.persisted is not None and divergence.recomputed is not None
    assert float(divergence.persisted) == float(divergence.recomputed) + 1

    report = t.test_reset(timeout=60)
    assert isinstance(report, trellis.TestResetReport)
    assert "public.pyf_totals" in report.rebuilt
    assert report.seconds >= 0 and report.disrupted == ()
    assert db.differences("pyf_totals", TOTALS_QUERY) == 0


def test_metrics_ring_and_workers(t: trellis.Trellis) -> None:
    text = t.metrics_text()
    assert "trellis_" in text and "# TYPE" in text
    assert t.metrics_port() == 0
    backlog = t.ring_backlog()
    assert isinstance(backlog, trellis.RingBacklog)
    assert backlog.rows >= 0 and backlog.bytes > 0
    assert t.has_live_staging_worker() is True
    assert t.has_live_drain_workers() is True


def test_a_second_handle_without_workers_reads(t: trellis.Trellis, database_url: str, db: Psql) -> None:
    with trellis.connect(database_url, schema=CATALOG) as reader:
        assert reader.status("pyf_totals").status == "live"
        assert {s.target for s in reader.status_all()} == {s.target for s in t.status_all()}
        # The workers of the first handle serve both.
        assert reader.has_live_staging_worker() and reader.has_live_drain_workers()
        db.run("INSERT INTO pyf_orders VALUES (7000, 9, 70.00)")
        assert reader.await_converged(reader.watermark_token(), timeout=60)
        assert db.differences("pyf_totals", TOTALS_QUERY) == 0
        assert reader.metrics_port() == 0


@pytest.mark.skipif(
    not trellis.library_has("trellis_dump"), reason="this libtrellis lacks trellis_dump"
)
def test_dump(t: trellis.Trellis) -> None:
    script = t.dump()
    assert 'RELATIONSHIP "customer" FROM "public"."pyf_orders"."customer_id"' in script
    assert '"pyf_totals"' in script and 'GROUP BY "customer_id"' in script
    # A relationship comes before the transforms that read it.
    reader = script.index('TRANSFORM "public"."pyf_region_view"')
    assert script.index('RELATIONSHIP "customer"') < reader


@pytest.mark.skipif(trellis.library_has("trellis_dump"), reason="this libtrellis has trellis_dump")
def test_dump_without_the_function_says_so(t: trellis.Trellis) -> None:
    with pytest.raises(trellis.NotSupportedError, match="trellis_dump"):
        t.dump()
