"""Client mistakes never get a 500: randomly broken versions of realistic objects, patches and queries.

A seeded generator mutates the KEP example objects (wrong JSON types at any path, removed or
unknown keys, huge numbers, nulls) and sends them as creates, updates and patches of every type
with random options.  Every answer must be a success or a 4xx ``Status`` — a 500 is a bug of ours.
"""

from __future__ import annotations

import base64
import copy
import random
import urllib.parse
from typing import Any

import orjson
import pytest

from fakeapi.registry import reads
from tests.e2e.models.objects import ALL
from tests.integration.api.conftest import Api
from tests.unit.server import test_protobuf as pb
from tests.unit.server.test_bodies import laughs


def deep(levels: int) -> dict[str, Any]:
    """An object nested ``levels`` deep."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value

async def collections(api: Api) -> dict[tuple[str, str], str]:
    """(apiVersion, kind) -> collection path of every resource discovery serves (namespaced ones in
    ``default``): the fuzz reaches every kind the example objects have."""
    out: dict[tuple[str, str], str] = {}
    versions = ["v1"] + [v["groupVersion"] for g in (await api.ok("GET", "/apis"))["groups"] for v in g["versions"]]
    for version in versions:
        prefix = "/api/v1" if version == "v1" else f"/apis/{version}"
        for resource in (await api.ok("GET", prefix))["resources"]:
            if "/" not in resource["name"]:
                namespace = "/namespaces/default" if resource["namespaced"] else ""
                out[version, resource["kind"]] = f"{prefix}{namespace}/{resource['name']}"
    return out


WEIRD: list[Any] = [None, True, 0, -1, 2**63, 1.5, "", "x" * 300, "not a quantity", [], [1, "a"], {}, {"k": [None]}]
PATCH_TYPES = ["application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json", "application/apply-patch+yaml"]


def _leaf_paths(value: Any, path: tuple = ()) -> list[tuple]:
    paths = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            paths += _leaf_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            paths += _leaf_paths(v, (*path, i))
    return paths


def _mutate(obj: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _leaf_paths(out) if p[0] not in ("apiVersion", "kind")]
        if not paths:
            break
        path = rng.choice(paths)
        parent = out
        for key in path[:-1]:
            parent = parent[key]
        action = rng.random()
        if action < 0.6:
            parent[path[-1]] = copy.deepcopy(rng.choice(WEIRD))
        elif action < 0.8 and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[f"bogus{rng.randint(0, 9)}"] = copy.deepcopy(rng.choice(WEIRD))
    return out


def _assert_client_error_or_success(status: int, body: Any, what: str) -> None:
    assert status < 500, f"{what}: {status} {body}"
    if status >= 400:
        assert isinstance(body, dict) and body.get("kind") == "Status" and body.get("code") == status, (what, body)


@pytest.mark.parametrize("seed", range(3))
async def test_broken_objects_and_patches_get_4xx_never_500(api: Api, seed: int) -> None:
    rng = random.Random(seed)
    paths = await collections(api)
    for original in ALL:  # a valid copy of each kind to patch and update
        await api.request("POST", paths[original["apiVersion"], original["kind"]], original)
    for i in range(200):
        original = rng.choice(ALL)
        collection = paths[original["apiVersion"], original["kind"]]
        name = original["metadata"]["name"]
        broken = _mutate(original, rng)
        validation = rng.choice(["Strict", "Warn", "Ignore"])
        verb = rng.choice(["create", "update", "patch", "status"])
        if verb == "create":
            broken.setdefault("metadata", {})
            if isinstance(broken["metadata"], dict):
                broken["metadata"]["name"] = f"fuzz-{seed}-{i}"
            status, body = await api.request("POST", f"{collection}?fieldValidation={validation}", broken)
        elif verb in ("update", "status"):
            current = await api.request("GET", f"{collection}/{name}")
            if current[0] == 200 and isinstance(broken.get("metadata"), dict):
                broken["metadata"]["resourceVersion"] = current[1]["metadata"]["resourceVersion"]
            suffix = "/status" if verb == "status" else ""
            status, body = await api.request("PUT", f"{collection}/{name}{suffix}?fieldValidation={validation}",
                                             broken)
        else:
            ctype = rng.choice(PATCH_TYPES)
            patch: Any = broken
            if ctype == "application/json-patch+json":
                patch = [{"op": rng.choice(["add", "replace", "remove", "test", "move", "bogus"]),
                          "path": "/" + "/".join(str(p) for p in rng.choice(_leaf_paths(original))),
                          "value": rng.choice(WEIRD)}]
            query = "?fieldManager=fuzz&force=true" if ctype.startswith("application/apply") else ""
            status, body = await api.request("PATCH", f"{collection}/{name}{query}", patch, content_type=ctype)
        _assert_client_error_or_success(status, body, f"seed {seed} request {i}: {verb} {original['kind']}")


@pytest.mark.parametrize("query", [
    "limit=-5", "limit=abc", "timeoutSeconds=x", "resourceVersion=-1", "resourceVersion=abc",
    "continue=%%%", "labelSelector=a%20in%20((b)", "fieldSelector=metadata.name", "watch=1&resourceVersion=abc",
    "resourceVersionMatch=Bogus&resourceVersion=1", "sendInitialEvents=true",
])
async def test_broken_list_and_watch_options_get_4xx(api: Api, query: str) -> None:
    status, body = await api.request("GET", f"/api/v1/namespaces/default/pods?{query}")
    _assert_client_error_or_success(status, body, query)


@pytest.mark.parametrize("rv", ["18446744073709551616", "1_0", "+5", " 5", "\u0665"],
                         ids=["beyond-64-bits", "underscore", "sign", "space", "arabic-digit"])
@pytest.mark.parametrize("watch", ["", "&watch=true&timeoutSeconds=1"], ids=["list", "watch"])
async def test_a_resource_version_go_cannot_parse_is_422_at_once(api: Api, rv: str, watch: str) -> None:
    """Upstream parses it with ParseUint(rv, 10, 64); one beyond 64 bits was waited for as a future
    revision (3 s, then 504 Too large resource version), the others taken as Python's int() reads them."""
    query = f"resourceVersion={urllib.parse.quote(rv)}{watch}"
    status, body = await api.request("GET", f"/api/v1/namespaces/default/pods?{query}")
    assert (status, body["reason"]) == (422, "Invalid"), body
    assert body["details"]["causes"][0]["field"] == "resourceVersion"


# --- hand-made cases: each input once made a 500, a silent store or a wrong answer -------------

POD = "/api/v1/namespaces/default/pods"
CMS = "/api/v1/namespaces/default/configmaps"
BINDING = f"{POD}/p/binding"
FINALIZE = "/api/v1/namespaces/default/finalize"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
# Through 252 levels in the pod's open spec.securityContext, orjson could not encode its watch line.
DEEP_POD = {"metadata": {"name": "deep"}, "spec": {"containers": [{"name": "c", "image": "i"}],
                                                   "securityContext": deep(252)}}


def binding(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"name": "n1"}, **fields}


def token(data: Any) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(data)).decode().rstrip("=")


def protobuf_configmap(raw: bytes) -> bytes:
    return pb.envelope("v1", "ConfigMap", raw)


# (id, method, path, body, content type, status, start of the message)
CASES = [
    ("empty-key", "POST", f"{CMS}?fieldValidation=Strict", {"metadata": {"name": "e"}, "": 1}, None, 400,
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field ""'),
    ("continue-is-a-list", "GET", f"{POD}?limit=1&continue={token([1, 2])}", None, None, 400,
     "continue key is not valid: server does not recognize this encoded version"),
    ("preconditions-a-string", "DELETE", f"{POD}/p", {"preconditions": "x"}, None, 400,
     'DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal string into '
     "Go struct field DeleteOptions.preconditions of type v1.Preconditions"),
    ("dry-run-a-number", "DELETE", f"{POD}/p", {"dryRun": 5}, None, 400,
     "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: json: cannot unmarshal number into "
     "Go struct field DeleteOptions.dryRun of type []string"),
    ("grace-period-a-string", "DELETE", f"{POD}/p", {"gracePeriodSeconds": "abc"}, None, 400,
     "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: json: cannot unmarshal string into "
     "Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
    ("delete-options-not-an-object", "DELETE", f"{POD}/p", ["x"], None, 400,
     'DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal array'),
    ("delete-options-text", "DELETE", f"{POD}/p", b"x", "text/plain", 415,
     "the body of the request was in an unknown format"),
    ("yaml-1000-deep", "POST", CMS, b"[" * 1000 + b"]" * 1000, "application/yaml", 400,
     "error converting YAML to JSON: yaml: exceeded max depth of 100"),
    ("yaml-billion-laughs", "POST", CMS, b"metadata: {name: lol}\n" + laughs(7), "application/yaml", 400,
     "error converting YAML to JSON: yaml: document contains excessive aliasing"),
    ("json-252-deep", "POST", POD, DEEP_POD, None, 400,
     "couldn't get version/kind; json parse error: exceeded max depth of 100"),
    ("finalize-spec-a-string", "PUT", FINALIZE, {"metadata": {"name": "default"}, "spec": "x"}, None, 400,
     'Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal string into Go struct '
     "field Namespace.spec of type v1.NamespaceSpec"),
    ("finalize-finalizer-an-object", "PUT", FINALIZE, {"metadata": {"name": "default"},
                                                       "spec": {"finalizers": [{"a": 1}]}}, None, 400,
     "Namespace in version \"v1\" cannot be handled as a Namespace: json: cannot unmarshal object into Go struct "
     "field NamespaceSpec.spec.finalizers of type string"),
    ("binding-target-a-string", "POST", BINDING, binding(target="n1"), None, 400,
     'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal string into Go struct field '
     "Binding.target of type v1.ObjectReference"),
    ("binding-node-a-number", "POST", BINDING, binding(target={"name": 5}), None, 400,
     'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal number into Go struct field '
     "ObjectReference.target.name of type string"),
    ("binding-other-namespace", "POST", BINDING, binding(metadata={"name": "p", "namespace": "kube-system"}), None,
     400, "the namespace of the provided object does not match the namespace sent on the request"),
    ("binding-other-name", "POST", BINDING, binding(metadata={"name": "q"}), None, 400,
     "name in URL does not match name in Binding object"),
    ("eviction-preconditions-a-string", "POST", f"{POD}/p/eviction",
     {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"},
      "deleteOptions": {"preconditions": "x"}},
     None, 400, 'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal string into Go '
     "struct field DeleteOptions.deleteOptions.preconditions of type v1.Preconditions"),
    ("create-as-text", "POST", CMS, {"metadata": {"name": "t"}}, "text/plain", 415,
     "the body of the request was in an unknown format - accepted media types include: application/json, "
     "application/yaml, application/vnd.kubernetes.protobuf"),
    ("merge-patch-moves-namespace", "PATCH", f"{CMS}/c", {"metadata": {"namespace": "kube-system"}}, MERGE, 400,
     "the namespace of the provided object does not match the namespace sent on the request"),
    ("merge-patch-renames", "PATCH", f"{CMS}/c", {"metadata": {"name": "d"}}, MERGE, 400,
     "the name of the object (d) does not match the name on the URL (c)"),
    ("json-patch-moves-namespace", "PATCH", f"{CMS}/c",
     [{"op": "replace", "path": "/metadata/namespace", "value": "kube-system"}], JSON_PATCH, 400,
     "the namespace of the provided object does not match the namespace sent on the request"),
    ("json-patch-copy-bomb", "PATCH", f"{CMS}/c",
     [{"op": "add", "path": "/data/x", "value": "x" * 100_000}]
     + [{"op": "copy", "from": "/data/x", "path": f"/data/x{i}"} for i in range(40)], JSON_PATCH, 422,
     "Unable to complete the copy, the accumulated size increase of copy is"),
    ("json-patch-too-deep", "PATCH", f"{POD}/p",
     [{"op": "add", "path": "/spec/securityContext/a", "value": deep(60)},
      {"op": "copy", "from": "/spec/securityContext", "path": "/spec/securityContext" + "/a" * 61}], JSON_PATCH,
     422, "the patched object would nest more than 100 levels deep"),
    *((f"protobuf-{case[0]}", "POST", CMS, protobuf_configmap(case[1]), PROTOBUF, 400, "proto")
      for case in [("string-as-varint", pb.field(1, pb.field(1, 7))), ("message-as-varint", pb.field(1, 5)),
                   ("map-as-varint", pb.field(2, 3)), ("map-value-as-varint", pb.field(2, pb.field(2, 9))),
                   ("owner-references-as-varint", pb.field(1, pb.field(13, 1))),
                   ("finalizers-as-varint", pb.field(1, pb.field(14, 1))),
                   ("timestamp-as-varint", pb.field(1, pb.field(8, 1))), ("bool-as-bytes", pb.field(4, b"\x01"))]),
]


@pytest.mark.parametrize(("method", "path", "body", "content_type", "status", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
async def test_hand_made_mistakes_get_upstreams_answer(api: Api, method: str, path: str, body: Any,
                                                       content_type: str | None, status: int, message: str) -> None:
    await api.ok("POST", CMS, {"metadata": {"name": "c"}, "data": {"k": "v"}})
    await api.ok("POST", POD, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
    before = api.cluster.registry.reads.resource_version
    got, answer = await api.request(method, path, body, content_type=content_type or "application/json")
    _assert_client_error_or_success(got, answer, path)
    assert (got, answer["message"][:len(message)]) == (status, message), answer
    assert api.cluster.registry.reads.resource_version == before  # nothing was stored


async def test_a_warning_about_a_field_named_with_control_characters(api: Api) -> None:
    # A header cannot carry control characters: the connection used to drop without an answer.
    body = orjson.dumps({"metadata": {"name": "w"}, "\x10a\x1f": 1})
    async with api.session.post(f"{CMS}?fieldValidation=Warn", data=body,
                                headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201
        assert resp.headers["Warning"] == '299 - "unknown field \\"\\u0010a\\u001f\\""'


async def test_an_empty_value_set_selects_the_empty_value(api: Api) -> None:
    # Upstream's labels parser reads "()" as the set {""}: accepted, and it selects a="" (not a 400).
    await api.ok("POST", CMS, {"metadata": {"name": "empty", "labels": {"a": ""}}})
    await api.ok("POST", CMS, {"metadata": {"name": "x", "labels": {"a": "x"}}})
    await api.ok("POST", CMS, {"metadata": {"name": "none"}})
    listed = await api.ok("GET", f"{CMS}?labelSelector=a%20in%20()")
    assert [c["metadata"]["name"] for c in listed["items"]] == ["empty"]


async def test_a_continue_token_from_the_future_is_504(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # The watch cache waits for a revision it has not reached, then answers "Too large resource
    # version"; it never lists as if it had it.
    monkeypatch.setattr(reads, "RV_WAIT_SECONDS", 0.05)
    future = token({"v": "meta.k8s.io/v1", "rv": 10**12, "start": ["default", "a"]})
    status, body = await api.request("GET", f"{CMS}?limit=1&continue={future}")
    assert (status, body["reason"], body["details"]["causes"][0]["reason"]) == (
        504, "Timeout", "ResourceVersionTooLarge"), body
