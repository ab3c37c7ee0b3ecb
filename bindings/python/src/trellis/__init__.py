"""Trellis for Python: keep derived tables inside PostgreSQL incrementally up
to date, through the Trellis shared library (``libtrellis``) and its C
interface, called with :mod:`ctypes`.

    import trellis

    with trellis.connect(staging=True, drain_threads=2) as t:
        t.apply("TRANSFORM order_totals FROM orders GROUP BY customer_id SELECT SUM(amount) AS total")
        t.await_live("order_totals", timeout=30)

:func:`connect` returns a :class:`Trellis` handle (``trellis.client``); the
records its methods return are frozen dataclasses (``trellis.records``);
failures are :class:`TrellisError` subclasses by error code
(``trellis.errors``). The library is loaded at the first call that needs it
(``trellis._library`` says where it is looked for; ``$TRELLIS_LIBRARY``
names it), so importing this package never fails for want of it.
"""

from __future__ import annotations

from . import errors
from ._library import LIBRARY_ENV, SUPPORTED_MAJOR
from ._library import load as _load
from .client import DATABASE_URL_ENV, Trellis, connect
from .errors import (
    ConflictError,
    ConnectivityError,
    InternalError,
    LibraryNotFound,
    NotFoundError,
    NotSupportedError,
    ParseError,
    TrellisError,
    ValidationError,
)
from .records import (
    Applied,
    BackfillFailure,
    CaptureFailure,
    CaptureWait,
    CorrectingNode,
    Definition,
    Divergence,
    DrainFailure,
    HeldKeys,
    PausedColumn,
    QuarantinedKey,
    QuarantinePage,
    Relationship,
    RingBacklog,
    SelfCheckJob,
    SourceIndexGap,
    Status,
    TestResetReport,
    Token,
    UpstreamWait,
)

#: A wait that ran past its timeout (also a builtins.TimeoutError); not in
#: __all__, so that a star import does not shadow the builtin.
TimeoutError = errors.TimeoutError  # noqa: A001

#: This package's version.
__version__ = "0.1.0"


def library_version() -> str:
    """The loaded libtrellis's version, "MAJOR.MINOR.PATCH" (loads it;
    LibraryNotFound when it cannot be)."""
    return _load().version


def library_path() -> str:
    """The path (or name) libtrellis was loaded from (loads it)."""
    return _load().path


def library_has(function: str) -> bool:
    """Whether the loaded libtrellis exports the C function ``function``
    (``"trellis_dump"``, say): an older library may lack an optional one."""
    return _load().has(function)


__all__ = [
    "connect",
    "Trellis",
    "library_version",
    "library_path",
    "library_has",
    "LIBRARY_ENV",
    "DATABASE_URL_ENV",
    "SUPPORTED_MAJOR",
    "errors",
    # exceptions (trellis.TimeoutError is left out so that a star import
    # does not shadow the builtin; it subclasses builtins.TimeoutError)
    "TrellisError",
    "ParseError",
    "ValidationError",
    "ConnectivityError",
    "ConflictError",
    "NotFoundError",
    "InternalError",
    "LibraryNotFound",
    "NotSupportedError",
    # records
    "Applied",
    "BackfillFailure",
    "CaptureFailure",
    "CaptureWait",
    "CorrectingNode",
    "Definition",
    "Divergence",
    "DrainFailure",
    "HeldKeys",
    "PausedColumn",
    "QuarantinedKey",
    "QuarantinePage",
    "Relationship",
    "RingBacklog",
    "SelfCheckJob",
    "SourceIndexGap",
    "Status",
    "TestResetReport",
    "Token",
    "UpstreamWait",
]
