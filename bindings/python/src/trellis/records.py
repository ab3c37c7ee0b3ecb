"""The records Trellis calls return, as frozen dataclasses.

The C library hands records over as JSON (the rendering ``trellis status
--json`` shows); each class here mirrors one C++ record of
``include/trellis/trellis.hpp`` / ``status.hpp`` and is built from that JSON
by :meth:`from_json`. Parsing is forward compatible: a field the JSON lacks
takes its default, a field this package does not know is ignored.

Conventions: a JSON ``null`` stays ``None`` (text the library leaves out,
such as a timestamp not reached yet or an absent SQLSTATE); JSON arrays
become tuples; timestamps are ISO 8601 text, as the library writes them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple, Type, TypeVar

__all__ = [
    "Token",
    "BackfillFailure",
    "CaptureWait",
    "CaptureFailure",
    "HeldKeys",
    "DrainFailure",
    "SourceIndexGap",
    "CorrectingNode",
    "PausedColumn",
    "UpstreamWait",
    "Status",
    "Applied",
    "Definition",
    "Relationship",
    "QuarantinedKey",
    "QuarantinePage",
    "TestResetReport",
    "Divergence",
    "SelfCheckJob",
    "RingBacklog",
]

R = TypeVar("R", bound="_Record")

def _tuple(value: Any) -> Tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


class _Record:
    """Building a dataclass from a JSON object, forward compatibly."""

    # field name -> how its JSON value becomes the Python value: a record
    # class (an object, or null), a 1-tuple (record class,) for an array of
    # them, or a function. Fields not named take the JSON value as it is,
    # arrays as tuples.
    _convert: Dict[str, Any] = {}

    @classmethod
    def from_json(cls: Type[R], obj: Optional[Mapping[str, Any]]) -> R:
        """The record the JSON object describes (unknown fields ignored,
        missing ones defaulted)."""
        if obj is None:
            obj = {}
        if not isinstance(obj, Mapping):
            raise TypeError(f"{cls.__name__} expects a JSON object, got {obj!r}")
        values: Dict[str, Any] = {}
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            if field.name not in obj:
                continue
            values[field.name] = _converted(cls._convert.get(field.name), obj[field.name])
        return cls(**values)


def _converted(converter: Any, value: Any) -> Any:
    if converter is None:
        return _tuple(value) if isinstance(value, list) else value
    if isinstance(converter, tuple):
        (item,) = converter
        return tuple(item.from_json(v) for v in (value or ()))
    if isinstance(converter, type) and issubclass(converter, _Record):
        return None if value is None else converter.from_json(value)
    return converter(value)


@dataclass(frozen=True)
class Token:
    """A position in the change stream (:meth:`trellis.Trellis.watermark_token`):
    every change committed before the call that made it."""

    segment: int = 0

    def __int__(self) -> int:
        return self.segment


def _token(value: Any) -> Optional[Token]:
    return None if value is None else Token(int(value))


# ---------------------------------------------------------------------------
# Status and its hold-ups (trellis::Status).


@dataclass(frozen=True)
class BackfillFailure(_Record):
    """A build chunk that keeps failing; retried with backoff."""

    chunk: Optional[str] = None
    attempts: int = 0
    error: Optional[str] = None
    next_retry_at: Optional[str] = None


@dataclass(frozen=True)
class CaptureWait(_Record):
    """Installing capture waits for a lock other sessions hold."""

    table: Optional[str] = None
    lock_mode: Optional[str] = None
    blocking_pids: Tuple[int, ...] = ()
    since: Optional[str] = None


@dataclass(frozen=True)
class CaptureFailure(_Record):
    """Why capture or the data path stopped a transform; ``kind`` is
    ``capture``, ``halt`` or ``disruption``."""

    kind: Optional[str] = None
    table: Optional[str] = None
    columns: Tuple[str, ...] = ()
    error: Optional[str] = None
    detected_at: Optional[str] = None


@dataclass(frozen=True)
class HeldKeys(_Record):
    """Source keys held in quarantine: how many, and since when the oldest."""

    count: int = 0
    oldest: Optional[str] = None


@dataclass(frozen=True)
class DrainFailure(_Record):
    """A page of changes that keeps failing with nothing one key causes."""

    table: Optional[str] = None
    error: Optional[str] = None
    sqlstate: Optional[str] = None
    since: Optional[str] = None
    attempts: int = 0


@dataclass(frozen=True)
class SourceIndexGap(_Record):
    """A source lacks the index its definition needs (a warning); ``role`` is
    ``group_by`` or ``join:<alias>``, ``create_index`` the statement to run."""

    role: str = ""
    table: str = ""
    columns: Tuple[str, ...] = ()
    create_index: str = ""


@dataclass(frozen=True)
class CorrectingNode(_Record):
    """A partition whose keys are being re-derived after an attach, detach,
    drop or truncate."""

    partition: str = ""
    reason: Optional[str] = None
    since: Optional[str] = None


@dataclass(frozen=True)
class PausedColumn(_Record):
    """One of the transform's fields frozen at its last values; ``cause`` is
    ``operator`` (PAUSE TRANSFORM t.f) or ``quarantine`` (the column fuse)."""

    column: str = ""
    cause: str = ""
    since: Optional[str] = None
    error: Optional[str] = None
    sqlstate: Optional[str] = None


@dataclass(frozen=True)
class UpstreamWait(_Record):
    """An upstream transform that is not live, which this one waits for."""

    transform: str = ""
    status: str = ""


@dataclass(frozen=True)
class Status(_Record):
    """One transform's status: its lifecycle word (``status``:
    ``waiting_to_backfill``, ``backfilling``, ``catching_up``, ``live``,
    ``paused`` or ``quarantined``) and what holds it up, each hold-up
    ``None`` or empty when nothing does (README, "Operations")."""

    target: str = ""
    status: str = ""
    backfill_failure: Optional[BackfillFailure] = None
    capture_wait: Optional[CaptureWait] = None
    capture_failure: Optional[CaptureFailure] = None
    held_keys: Optional[HeldKeys] = None
    drain_failure: Optional[DrainFailure] = None
    source_index_gaps: Tuple[SourceIndexGap, ...] = ()
    correcting: Tuple[CorrectingNode, ...] = ()
    paused_upstream_columns: Tuple[str, ...] = ()
    paused_columns: Tuple[PausedColumn, ...] = ()
    upstream_waits: Tuple[UpstreamWait, ...] = ()
    build_rows_done: int = 0
    build_rows_estimate: int = 0

    _convert = {
        "backfill_failure": BackfillFailure,
        "capture_wait": CaptureWait,
        "capture_failure": CaptureFailure,
        "held_keys": HeldKeys,
        "drain_failure": DrainFailure,
        "source_index_gaps": (SourceIndexGap,),
        "correcting": (CorrectingNode,),
        "paused_columns": (PausedColumn,),
        "upstream_waits": (UpstreamWait,),
    }

    @property
    def live(self) -> bool:
        """Whether the status word is ``live``."""
        return self.status == "live"


# ---------------------------------------------------------------------------
# What apply() did, definitions and relationships.


@dataclass(frozen=True)
class Applied(_Record):
    """What :meth:`trellis.Trellis.apply` did.

    ``kind``: ``transform``, ``alter``, ``pause``, ``resume``, ``drop``,
    ``relationship`` or ``drop_relationship``; ``target``: schema.table (a
    relationship: schema.from_table.name); ``status``: the status after the
    statement; ``added``/``dropped``/``altered``: the fields an ALTER
    TRANSFORM changed; ``note``: what the library adds in words ("" when
    nothing)."""

    kind: str = ""
    target: str = ""
    status: str = ""
    added: Tuple[str, ...] = ()
    dropped: Tuple[str, ...] = ()
    altered: Tuple[str, ...] = ()
    note: str = ""

    _convert = {"note": lambda value: value or ""}


@dataclass(frozen=True)
class Definition(_Record):
    """A transform's definition: the statement as normalised at define,
    its ``shape`` (``one_to_one`` or ``aggregate``), sources, status, the
    halt that paused it (if any) and its paused fields."""

    target: str = ""
    statement: str = ""
    shape: str = ""
    sources: Tuple[str, ...] = ()
    status: str = ""
    halt: Optional[CaptureFailure] = None
    paused_columns: Tuple[str, ...] = ()

    _convert = {"halt": CaptureFailure}


@dataclass(frozen=True)
class Relationship(_Record):
    """A named link (RELATIONSHIP name FROM table.col TO table.col);
    ``cardinality`` is ``to_one`` or ``to_many``."""

    name: str = ""
    from_table: str = ""
    from_column: str = ""
    to_table: str = ""
    to_column: str = ""
    cardinality: str = ""
    created_at: Optional[str] = None


# ---------------------------------------------------------------------------
# Quarantine, test reset, the ring.


@dataclass(frozen=True)
class QuarantinedKey(_Record):
    """A source key held in quarantine for a target. ``key`` is the text
    :meth:`trellis.Trellis.release_key` takes back."""

    table: str = ""
    key: str = ""
    charges: int = 0
    error: str = ""
    sqlstate: Optional[str] = None
    held_at: str = ""


@dataclass(frozen=True)
class QuarantinePage(_Record):
    """A page of held keys and the opaque cursor for the next page."""

    keys: Tuple[QuarantinedKey, ...] = ()
    cursor: str = ""

    _convert = {"keys": (QuarantinedKey,)}


@dataclass(frozen=True)
class TestResetReport(_Record):
    """What :meth:`trellis.Trellis.test_reset` repaired (targets as
    schema.table) and how long it took, in seconds."""

    __test__ = False  # not a pytest test class

    disrupted: Tuple[str, ...] = ()
    resumed: Tuple[str, ...] = ()
    rebuilt: Tuple[str, ...] = ()
    left_paused: Tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class RingBacklog:
    """Changed keys captured and not yet drained, and the ring's size in
    bytes (its slot tables, indexes included)."""

    rows: int = 0
    bytes: int = 0


# ---------------------------------------------------------------------------
# Self-checks.


@dataclass(frozen=True)
class Divergence(_Record):
    """One difference between a target and the recompute of its definition.

    ``kind``: ``cell``, ``missing_row``, ``extra_row``, ``missing_column``,
    ``extra_column`` or ``capture``; ``key``: the row's key columns (a dict)
    for a row; ``column`` for a cell or column; ``persisted`` /
    ``recomputed``: a cell's values as text (``None`` for SQL NULL);
    ``table`` and ``detail`` for capture."""

    kind: str = ""
    key: Optional[Mapping[str, Any]] = None
    column: Optional[str] = None
    persisted: Optional[str] = None
    recomputed: Optional[str] = None
    table: Optional[str] = None
    detail: Optional[str] = None

    _convert = {"key": lambda value: value}


_FINISHED = frozenset({"done", "failed", "cancelled"})


@dataclass(frozen=True)
class SelfCheckJob(_Record):
    """A self-check job (README, "Auditing a target").

    ``state``: ``queued``, ``running``, ``done``, ``failed`` or
    ``cancelled``; ``rows_compared`` moves while it runs. Once done, the
    report's fields are set: ``outcome`` (``converged``, ``not_caught_up``,
    ``not_live`` or ``diverged``), ``status`` (the transform's, for
    not_live), ``detail``, ``truncated``, ``checked_through`` (the token the
    target was caught up with) and ``divergences`` (at most 1,000)."""

    id: int = 0
    target: str = ""
    mode: str = ""
    state: str = ""
    rows_compared: int = 0
    error: Optional[str] = None
    outcome: Optional[str] = None
    status: Optional[str] = None
    detail: Optional[str] = None
    truncated: bool = False
    checked_through: Optional[Token] = None
    divergences: Tuple[Divergence, ...] = ()
    created_at: Optional[str] = None
    started_at: Optional[str] = None
    finished_at: Optional[str] = None

    _convert = {"checked_through": _token, "divergences": (Divergence,)}

    @classmethod
    def from_json(cls, obj: Optional[Mapping[str, Any]]) -> "SelfCheckJob":
        # The report's fields are on the job itself; a library that nests
        # them under "report" (as trellis.h describes) is read the same way.
        if isinstance(obj, Mapping) and isinstance(obj.get("report"), Mapping):
            report = obj["report"]
            merged = dict(obj)
            for name, value in report.items():
                if merged.get(name) is None:
                    merged[name] = value
            obj = merged
        return super().from_json(obj)

    @property
    def finished(self) -> bool:
        """Whether the job has ended (done, failed or cancelled)."""
        return self.state in _FINISHED
