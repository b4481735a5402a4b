"""Node selectors, required node affinity and taint toleration over wire-format dicts."""

from __future__ import annotations

import pytest

from fakeapi.machinery.nodeselector import (
    find_untolerated_taint,
    node_matches_pod_affinity_and_selector,
    node_selector_matches,
    node_selector_term_matches,
    parse_node_selector,
    taint_tolerated,
    toleration_tolerates,
)


def node(name="node-1", **labels):
    return {"metadata": {"name": name, "labels": dict(labels)}}


def req(key, operator, *values):
    return {"key": key, "operator": operator, "values": list(values)}


def term(*expressions, fields=()):
    out = {}
    if expressions:
        out["matchExpressions"] = list(expressions)
    if fields:
        out["matchFields"] = list(fields)
    return out


def selector(*terms):
    return {"nodeSelectorTerms": list(terms)}


GPU = node("gpu-1", zone="a", gpus="4", kind="gpu")

# (term, expected) against GPU
TERMS = [
    (term(req("zone", "In", "a", "b")), True),
    (term(req("zone", "In", "b")), False),
    (term(req("missing", "In", "a")), False),
    (term(req("zone", "NotIn", "b")), True),
    (term(req("zone", "NotIn", "a")), False),
    (term(req("missing", "NotIn", "a")), True),
    (term(req("zone", "Exists")), True),
    (term(req("missing", "Exists")), False),
    (term(req("missing", "DoesNotExist")), True),
    (term(req("zone", "DoesNotExist")), False),
    (term(req("gpus", "Gt", "3")), True),
    (term(req("gpus", "Gt", "4")), False),
    (term(req("gpus", "Lt", "5")), True),
    (term(req("gpus", "Lt", "4")), False),
    (term(req("zone", "Gt", "1")), False),
    (term(req("missing", "Lt", "9")), False),
    (term(req("zone", "In", "a"), req("kind", "In", "gpu")), True),
    (term(req("zone", "In", "a"), req("kind", "In", "cpu")), False),
    (term(fields=[req("metadata.name", "In", "gpu-1")]), True),
    (term(fields=[req("metadata.name", "In", "gpu-2")]), False),
    (term(fields=[req("metadata.name", "NotIn", "gpu-2")]), True),
    (term(fields=[req("metadata.name", "NotIn", "gpu-1")]), False),
    (term(req("zone", "In", "a"), fields=[req("metadata.name", "In", "gpu-1")]), True),
    (term(req("zone", "In", "b"), fields=[req("metadata.name", "In", "gpu-1")]), False),
    (term(req("zone", "In", "a"), fields=[req("metadata.name", "In", "gpu-2")]), False),
    (term(fields=[req("spec.unschedulable", "In", "")]), True),  # unknown fields read as ""
    # Empty and invalid terms never match.
    ({}, False),
    ({"matchExpressions": [], "matchFields": []}, False),
    (term(req("zone", "Equals", "a")), False),
    (term(req("zone", "In")), False),
    (term(req("zone", "Exists", "a")), False),
    (term(req("gpus", "Gt", "x")), False),
    (term(req("gpus", "Gt", "1", "2")), False),
    (term(req("bad key", "Exists")), False),
    (term(req("zone", "NotIn", "bad value")), False),
    (term(fields=[req("metadata.name", "In", "gpu-1", "gpu-2")]), False),
    (term(fields=[req("metadata.name", "Exists")]), False),
]


@pytest.mark.parametrize(("node_term", "expected"), TERMS, ids=[f"{i}-{e}" for i, (_, e) in enumerate(TERMS)])
def test_node_selector_term(node_term, expected):
    assert node_selector_term_matches(node_term, GPU) is expected


SELECTORS = [
    (None, True),
    (selector(), False),
    (selector({}), False),
    (selector(term(req("zone", "In", "b")), term(req("kind", "In", "gpu"))), True),
    (selector(term(req("zone", "In", "b")), term(req("kind", "In", "cpu"))), False),
    # An invalid term does not spoil a valid one.
    (selector(term(req("zone", "Bogus")), term(req("zone", "In", "a"))), True),
    (selector({}, term(req("zone", "Exists"))), True),
]


@pytest.mark.parametrize(("node_selector", "expected"), SELECTORS,
                         ids=["none", "no-terms", "empty-term", "or-second", "or-none", "invalid-other",
                              "empty-other"])
def test_node_selector_terms_are_ored(node_selector, expected):
    assert node_selector_matches(node_selector, GPU) is expected


def test_parsed_node_selector_matches_many_nodes():
    parsed = parse_node_selector(selector(term(req("zone", "In", "a"))))
    assert [parsed.matches(n) for n in (node("n1", zone="a"), node("n2", zone="b"), node("n3"))] == [
        True, False, False]
    assert parsed.matches({"metadata": {"name": "bare"}}) is False


def pod(node_selector=None, required=None):
    spec = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if required is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    return {"metadata": {"name": "p"}, "spec": spec}


PODS = [
    (pod(), True),
    (pod(node_selector={}), True),
    (pod(node_selector={"zone": "a"}), True),
    (pod(node_selector={"zone": "a", "kind": "gpu"}), True),
    (pod(node_selector={"zone": "a", "kind": "cpu"}), False),
    (pod(required=selector(term(req("gpus", "Gt", "2")))), True),
    (pod(required=selector()), False),
    (pod(node_selector={"zone": "a"}, required=selector(term(req("kind", "In", "gpu")))), True),
    (pod(node_selector={"zone": "b"}, required=selector(term(req("kind", "In", "gpu")))), False),
    (pod(node_selector={"zone": "a"}, required=selector(term(req("kind", "In", "cpu")))), False),
    ({"spec": {"affinity": {"podAffinity": {}}}}, True),
]


@pytest.mark.parametrize(("the_pod", "expected"), PODS, ids=[f"{i}-{e}" for i, (_, e) in enumerate(PODS)])
def test_pod_node_selector_and_required_affinity(the_pod, expected):
    assert node_matches_pod_affinity_and_selector(the_pod, GPU) is expected


# --- taints and tolerations ---------------------------------------------------------------------

def taint(key="gpu", value="", effect="NoSchedule"):
    return {"key": key, "value": value, "effect": effect}


def tol(key="", operator="", value="", effect=""):
    out = {"key": key, "value": value, "effect": effect}
    if operator:
        out["operator"] = operator
    return out


TOLERATIONS = [
    (tol("gpu"), taint("gpu"), True),  # operator defaults to Equal, values both empty
    (tol("gpu", "Equal", "x"), taint("gpu", "x"), True),
    (tol("gpu", "Equal", "x"), taint("gpu", "y"), False),
    (tol("gpu", value="x"), taint("gpu"), False),
    (tol("other", "Exists"), taint("gpu"), False),
    (tol("gpu", "Exists"), taint("gpu", "anything"), True),
    (tol("", "Exists"), taint("gpu", "x", "NoExecute"), True),  # empty key + Exists tolerates all
    (tol("gpu", "Exists", effect="NoSchedule"), taint("gpu", effect="NoSchedule"), True),
    (tol("gpu", "Exists", effect="NoExecute"), taint("gpu", effect="NoSchedule"), False),
    (tol("gpu", "Exists", effect=""), taint("gpu", effect="NoExecute"), True),
    (tol("gpu", "Gt", "5"), taint("gpu", "7"), True),
    (tol("gpu", "Gt", "7"), taint("gpu", "7"), False),
    (tol("gpu", "Lt", "5"), taint("gpu", "3"), True),
    (tol("gpu", "Lt", "3"), taint("gpu", "3"), False),
    (tol("gpu", "Gt", "x"), taint("gpu", "7"), False),
    (tol("gpu", "Lt", "5"), taint("gpu", "three"), False),
    (tol("gpu", "Bogus"), taint("gpu"), False),
]


@pytest.mark.parametrize(("toleration", "the_taint", "expected"), TOLERATIONS,
                         ids=[f"{i}-{e}" for i, (_, _, e) in enumerate(TOLERATIONS)])
def test_toleration_tolerates_taint(toleration, the_taint, expected):
    assert toleration_tolerates(toleration, the_taint) is expected
    assert taint_tolerated(the_taint, [tol("unrelated", "Exists"), toleration]) is expected


def test_no_tolerations_tolerate_nothing():
    assert not taint_tolerated(taint(), [])
    assert not taint_tolerated(taint(), None)


UNTOLERATED = [
    ([], [], None),
    ([taint("a")], [], taint("a")),
    ([taint("a"), taint("b")], [tol("a", "Exists")], taint("b")),
    ([taint("a"), taint("b")], [tol("", "Exists")], None),
    ([taint("a", effect="PreferNoSchedule")], [], None),  # soft taints are not in the default effects
    ([taint("a", effect="None")], [], None),  # DRA informational taints
    ([taint("a", effect="NoExecute"), taint("b")], [tol("a", "Exists", effect="NoSchedule")],
     taint("a", effect="NoExecute")),
]


@pytest.mark.parametrize(("taints", "tolerations", "expected"), UNTOLERATED,
                         ids=["none", "one", "second", "all-tolerated", "prefer", "dra-none", "effect-mismatch"])
def test_find_untolerated_taint(taints, tolerations, expected):
    assert find_untolerated_taint(taints, tolerations) == expected


def test_find_untolerated_taint_effect_filter():
    soft = taint("a", effect="PreferNoSchedule")
    assert find_untolerated_taint([soft], [], effects=None) == soft
    assert find_untolerated_taint([soft, taint("b")], [], effects=("NoExecute",)) is None
