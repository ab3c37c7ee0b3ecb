"""The Trellis handle: :func:`connect` and the :class:`Trellis` methods.

Each method is one call of the C interface (``include/trellis/trellis.h``):
arguments are checked and encoded (text as UTF-8, seconds as milliseconds),
a failed call's ``trellis_error`` becomes the :mod:`trellis.errors` exception
for its code (and is freed once), and the JSON text a call returns is freed
once and parsed into the records of :mod:`trellis.records`.

Threads: every method of one handle may be called from several threads at
once (the library serves API calls from a pool of connections, and ctypes
releases the GIL while a call runs), except :meth:`Trellis.shutdown` and
:meth:`Trellis.close`, which the C interface forbids to overlap another call
on the same handle. This class enforces that: ``shutdown()`` and ``close()``
wait until the calls in progress have returned, and calls made meanwhile
wait for them. After ``close()`` every method raises
:class:`~trellis.ValidationError` ("the handle is closed").
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import threading
from ctypes import POINTER, byref, c_char, c_int, c_int64, c_void_p
from types import TracebackType
from typing import Any, Dict, List, Optional, Type, Union

from . import _library
from .errors import (
    TrellisError,
    ValidationError,
    error_for,
)
from .records import (
    Applied,
    Definition,
    QuarantinePage,
    Relationship,
    RingBacklog,
    SelfCheckJob,
    Status,
    TestResetReport,
    Token,
)

__all__ = ["connect", "Trellis", "DATABASE_URL_ENV"]

#: The environment variable :func:`connect` reads when ``url`` is None (the
#: command line reads it too); when it is unset as well, libpq's own defaults
#: (the ``PG*`` variables, the local socket) apply.
DATABASE_URL_ENV = "TRELLIS_DATABASE_URL"

Seconds = Union[int, float]


def _seconds_to_ms(value: Any, name: str) -> int:
    """Seconds (int or float) as whole milliseconds; anything else is a
    ValidationError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(f"{name} must be a number of seconds, not {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError(f"{name} must be a finite number of seconds, not {value!r}")
    return int(round(value * 1000))


def _text(value: Any, name: str) -> bytes:
    """A str argument as UTF-8 (ValidationError naming it otherwise)."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a str, not {value!r}")
    if "\x00" in value:
        raise ValidationError(f"{name} must not contain a NUL character")
    return value.encode("utf-8")


def _integer(value: Any, name: str, bits: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an int, not {value!r}")
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise ValidationError(f"{name} is out of range: {value}")
    return value


def _options_json(
    url: Optional[str],
    *,
    schema: Any,
    target_schema: Any,
    staging: Any,
    drain_threads: Any,
    pool_size: Any,
    call_deadline: Any,
    tick: Any,
    build_range_rows: Any,
    self_check_page_rows: Any,
    metrics_address: Any,
) -> str:
    """The ``options_json`` of trellis_connect(). Values other than the
    durations go to the library as given (when JSON can carry them), so it
    is the library that refuses a wrong type, naming the option."""
    if url is None:
        url = os.environ.get(DATABASE_URL_ENV, "")
    options: Dict[str, Any] = {}
    if url != "":
        options["url"] = url
    for name, value in (
        ("drain_threads", drain_threads),
        ("pool_size", pool_size),
        ("build_range_rows", build_range_rows),
        ("self_check_page_rows", self_check_page_rows),
    ):
        # The library keeps these as C ints: refuse what would not fit
        # rather than let it wrap. Other types go on, for the library to refuse.
        if isinstance(value, int) and not isinstance(value, bool):
            _integer(value, name, 32)
    options.update(
        schema=schema,
        target_schema=target_schema,
        staging=staging,
        drain_threads=drain_threads,
        pool_size=pool_size,
        call_deadline_ms=_seconds_to_ms(call_deadline, "call_deadline"),
        tick_ms=_seconds_to_ms(tick, "tick"),
        build_range_rows=build_range_rows,
        self_check_page_rows=self_check_page_rows,
        metrics_address=metrics_address,
    )
    for name, value in options.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise ValidationError(
                f"option {name} must be a str, bool or int as connect() documents, not {value!r}"
            ) from None
    return json.dumps(options, allow_nan=False)


class _Gate:
    """Lets any number of calls run at once, and shutdown/close run alone.

    An exclusive request (shutdown, close) stops new calls from starting at
    once and then waits for the calls in progress, so a steady stream of
    calls from other threads cannot hold it off."""

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())
        self._running = 0
        self._exclusive = False

    def enter(self) -> None:
        with self._condition:
            while self._exclusive:
                self._condition.wait()
            self._running += 1

    def leave(self) -> None:
        with self._condition:
            self._running -= 1
            if self._running == 0:
                self._condition.notify_all()

    def begin_exclusive(self) -> None:
        with self._condition:
            while self._exclusive:
                self._condition.wait()
            self._exclusive = True
            try:
                while self._running:
                    self._condition.wait()
            except BaseException:  # interrupted: let the calls go on
                self._exclusive = False
                self._condition.notify_all()
                raise

    def end_exclusive(self) -> None:
        with self._condition:
            self._exclusive = False
            self._condition.notify_all()


class Trellis:
    """A connected Trellis instance (one catalog schema and target schema),
    and, when connected with ``staging=True`` or ``drain_threads > 0``, the
    workers it runs in this process.

    Make one with :func:`connect`. Use it as a context manager, or call
    :meth:`close` when done; a handle that is garbage-collected is closed.
    Thread-safety: see the module's documentation (every method may be
    called from several threads at once; ``shutdown`` and ``close`` wait for
    the calls in progress).
    """

    def __init__(self, library: _library.Library, handle: int) -> None:
        # Keeps the library loaded for as long as the handle may call it.
        self._lib = library
        self._handle: Optional[int] = handle
        self._gate = _Gate()

    # -- plumbing -----------------------------------------------------------

    def _call(self, name: str, *args: Any) -> None:
        """Runs C function ``name`` with the handle, ``args`` and an error
        out-parameter; raises the error (freed) when it fails."""
        function = self._lib.function(name)
        self._gate.enter()
        try:
            if self._handle is None:
                raise ValidationError("the handle is closed; call trellis.connect() for a new one")
            error = c_void_p()
            code = function(self._handle, *args, byref(error))
        finally:
            self._gate.leave()
        if code != 0:
            raise _take_error(self._lib, code, error)

    def _call_json(self, name: str, *args: Any) -> Any:
        """Runs C function ``name`` whose last output is a ``char**`` of
        JSON text; returns it parsed (the string freed once)."""
        return json.loads(self._call_text(name, *args))

    def _call_text(self, name: str, *args: Any) -> str:
        out = POINTER(c_char)()
        self._call(name, *args, byref(out))
        return _take_string(self._lib, out)

    def _call_int(self, name: str, *args: Any, kind: Any = c_int) -> int:
        out = kind()
        self._call(name, *args, byref(out))
        return int(out.value)

    # -- lifecycle ----------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._handle is None

    @property
    def library(self) -> _library.Library:
        """The loaded libtrellis (its ``path`` and ``version``)."""
        return self._lib

    def shutdown(self) -> None:
        """Stops the workers this handle runs and closes its connections;
        idempotent. The handle stays usable (calls reconnect; the workers
        do not restart). Waits for the calls in progress on this handle."""
        self._gate.begin_exclusive()
        try:
            if self._handle is None:
                return
            error = c_void_p()
            code = self._lib.function("trellis_shutdown")(self._handle, byref(error))
            if code != 0:
                raise _take_error(self._lib, code, error)
        finally:
            self._gate.end_exclusive()

    def close(self) -> None:
        """Shuts down (as :meth:`shutdown`) and frees the handle; idempotent.
        Waits for the calls in progress on this handle."""
        gate = getattr(self, "_gate", None)
        if gate is None:  # __init__ did not finish
            return
        gate.begin_exclusive()
        try:
            handle, self._handle = self._handle, None
            if handle is not None:
                self._lib.function("trellis_close")(handle)
        finally:
            gate.end_exclusive()

    def __enter__(self) -> "Trellis":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (nothing to report to during collection)
            pass

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else "open"
        return f"<trellis.Trellis {state}>"

    # -- statements and records ---------------------------------------------

    def apply(self, statement: str) -> Applied:
        """Runs one statement (TRANSFORM, ALTER TRANSFORM, PAUSE, RESUME,
        DROP, RELATIONSHIP, DROP RELATIONSHIP) and says what it did.

        Raises ParseError for a statement that does not parse and
        ValidationError (naming the table, column or field and the fix) for
        one that is refused."""
        return Applied.from_json(self._call_json("trellis_apply", _text(statement, "statement")))

    def status(self, target: str) -> Optional[Status]:
        """The status of the transform whose target is ``target``
        (``table`` or ``schema.table``), or None when there is none."""
        obj = self._call_json("trellis_status", _text(target, "target"))
        return None if obj is None else Status.from_json(obj)

    def status_all(self) -> List[Status]:
        """The status of every transform."""
        return [Status.from_json(o) for o in self._call_json("trellis_status_all")]

    def definitions(self) -> List[Definition]:
        """Every transform's definition."""
        return [Definition.from_json(o) for o in self._call_json("trellis_definitions")]

    def relationships(self) -> List[Relationship]:
        """Every relationship, oldest first."""
        return [Relationship.from_json(o) for o in self._call_json("trellis_relationships")]

    def dump(self) -> str:
        """The instance's relationships and definitions as statements, in
        the order that applies them (``trellis dump``).

        Raises NotSupportedError when the loaded library lacks
        ``trellis_dump``."""
        return self._call_text("trellis_dump")

    # -- convergence ----------------------------------------------------------

    def watermark_token(self) -> Token:
        """A token covering every change committed before this call."""
        return Token(self._call_int("trellis_watermark_token", kind=c_int64))

    def await_converged(self, token: Union[Token, int], timeout: Seconds = 30.0) -> bool:
        """Waits until every change ``token`` covers has reached every live
        target (chained targets included). True then; False when
        ``timeout`` seconds passed first (not an exception)."""
        segment = token.segment if isinstance(token, Token) else token
        converged = self._call_int(
            "trellis_await_converged",
            _integer(segment, "token", 64),
            _seconds_to_ms(timeout, "timeout"),
        )
        return converged != 0

    def await_live(self, target: str, timeout: Seconds = 30.0) -> Status:
        """Waits until the transform of ``target`` is built and caught up:
        its status is ``live`` and every change committed by then has
        reached the targets. Returns its status then.

        Use it after defining (or resuming, or rebuilding) a transform:
        :meth:`await_converged` covers changes to the sources, not a
        transform's build, so right after ``apply`` it may return True while
        the target is still empty (``waiting_to_backfill``).

        Raises NotFoundError when no transform has that target,
        ConflictError when it is ``paused`` or ``quarantined`` (it will not
        become live without a RESUME), and trellis.TimeoutError naming its
        status and what holds it up after ``timeout`` seconds."""
        obj = self._call_json(
            "trellis_await_live", _text(target, "target"), _seconds_to_ms(timeout, "timeout")
        )
        return Status.from_json(obj)

    # -- quarantine and rebuilds ----------------------------------------------

    def sample_quarantined(self, target: str, limit: int = 100, cursor: str = "") -> QuarantinePage:
        """A page of up to ``limit`` keys held in quarantine for ``target``
        (or ``target.field`` for a paused field). Pass the page's ``cursor``
        back for the next page; an empty page returns the cursor given."""
        page = self._call_json(
            "trellis_sample_quarantined",
            _text(target, "target"),
            _integer(limit, "limit", 32),
            _text(cursor, "cursor"),
        )
        return QuarantinePage.from_json(page)

    def release_key(self, target: str, table: str, key: str) -> None:
        """Re-derives a held key from its source row as it is now and stops
        holding it (``key`` as :meth:`sample_quarantined` shows it).
        Raises NotFoundError when the key is not held, ConflictError when it
        still fails."""
        self._call(
            "trellis_release_key",
            _text(target, "target"),
            _text(table, "table"),
            _text(key, "key"),
        )

    def request_backfill(self, table: str) -> int:
        """Rebuilds in place every running transform that reads ``table``;
        returns how many. Raises NotFoundError when none reads it."""
        return self._call_int("trellis_request_backfill", _text(table, "table"))

    def test_reset(self, timeout: Seconds = 60.0) -> TestResetReport:
        """For an application's test suite, after fixtures were loaded with
        triggers disabled, tables swapped or truncated: checks capture,
        resumes what a failure paused, rebuilds every other running
        transform in place and waits until all are live and caught up.

        Needs running workers (ValidationError otherwise); raises
        trellis.TimeoutError naming what was not live in time."""
        report = self._call_json("trellis_test_reset", _seconds_to_ms(timeout, "timeout"))
        return TestResetReport.from_json(report)

    # -- self-checks ----------------------------------------------------------

    def self_check(
        self,
        target: str,
        mode: str = "standard",
        await_timeout: Optional[Seconds] = None,
    ) -> SelfCheckJob:
        """Queues an audit of ``target`` against a recompute of its
        definition (or returns its unfinished one), run by the drain threads
        of any process.

        ``mode``: ``standard`` (a difference is compared again after the
        drains catch up, safe under live writes) or ``strict`` (reported at
        once; for a system without writes). ``await_timeout``: seconds each
        wait for the drains may take (None: the library's default, 30 s)."""
        timeout_ms = 0 if await_timeout is None else _seconds_to_ms(await_timeout, "await_timeout")
        job = self._call_json(
            "trellis_self_check", _text(target, "target"), _text(mode, "mode"), timeout_ms
        )
        return SelfCheckJob.from_json(job)

    def self_check_job(self, job_id: Union[int, SelfCheckJob]) -> Optional[SelfCheckJob]:
        """The job now, or None once it is gone (its transform was dropped,
        or a later self-check of the target replaced it)."""
        obj = self._call_json("trellis_self_check_job", _job_id(job_id))
        return None if obj is None else SelfCheckJob.from_json(obj)

    def await_self_check(
        self, job_id: Union[int, SelfCheckJob], timeout: Seconds = 60.0
    ) -> SelfCheckJob:
        """Waits until the job has finished and returns it. Raises
        trellis.TimeoutError after ``timeout`` seconds, NotFoundError when
        the job is gone."""
        job = self._call_json(
            "trellis_await_self_check", _job_id(job_id), _seconds_to_ms(timeout, "timeout")
        )
        return SelfCheckJob.from_json(job)

    # -- metrics and workers --------------------------------------------------

    def metrics_text(self) -> str:
        """Prometheus text: what this process's workers counted and what
        the catalog says now."""
        return self._call_text("trellis_metrics_text")

    def metrics_port(self) -> int:
        """The port metrics are served on (``metrics_address``); 0 when
        they are not served."""
        return self._call_int("trellis_metrics_port")

    def ring_backlog(self) -> RingBacklog:
        """Changed keys captured and not yet drained, and the ring's size."""
        rows, size = c_int64(), c_int64()
        self._call("trellis_ring_backlog", byref(rows), byref(size))
        return RingBacklog(rows=int(rows.value), bytes=int(size.value))

    def has_live_staging_worker(self) -> bool:
        """Whether the instance's staging worker (in any process) is alive."""
        return self._call_int("trellis_has_live_staging_worker") != 0

    def has_live_drain_workers(self) -> bool:
        """Whether drain workers of the instance (in any process) are alive."""
        return self._call_int("trellis_has_live_drain_workers") != 0


def _job_id(job: Union[int, SelfCheckJob]) -> int:
    if isinstance(job, SelfCheckJob):
        return job.id
    return _integer(job, "job_id", 64)


def _take_string(lib: _library.Library, out: Any) -> str:
    """The text of a library-allocated ``char*``, freed once."""
    if not out:
        raise TrellisError("the library returned no text where it promised some", "internal")
    try:
        return ctypes.string_at(out).decode("utf-8")
    finally:
        lib.function("trellis_string_free")(out)


def _take_error(lib: _library.Library, code: int, error: c_void_p) -> TrellisError:
    """The exception for a failed call; frees the library's error once."""
    name = lib.code_name(code)
    message = ""
    if error.value:
        try:
            raw = lib.function("trellis_error_message")(error)
            message = raw.decode("utf-8", "replace") if raw else ""
        finally:
            lib.function("trellis_error_free")(error)
            error.value = None
    return error_for(code, name, message)


def connect(
    url: Optional[str] = None,
    *,
    schema: str = "trellis",
    target_schema: str = "public",
    staging: bool = False,
    drain_threads: int = 0,
    pool_size: int = 4,
    call_deadline: Seconds = 30.0,
    tick: Seconds = 0.1,
    build_range_rows: int = 50000,
    self_check_page_rows: int = 10000,
    metrics_address: str = "",
) -> Trellis:
    """Connects to a Trellis instance, creating or migrating its catalog.

    ``url``: a libpq connection string or URI; None reads
    ``$TRELLIS_DATABASE_URL`` (as the command line does) and, when that is
    unset too, leaves it to libpq's defaults (the ``PG*`` variables, the
    local socket). ``schema``: the instance's catalog schema;
    ``target_schema``: where unqualified targets are created. ``staging``
    runs the instance's (single) staging worker in this process and
    ``drain_threads`` that many drain threads. ``pool_size``: connections
    for API calls. ``call_deadline`` and ``tick`` (the staging worker's
    cadence) are in seconds. ``build_range_rows``: source rows a build writes
    per statement; ``self_check_page_rows``: target rows a self-check
    compares per page. ``metrics_address``: HOST:PORT to serve Prometheus
    metrics on ("" for none; port 0 for a free one, see
    :meth:`Trellis.metrics_port`).

    Raises LibraryNotFound when libtrellis cannot be loaded,
    ConnectivityError when the database cannot be reached, and
    ValidationError for an option of the wrong type (naming it).
    """
    lib = _library.load()
    options = _options_json(
        url,
        schema=schema,
        target_schema=target_schema,
        staging=staging,
        drain_threads=drain_threads,
        pool_size=pool_size,
        call_deadline=call_deadline,
        tick=tick,
        build_range_rows=build_range_rows,
        self_check_page_rows=self_check_page_rows,
        metrics_address=metrics_address,
    )
    handle = c_void_p()
    error = c_void_p()
    code = lib.function("trellis_connect")(options.encode("utf-8"), byref(handle), byref(error))
    if code != 0:
        raise _take_error(lib, code, error)
    if not handle.value:
        raise TrellisError("trellis_connect succeeded without a handle", "internal")
    return Trellis(lib, handle.value)
