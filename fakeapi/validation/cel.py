"""CEL selectors are compiled at admission so syntax, type and cost errors surface as 422s.

As upstream's ``validateCELSelector``: too long is TooLong (not compiled), a compile error is
Invalid, an estimated worst-case cost above ``CELSelectorExpressionMaxCost`` is Forbidden "too
complex, exceeds cost limit".  The compiler lives in :mod:`fakeapi.machinery.cel` (shared with
the allocator); it is imported lazily because that module pulls in the CEL runtime, which most
kinds never need.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, too_long
from fakeapi.machinery.cel_cost import CEL_SELECTOR_EXPRESSION_MAX_COST, CEL_SELECTOR_EXPRESSION_MAX_LENGTH, TOO_COMPLEX


def check_selectors(selectors: list[dict[str, Any]], path: str) -> list[FieldError]:
    """Compile every ``selectors[i].cel.expression``; errors point at the expression."""
    from fakeapi.machinery.cel import CelError, compile_selector

    errs: list[FieldError] = []
    for i, sel in enumerate(selectors):
        expression = sel["cel"]["expression"]
        epath = f"{path}[{i}].cel.expression"
        if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            errs.append(too_long(epath, CEL_SELECTOR_EXPRESSION_MAX_LENGTH))
            continue
        try:
            compiled = compile_selector(expression)
        except CelError as err:
            errs.append(invalid(epath, expression, str(err)))
            continue
        if compiled.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
            errs.append(forbidden(epath, TOO_COMPLEX))
    return errs
