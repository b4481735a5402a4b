"""Worst-case cost of a DRA CEL selector, estimated before it runs.

Upstream (``k8s.io/dynamic-resource-allocation/cel/compile.go``) estimates every selector at
admission with cel-go's ``checker.Cost`` plus Kubernetes' ``library.CostEstimator`` and the
declared maximum sizes of the ``device`` variable; ``pkg/apis/resource/validation`` rejects an
estimate above ``CELSelectorExpressionMaxCost`` with "too complex, exceeds cost limit", and the
allocator evaluates with that number as runtime cost limit ("operation cancelled: actual cost
limit exceeded").  cel-expr-python offers neither an estimator nor a cost-limited evaluation, so
this module ports the estimator to the checked AST cel-cpp produces (``Expression.serialize()``,
a ``cel.expr.CheckedExpr`` read by :mod:`fakeapi.machinery.checked_expr`): the cost units, the size
propagation through literals, ``cel.bind`` and comprehensions, and the function costs follow
cel-go ``checker/cost.go`` and Kubernetes ``apiserver/pkg/cel/library/cost.go``, and upstream's
``device`` size limits are :data:`fakeapi.machinery.cel_device.API_LIMITS`.  Costs of ordinary
selectors come out as upstream's (``tests/unit/machinery/test_cel_cost.py`` checks upstream's own
expected costs).

A running evaluation here cannot be interrupted, so the estimate is also the runtime budget:
the allocator runs a selector only when its estimate for the device at hand is within budget.
That needs a bound on memory and time in *this* engine, which is where the estimate is stricter
than upstream's (which can afford gaps because cel-go tracks the actual cost as it runs):

- ``replace``, ``format``, ``split`` and ``base64.encode`` are also charged for the value they
  build, sized from their inputs (upstream charges ``replace`` twice its input, so
  ``s.replace("a", s)`` squares a string for the price of reading it; ``format`` has no size).
- List concatenation is charged per element: cel-cpp copies both lists (upstream: O(1)), and it
  copies the accumulator on every ``map``/``filter`` step, so those steps are charged for the
  list built so far (quadratic in the range, as measured).
- Equality and ``in`` are charged for the whole nested value they may compare, not only its
  top-level size, so a list that shares one big sublist many times is not compared for free.
- Functions upstream leaves at cost 1 with an unknown result size get their real linear cost and
  a size (``reverse``, ``charAt``, ``base64.*``, conversions, ``math.greatest``/``least``,
  ``matches(s, re)``); a size that stays unknown makes any cost that depends on it unknown.
- ``device`` is ``map(string, dyn)`` here, so its fields are typed by the same declaration
  upstream uses (:mod:`fakeapi.machinery.cel_device`); calls on other ``dyn`` values are charged as the most expensive
  of their candidate overloads.  Quantities and semvers are tagged ``bytes`` here (opaque values
  upstream), so they carry the size of their encoding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fakeapi.machinery.cel_device import API_LIMITS, DeviceSizes, declaration, declared_deep_size, declared_size
from fakeapi.machinery.checked_expr import EMPTY, Comprehension, Expr, decode

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "COST_LIMIT_EXCEEDED",
    "MAX",
    "TOO_COMPLEX",
    "estimate_cost",
]

CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024  # resourceapi.CELSelectorExpressionMaxLength
TOO_COMPLEX = "too complex, exceeds cost limit"  # admission, pkg/apis/resource/validation
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"  # cel-go at runtime

MAX = 2**64 - 1  # cel-go's uint64 arithmetic saturates here; an unknown size or cost is MAX


def estimate_cost(checked_expr: bytes, sizes: DeviceSizes = API_LIMITS) -> int:
    """Worst-case cost of a compiled expression (``cel.Expression.serialize()`` output).

    ``sizes`` bounds the ``device`` input: upstream's API limits by default, or one device's
    real sizes.  Returns :data:`MAX` when the cost cannot be bounded.
    """
    refs, types, root = decode(checked_expr)
    return _Estimator(refs, types, sizes).cost(root)


# ---------------------------------------------------------------------------------------------
# Saturating arithmetic (cel-go's addUint64NoOverflow & co.)


def _add(*values: int) -> int:
    return min(sum(values), MAX)


def _mul(a: int, b: int) -> int:
    return min(a * b, MAX)


def _factor(x: int, factor: float) -> int:
    """cel-go's multiplyByCostFactor: x * factor rounded up, saturating."""
    if x >= MAX:
        return MAX
    return min(math.ceil(x * factor), MAX)


STRING_TRAVERSAL = 0.1  # common.StringTraversalCostFactor
REGEX_LENGTH = 0.25  # common.RegexStringLengthCostFactor
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40  # common.*CreateBaseCost
# A formatted scalar is at most this long: format() caps precision at 1000 (cel-cpp), plus the
# 309 integer digits of the largest double, sign and point.
_FORMATTED_SCALAR = 1400
_FORMATTED_PER_UNIT = 32  # a formatted list/map element: separators plus a short scalar
_QUANTITY_SLACK = 1040  # encoding of quantity(s) beyond len(s): 1e1000 plus nano-units and tag


# ---------------------------------------------------------------------------------------------
# The estimator

Size = tuple[int, int]  # (min, max), cel-go's SizeEstimate
UNKNOWN: Size = (0, MAX)
_SCALARS = frozenset({"bool", "int", "uint", "double", "duration", "timestamp"})
_LIST_OVERLOADS = frozenset({"index_list", "optional_list_index_int", "in_list"})
# Functions upstream costs 1 that traverse their first operand here.
_LINEAR = frozenset({"charAt", "reverse", "base64.decode", "math.@max", "math.@min", "int", "uint", "double",
                     "bool", "timestamp", "duration", "quantity", "isQuantity", "semver", "isSemver", "string",
                     "bytes"})
_AS_LONG = frozenset({"reverse", "base64.decode", "string", "bytes"})  # results no longer than the operand
_FORMATTED_NUMBER = 32  # string() of a number, timestamp or duration
_OPTIONAL_WRAPPERS = frozenset({"optional_of", "optional_ofNonZeroValue", "optional_value", "optional_orValue_value",
                                "optional_or_optional", "optional_unwrap"})


@dataclass(slots=True)
class _Entry:
    """cel-go's entrySizeEstimate: sizes of a list's or map's keys and values."""

    container: str
    key: Size
    val: Size


@dataclass(slots=True)
class _Var:
    path: tuple[str, ...] | None
    size: Size | None
    entry: _Entry | None
    deep: int


def _union(a: Size, b: Size) -> Size:
    return (min(a[0], b[0]), max(a[1], b[1]))


def _size_add(a: Size, b: Size) -> Size:
    return (_add(a[0], b[0]), _add(a[1], b[1]))


def _entry_union(a: _Entry | None, b: _Entry | None) -> _Entry | None:
    if a is None or b is None:
        return None
    return _Entry(a.container, _union(a.key, b.key), _union(a.val, b.val))


class _Estimator:
    """cel-go's ``coster`` over the decoded AST; costs are maxima (the minimum never matters)."""

    def __init__(self, refs: dict[int, tuple[str, ...]], types: dict[int, tuple[Any, ...]], sizes: DeviceSizes) -> None:
        self.refs = refs
        self.types = types
        self.sizes = sizes
        self.paths: dict[int, tuple[str, ...]] = {}
        self.computed: dict[int, Size] = {}
        self.entries: dict[int, _Entry] = {}
        self.deeps: dict[int, int] = {}
        self.scopes: dict[str, list[_Var]] = {}

    # -- bookkeeping ---------------------------------------------------------------------------

    def kind(self, e: Expr) -> str:
        return self.types.get(e.id, ("other",))[0]

    def is_scalar(self, type_: tuple[Any, ...]) -> bool:
        if type_[0] == "optional_type" and len(type_) > 1:
            return self.is_scalar(type_[1])
        return type_[0] in _SCALARS

    def var(self, name: str) -> _Var | None:
        stack = self.scopes.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, var: _Var) -> None:
        self.scopes.setdefault(name, []).append(var)

    def pop(self, name: str) -> None:
        self.scopes[name].pop()

    def path(self, e: Expr) -> tuple[str, ...] | None:
        if e.kind == "ident":
            var = self.var(e.value)
            if var is not None:
                return var.path
        return self.paths.get(e.id)

    def size(self, e: Expr) -> Size | None:
        """cel-go's computeSize."""
        if e.id in self.computed:
            return self.computed[e.id]
        if e.kind == "const":
            if isinstance(e.value, str | bytes):
                return (len(e.value), len(e.value))
            return (1, 1)
        if e.kind in ("list", "map"):
            n = len(e.args or ()) // (2 if e.kind == "map" else 1)
            return (n, n)
        decl = declaration(self.path(e))
        if decl is not None:
            size = (0, declared_size(decl, self.sizes))
            self.computed[e.id] = size
            return size
        if self.is_scalar(self.types.get(e.id, ("other",))):
            return (1, 1)
        if e.kind == "ident":
            var = self.var(e.value)
            if var is not None and var.size is not None:
                return var.size
        return None

    def size_or_unknown(self, e: Expr) -> Size:
        return self.size(e) or UNKNOWN

    def entry(self, e: Expr) -> _Entry | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == "ident":
            var = self.var(e.value)
            if var is not None:
                return var.entry
        return None

    def deep(self, e: Expr) -> int:
        """Upper bound of the work to traverse or compare the whole value (fakeapi's addition)."""
        decl = declaration(self.path(e))
        if decl is not None:
            return declared_deep_size(decl, self.sizes)
        if e.id in self.deeps:
            return self.deeps[e.id]
        type_ = self.types.get(e.id, ("other",))
        if self.is_scalar(type_) or (e.kind == "const" and not isinstance(e.value, str | bytes)):
            return 1
        if type_[0] in ("string", "bytes") or e.kind == "const":
            return self.size_or_unknown(e)[1]
        if e.kind == "list":
            return _add(1, *(self.deep(x) for x in e.args or ()))
        if e.kind == "map":
            return _add(1, *(self.deep(x) + 1 for x in e.args or ()))
        if e.kind == "ident":
            var = self.var(e.value)
            return var.deep if var is not None else MAX
        if e.kind == "select" and e.operand is not None:
            return self.deep(e.operand)  # a part is never bigger than the whole
        return MAX

    # -- cost ----------------------------------------------------------------------------------

    def cost(self, e: Expr) -> int:
        if e.kind == "const":
            return 0
        if e.kind == "ident":
            if self.var(e.value) is None:
                self.paths[e.id] = (e.value,)
            return 1
        if e.kind == "select":
            return self.cost_select(e)
        if e.kind == "call":
            return self.cost_call(e)
        if e.kind == "list":
            return self.cost_list(e)
        if e.kind in ("map", "struct"):
            total = _add(*(self.cost(x) for x in e.args or ()))
            if e.kind == "map":
                keys, vals = (e.args or [])[0::2], (e.args or [])[1::2]
                key = val = (0 if not keys else MAX, 0)
                for k, v in zip(keys, vals, strict=True):
                    key, val = _union(key, self.size_or_unknown(k)), _union(val, self.size_or_unknown(v))
                self.entries[e.id] = _Entry("map", key, val)
            return _add(total, MAP_CREATE if e.kind == "map" else STRUCT_CREATE)
        if e.kind == "comprehension":
            return self.cost_comprehension(e)
        return 0

    def cost_select(self, e: Expr) -> int:
        operand = e.operand or EMPTY
        if e.test_only:
            # Kubernetes keeps has() free (PresenceTestHasCost(false) in its base environment).
            return self.cost(operand)
        total = self.cost(operand)
        if self.kind(operand) in ("map", "dyn", "other"):  # maps and messages; dyn stands for both
            total = _add(total, 1)
        self.paths[e.id] = (*(self.path(operand) or ()), e.value)
        return total

    def cost_list(self, e: Expr) -> int:
        total = 0
        item: Size = (0 if not e.args else MAX, 0)
        for x in e.args or ():
            total = _add(total, self.cost(x))
            item = _union(item, self.size_or_unknown(x))
        self.entries[e.id] = _Entry("list", (1, 1), item)
        return _add(total, LIST_CREATE)

    def cost_comprehension(self, e: Expr) -> int:
        c = e.comp
        assert c is not None
        rng, init = c.iter_range, c.accu_init
        is_bind = (rng.kind == "list" and not rng.args and c.loop_condition.kind == "const"
                   and c.loop_condition.value is False and c.accu_var != "@result")
        total = _add(self.cost(rng), self.cost(init))
        accu = _Var(self.path(init), self.size(init), self.entry(init), self.deep(init))
        if is_bind:
            self.push(c.accu_var, accu)
            total = _add(total, self.cost(c.result))
            self.pop(c.accu_var)
            self.copy_sizes(e, c.result)
            return total
        count = self.size_or_unknown(rng)
        growing = init.kind in ("list", "map")
        if growing:
            # cel-cpp copies the accumulator at every step: charge the steps for its full size.
            accu.size = _union(accu.size or (0, 0), (0, count[1]))
            accu.deep = 0  # the step's own additions are counted below
        self.push(c.accu_var, accu)
        self.push_iteration(c, rng)
        loop = _add(self.cost(c.loop_condition), self.cost(c.loop_step))
        self.pop(c.iter_var)
        if c.iter_var2:
            self.pop(c.iter_var2)
        if growing:
            accu.deep = _add(self.deep(init), _mul(count[1], self.deep(c.loop_step)))
        total = _add(total, self.cost(c.result))
        self.deeps[e.id] = self.deep(c.result)
        self.pop(c.accu_var)
        total = _add(total, _mul(count[1], loop))
        if init.kind == "const":
            init_size = self.size(init)
            if init_size is not None:
                self.computed[e.id] = init_size
        elif growing:
            self.computed[e.id] = count
            step_entry = self.entry(c.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    def push_iteration(self, c: Comprehension, rng: Expr) -> None:
        """cel-go's pushIterSingle / pushIterKey + pushIterValue."""
        entry = self.entry(rng)
        container = entry.container if entry else self.kind(rng)
        path = self.path(rng) or ()
        deep = self.deep(rng)
        is_list = container == "list"
        if c.iter_var2:
            self.push(c.iter_var, _Var((*path, "@indices" if is_list else "@keys"),
                                       entry.key if entry else None, None, deep))
            self.push(c.iter_var2, _Var((*path, "@items" if is_list else "@values"),
                                        entry.val if entry else None, None, deep))
            return
        size = (entry.val if is_list else entry.key) if entry else None
        self.push(c.iter_var, _Var((*path, "@items" if is_list else "@keys"), size, None, deep))

    def copy_sizes(self, dst: Expr, src: Expr) -> None:
        size, entry = self.size(src), self.entry(src)
        if size is not None:
            self.computed[dst.id] = size
        if entry is not None:
            self.entries[dst.id] = entry
        self.deeps[dst.id] = self.deep(src)

    def cost_call(self, e: Expr) -> int:
        args = e.args or []
        if e.value == "dyn" and len(args) == 1:
            total = _add(1, self.cost(args[0]))
            self.copy_sizes(e, args[0])
            return total
        arg_costs = [self.cost(a) for a in args]
        target = e.operand
        total = self.cost(target) if target is not None else 0
        overloads = self.refs.get(e.id, ())
        container = args[1] if e.value == "@in" and len(args) == 2 else args[0] if args else None
        if container is not None and (decl := declaration(self.path(container))) and decl[0] == "map":
            # Upstream's typed device picks the map overload; a dyn operand here lists both.
            overloads = tuple(o for o in overloads if o not in _LIST_OVERLOADS) or overloads
        fn_cost, result = -1, None
        for overload in overloads or ("",):
            cost, size = self.function_cost(e, overload, target, args, arg_costs)
            fn_cost = max(fn_cost, cost)
            if size is not None:
                result = size if result is None else _union(result, size)
            if overload in ("index_list", "index_map", "optional_list_index_int", "optional_map_index_value"):
                entry = self.entry(args[0])
                result = entry.val if entry else None
                suffix = "@values" if "map" in overload else "@items"
                self.paths[e.id] = (*(self.path(args[0]) or ()), suffix)
                self.deeps[e.id] = self.deep(args[0])
            if result is None:
                result = self.size(e)
        if result is not None:
            self.computed[e.id] = result
        if e.id not in self.deeps:
            type_ = self.types.get(e.id, ("other",))
            if self.is_scalar(type_):
                self.deeps[e.id] = 1
            elif type_[0] in ("string", "bytes") and result is not None:
                self.deeps[e.id] = result[1]
        return _add(total, fn_cost)

    def function_cost(self, e: Expr, overload: str, target: Expr | None, args: list[Expr],
                      arg_costs: list[int]) -> tuple[int, Size | None]:
        """(cost including the arguments', result size) of one overload: Kubernetes' estimator
        first (by function name), then cel-go's (by overload id), then the default of 1."""
        fn = e.value
        arg_sum = _add(*arg_costs)
        size = self.size_or_unknown
        subject = target if target is not None else (args[0] if args else None)
        # -- Kubernetes library.CostEstimator, plus this module's sizes for its results
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = size(target)
            return _add(_factor(sz[1], STRING_TRAVERSAL), arg_sum), sz
        if fn == "replace" and target is not None and len(args) >= 2:
            return self.replace_cost(target, args, arg_sum)
        if fn == "split" and target is not None:
            sz = size(target)
            limit = args[1].value if len(args) > 1 and args[1].kind == "const" else None
            count = (0, sz[1]) if not isinstance(limit, int) else (0, MAX if limit < 0 else limit)
            # The pieces hold at most the target's characters; one list element per piece.
            self.entries[e.id] = _Entry("list", (1, 1), (0, sz[1]))
            self.deeps[e.id] = _add(1, sz[1], min(count[1], _add(sz[1], 1)))
            built = min(count[1], _add(sz[1], 1))
            return _add(_factor(sz[1], 2 * STRING_TRAVERSAL), built, arg_sum), count
        if fn == "join" and target is not None:
            count, elem = size(target), self.element_size(target)
            built = _mul(count[1], elem[1])
            if args:
                built = _add(built, _mul(size(args[0])[1], max(count[1], 1) - 1))
            return _add(_factor(built, STRING_TRAVERSAL), arg_sum), (0, built)
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            type_ = self.types.get(target.id, ("other",))
            if type_[0] == "list" and len(type_) > 1:
                per = 1
                if type_[1][0] in ("string", "bytes"):
                    per = _add(1, _factor(self.element_size(target)[1], STRING_TRAVERSAL))
                return _add(_mul(size(target)[1], per), arg_sum), None
            return _add(_factor(size(target)[1], STRING_TRAVERSAL), arg_sum), None
        if fn in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
                  "compareTo", "major", "minor", "patch"):
            return _add(1, arg_sum), None
        if fn in ("add", "sub") and target is not None:
            built = _add(size(target)[1], *(size(a)[1] for a in args), 1)
            return _add(1, arg_sum), (0, built)
        # -- cel-go checker.functionCost
        if overload == "string_format" and target is not None:
            built = self.format_size(target, args)
            return _add(_factor(size(target)[1], STRING_TRAVERSAL), _factor(built, STRING_TRAVERSAL), arg_sum), \
                (0, built)
        if overload in ("string_to_bytes", "bytes_to_string", "strings_quote", "base64_encode_bytes") and subject:
            lo, hi = size(subject)
            built = {"string_to_bytes": (lo, _mul(hi, 4)), "bytes_to_string": (lo // 4, hi),
                     "strings_quote": (lo + 2, _add(_mul(hi, 2), 2)),
                     "base64_encode_bytes": (0, _mul(4, -(-hi // 3)) if hi < MAX else MAX)}[overload]
            extra = _factor(built[1], STRING_TRAVERSAL) if overload == "base64_encode_bytes" else 0
            return _add(_factor(hi, STRING_TRAVERSAL), extra, arg_sum), built
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _add(_factor(size(args[0])[1], STRING_TRAVERSAL), arg_sum), None
        if overload == "in_list" and len(args) == 2:
            per = max(1, _factor(min(self.deep(args[0]), self.deep(args[1])), STRING_TRAVERSAL))
            return _add(_mul(size(args[1])[1], per), arg_sum), None
        if (overload == "matches_string" and target is not None and len(args) == 1) or \
                (overload == "matches" and len(args) == 2):
            text, regex = (target, args[0]) if target is not None else (args[0], args[1])
            str_cost = _factor(_add(size(text)[1], 1), STRING_TRAVERSAL)
            return _add(_mul(str_cost, _factor(size(regex)[1], REGEX_LENGTH)), arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            cost = _mul(_factor(size(target)[1], STRING_TRAVERSAL), _factor(size(args[0])[1], STRING_TRAVERSAL))
            return _add(cost, arg_sum), None
        if overload in ("logical_and", "logical_or"):
            return arg_sum, None
        if overload == "conditional" and len(args) == 3:
            entry = _entry_union(self.entry(args[1]), self.entry(args[2]))
            if entry is not None:
                self.entries[e.id] = entry
            self.deeps[e.id] = max(self.deep(args[1]), self.deep(args[2]))
            return _add(arg_costs[0], max(arg_costs[1], arg_costs[2])), _union(size(args[1]), size(args[2]))
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            built = _size_add(size(args[0]), size(args[1]))
            entry = _entry_union(self.entry(args[0]), self.entry(args[1]))
            if entry is not None:
                self.entries[e.id] = entry
            if overload == "add_list":
                self.deeps[e.id] = _add(self.deep(args[0]), self.deep(args[1]))
                return _add(1, built[1], arg_sum), built  # cel-cpp copies both lists
            return _add(_factor(built[1], STRING_TRAVERSAL), arg_sum), built
        if overload in ("equals", "not_equals") or \
                (overload.startswith(("less_", "greater_")) and overload.endswith(("_string", "_bytes"))):
            smallest = min(self.deep(args[0]), self.deep(args[1])) if len(args) == 2 else MAX
            return _add(_factor(smallest, STRING_TRAVERSAL), arg_sum), None
        # -- default: O(1) upstream; linear here for what traverses its input
        if fn in _LINEAR and subject is not None:
            traversal = self.traversal(subject)
            built = None
            if fn in ("quantity", "semver"):
                built = (0, _add(size(subject)[1], _QUANTITY_SLACK))
            elif fn in _AS_LONG:
                scalar = self.is_scalar(self.types.get(subject.id, ("other",)))
                built = (0, _FORMATTED_NUMBER) if scalar else size(subject)
            elif fn == "charAt":
                built = (0, 1)
            return _add(max(1, traversal), arg_sum), built
        if overload in _OPTIONAL_WRAPPERS and subject is not None:
            # The result is one of the operands.
            operands = [subject, *args] if target is not None else args
            self.deeps[e.id] = max(self.deep(x) for x in operands)
            sizes = [self.size(x) for x in operands]
            if any(s is None for s in sizes):
                return _add(1, arg_sum), None
            joined = sizes[0]
            for s in sizes[1:]:
                joined = _union(joined, s)
            return _add(1, arg_sum), joined
        return _add(1, arg_sum), None

    def replace_cost(self, target: Expr, args: list[Expr], arg_sum: int) -> tuple[int, Size]:
        """Kubernetes' replace estimate; the cost also covers the string it builds (see above)."""
        sz, old, new = self.size_or_unknown(target), self.size_or_unknown(args[0]), self.size_or_unknown(args[1])
        if old[0] == 0:
            count_max, kept_max = (sz[1] + 1 if sz[1] < MAX else MAX), sz[1]
        elif new[1] <= old[0]:
            count_max, kept_max = 0, sz[1]
        else:
            count_max, kept_max = -(-sz[1] // old[0]) if sz[1] < MAX else MAX, 0
        if old[1] == 0:
            count_min, kept_min = (sz[0] + 1 if sz[0] < MAX else MAX), sz[0]
        elif old[1] <= new[0]:
            count_min, kept_min = 0, sz[0]
        else:
            count_min, kept_min = -(-sz[0] // old[1]), 0
        built = (_add(_mul(count_min, new[0]), kept_min), _add(_mul(count_max, new[1]), kept_max))
        cost = _factor(sz[1], 2 * STRING_TRAVERSAL)  # upstream: traversal plus a result as long
        if built[1] > sz[1]:
            cost = _add(cost, _factor(built[1] - sz[1], STRING_TRAVERSAL))
        return _add(cost, arg_sum), built

    def element_size(self, list_expr: Expr) -> Size:
        entry = self.entry(list_expr)
        if entry is not None:
            return entry.val
        decl = declaration((*(self.path(list_expr) or ()), "@items"))
        return (0, declared_size(decl, self.sizes)) if decl else UNKNOWN

    def format_size(self, target: Expr, args: list[Expr]) -> int:
        """Longest output of ``target.format(list)``: the template plus each argument formatted."""
        if not args:
            return self.size_or_unknown(target)[1]
        arg = args[0]
        per_item = MAX
        type_ = self.types.get(arg.id, ("other",))
        if type_[0] == "list" and len(type_) > 1 and self.is_scalar(type_[1]):
            per_item = _FORMATTED_SCALAR
        elif arg.kind == "list":
            per_item = max((self.formatted(x) for x in arg.args or ()), default=0)
        count = self.size_or_unknown(arg)[1]
        return _add(self.size_or_unknown(target)[1], _mul(count, per_item))

    def formatted(self, e: Expr) -> int:
        """Longest text one format() argument turns into (hex doubles strings and bytes)."""
        type_ = self.types.get(e.id, ("other",))
        if self.is_scalar(type_):
            return _FORMATTED_SCALAR
        if type_[0] in ("string", "bytes"):
            return _add(_mul(self.size_or_unknown(e)[1], 2), 2)
        return max(_mul(self.deep(e), _FORMATTED_PER_UNIT), _FORMATTED_SCALAR)

    def traversal(self, e: Expr) -> int:
        """The cost of reading a value once: per character for text, per element otherwise."""
        decl = declaration(self.path(e))
        if self.kind(e) in ("string", "bytes") or (decl is not None and decl[0] != "map"):
            return _factor(self.size_or_unknown(e)[1], STRING_TRAVERSAL)
        if self.is_scalar(self.types.get(e.id, ("other",))):
            return 0
        return self.size_or_unknown(e)[1]
