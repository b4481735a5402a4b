"""Preemption rules as tables: victim ranking, PDB split, reprieve order, node choice; the nominator."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.scheduler.nominator import Nominator
from fakeapi.scheduler.preemption import (
    Candidate,
    Victim,
    by_importance,
    more_important,
    pick_node,
    reprieve,
    split_by_pdb,
)

from .builders import pod


def _pod(name: str, start: str | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    p = pod(name, uid=f"uid-{name}")
    p["metadata"]["labels"] = labels or {}
    if start:
        p["status"]["startTime"] = start
    return p


def _v(name: str, priority: int, *, group: bool = False, pods: int = 1, start: str | None = None,
       labels: dict[str, str] | None = None) -> Victim:
    return Victim(tuple(_pod(f"{name}-{i}" if pods > 1 else name, start, labels) for i in range(pods)),
                  priority, group)


EARLY, LATE = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"


@pytest.mark.parametrize(("a", "b"), [
    (_v("a", 10), _v("b", 5)),
    (_v("a", 5, group=True), _v("b", 5)),
    (_v("a", 5, group=True, pods=3), _v("b", 5, group=True, pods=2)),
    (_v("a", 5, start=EARLY), _v("b", 5, start=LATE)),
    (_v("a", 5, start=LATE), _v("b", 5)),
    (_v("a", 5), _v("b", 5)),
], ids=["priority", "group-over-pod", "more-pods", "earlier-start", "started-over-unstarted", "lower-uid"])
def test_more_important(a: Victim, b: Victim) -> None:
    assert more_important(a, b) and not more_important(b, a)
    assert by_importance([b, a]) == [a, b]


def _pdb(allowed: int, selector: dict[str, Any] | None, disrupted: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"metadata": {"name": "pdb", "namespace": "default"}, "spec": {"selector": selector},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": dict.fromkeys(disrupted, EARLY)}}


@pytest.mark.parametrize(("pdb", "violating"), [
    (_pdb(1, {"matchLabels": {"app": "db"}}), ["db-2"]),
    (_pdb(2, {"matchLabels": {"app": "db"}}), []),
    (_pdb(0, {"matchLabels": {"app": "web"}}), []),
    (_pdb(1, {"matchLabels": {"app": "db"}}, disrupted=("db-1",)), []),
    (_pdb(0, {}), []),
    (_pdb(0, {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}), []),
], ids=["second-one-violates", "room-for-both", "other-selector", "already-disrupted-not-counted",
        "empty-selector-matches-nothing", "invalid-selector-ignored"])
def test_split_by_pdb(pdb: dict[str, Any], violating: list[str]) -> None:
    victims = [_v("db-1", 1, labels={"app": "db"}), _v("db-2", 1, labels={"app": "db"}), _v("web", 1)]
    bad, good = split_by_pdb(victims, [pdb])
    assert [v.pods[0]["metadata"]["name"] for v in bad] == violating
    assert len(bad) + len(good) == 3


def test_reprieve_offers_violating_victims_first_then_the_most_important() -> None:
    offered: list[str] = []
    victims = [_v("low", 1), _v("mid", 5), _v("protected", 1, labels={"app": "db"})]

    def give_back(victim: Victim) -> bool:
        offered.append(victim.pods[0]["metadata"]["name"])
        return victim.pods[0]["metadata"]["name"] == "mid"   # only one fits back
    evicted, violations = reprieve(victims, [_pdb(0, {"matchLabels": {"app": "db"}})], give_back)
    assert offered == ["protected", "mid", "low"]
    assert [v.pods[0]["metadata"]["name"] for v in evicted] == ["protected", "low"] and violations == 1


@pytest.mark.parametrize(("candidates", "want"), [
    ([Candidate("a", (_v("x", 1),)), Candidate("b", ())], "b"),
    ([Candidate("a", (_v("x", 1),), 1), Candidate("b", (_v("y", 9),), 0)], "b"),
    ([Candidate("a", (_v("x", 9),)), Candidate("b", (_v("y", 1), _v("z", 1)))], "b"),
    ([Candidate("a", (_v("x", 5), _v("y", 5))), Candidate("b", (_v("z", 5),))], "b"),
    ([Candidate("a", (_v("x", 5, start=EARLY),)), Candidate("b", (_v("y", 5, start=LATE),))], "b"),
    ([Candidate("a", (_v("x", 5),)), Candidate("b", (_v("y", 5),))], "a"),
], ids=["no-victims-wins", "fewest-pdb-violations", "lowest-highest-priority", "lowest-priority-sum",
        "latest-start", "first-on-a-tie"])
def test_pick_node(candidates: list[Candidate], want: str) -> None:
    assert pick_node(candidates).node == want


def test_nominator_counts_pods_of_at_least_the_priority() -> None:
    nominator = Nominator()
    high = pod("high", requests={"cpu": "2"}, priority=100, uid="high")
    low = pod("low", requests={"cpu": "1"}, priority=1, uid="low")
    nominator.nominate(high, "n1")
    nominator.nominate(low, "n1")
    assert nominator.usage("n1", 50, "x") == ({"cpu": 2000}, 1)
    assert nominator.usage("n1", 1, "x") == ({"cpu": 3000}, 2)
    assert nominator.usage("n1", 1, "high") == ({"cpu": 1000}, 1)
    low["status"]["nominatedNodeName"] = "n2"
    nominator.observe(low)
    assert nominator.node_of("low") == "n2" and nominator.usage("n1", 1, "x") == ({"cpu": 2000}, 1)
    nominator.remove("high")
    assert nominator.pods_on("n1") == {}
