"""The exceptions of the Trellis package.

Every failure the C library reports becomes a :class:`TrellisError` whose
subclass follows the error's code (``trellis_code`` in ``trellis.h``)::

    parse         ParseError
    validation    ValidationError
    connectivity  ConnectivityError
    conflict      ConflictError
    not_found     NotFoundError
    timeout       trellis.TimeoutError (also a builtins.TimeoutError)
    internal      InternalError

The message names the object at fault and how to fix it, as the library
wrote it. Two failures come from the package itself: :class:`LibraryNotFound`
(no usable ``libtrellis`` could be loaded) and :class:`NotSupportedError` (the
loaded library lacks a function this package can call).
"""

from __future__ import annotations

import builtins
from typing import Dict, Optional, Type

__all__ = [
    "TrellisError",
    "ParseError",
    "ValidationError",
    "ConnectivityError",
    "ConflictError",
    "NotFoundError",
    "InternalError",
    "LibraryNotFound",
    "NotSupportedError",
    # TimeoutError is left out on purpose: `from trellis.errors import *`
    # would otherwise shadow the builtin. Import it by name.
]


class TrellisError(Exception):
    """A failed Trellis call.

    ``code`` is the error's code word as the library names it (``"parse"``,
    ``"validation"``, ``"connectivity"``, ``"conflict"``, ``"not_found"``,
    ``"timeout"``, ``"internal"``), or ``"library_not_found"`` /
    ``"not_supported"`` for the package's own two failures. ``message`` is the
    library's message; ``str(error)`` is the same text.
    """

    #: The code this class stands for (subclasses set it).
    default_code: str = "internal"

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.message: str = message
        self.code: str = code if code is not None else self.default_code

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class ParseError(TrellisError):
    """A statement that does not parse."""

    default_code = "parse"


class ValidationError(TrellisError):
    """A statement, option or argument that is refused (the message names it)."""

    default_code = "validation"


class ConnectivityError(TrellisError):
    """The database could not be reached."""

    default_code = "connectivity"


class ConflictError(TrellisError):
    """The object changed, or is in a state that refuses the call."""

    default_code = "conflict"


class NotFoundError(TrellisError):
    """No such target, table, key or job."""

    default_code = "not_found"


class TimeoutError(TrellisError, builtins.TimeoutError):  # noqa: A001 (a subclass of the builtin)
    """A wait ran past its timeout.

    It is also a :class:`builtins.TimeoutError`, so ``except TimeoutError``
    catches it whichever of the two names is in scope.
    """

    default_code = "timeout"


class InternalError(TrellisError):
    """A bug in Trellis: the message says what failed."""

    default_code = "internal"


class LibraryNotFound(TrellisError, OSError):
    """No usable ``libtrellis`` shared library could be loaded.

    Raised at the first call that needs the library (``import trellis``
    itself never fails for this), when none of ``$TRELLIS_LIBRARY``,
    ``ctypes.util.find_library("trellis")`` and ``libtrellis.so.0`` loads, or
    when the library loaded is of another major version. It is also an
    :class:`OSError`, what :mod:`ctypes` raises for a library that does not
    load. Set ``TRELLIS_LIBRARY`` to the library's path to fix it.
    """

    default_code = "library_not_found"


class NotSupportedError(TrellisError, NotImplementedError):
    """The loaded library does not provide the C function a method calls
    (an older ``libtrellis``); the message names the function."""

    default_code = "not_supported"


#: The exception class for each code the C library returns (trellis_code).
ERROR_CLASSES: Dict[int, Type[TrellisError]] = {
    1: ParseError,
    2: ValidationError,
    3: ConnectivityError,
    4: ConflictError,
    5: NotFoundError,
    6: TimeoutError,
    7: InternalError,
}


def error_for(code: int, code_name: str, message: str) -> TrellisError:
    """The exception for a failed call's code, its code word and message.

    A code this package does not know (a newer library) gives a plain
    :class:`TrellisError` carrying the library's word for it.
    """
    cls = ERROR_CLASSES.get(code, TrellisError)
    return cls(message or f"a Trellis call failed ({code_name})", code_name)
