"""cel-expr-python's compile errors and types, written as cel-go writes them in upstream's
messages.  Pure; shared by DRA selectors (:mod:`.cel`), CRD rules (:mod:`.cel_rules`) and webhook
match conditions (:mod:`.cel_admission`)."""

from __future__ import annotations

import re

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
