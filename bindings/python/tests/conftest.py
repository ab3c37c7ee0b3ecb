"""Fixtures of the Python package's tests: a real PostgreSQL, and psql.

``database_url`` (session): ``$TRELLIS_DATABASE_URL`` when set; otherwise a
fresh PostgreSQL that the command line's ``trellis dev --dir DIR`` serves
(the project's testkit; the command is ``$TRELLIS_CLI``, else ``trellis`` on
PATH), stopped with SIGINT and removed at the end of the session.

``db`` (session): a :class:`Psql` over that database, for creating source
tables, writing rows and comparing a target with its definition. It runs
the ``psql`` program (``$PSQL``, else ``psql`` on PATH), so the tests need
no Python driver.

The tests create and drop tables and catalog schemas of their own names
(each module its own prefix and catalog schema): point
``TRELLIS_DATABASE_URL`` only at a throwaway database.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from typing import IO, Iterator, Optional

import pytest
from support import Psql

URL_PREFIX = "export TRELLIS_DATABASE_URL='"
START_TIMEOUT = 180.0  # seconds for initdb, start and the catalog


def _cli() -> str:
    cli = os.environ.get("TRELLIS_CLI") or shutil.which("trellis")
    if not cli:
        pytest.fail(
            "no database to test against: set TRELLIS_DATABASE_URL, or TRELLIS_CLI to the "
            "trellis command (build/trellis) so that the tests start one with `trellis dev`",
            pytrace=False,
        )
    return cli


def _pump(stream: IO[str], lines: "queue.Queue[Optional[str]]") -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    existing = os.environ.get("TRELLIS_DATABASE_URL")
    if existing:
        yield existing
        return
    cli = _cli()
    # Not created here: the cluster may run as another user (`postgres`,
    # when the tests run as root), and the command makes it accessible.
    directory = os.path.join(tempfile.gettempdir(), f"trellis-py-{uuid.uuid4().hex[:12]}")
    stderr = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [cli, "dev", "--dir", directory],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    lines: "queue.Queue[Optional[str]]" = queue.Queue()
    threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()

    def failure(why: str) -> str:
        stderr.seek(0)
        return f"`{cli} dev --dir {directory}` {why}; its stderr:\n{stderr.read()}"

    def stop() -> None:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(directory, ignore_errors=True)
        stderr.close()

    url = None
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while url is None:
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(failure(f"printed no URL within {START_TIMEOUT:.0f} s"), pytrace=False)
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:  # stdout closed: the command ended
                process.wait(timeout=30)
                pytest.fail(failure(f"exited ({process.returncode}) before serving"), pytrace=False)
            line = line.strip()
            if line.startswith(URL_PREFIX) and line.endswith("'"):
                url = line[len(URL_PREFIX) : -1]
    except BaseException:
        stop()
        raise
    try:
        yield url
    finally:
        stop()


@pytest.fixture(scope="session")
def db(database_url: str) -> Psql:
    return Psql(database_url)
