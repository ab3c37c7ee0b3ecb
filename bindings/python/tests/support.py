"""Helpers of the Python package's tests: psql over the test database, and
waiting for a condition with a deadline."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from typing import Callable, List, Optional, TypeVar

T = TypeVar("T")


class Psql:
    """Runs SQL through psql against one database."""

    def __init__(self, url: str) -> None:
        self.url = url
        program = os.environ.get("PSQL") or shutil.which("psql") or "/usr/bin/psql"
        self.program = program

    def run(self, sql: str) -> str:
        """Runs ``sql`` (one or more statements, stopping at the first
        error) and returns psql's unaligned, tuples-only output."""
        done = subprocess.run(
            [self.program, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.url],
            input=sql,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise AssertionError(f"psql failed ({done.returncode}) running:\n{sql}\n{done.stderr}")
        return done.stdout

    def value(self, query: str) -> str:
        """The one value ``query`` returns, as text."""
        lines = self.run(query).splitlines()
        assert len(lines) == 1, f"{query!r} returned {lines!r}"
        return lines[0]

    def rows(self, query: str) -> List[List[str]]:
        """The rows of ``query``, each a list of text values."""
        return [line.split("|") for line in self.run(query).splitlines() if line]

    def drop(self, catalog: str, prefix: str) -> None:
        """A fresh start for a module's instance: drops every table whose
        name starts with ``prefix`` (sources, targets and their ledger and
        reject tables) and the catalog schema ``catalog``."""
        pattern = prefix.replace("_", "\\_") + "%"
        self.run(
            "SET client_min_messages = warning;\n"
            "DO $$DECLARE r record; BEGIN\n"
            "  FOR r IN SELECT c.oid::regclass AS t FROM pg_class c\n"
            "           JOIN pg_namespace n ON n.oid = c.relnamespace\n"
            f"           WHERE c.relkind IN ('r', 'p') AND c.relname LIKE '{pattern}'\n"
            "             AND n.nspname = current_schema() LOOP\n"
            "    EXECUTE format('DROP TABLE IF EXISTS %s CASCADE', r.t);\n"
            "  END LOOP; END$$;\n"
            f"DROP SCHEMA IF EXISTS {catalog} CASCADE;"
        )

    def columns(self, table: str) -> List[str]:
        """The columns of ``table`` users see, in order: an aggregate's
        target also holds hidden columns (``__group``, ``__n``, ...), which
        are Trellis's bookkeeping and not part of the definition."""
        names = self.run(
            "SELECT quote_ident(attname) FROM pg_attribute "
            f"WHERE attrelid = '{table}'::regclass AND attnum > 0 AND NOT attisdropped "
            "AND attname NOT LIKE '\\_\\_%' ORDER BY attnum"
        ).split()
        assert names, f"{table} has no visible columns"
        return names

    def differences(self, target: str, query: str) -> int:
        """How many rows ``target`` (its visible columns) and ``query``
        differ by, either way (0: the target equals its definition run as
        a plain SELECT)."""
        visible = f"SELECT {', '.join(self.columns(target))} FROM {target}"
        return int(
            self.value(
                f"SELECT count(*) FROM (({visible} EXCEPT ALL {query}) "
                f"UNION ALL ({query} EXCEPT ALL {visible})) d"
            )
        )


def wait_for(probe: Callable[[], Optional[T]], timeout: float, what: str) -> T:
    """Calls ``probe`` until it returns something truthy (returned), for at
    most ``timeout`` seconds; fails naming ``what`` otherwise. Polls at a
    short, growing interval rather than sleeping a fixed time."""
    deadline = time.monotonic() + timeout
    pause = 0.02
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.5)
