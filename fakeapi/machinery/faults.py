"""Fault injection as data: which requests to break, how, and the answer they get.

A :class:`FaultSet` holds :class:`FaultRule` s.  The API server asks :meth:`FaultSet.decide` once
per request with the request's :class:`RequestFacts` (verb, resource, namespace, name, user
agent, parsed as upstream's ``RequestInfo``); the decision is a latency to add and, maybe, an
error to answer instead of serving the request.  Rules match like RBAC rules: ``resource``
``"pods"`` is the pods themselves, ``"pods/status"`` their status subresource, ``"pods/*"`` any
of their subresources and ``"*"`` everything.  A rule fires on every match, at most ``count``
times, or with ``probability`` (from the set's seeded generator, so a failing run replays).

The errors are shaped as upstream's apiserver shapes them (``k8s.io/apimachinery/pkg/api/errors``):
409 ``NewConflict`` ("Operation cannot be fulfilled on ..."), 429 ``NewTooManyRequests`` (with
``details.retryAfterSeconds`` and a ``Retry-After`` header), 500 ``NewInternalError``
("Internal error occurred: ..."), 503 ``NewServiceUnavailable``.

Pure: no I/O, no event loop; the server's middleware (``fakeapi.server.faults``) applies decisions.
"""

from __future__ import annotations

import fnmatch
import itertools
import random
import threading
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from types import TracebackType
from typing import Any

from fakeapi.errors import (
    BadRequest,
    Conflict,
    ServiceUnavailable,
    StatusError,
    TooManyRequests,
    internal_error,
    resource_name,
    status_details,
)

VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})
CODES = (409, 429, 500, 503)
CONFLICT_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again"
TOO_MANY_REQUESTS_MESSAGE = "Too many requests, please try again later."
UNAVAILABLE_MESSAGE = "the server is currently unable to handle the request"
INTERNAL_ERROR_CAUSE = "fakeapi: injected fault"


@dataclass(frozen=True)
class RequestFacts:
    """What a request does, in the terms rules match on."""

    verb: str
    resource: str = ""
    subresource: str = ""
    api_group: str = ""
    namespace: str = ""
    name: str = ""
    user_agent: str = ""
    resource_request: bool = True


@dataclass(frozen=True)
class FaultRule:
    """Which requests a fault matches, and what it does to them.

    Empty ``verbs`` and ``group`` None match any; ``namespace`` None matches any namespace (``""``
    only cluster-scoped requests); ``name`` and ``user_agent`` are shell patterns (``worker-*``).
    ``code`` answers the request with that error instead of serving it; ``latency`` delays it
    (seconds).  ``count`` bounds how often the rule fires; ``probability`` makes each match fire
    at random.
    """

    verbs: frozenset[str] = frozenset()
    resource: str = "*"
    group: str | None = None
    namespace: str | None = None
    name: str = "*"
    user_agent: str = "*"
    code: int | None = None
    latency: float = 0.0
    count: int | None = None
    probability: float = 1.0
    retry_after: int = 1
    message: str = ""

    def __post_init__(self) -> None:
        errors = rule_errors(self)
        if errors:
            raise BadRequest("invalid fault: " + "; ".join(errors))

    def matches(self, facts: RequestFacts) -> bool:
        """Whether the rule applies to ``facts`` (counts and probability aside)."""
        if not facts.resource_request:
            return False
        if self.verbs and facts.verb not in self.verbs:
            return False
        if not _resource_matches(self.resource, facts.resource, facts.subresource):
            return False
        if self.group is not None and self.group != facts.api_group:
            return False
        if self.namespace is not None and self.namespace != facts.namespace:
            return False
        return fnmatch.fnmatchcase(facts.name, self.name) and fnmatch.fnmatchcase(facts.user_agent, self.user_agent)


def _resource_matches(pattern: str, resource: str, subresource: str) -> bool:
    if pattern == "*":
        return True
    plural, _, sub = pattern.partition("/")
    if plural != resource:
        return False
    return sub == subresource or (sub == "*" and subresource != "")


def rule_errors(rule: FaultRule) -> list[str]:
    """What is wrong with ``rule`` (empty when it is valid)."""
    errors = [f"unknown verb {v!r}" for v in sorted(rule.verbs - VERBS)]
    if rule.code is not None and rule.code not in CODES:
        errors.append(f"code must be one of {', '.join(map(str, CODES))}, not {rule.code}")
    if rule.code is None and rule.latency <= 0:
        errors.append("a fault needs a code or a latency")
    if rule.latency < 0:
        errors.append("latency must not be negative")
    if rule.count is not None and rule.count < 1:
        errors.append("count must be at least 1")
    if not 0.0 < rule.probability <= 1.0:
        errors.append("probability must be in (0, 1]")
    if rule.retry_after < 1:
        errors.append("retryAfterSeconds must be at least 1")
    return errors


def fault_error(code: int, facts: RequestFacts, *, message: str = "", retry_after: int = 1) -> StatusError:
    """The error upstream's apiserver would answer with ``code`` for this request."""
    if code == 409:
        what = resource_name(facts.resource, facts.api_group)
        return Conflict(f'Operation cannot be fulfilled on {what} "{facts.name}": {message or CONFLICT_MESSAGE}',
                        details=status_details(facts.resource, facts.api_group, facts.name))
    if code == 429:
        return TooManyRequests(message or TOO_MANY_REQUESTS_MESSAGE, details={"retryAfterSeconds": retry_after})
    if code == 503:
        return ServiceUnavailable(message or UNAVAILABLE_MESSAGE)
    cause = message or INTERNAL_ERROR_CAUSE
    return internal_error(cause)


@dataclass
class Decision:
    """What to do to one request: wait ``latency`` seconds, then answer ``error`` if set."""

    latency: float = 0.0
    error: StatusError | None = None
    headers: dict[str, str] = field(default_factory=dict)


class Fault:
    """One active rule: how often it fired; ``remove()`` (or leaving its ``with`` block) ends it."""

    def __init__(self, faults: FaultSet, rule: FaultRule, fault_id: int) -> None:
        self.rule = rule
        self.id = fault_id
        self.fired = 0
        self._faults = faults

    @property
    def exhausted(self) -> bool:
        return self.rule.count is not None and self.fired >= self.rule.count

    def remove(self) -> None:
        """Stop injecting this fault (idempotent)."""
        self._faults.remove(self)

    def __enter__(self) -> Fault:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.remove()

    def to_dict(self) -> dict[str, Any]:
        """The fault as the admin endpoint shows it."""
        rule = asdict(self.rule)
        rule["verbs"] = sorted(self.rule.verbs)
        return {"id": self.id, "fired": self.fired, **{_CAMEL.get(k, k): v for k, v in rule.items()}}

    def __repr__(self) -> str:
        return f"Fault(id={self.id}, fired={self.fired}, {self.rule})"


_CAMEL = {"user_agent": "userAgent", "retry_after": "retryAfterSeconds", "latency": "latencySeconds"}


class FaultSet:
    """The faults a server injects.  Thread-safe: a test in another thread may add and remove
    faults while the server's loop decides.  ``seed`` makes probabilistic faults replayable."""

    def __init__(self, seed: int | None = None) -> None:
        self._faults: list[Fault] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.random = random.Random(seed)

    def __bool__(self) -> bool:
        return bool(self._faults)

    def __iter__(self) -> Iterator[Fault]:
        return iter(tuple(self._faults))

    def add(self, rule: FaultRule) -> Fault:
        """Start injecting ``rule``; the returned :class:`Fault` is a context manager that ends it."""
        with self._lock:
            fault = Fault(self, rule, next(self._ids))
            self._faults.append(fault)
        return fault

    def fail(self, *, code: int, verb: str | Iterable[str] | None = None, resource: str = "*",
             group: str | None = None, namespace: str | None = None, name: str = "*", user_agent: str = "*",
             count: int | None = None, probability: float = 1.0, retry_after: int = 1,
             message: str = "") -> Fault:
        """Answer matching requests with ``code`` (409, 429, 500 or 503) instead of serving them."""
        return self.add(FaultRule(verbs=_verbs(verb), resource=resource, group=group, namespace=namespace,
                                  name=name, user_agent=user_agent, code=code, count=count,
                                  probability=probability, retry_after=retry_after, message=message))

    def latency(self, seconds: float, *, verb: str | Iterable[str] | None = None, resource: str = "*",
                group: str | None = None, namespace: str | None = None, name: str = "*",
                user_agent: str = "*", count: int | None = None, probability: float = 1.0) -> Fault:
        """Delay matching requests by ``seconds`` before serving them."""
        return self.add(FaultRule(verbs=_verbs(verb), resource=resource, group=group, namespace=namespace,
                                  name=name, user_agent=user_agent, latency=seconds, count=count,
                                  probability=probability))

    def remove(self, fault: Fault) -> None:
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def get(self, fault_id: int) -> Fault | None:
        return next((f for f in self._faults if f.id == fault_id), None)

    def clear(self) -> None:
        """End every fault."""
        with self._lock:
            self._faults.clear()

    def decide(self, facts: RequestFacts) -> Decision | None:
        """What to do to this request (None: serve it normally).  Counts a fault as fired when
        it applies; the latencies of every applying rule add up, the first error wins."""
        if not self._faults:
            return None
        decision = Decision()
        with self._lock:
            for fault in self._faults:
                rule = fault.rule
                if fault.exhausted or not rule.matches(facts):
                    continue
                if rule.code is not None and decision.error is not None:
                    continue
                if rule.probability < 1.0 and self.random.random() >= rule.probability:
                    continue
                fault.fired += 1
                decision.latency += rule.latency
                if rule.code is not None:
                    decision.error = fault_error(rule.code, facts, message=rule.message,
                                                 retry_after=rule.retry_after)
                    if rule.code == 429:
                        decision.headers["Retry-After"] = str(rule.retry_after)
        return decision if decision.latency or decision.error else None


def _verbs(verb: str | Iterable[str] | None) -> frozenset[str]:
    if verb is None:
        return frozenset()
    return frozenset({verb} if isinstance(verb, str) else verb)


_FIELDS = {"verb": "verbs", "verbs": "verbs", "resource": "resource", "group": "group", "namespace": "namespace",
           "name": "name", "userAgent": "user_agent", "code": "code", "latencySeconds": "latency",
           "count": "count", "probability": "probability", "retryAfterSeconds": "retry_after",
           "message": "message"}
_TYPES: dict[str, tuple[type, ...]] = {
    "resource": (str,), "group": (str,), "namespace": (str,), "name": (str,), "user_agent": (str,),
    "code": (int,), "latency": (int, float), "count": (int,), "probability": (int, float),
    "retry_after": (int,), "message": (str,)}


def parse_rule(body: Any) -> FaultRule:
    """A rule from the admin endpoint's JSON (camelCase keys as :meth:`Fault.to_dict` shows them);
    :class:`BadRequest` for anything else."""
    if not isinstance(body, dict):
        raise BadRequest("a fault must be a JSON object")
    unknown = sorted(set(body) - set(_FIELDS))
    if unknown:
        raise BadRequest(f"unknown fault fields: {', '.join(unknown)}")
    kwargs: dict[str, Any] = {}
    for key, value in body.items():
        attr = _FIELDS[key]
        if attr == "verbs":
            values = [value] if isinstance(value, str) else value
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise BadRequest(f"{key} must be a string or a list of strings")
            kwargs["verbs"] = kwargs.get("verbs", frozenset()) | frozenset(values)
        elif value is not None:
            if isinstance(value, bool) or not isinstance(value, _TYPES[attr]):
                raise BadRequest(f"{key} must be a {_TYPES[attr][0].__name__}")
            kwargs[attr] = value
    return FaultRule(**kwargs)
