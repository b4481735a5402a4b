"""Preemption rules of kube-scheduler 1.37 (``framework/preemption``), pure: no I/O, no caches.

- A *victim* is a unit of eviction: one pod, or — when the pod's pod group has
  ``disruptionMode: all`` — every scheduled pod of that group together (workload-aware
  preemption, KEP-5710): such a member is never a lone victim.  A victim's priority is its
  group's (a pod outside groups: its own).
- Victims are ranked by :func:`more_important` (``MoreImportantVictim``); the least important go
  first.  The preemptor gives back (*reprieves*) as many as it can, most important first, the
  PodDisruptionBudget-violating ones before the others.
- Among candidate nodes for a single pod, :func:`pick_node` applies ``pickOneNodeForPreemption``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakeapi.machinery.selectors import SelectorError, label_selector_from_dict

FAR_FUTURE = "9999-12-31T23:59:59Z"   # unstarted pods count as started last
_SHIFT = 2**31


@dataclass(frozen=True)
class Victim:
    """Pods evicted together; ``group`` marks a pod group (ranked above single pods)."""

    pods: tuple[dict[str, Any], ...]
    priority: int
    group: bool = False

    @property
    def start(self) -> str:
        """The earliest start time of its pods (RFC 3339 sorts as text)."""
        return min(((p.get("status") or {}).get("startTime") or FAR_FUTURE for p in self.pods), default=FAR_FUTURE)

    @property
    def uid(self) -> str:
        return min(p["metadata"]["uid"] for p in self.pods)


def _rank_key(victim: Victim) -> tuple[Any, ...]:
    """Sort key, most important first: priority, group over pod, more pods, earlier start, lower UID."""
    return (-victim.priority, -int(victim.group), -len(victim.pods), victim.start, victim.uid)


def more_important(a: Victim, b: Victim) -> bool:
    """Upstream ``MoreImportantVictim``."""
    return _rank_key(a) < _rank_key(b)


def by_importance(victims: Iterable[Victim]) -> list[Victim]:
    """Most important first."""
    return sorted(victims, key=_rank_key)


def split_by_pdb(victims: Sequence[Victim], pdbs: Sequence[Mapping[str, Any]]) -> tuple[list[Victim], list[Victim]]:
    """(violating, non-violating), keeping order (``filterPodsWithPDBViolation``).

    Evicting a pod uses one of ``disruptionsAllowed`` of each budget selecting it (pods already
    in its ``disruptedPods`` aside); a victim violates when any of its pods drives one below 0.
    Budgets with an invalid or empty selector match nothing.
    """
    allowed = [int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) for pdb in pdbs]
    selectors = []
    for pdb in pdbs:
        try:
            selector = (pdb.get("spec") or {}).get("selector")
            selectors.append(None if not selector else label_selector_from_dict(selector))
        except SelectorError:
            selectors.append(None)
    violating, fine = [], []
    for victim in victims:
        violates = False
        for pod in victim.pods:
            meta = pod["metadata"]
            for i, pdb in enumerate(pdbs):
                selector = selectors[i]
                if (selector is None or (pdb.get("metadata") or {}).get("namespace") != meta.get("namespace")
                        or not selector.matches(meta.get("labels") or {})):
                    continue
                if meta["name"] in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                    continue
                allowed[i] -= 1
                violates = violates or allowed[i] < 0
        (violating if violates else fine).append(victim)
    return violating, fine


def reprieve(victims: Sequence[Victim], pdbs: Sequence[Mapping[str, Any]],
             give_back: Callable[[Victim], bool]) -> tuple[list[Victim], int]:
    """The victims that must go, and how many of them violate a budget.

    ``give_back`` puts a victim back into the simulation and answers whether the preemptor still
    fits (if not, it takes the victim out again).  Victims are offered most important first,
    budget-violating ones before the others.
    """
    violating, fine = split_by_pdb(by_importance(victims), pdbs)
    evicted: list[Victim] = []
    violations = 0
    for group, violates in ((violating, True), (fine, False)):
        for victim in group:
            if not give_back(victim):
                evicted.append(victim)
                violations += violates
    return evicted, violations


@dataclass(frozen=True)
class Candidate:
    """A node where the preemptor fits once ``victims`` are gone."""

    node: str
    victims: tuple[Victim, ...]
    violations: int = 0


def pick_node(candidates: Sequence[Candidate]) -> Candidate:
    """Upstream ``pickOneNodeForPreemption``: no victims wins; else fewest budget violations, lowest
    highest priority, lowest sum of priorities, fewest pods, latest start of the highest-priority
    victims, first in order."""
    for candidate in candidates:
        if not candidate.victims:
            return candidate

    def key(c: Candidate) -> tuple[Any, ...]:
        highest = max(v.priority for v in c.victims)
        earliest_top = min(v.start for v in c.victims if v.priority == highest)
        # Upstream shifts each pod's priority by 2**31 so that the sum also counts pods.
        return (c.violations, highest, sum((v.priority + _SHIFT) * len(v.pods) for v in c.victims),
                sum(len(v.pods) for v in c.victims), _descending(earliest_top))

    return min(candidates, key=key)


def _descending(text: str) -> tuple[int, ...]:
    """A key that sorts strings in reverse order (later start times first)."""
    return tuple(-ord(ch) for ch in text)
