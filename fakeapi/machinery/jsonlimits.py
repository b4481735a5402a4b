"""How deep a JSON value may nest: the bound every request body and every patched object keeps.

Upstream's JSON and YAML decoders stop at 10,000 levels.  fakeapi's bound is far lower because
its helpers (decoding, patches, server-side apply) recurse on Python's stack and orjson encodes
at most 254 levels: 100 leaves room for the envelopes around a stored object (a watch event, a
list, a Table row) and for the managedFields tries, which nest a few levels deeper than the
fields they track.  Real objects stay far below it (a Pod with affinity rules nests about 12).
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 100


def nesting_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How many objects and arrays nest in ``value`` (``{}`` is 1, a scalar 0); counting stops past
    ``limit`` (the answer is then ``limit + 1``).

    Level by level rather than recursively, so it is safe on any input orjson can parse.
    """
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level and depth <= limit:
        depth += 1
        level = [child for container in level
                 for child in (container.values() if isinstance(container, dict) else container)
                 if isinstance(child, dict | list)]
    return depth


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests more than ``limit`` objects and arrays."""
    return nesting_depth(value, limit) > limit


def may_nest_too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """False when JSON text ``raw`` cannot nest more than ``limit`` deep: it opens no more objects
    and arrays than that (brackets in strings only overcount).  Counting bytes in C spares
    almost every request body the walk of :func:`too_deep`."""
    return raw.count(b"{") + raw.count(b"[") > limit
