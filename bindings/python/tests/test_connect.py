"""connect(): its options and their errors, the URL from the environment, the
handle's life (context manager, shutdown, close, garbage collection),
handles without workers and calls from several threads."""

from __future__ import annotations

import gc
import threading
import urllib.request
from typing import Iterator, List

import pytest

import trellis
from support import Psql, wait_for

CATALOG = "trellis_py_connect"
UNREACHABLE = "postgresql://127.0.0.1:1/none?connect_timeout=2"


@pytest.fixture(scope="module")
def url(database_url: str, db: Psql) -> Iterator[str]:
    db.drop(CATALOG, "pyc_")
    db.run(
        "CREATE TABLE pyc_items (id int PRIMARY KEY, v int NOT NULL);"
        "INSERT INTO pyc_items SELECT g, g FROM generate_series(1, 50) g;"
    )
    yield database_url


def test_an_unreachable_database_is_a_connectivity_error() -> None:
    with pytest.raises(trellis.ConnectivityError) as caught:
        trellis.connect(UNREACHABLE, schema=CATALOG)
    assert caught.value.code == "connectivity"
    assert isinstance(caught.value, trellis.TrellisError)


@pytest.mark.parametrize(
    "options, named",
    [
        ({"staging": "yes"}, "staging"),
        ({"drain_threads": "two"}, "drain_threads"),
        ({"pool_size": 1.5}, "pool_size"),
        ({"schema": 7}, "schema"),
        ({"metrics_address": ["x"]}, "metrics_address"),
        ({"build_range_rows": object()}, "build_range_rows"),
        ({"call_deadline": "soon"}, "call_deadline"),
        ({"tick": None}, "tick"),
        ({"drain_threads": 2**32 + 1}, "drain_threads"),
    ],
)
def test_an_option_of_the_wrong_type_is_a_validation_error_naming_it(
    url: str, options: dict, named: str
) -> None:
    with pytest.raises(trellis.ValidationError) as caught:
        trellis.connect(url, **options)
    assert named in str(caught.value)
    assert caught.value.code == "validation"


def test_url_none_reads_the_environment(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRELLIS_DATABASE_URL", UNREACHABLE)
    with pytest.raises(trellis.ConnectivityError):
        trellis.connect(schema=CATALOG)
    monkeypatch.setenv("TRELLIS_DATABASE_URL", url)
    with trellis.connect(schema=CATALOG) as t:
        assert t.status_all() == [] or all(isinstance(s, trellis.Status) for s in t.status_all())


def test_the_context_manager_closes_the_handle(url: str) -> None:
    with trellis.connect(url, schema=CATALOG) as t:
        assert not t.closed
        assert isinstance(t.status_all(), list)
    assert t.closed
    with pytest.raises(trellis.ValidationError, match="closed"):
        t.status_all()
    t.close()  # idempotent
    t.shutdown()  # a no-op once closed
    assert "closed" in repr(t)


def test_shutdown_is_idempotent_and_the_handle_stays_usable(url: str) -> None:
    t = trellis.connect(url, schema=CATALOG, drain_threads=1)
    try:
        wait_for(t.has_live_drain_workers, 30, "the drain thread to be alive")
        t.shutdown()
        t.shutdown()
        assert isinstance(t.status_all(), list)  # reconnects
    finally:
        t.close()
    t.close()


def test_a_handle_without_workers_sees_none_and_cannot_test_reset(url: str) -> None:
    with trellis.connect(url, schema=CATALOG) as t:
        assert t.has_live_staging_worker() is False
        assert t.has_live_drain_workers() is False
        with pytest.raises(trellis.ValidationError):
            t.test_reset(timeout=5)


def test_workers_stop_when_their_handle_is_collected(url: str) -> None:
    reader = trellis.connect(url, schema=CATALOG)
    try:
        workers = trellis.connect(url, schema=CATALOG, staging=True, drain_threads=1, tick=0.05)
        alive = lambda: reader.has_live_staging_worker() and reader.has_live_drain_workers()  # noqa: E731
        try:
            wait_for(alive, 30, "the workers of the other handle to be alive")
        except BaseException:
            workers.close()
            raise
        del workers
        gc.collect()
        wait_for(
            lambda: not reader.has_live_staging_worker() and not reader.has_live_drain_workers(),
            30,
            "the collected handle's workers to stop",
        )
        # The staging worker is free again: another handle may run it.
        with trellis.connect(url, schema=CATALOG, staging=True) as again:
            wait_for(again.has_live_staging_worker, 30, "the new staging worker to be alive")
    finally:
        reader.close()


def test_metrics_are_served_on_the_address_given(url: str) -> None:
    with trellis.connect(url, schema=CATALOG, metrics_address="127.0.0.1:0") as t:
        port = t.metrics_port()
        assert port > 0
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            body = response.read().decode()
        assert "trellis_" in body
    with trellis.connect(url, schema=CATALOG) as t:
        assert t.metrics_port() == 0


def test_calls_from_several_threads_and_a_concurrent_close(url: str, db: Psql) -> None:
    t = trellis.connect(url, schema=CATALOG, staging=True, drain_threads=1, tick=0.05)
    t.apply("TRANSFORM pyc_copy FROM pyc_items SELECT v * 10 AS v10")
    t.await_live("pyc_copy", timeout=60)
    failures: List[BaseException] = []
    closed_seen = threading.Event()
    started = threading.Barrier(9)
    rounds = [0]
    count_lock = threading.Lock()

    def caller() -> None:
        started.wait()
        try:
            while True:
                status = t.status("pyc_copy")
                assert status is not None and status.target == "public.pyc_copy"
                assert t.ring_backlog().bytes > 0
                assert isinstance(t.definitions()[0], trellis.Definition)
                with count_lock:
                    rounds[0] += 1
        except trellis.ValidationError as error:  # the handle was closed under us
            if "closed" not in str(error):
                failures.append(error)
            closed_seen.set()
        except BaseException as error:  # noqa: BLE001 (reported below)
            failures.append(error)

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for thread in threads:
        thread.start()
    started.wait()
    # Let the threads make calls, then close while they run.
    wait_for(lambda: rounds[0] >= 40, 60, "40 rounds of calls from 8 threads")
    t.close()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert failures == []
    assert closed_seen.is_set()
    assert db.differences("pyc_copy", "SELECT id, v * 10 AS v10 FROM pyc_items") == 0
