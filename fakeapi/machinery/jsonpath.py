"""The simple JSON paths CRDs use (``.spec.replicas``, ``.status.conditions[0].type``,
``.metadata.labels['app']``) for printer columns, selectable fields and scale paths.

kubectl's JSONPath dialect has much more (filters, ranges, wildcards); CRD paths that need more
are rare, and a path that does not parse evaluates to nothing, as upstream's table convertor
then prints an empty cell.
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"""\.([A-Za-z0-9_\-/]+)|\[(\d+)\]|\[['"]([^'"]*)['"]\]""")
MISSING = object()


class PathError(ValueError):
    """A path this evaluator cannot read."""


def parse_path(path: str) -> tuple[str | int, ...]:
    """``.a.b[0]['c']`` -> ``('a', 'b', 0, 'c')``; braces (``{.a}``) are accepted."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if not text.startswith("."):
        raise PathError(f"{path!r} must start with '.'")
    out: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise PathError(f"unsupported path {path!r}")
        name, index, key = match.groups()
        out.append(int(index) if index is not None else (name if name is not None else key))
        pos = match.end()
    return tuple(out)


def lookup(obj: Any, steps: tuple[str | int, ...]) -> Any:
    """The value at ``steps``, or :data:`MISSING`."""
    cur = obj
    for step in steps:
        if isinstance(step, int):
            if not isinstance(cur, list) or step >= len(cur):
                return MISSING
        elif not isinstance(cur, dict) or step not in cur:
            return MISSING
        cur = cur[step]
    return cur


def is_simple_path(path: str) -> bool:
    """A dotted path of field names only (what scale paths allow), starting with '.'."""
    return re.fullmatch(r"(\.[A-Za-z0-9_\-]+)+", path) is not None
