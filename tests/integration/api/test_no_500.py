"""Client mistakes never get a 500: randomly broken versions of realistic objects, patches and queries.

A seeded generator mutates the KEP example objects (wrong JSON types at any path, removed or
unknown keys, huge numbers, nulls) and sends them as creates, updates and patches of every type
with random options.  Every answer must be a success or a 4xx ``Status`` — a 500 is a bug of ours.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from tests.e2e.models.objects import ALL
from tests.integration.api.conftest import Api

PATHS = {"Namespace": "/api/v1/namespaces", "Node": "/api/v1/nodes", "Pod": "/api/v1/namespaces/default/pods",
         "ConfigMap": "/api/v1/namespaces/default/configmaps", "Event": "/api/v1/namespaces/default/events",
         "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
         "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
         "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates",
         "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
         "DeviceTaintRule": "/apis/resource.k8s.io/v1/devicetaintrules",
         "PodGroup": "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"}
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
    kinds = [o for o in ALL if o["kind"] in PATHS]
    for original in kinds:  # a valid copy of each kind to patch and update
        await api.request("POST", PATHS[original["kind"]], original)
    for i in range(120):
        original = rng.choice(kinds)
        collection = PATHS[original["kind"]]
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
