"""CEL selectors are compiled at admission so syntax and type errors surface as 422s.

The compiler lives in :mod:`fakeapi.machinery.cel` (shared with the allocator); it is imported
lazily because that module pulls in the CEL runtime, which most kinds never need.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, invalid, too_long

EXPRESSION_MAX = 10 * 1024


def check_selectors(selectors: list[dict[str, Any]], path: str) -> list[FieldError]:
    """Compile every ``selectors[i].cel.expression``; errors point at the expression."""
    from fakeapi.machinery.cel import CelError, compile_selector

    errs: list[FieldError] = []
    for i, sel in enumerate(selectors):
        expression = sel["cel"]["expression"]
        epath = f"{path}[{i}].cel.expression"
        if len(expression) > EXPRESSION_MAX:
            errs.append(too_long(epath, EXPRESSION_MAX))
            continue
        try:
            compile_selector(expression)
        except CelError as err:
            errs.append(invalid(epath, expression, str(err)))
    return errs
