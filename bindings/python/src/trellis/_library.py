"""Loading ``libtrellis`` and declaring its C functions for :mod:`ctypes`.

The library is looked for, at the first call that needs it, in this order:

1. ``$TRELLIS_LIBRARY``, a path to the shared library (nothing else is tried
   when it is set, so a wrong value is reported rather than passed over);
2. ``ctypes.util.find_library("trellis")`` (the system's linker cache);
3. ``libtrellis.so.0``, the library's SONAME, through the dynamic loader
   (``LD_LIBRARY_PATH``, the default directories).

Its ``trellis_version()`` must have the major version this package is built
for. Every function of ``include/trellis/trellis.h`` is declared in
:data:`FUNCTIONS` with its exact argument and result types; ``trellis_dump``
is optional (an older library lacks it) and is only looked up when called.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import POINTER, c_char, c_char_p, c_int, c_int64, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .errors import LibraryNotFound, NotSupportedError

#: The environment variable naming the library's path.
LIBRARY_ENV = "TRELLIS_LIBRARY"
#: The library's SONAME, the last name tried.
SONAME = "libtrellis.so.0"
#: The major version of libtrellis this package speaks to.
SUPPORTED_MAJOR = 0

# C types as ctypes declares them. Strings the caller owns and frees
# (`char*` results) are POINTER(c_char), so ctypes does not convert them to
# bytes and lose the pointer trellis_string_free() needs.
c_code = c_int  # trellis_code (an enum)
c_handle = c_void_p  # trellis_handle*
c_handle_out = POINTER(c_void_p)  # trellis_handle**
c_error = c_void_p  # trellis_error* / const trellis_error*
c_error_out = POINTER(c_void_p)  # trellis_error**
c_owned_string = POINTER(c_char)  # char* (allocated by the library)
c_owned_string_out = POINTER(POINTER(c_char))  # char**
c_int_out = POINTER(c_int)  # int*
c_int64_out = POINTER(c_int64)  # int64_t*

#: name -> (restype, argtypes), exactly as trellis.h declares them.
FUNCTIONS: Dict[str, Tuple[Any, Sequence[Any]]] = {
    "trellis_version": (c_char_p, []),
    "trellis_code_name": (c_char_p, [c_code]),
    "trellis_error_code": (c_code, [c_error]),
    "trellis_error_message": (c_char_p, [c_error]),
    "trellis_error_free": (None, [c_error]),
    "trellis_string_free": (None, [c_owned_string]),
    "trellis_connect": (c_code, [c_char_p, c_handle_out, c_error_out]),
    "trellis_shutdown": (c_code, [c_handle, c_error_out]),
    "trellis_close": (None, [c_handle]),
    "trellis_apply": (c_code, [c_handle, c_char_p, c_owned_string_out, c_error_out]),
    "trellis_status": (c_code, [c_handle, c_char_p, c_owned_string_out, c_error_out]),
    "trellis_status_all": (c_code, [c_handle, c_owned_string_out, c_error_out]),
    "trellis_definitions": (c_code, [c_handle, c_owned_string_out, c_error_out]),
    "trellis_relationships": (c_code, [c_handle, c_owned_string_out, c_error_out]),
    "trellis_dump": (c_code, [c_handle, c_owned_string_out, c_error_out]),
    "trellis_watermark_token": (c_code, [c_handle, c_int64_out, c_error_out]),
    "trellis_await_converged": (c_code, [c_handle, c_int64, c_int64, c_int_out, c_error_out]),
    "trellis_await_live": (c_code, [c_handle, c_char_p, c_int64, c_owned_string_out, c_error_out]),
    "trellis_sample_quarantined": (
        c_code,
        [c_handle, c_char_p, c_int, c_char_p, c_owned_string_out, c_error_out],
    ),
    "trellis_release_key": (c_code, [c_handle, c_char_p, c_char_p, c_char_p, c_error_out]),
    "trellis_request_backfill": (c_code, [c_handle, c_char_p, c_int_out, c_error_out]),
    "trellis_test_reset": (c_code, [c_handle, c_int64, c_owned_string_out, c_error_out]),
    "trellis_self_check": (
        c_code,
        [c_handle, c_char_p, c_char_p, c_int64, c_owned_string_out, c_error_out],
    ),
    "trellis_self_check_job": (c_code, [c_handle, c_int64, c_owned_string_out, c_error_out]),
    "trellis_await_self_check": (
        c_code,
        [c_handle, c_int64, c_int64, c_owned_string_out, c_error_out],
    ),
    "trellis_metrics_text": (c_code, [c_handle, c_owned_string_out, c_error_out]),
    "trellis_metrics_port": (c_code, [c_handle, c_int_out, c_error_out]),
    "trellis_ring_backlog": (c_code, [c_handle, c_int64_out, c_int64_out, c_error_out]),
    "trellis_has_live_staging_worker": (c_code, [c_handle, c_int_out, c_error_out]),
    "trellis_has_live_drain_workers": (c_code, [c_handle, c_int_out, c_error_out]),
}

#: Functions a library of the supported major version may lack; they are
#: bound when first called (NotSupportedError when absent).
OPTIONAL_FUNCTIONS = frozenset({"trellis_dump"})


class Library:
    """The loaded ``libtrellis``: its path, version and declared functions.

    The object keeps the :class:`ctypes.CDLL` alive for as long as anything
    (every :class:`trellis.Trellis` handle holds a reference) may call it.
    """

    def __init__(self, cdll: ctypes.CDLL, path: str) -> None:
        self.cdll = cdll
        self.path = path
        self._lock = threading.Lock()
        self._bound: Dict[str, Any] = {}
        for name in FUNCTIONS:
            if name not in OPTIONAL_FUNCTIONS:
                self._bound[name] = self._declare(name)
        raw = self._bound["trellis_version"]()
        self.version: str = raw.decode("utf-8", "replace") if raw else ""

    def _declare(self, name: str) -> Any:
        function = getattr(self.cdll, name)  # AttributeError when absent
        restype, argtypes = FUNCTIONS[name]
        function.restype = restype
        function.argtypes = list(argtypes)
        return function

    def has(self, name: str) -> bool:
        """Whether the library exports the C function ``name``."""
        try:
            self.function(name)
        except NotSupportedError:
            return False
        return True

    def function(self, name: str) -> Any:
        """The declared C function ``name`` (NotSupportedError when the
        library lacks it)."""
        function = self._bound.get(name)
        if function is not None:
            return function
        if name not in FUNCTIONS:
            raise NotSupportedError(f"{name} is not a function of trellis.h")
        with self._lock:
            function = self._bound.get(name)
            if function is None:
                try:
                    function = self._declare(name)
                except AttributeError:
                    raise NotSupportedError(
                        f"the Trellis library {self.path} (version {self.version}) does not "
                        f"provide {name}(); install a newer libtrellis"
                    ) from None
                self._bound[name] = function
        return function

    def __getattr__(self, name: str) -> Any:
        if name.startswith("trellis_"):
            return self.function(name)
        raise AttributeError(name)

    def code_name(self, code: int) -> str:
        raw = self._bound["trellis_code_name"](code)
        return raw.decode("utf-8", "replace") if raw else "unknown"


def check_version(version: str, path: str) -> None:
    """Refuses a library whose major version is not :data:`SUPPORTED_MAJOR`."""
    major_text = version.split(".", 1)[0]
    try:
        major = int(major_text)
    except ValueError:
        major = -1
    if major != SUPPORTED_MAJOR:
        raise LibraryNotFound(
            f"the Trellis library {path} has version {version!r}; this package needs "
            f"{SUPPORTED_MAJOR}.x. Set {LIBRARY_ENV} to the path of a libtrellis.so.{SUPPORTED_MAJOR}"
        )


def candidates() -> List[Tuple[str, str]]:
    """The names tried, in order, each with where it came from."""
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        return [(explicit, f"${LIBRARY_ENV}")]
    out: List[Tuple[str, str]] = []
    found = ctypes.util.find_library("trellis")
    if found:
        out.append((found, 'ctypes.util.find_library("trellis")'))
    out.append((SONAME, "the dynamic loader"))
    return out


def _open(path: str, origin: str) -> Library:
    cdll = ctypes.CDLL(path)
    try:
        version_function = cdll.trellis_version
    except AttributeError:
        raise LibraryNotFound(
            f"{path} (from {origin}) is not the Trellis library: it has no trellis_version(). "
            f"Set {LIBRARY_ENV} to the path of libtrellis.so"
        ) from None
    version_function.restype = c_char_p
    version_function.argtypes = []
    raw = version_function()
    version = raw.decode("utf-8", "replace") if raw else ""
    check_version(version, path)
    try:
        return Library(cdll, path)
    except AttributeError as missing:
        raise LibraryNotFound(
            f"the Trellis library {path} (version {version}) lacks a function this package "
            f"needs ({missing}); set {LIBRARY_ENV} to the path of a matching libtrellis.so"
        ) from None


_loaded: Optional[Library] = None
_load_lock = threading.Lock()


def load() -> Library:
    """The library, loaded on the first call (thread-safe; cached after).

    Raises :class:`trellis.LibraryNotFound` naming what was tried and the
    environment variable to set. A failure is not cached: a later call
    tries again (after ``$TRELLIS_LIBRARY`` was set, say).
    """
    global _loaded
    if _loaded is not None:
        return _loaded
    with _load_lock:
        if _loaded is not None:
            return _loaded
        tried: List[str] = []
        for path, origin in candidates():
            try:
                _loaded = _open(path, origin)
                return _loaded
            except OSError as failure:
                if isinstance(failure, LibraryNotFound):
                    raise
                tried.append(f"{path} (from {origin}): {failure}")
        raise LibraryNotFound(
            "the Trellis shared library (libtrellis.so) could not be loaded; tried "
            + "; ".join(tried)
            + f". Set {LIBRARY_ENV} to its path, e.g. {LIBRARY_ENV}=/path/to/build/libtrellis.so, "
            "or install it where the dynamic loader finds it"
        )
