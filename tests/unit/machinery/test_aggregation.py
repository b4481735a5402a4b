"""ClusterRole aggregation: selected roles by name, rules once each, selector by selector."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.aggregation import aggregated_rules
from fakeapi.machinery.selectors import SelectorError


def role(name: str, *verbs: str, labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}},
            "rules": [{"verbs": [v], "apiGroups": [""], "resources": ["pods"]} for v in verbs], **extra}


def aggregating(*selectors: dict[str, Any], name: str = "agg") -> dict[str, Any]:
    return role(name, "stale", labels={"to-admin": "true"},
                aggregationRule={"clusterRoleSelectors": list(selectors)})


EDIT = {"matchLabels": {"to-edit": "true"}}
VIEW = {"matchExpressions": [{"key": "to-view", "operator": "Exists"}]}
ROLES = [
    role("b-view", "list", labels={"to-view": "true"}),
    role("a-edit", "create", "get", labels={"to-edit": "true"}),
    role("c-both", "get", "watch", labels={"to-edit": "true", "to-view": "yes"}),
    role("unlabelled", "delete"),
]

CASES = [
    ("not-aggregated", role("plain", "get"), None),
    ("no-selectors", aggregating(), []),
    ("one-selector-by-name", aggregating(EDIT), ["create", "get", "watch"]),
    ("selector-order-then-name", aggregating(VIEW, EDIT), ["list", "get", "watch", "create"]),
    ("empty-selector-selects-all-but-itself", aggregating({}), ["create", "get", "list", "watch", "delete"]),
    ("never-itself", aggregating({"matchLabels": {"to-admin": "true"}}), []),
]


@pytest.mark.parametrize(("target", "verbs"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_aggregated_rules(target: dict[str, Any], verbs: list[str] | None) -> None:
    rules = aggregated_rules(target, [*ROLES, target])
    assert (None if rules is None else [r["verbs"][0] for r in rules]) == verbs


def test_invalid_selector_raises() -> None:
    with pytest.raises(SelectorError):
        aggregated_rules(aggregating({"matchExpressions": [{"key": "k", "operator": "Near"}]}), ROLES)
