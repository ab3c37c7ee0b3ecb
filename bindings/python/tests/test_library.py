"""Loading libtrellis, the ctypes declarations against trellis.h, the error
classes against the library's codes, and record parsing (no database)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import trellis
from trellis import _library, errors
from trellis.records import Applied, SelfCheckJob, Status, Token

HEADER = Path(__file__).resolve().parents[3] / "include" / "trellis" / "trellis.h"
SRC = Path(trellis.__file__).resolve().parents[1]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter (nothing loaded yet) with the
    package importable and ``env`` added to the environment."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(SRC)] + ([environment["PYTHONPATH"]] if environment.get("PYTHONPATH") else [])
    )
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=60
    )


def test_version_has_the_supported_major() -> None:
    version = trellis.library_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    assert int(version.split(".")[0]) == trellis.SUPPORTED_MAJOR
    assert trellis.library_path()


def test_another_major_version_is_refused() -> None:
    _library.check_version("0.7.3", "libtrellis.so")  # any 0.x is fine
    with pytest.raises(trellis.LibraryNotFound) as caught:
        _library.check_version("1.0.0", "/opt/libtrellis.so.1")
    assert "/opt/libtrellis.so.1" in str(caught.value)
    assert "TRELLIS_LIBRARY" in str(caught.value)


def test_import_succeeds_without_the_library_and_connect_names_the_variable() -> None:
    code = (
        "import trellis\n"
        "try:\n"
        "    trellis.connect('postgresql://127.0.0.1:1/none')\n"
        "except trellis.LibraryNotFound as e:\n"
        "    assert isinstance(e, trellis.TrellisError) and isinstance(e, OSError), type(e).__mro__\n"
        "    assert e.code == 'library_not_found', e.code\n"
        "    print('MESSAGE', e)\n"
        "else:\n"
        "    raise SystemExit('connect did not fail')\n"
    )
    done = run_python(code, TRELLIS_LIBRARY="/nonexistent/libtrellis.so")
    assert done.returncode == 0, done.stderr
    assert "MESSAGE" in done.stdout
    assert "TRELLIS_LIBRARY" in done.stdout
    assert "/nonexistent/libtrellis.so" in done.stdout


def test_a_library_that_is_not_trellis_is_refused() -> None:
    libc = ctypes.util.find_library("c")
    if not libc:
        pytest.skip("no libc to stand in for a wrong library")
    done = run_python(
        "import trellis\n"
        "try:\n"
        "    trellis.library_version()\n"
        "except trellis.LibraryNotFound as e:\n"
        "    print('MESSAGE', e)\n",
        TRELLIS_LIBRARY=libc,
    )
    assert done.returncode == 0, done.stderr
    assert "is not the Trellis library" in done.stdout


def header_prototypes() -> Dict[str, Tuple[str, List[str]]]:
    """name -> (result type, [argument types]) of every function trellis.h
    declares, types with spaces normalised (``const char*``)."""
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    out: Dict[str, Tuple[str, List[str]]] = {}
    for match in re.finditer(r"([A-Za-z_][\w\s\*]*?)\b(trellis_\w+)\s*\(([^)]*)\)\s*;", text):
        result, name, params = match.groups()
        arguments: List[str] = []
        for param in params.split(","):
            param = " ".join(param.split())
            if param in ("void", ""):
                continue
            # Drop the parameter's name, keep its type.
            kind = re.sub(r"\s*\b\w+$", "", param)
            arguments.append(kind.replace(" *", "*"))
        out[name] = (" ".join(result.split()).replace(" *", "*"), arguments)
    return out


C_TYPES = {
    "void": None,
    "const char*": ctypes.c_char_p,
    "char*": _library.c_owned_string,
    "char**": _library.c_owned_string_out,
    "trellis_code": ctypes.c_int,
    "trellis_handle*": ctypes.c_void_p,
    "trellis_handle**": _library.c_handle_out,
    "trellis_error*": ctypes.c_void_p,
    "const trellis_error*": ctypes.c_void_p,
    "trellis_error**": _library.c_error_out,
    "int": ctypes.c_int,
    "int*": _library.c_int_out,
    "int64_t": ctypes.c_int64,
    "int64_t*": _library.c_int64_out,
}


@pytest.mark.skipif(not HEADER.exists(), reason="trellis.h is not beside the package (installed copy)")
def test_every_function_of_the_header_is_declared_with_its_types() -> None:
    prototypes = header_prototypes()
    assert len(prototypes) >= 25, sorted(prototypes)  # the parse found them
    assert set(prototypes) == set(_library.FUNCTIONS)
    for name, (result, arguments) in prototypes.items():
        restype, argtypes = _library.FUNCTIONS[name]
        assert restype == C_TYPES[result], f"{name}: result {result}"
        assert list(argtypes) == [C_TYPES[a] for a in arguments], f"{name}: {arguments}"


def test_the_loaded_functions_carry_the_declarations() -> None:
    lib = _library.load()
    for name, (restype, argtypes) in _library.FUNCTIONS.items():
        if not lib.has(name):
            assert name in _library.OPTIONAL_FUNCTIONS, f"the library lacks {name}"
            continue
        function = lib.function(name)
        assert function.restype == restype, name
        assert list(function.argtypes) == list(argtypes), name


def test_error_classes_follow_the_library_codes() -> None:
    lib = _library.load()
    for code, cls in errors.ERROR_CLASSES.items():
        word = lib.code_name(code)
        assert word == cls.default_code, (code, word, cls)
        made = errors.error_for(code, word, "the message")
        assert type(made) is cls and made.code == word and str(made) == "the message"
        assert isinstance(made, trellis.TrellisError)
    assert lib.code_name(0) == "ok"
    unknown = errors.error_for(99, "shiny_new_code", "m")
    assert type(unknown) is trellis.TrellisError and unknown.code == "shiny_new_code"


def test_timeout_error_is_also_the_builtin() -> None:
    assert issubclass(trellis.TimeoutError, TimeoutError)
    assert issubclass(trellis.TimeoutError, trellis.TrellisError)
    assert "TimeoutError" not in trellis.__all__  # a star import keeps the builtin


def test_library_has_knows_present_and_absent_functions() -> None:
    assert trellis.library_has("trellis_apply")
    assert not trellis.library_has("trellis_no_such_function")


def test_records_parse_forward_compatibly() -> None:
    status = Status.from_json(
        {
            "target": "public.t",
            "status": "live",
            "held_keys": {"count": 2, "oldest": "2026-01-01T00:00:00Z", "later": 1},
            "source_index_gaps": [
                {"role": "group_by", "table": "public.s", "columns": ["k"], "create_index": "CREATE"}
            ],
            "a_field_from_the_future": {"x": 1},
        }
    )
    assert status.target == "public.t" and status.live
    assert status.held_keys is not None and status.held_keys.count == 2
    assert status.source_index_gaps[0].columns == ("k",)
    assert status.backfill_failure is None and status.paused_columns == ()
    assert Applied.from_json({"kind": "transform", "added": []}).note == ""
    assert Applied.from_json({"kind": "alter", "note": "rebuilt"}).note == "rebuilt"


def test_a_self_check_job_reads_flat_and_nested_reports() -> None:
    flat = SelfCheckJob.from_json(
        {
            "id": 3,
            "state": "done",
            "outcome": "diverged",
            "checked_through": 12,
            "divergences": [{"kind": "cell", "key": {"k": 1}, "column": "v", "persisted": "1"}],
        }
    )
    nested = SelfCheckJob.from_json(
        {
            "id": 3,
            "state": "done",
            "report": {
                "outcome": "diverged",
                "checked_through": 12,
                "divergences": [{"kind": "cell", "key": {"k": 1}, "column": "v", "persisted": "1"}],
            },
        }
    )
    assert flat == nested
    assert flat.finished and flat.checked_through == Token(12)
    assert flat.divergences[0].key == {"k": 1} and flat.divergences[0].recomputed is None
