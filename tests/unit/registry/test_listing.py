"""ListOptions as upstream validates them: 400 for syntax, 422 for combinations."""

from __future__ import annotations

import pytest

from fakeapi.errors import BadRequest, Invalid, StatusError
from fakeapi.registry.kinds import KINDS
from fakeapi.registry.listing import ListOptions, make_predicate, parse_list_options

PODS = next(k for k in KINDS if k.plural == "pods")

INVALID = [
    ("bad-label-syntax", {"labelSelector": "a in (b"}, BadRequest, ""),
    ("unknown-field", {"fieldSelector": "spec.nope=x"}, BadRequest, "field label not supported: spec.nope"),
    ("bad-limit", {"limit": "ten"}, BadRequest, 'strconv.ParseInt: parsing "ten": invalid syntax'),
    ("limit-beyond-64-bits", {"limit": "9" * 20}, BadRequest, "value out of range"),
    ("timeout-with-underscore", {"timeoutSeconds": "1_0"}, BadRequest, "invalid syntax"),
    ("match-without-rv", {"resourceVersionMatch": "Exact"}, Invalid, "resourceVersionMatch"),
    ("exact-zero", {"resourceVersion": "0", "resourceVersionMatch": "Exact"}, Invalid, 'for resourceVersion "0"'),
    ("continue-with-rv", {"continue": "x", "resourceVersion": "5"}, Invalid, "when using continue"),
    ("initial-events-on-list", {"sendInitialEvents": "true"}, Invalid, "sendInitialEvents is forbidden for list"),
    ("initial-events-needs-bookmarks", {"watch": "1", "sendInitialEvents": "true",
                                        "resourceVersionMatch": "NotOlderThan"}, Invalid, "allowWatchBookmarks"),
    ("negative-rv", {"resourceVersion": "-1"}, Invalid, "must be a non-negative integer"),
]


@pytest.mark.parametrize(("query", "error", "fragment"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_list_options(query: dict, error: type[StatusError], fragment: str) -> None:
    with pytest.raises(error) as err:
        parse_list_options(query, PODS)
    assert fragment in err.value.message


POD = {"metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}},
       "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}}
SELECTS = [
    ("everything", {}, None),
    ("label-match", {"labelSelector": "app=web"}, True),
    ("label-miss", {"labelSelector": "app=db"}, False),
    ("kind-field", {"fieldSelector": "spec.nodeName=node-1"}, True),
    ("meta-field", {"fieldSelector": "metadata.namespace!=ns"}, False),
    ("both", {"labelSelector": "app", "fieldSelector": "status.phase=Running"}, True),
]


@pytest.mark.parametrize(("query", "matches"), [c[1:] for c in SELECTS], ids=[c[0] for c in SELECTS])
def test_predicate(query: dict, matches: bool | None) -> None:
    predicate = make_predicate(PODS, parse_list_options(query, PODS))
    assert (None if predicate is None else predicate(POD)) == matches


def test_parsed_options_are_immutable_and_an_empty_query_gives_the_defaults() -> None:
    opts = parse_list_options({}, PODS)
    assert opts == ListOptions()
    with pytest.raises(AttributeError):
        opts.limit = 5  # type: ignore[misc]
    watch = parse_list_options({"watch": "1", "timeoutSeconds": "30", "limit": "7"}, PODS)
    assert (watch.watch, watch.timeout_seconds, watch.limit, watch.has_selectors) == (True, 30, 7, False)
