"""ClusterRole aggregation (upstream's clusterrole-aggregation controller), as a pure function
shared by the server's bootstrap policy and the control plane's controller.

An aggregated ClusterRole's rules are the rules of every other ClusterRole its
``aggregationRule.clusterRoleSelectors`` select: selector by selector, roles by name, each rule
once, in that order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakeapi.machinery.selectors import label_selector_from_dict


def aggregated_rules(role: dict[str, Any], cluster_roles: Iterable[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The rules ``role`` aggregates from ``cluster_roles``; None when it is not aggregated.

    Raises :class:`~fakeapi.machinery.selectors.SelectorError` for an invalid selector.
    """
    rule = role.get("aggregationRule")
    if rule is None:
        return None
    name = role["metadata"]["name"]
    candidates = sorted((r for r in cluster_roles if r["metadata"]["name"] != name),
                        key=lambda r: r["metadata"]["name"])
    rules: list[dict[str, Any]] = []
    for selector in rule.get("clusterRoleSelectors") or ():
        matcher = label_selector_from_dict(selector)
        for candidate in candidates:
            if not matcher.matches(candidate["metadata"].get("labels")):
                continue
            for candidate_rule in candidate.get("rules") or ():
                if candidate_rule not in rules:
                    rules.append(candidate_rule)
    return rules
