"""Fault rules: what they match, the Status they answer, how counts and probabilities fire."""

from __future__ import annotations

import pytest

from fakeapi.errors import BadRequest
from fakeapi.machinery.faults import FaultRule, FaultSet, RequestFacts, fault_error, parse_rule

UPDATE_CLAIM_STATUS = RequestFacts("update", "resourceclaims", "status", "resource.k8s.io", "ns", "claim-1",
                                   "fakeapi-control-plane")
CREATE_POD = RequestFacts("create", "pods", "", "", "default", "", "kubectl/v1.37.1")
GET_NODE = RequestFacts("get", "nodes", "", "", "", "node-1", "python")
HEALTHZ = RequestFacts("get", resource_request=False)


@pytest.mark.parametrize(("rule", "facts", "matches"), [
    (FaultRule(code=500), UPDATE_CLAIM_STATUS, True),
    (FaultRule(code=500), HEALTHZ, False),
    (FaultRule(verbs=frozenset({"update"}), code=409), UPDATE_CLAIM_STATUS, True),
    (FaultRule(verbs=frozenset({"create", "patch"}), code=409), UPDATE_CLAIM_STATUS, False),
    (FaultRule(resource="resourceclaims", code=409), UPDATE_CLAIM_STATUS, False),
    (FaultRule(resource="resourceclaims/status", code=409), UPDATE_CLAIM_STATUS, True),
    (FaultRule(resource="resourceclaims/*", code=409), UPDATE_CLAIM_STATUS, True),
    (FaultRule(resource="pods", code=409), CREATE_POD, True),
    (FaultRule(resource="pods/*", code=409), CREATE_POD, False),
    (FaultRule(group="resource.k8s.io", code=500), UPDATE_CLAIM_STATUS, True),
    (FaultRule(group="", code=500), UPDATE_CLAIM_STATUS, False),
    (FaultRule(namespace="ns", code=500), UPDATE_CLAIM_STATUS, True),
    (FaultRule(namespace="", code=500), GET_NODE, True),
    (FaultRule(namespace="", code=500), CREATE_POD, False),
    (FaultRule(name="claim-*", code=500), UPDATE_CLAIM_STATUS, True),
    (FaultRule(name="node-*", code=500), UPDATE_CLAIM_STATUS, False),
    (FaultRule(user_agent="kubectl/*", code=429), CREATE_POD, True),
    (FaultRule(user_agent="kubectl/*", code=429), UPDATE_CLAIM_STATUS, False),
], ids=["any", "non-resource", "verb", "other-verbs", "resource-not-subresource", "subresource",
        "any-subresource", "resource", "subresource-wildcard-not-main", "group", "core-group", "namespace",
        "cluster-scoped", "cluster-scoped-only", "name-pattern", "other-name", "user-agent", "other-user-agent"])
def test_rule_matching(rule, facts, matches):
    assert rule.matches(facts) is matches


@pytest.mark.parametrize(("code", "facts", "status", "headers"), [
    (409, UPDATE_CLAIM_STATUS,
     {"code": 409, "reason": "Conflict",
      "message": 'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "claim-1": the object has been '
                 "modified; please apply your changes to the latest version and try again",
      "details": {"name": "claim-1", "group": "resource.k8s.io", "kind": "resourceclaims"}}, {}),
    (429, CREATE_POD, {"code": 429, "reason": "TooManyRequests",
                       "message": "Too many requests, please try again later.",
                       "details": {"retryAfterSeconds": 1}}, {"Retry-After": "1"}),
    (500, GET_NODE, {"code": 500, "reason": "InternalError",
                     "message": "Internal error occurred: fakeapi: injected fault",
                     "details": {"causes": [{"message": "fakeapi: injected fault"}]}}, {}),
    (503, GET_NODE, {"code": 503, "reason": "ServiceUnavailable",
                     "message": "the server is currently unable to handle the request"}, {}),
], ids=["409-conflict", "429-retry-after", "500-internal", "503-unavailable"])
def test_error_shapes_are_upstreams(code, facts, status, headers):
    faults = FaultSet()
    faults.fail(code=code)
    decision = faults.decide(facts)
    assert decision is not None and decision.error is not None
    rendered = decision.error.to_status()
    assert {k: rendered[k] for k in status} == status
    assert rendered["kind"] == "Status" and rendered["status"] == "Failure"
    assert decision.headers == headers
    assert fault_error(code, facts).to_status() == rendered


def test_count_bounds_how_often_a_fault_fires_and_with_ends_it():
    faults = FaultSet()
    with faults.fail(code=409, verb="update", count=2) as fault:
        answers = [faults.decide(UPDATE_CLAIM_STATUS) for _ in range(3)]
        assert [a is not None for a in answers] == [True, True, False]
        assert fault.fired == 2 and fault.exhausted
    assert not faults
    assert faults.decide(UPDATE_CLAIM_STATUS) is None


def test_latencies_add_up_and_the_first_error_wins():
    faults = FaultSet()
    faults.latency(0.25)
    first = faults.fail(code=503)
    second = faults.fail(code=500)
    faults.latency(0.5, verb="get")
    decision = faults.decide(GET_NODE)
    assert decision is not None and decision.latency == 0.75
    assert decision.error is not None and decision.error.code == 503
    assert (first.fired, second.fired) == (1, 0)


def test_probability_is_replayable_from_the_seed():
    def run(seed):
        faults = FaultSet(seed)
        faults.fail(code=500, probability=0.3)
        return [faults.decide(GET_NODE) is not None for _ in range(200)]

    first = run(7)
    assert first == run(7)
    assert 30 < sum(first) < 90


@pytest.mark.parametrize(("body", "message"), [
    ([], "a fault must be a JSON object"),
    ({"code": 418}, "invalid fault: code must be one of 409, 429, 500, 503, not 418"),
    ({"verb": "frobnicate", "code": 500}, "invalid fault: unknown verb 'frobnicate'"),
    ({"resource": "pods"}, "invalid fault: a fault needs a code or a latency"),
    ({"code": 500, "count": 0}, "invalid fault: count must be at least 1"),
    ({"code": 500, "probability": 1.5}, "invalid fault: probability must be in (0, 1]"),
    ({"code": "500"}, "code must be a int"),
    ({"code": 500, "colour": "red"}, "unknown fault fields: colour"),
    ({"verb": ["get", 3], "code": 500}, "verb must be a string or a list of strings"),
], ids=["not-object", "code", "verb", "no-effect", "count", "probability", "type", "unknown-field", "verb-list"])
def test_parse_rule_refuses_bad_input(body, message):
    with pytest.raises(BadRequest) as err:
        parse_rule(body)
    assert err.value.message == message


def test_parse_rule_reads_what_to_dict_shows():
    faults = FaultSet()
    fault = faults.add(parse_rule({"verb": ["update", "patch"], "resource": "pods/status", "namespace": "ns",
                                   "name": "web-*", "userAgent": "kopf*", "code": 429, "count": 3,
                                   "probability": 0.5, "retryAfterSeconds": 2, "latencySeconds": 0.1}))
    shown = fault.to_dict()
    assert shown["verbs"] == ["patch", "update"] and shown["retryAfterSeconds"] == 2
    assert parse_rule({k: v for k, v in shown.items() if k not in ("id", "fired")}) == fault.rule
