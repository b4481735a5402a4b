"""core/v1 node selection and taint toleration, pure functions over wire-format dicts.

Mirrors ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` and the toleration helpers of
``k8s.io/api/core/v1``:

- A ``NodeSelector``'s terms are ORed.  Within a term, ``matchExpressions`` (on node labels) and
  ``matchFields`` (only ``metadata.name``, operators ``In``/``NotIn`` with exactly one value) are
  ANDed.  A term with neither selects nothing; a term that does not validate never matches but
  leaves the other terms alone.  A ``None`` selector puts no constraint on the node.
- A pod's required node affinity is ``spec.nodeSelector`` (every label must match) AND
  ``spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``.
- A toleration matches a taint when effects agree (empty effect = every effect), keys agree
  (empty key = every key) and the operator holds: ``Equal`` (the default) compares values,
  ``Exists`` accepts any value, ``Gt``/``Lt`` compare the values as integers.  DRA device taints
  and tolerations use the same rules.

Parse once and match many: :func:`parse_node_selector` and :func:`required_node_affinity` return
immutable matchers for the scheduler's per-node loops; the ``*_matches`` functions are shortcuts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakeapi.machinery.selectors import (
    DOES_NOT_EXIST,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_IN,
    FieldSelector,
    LabelSelector,
    Requirement,
    SelectorError,
    new_requirement,
    parse_int64,
    selector_from_requirements,
)

_LABEL_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST,
                    "Gt": GREATER_THAN, "Lt": LESS_THAN}
_FIELD_OPERATORS = {"In": "=", "NotIn": "!="}
NODE_NAME_FIELD = "metadata.name"
DEFAULT_TAINT_EFFECTS = ("NoSchedule", "NoExecute")


def _node_labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def _node_fields(node: Mapping[str, Any]) -> dict[str, str]:
    # The only node field a NodeSelector may select on.
    return {NODE_NAME_FIELD: (node.get("metadata") or {}).get("name") or ""}


@dataclass(frozen=True, slots=True)
class ParsedNodeSelectorTerm:
    """A validated ``NodeSelectorTerm``; ``None`` parts put no constraint."""

    labels: LabelSelector | None
    fields: FieldSelector | None

    def matches(self, node: Mapping[str, Any]) -> bool:
        if self.labels is not None and not self.labels.matches(_node_labels(node)):
            return False
        return self.fields is None or self.fields.matches(_node_fields(node).get)


def _parse_expressions(expressions: Sequence[Mapping[str, Any]]) -> LabelSelector:
    requirements = []
    for expr in expressions:
        operator = _LABEL_OPERATORS.get(expr.get("operator", ""))
        if operator is None:
            raise SelectorError(f'"{expr.get("operator")}" is not a valid node selector operator')
        requirements.append(new_requirement(expr.get("key", ""), operator, expr.get("values") or ()))
    return selector_from_requirements(requirements)


def _parse_fields(expressions: Sequence[Mapping[str, Any]]) -> FieldSelector:
    requirements = []
    for expr in expressions:
        operator = _FIELD_OPERATORS.get(expr.get("operator", ""))
        values = expr.get("values") or []
        if operator is None:
            raise SelectorError(f'"{expr.get("operator")}" is not a valid node field selector operator')
        if len(values) != 1:
            raise SelectorError(f"unexpected number of value ({len(values)}) for node field selector "
                                f'operator "{expr.get("operator")}"')
        requirements.append((expr.get("key", ""), operator, values[0]))
    return FieldSelector(tuple(requirements))


def parse_node_selector_term(term: Mapping[str, Any]) -> ParsedNodeSelectorTerm | None:
    """Parse a term; ``None`` when it can never match (empty, or invalid as upstream judges)."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return None
    try:
        return ParsedNodeSelectorTerm(
            labels=_parse_expressions(expressions) if expressions else None,
            fields=_parse_fields(fields) if fields else None,
        )
    except SelectorError:
        return None


@dataclass(frozen=True, slots=True)
class ParsedNodeSelector:
    """A parsed ``NodeSelector``: matches when any term matches, or always if ``match_all``."""

    terms: tuple[ParsedNodeSelectorTerm, ...] = ()
    match_all: bool = False

    def matches(self, node: Mapping[str, Any]) -> bool:
        return self.match_all or any(term.matches(node) for term in self.terms)


def parse_node_selector(selector: Mapping[str, Any] | None) -> ParsedNodeSelector:
    """Parse a ``NodeSelector``; ``None`` matches every node, no terms matches none."""
    if selector is None:
        return ParsedNodeSelector(match_all=True)
    parsed = (parse_node_selector_term(term) for term in selector.get("nodeSelectorTerms") or [])
    return ParsedNodeSelector(tuple(term for term in parsed if term is not None))


def node_selector_matches(selector: Mapping[str, Any] | None, node: Mapping[str, Any]) -> bool:
    """Whether ``node`` satisfies a ``NodeSelector`` (``None`` puts no constraint)."""
    return parse_node_selector(selector).matches(node)


def node_selector_term_matches(term: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether ``node`` satisfies one ``NodeSelectorTerm``; an empty term matches nothing."""
    parsed = parse_node_selector_term(term)
    return parsed is not None and parsed.matches(node)


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """A pod's hard node constraints: its ``nodeSelector`` labels AND its required affinity."""

    node_selector_labels: LabelSelector
    affinity: ParsedNodeSelector

    def matches(self, node: Mapping[str, Any]) -> bool:
        return self.node_selector_labels.matches(_node_labels(node)) and self.affinity.matches(node)


def required_node_affinity(pod: Mapping[str, Any]) -> RequiredNodeAffinity:
    """Parse the pod's ``spec.nodeSelector`` and required node affinity (upstream
    ``GetRequiredNodeAffinity``); the ``nodeSelector`` map is taken as is, without validation."""
    spec = pod.get("spec") or {}
    labels = selector_from_requirements(
        Requirement(key, EQUALS, (value,)) for key, value in (spec.get("nodeSelector") or {}).items())
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return RequiredNodeAffinity(
        labels, parse_node_selector(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")))


def node_matches_pod_affinity_and_selector(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether ``node`` satisfies the pod's ``nodeSelector`` and required node affinity."""
    return required_node_affinity(pod).matches(node)


def toleration_tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Whether one toleration matches one taint (upstream ``Toleration.ToleratesTaint``)."""
    effect, key = toleration.get("effect") or "", toleration.get("key") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or "Equal"
    want, have = toleration.get("value") or "", taint.get("value") or ""
    if operator == "Equal":
        return want == have
    if operator == "Exists":
        return True
    if operator in ("Gt", "Lt"):
        limit, actual = parse_int64(want), parse_int64(have)
        if limit is None or actual is None:
            return False
        return actual > limit if operator == "Gt" else actual < limit
    return False


def taint_tolerated(taint: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]] | None) -> bool:
    """Whether any of ``tolerations`` matches ``taint``."""
    return any(toleration_tolerates(toleration, taint) for toleration in tolerations or ())


def find_untolerated_taint(
    taints: Sequence[Mapping[str, Any]] | None,
    tolerations: Sequence[Mapping[str, Any]] | None,
    effects: Collection[str] | None = DEFAULT_TAINT_EFFECTS,
) -> dict[str, Any] | None:
    """The first taint with an effect in ``effects`` (``None``: any effect) that no toleration
    matches, or ``None`` (upstream ``FindMatchingUntoleratedTaint``)."""
    for taint in taints or ():
        if effects is not None and taint.get("effect") not in effects:
            continue
        if not taint_tolerated(taint, tolerations):
            return dict(taint)
    return None
