"""cel-expr-python's compile errors and types, written as cel-go writes them in upstream's
messages.  Pure; shared by DRA selectors (:mod:`.cel`), CRD rules (:mod:`.cel_rules`) and webhook
match conditions (:mod:`.cel_admission`)."""

from __future__ import annotations

import re
from typing import Any

from fakeapi.machinery.cel_cost import COST_LIMIT_EXCEEDED

# cel-go reports at most this many issues of one expression, then how many it left out.
MAX_ERRORS = 100
# Each issue echoes the expression's line, so a 100 KB one-line expression with 20 issues made a
# 4 MB message: messages are cut here (fakeapi's bound; cel-go has none), so a request of many
# broken expressions cannot grow into a response forty times its size.
MAX_MESSAGE_CHARS = 16 * 1024

# cel-cpp adds this line after a syntax error; cel-go does not.
_PARSETREE_ARTIFACT = "\nERROR: <input>:-1:-1: <<nil>> parsetree"
_ISSUE = re.compile(r"^ERROR: ", re.M)  # an issue's first line (its source lines start with " | ")
_GO_TYPE_NAMES = {"INT": "int", "UINT": "uint", "DOUBLE": "double", "BOOL": "bool", "STRING": "string",
                  "BYTES": "bytes", "NULL": "null_type", "DYN": "dyn", "DURATION": "google.protobuf.Duration",
                  "TIMESTAMP": "google.protobuf.Timestamp", "LIST": "list", "MAP": "map", "TYPE": "type"}


def engine_message(err: Exception, *, truncate: bool = True) -> str:
    """A cel-expr-python compile error as cel-go's issues read: no status code prefix or suffix,
    and beyond :data:`MAX_ERRORS` issues "N more errors were truncated" (unless ``truncate`` is
    off, for a caller that reads every issue)."""
    message = str(err)
    code, sep, rest = message.partition(": ")
    if sep and code.isupper():
        message = rest
    message = message.removesuffix(" [INVALID_ARGUMENT]").split(_PARSETREE_ARTIFACT)[0]
    if not truncate:
        return message
    starts = [m.start() for m in _ISSUE.finditer(message)]
    if len(starts) > MAX_ERRORS:
        message = f"{message[:starts[MAX_ERRORS] - 1]}\n{len(starts) - MAX_ERRORS} more errors were truncated"
    return message if len(message) <= MAX_MESSAGE_CHARS else message[:MAX_MESSAGE_CHARS] + "..."


def issues(message: str) -> int:
    """How many issues an untruncated :func:`engine_message` holds."""
    return len(_ISSUE.findall(message))


def type_name(engine_name: str) -> str:
    """A type as cel-go prints it: ``LIST<INT>`` as ``list(int)``, ``NULL`` as ``null_type``."""
    text = engine_name.replace("<", "(").replace(">", ")")
    return re.sub(r"\b[A-Z]+\b", lambda m: _GO_TYPE_NAMES.get(m.group(0), m.group(0)), text)


def run(program: Any, variables: dict[str, Any]) -> tuple[Any, str | None]:
    """Evaluate a compiled expression: (its value, None), or (None, the error as cel-go words it)."""
    try:
        result = program.eval(data=variables)
    except RuntimeError as err:
        return None, engine_message(err)
    value = result.value()
    if result.type().name() == "ERROR":
        return None, runtime_message(str(value))
    return value, None


def runtime_message(message: str) -> str:
    """An evaluation error of cel-expr-python as cel-go's reads."""
    if "Iteration budget exceeded" in message:  # the engine's own runtime budget
        return COST_LIMIT_EXCEEDED
    found = re.search(r'Key not found in map : "?([^"]*)"?', message)
    if found:
        return f"no such key: {found.group(1)}"
    code, sep, rest = message.partition(": ")
    return rest if sep and code.isupper() else message
