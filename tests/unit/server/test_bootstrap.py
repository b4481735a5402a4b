"""A fresh cluster's bootstrap objects: the pipeline runs once per process and options, and later
clusters commit copies that are byte for byte what the pipeline stores, but for their own uid,
timestamps and resourceVersions."""

from __future__ import annotations

import re
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp.test_utils import TestServer

from fakeapi.config import FeatureGates, ServerOptions
from fakeapi.server import app as server_app
from fakeapi.server.app import create_app
from fakeapi.server.state import REGISTRY

OPTIONS = [
    pytest.param(ServerOptions(), id="default"),
    pytest.param(ServerOptions(secure=True), id="secure-rbac"),
    pytest.param(ServerOptions(service_cluster_ip_range="10.100.0.0/16"), id="service-range"),
    pytest.param(ServerOptions(feature_gates=FeatureGates(DRAAdminAccess=False)), id="gate-off"),
]

_UID = re.compile(rb'"uid":"[0-9a-f-]{36}"')
_TIME = re.compile(rb'"(creationTimestamp|time)":"[0-9TZ:-]+"')


def _stored(app: Any) -> list[tuple[tuple[str, str], bytes]]:
    """Every stored object in commit order, serialized as the store keeps it."""
    store = app[REGISTRY].store
    objects = [(storage, obj) for storage, bucket in store._data.items() for obj in bucket.values()]
    objects.sort(key=lambda item: int(item[1]["metadata"]["resourceVersion"]))
    return [(storage, orjson.dumps(obj)) for storage, obj in objects]


def _normalized(body: bytes) -> bytes:
    return _TIME.sub(rb'"\1":"T"', _UID.sub(b'"uid":"U"', body))


@pytest.fixture(autouse=True)
def _no_remembered_bootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_app, "_BOOTSTRAPPED", {})


@pytest.mark.parametrize("options", OPTIONS)
def test_copies_are_what_the_pipeline_stores(options: ServerOptions) -> None:
    piped = _stored(create_app(options))
    assert server_app._BOOTSTRAPPED  # the second app below commits copies
    copied = _stored(create_app(options))
    assert [s for s, _ in copied] == [s for s, _ in piped]
    assert [_normalized(b) for _, b in copied] == [_normalized(b) for _, b in piped]
    piped_uids = {m.group() for _, b in piped for m in _UID.finditer(b)}
    copied_uids = {m.group() for _, b in copied for m in _UID.finditer(b)}
    assert len(copied_uids) == len(copied) and not piped_uids & copied_uids


def test_copies_are_kept_per_options() -> None:
    create_app(ServerOptions())
    services = create_app(ServerOptions(service_cluster_ip_range="10.100.0.0/16"))[REGISTRY].store
    assert services.get(("", "services"), ("default", "kubernetes"))["spec"]["clusterIP"] == "10.100.0.1"
    secure = create_app(ServerOptions(secure=True))[REGISTRY].store
    assert secure.items(("rbac.authorization.k8s.io", "clusterroles"))
    assert not create_app(ServerOptions())[REGISTRY].store.items(("rbac.authorization.k8s.io", "clusterroles"))


def test_a_tiny_event_window_keeps_no_copies() -> None:
    app = create_app(ServerOptions(event_window=2))
    assert server_app._BOOTSTRAPPED == {}
    assert len(_stored(app)) == 7


async def test_copied_objects_over_http() -> None:
    """The second cluster's bootstrap objects read back over HTTP as the first's, with their own
    uids; a later write gets the next resourceVersion after them."""
    bodies = []
    for _ in range(2):
        async with TestServer(create_app()) as server, aiohttp.ClientSession() as session:
            async with session.get(server.make_url("/api/v1/namespaces")) as resp:
                assert resp.status == 200
                bodies.append(await resp.json())
            async with session.post(server.make_url("/api/v1/namespaces"),
                                    json={"metadata": {"name": "later"}}) as resp:
                assert resp.status == 201
                assert (await resp.json())["metadata"]["resourceVersion"] == "8"
    first, second = ([(n["metadata"]["name"], n["metadata"]["resourceVersion"]) for n in b["items"]]
                     for b in bodies)
    assert first == second == [("default", "1"), ("kube-node-lease", "4"), ("kube-public", "3"),
                               ("kube-system", "2")]
    uids = [{n["metadata"]["uid"] for n in b["items"]} for b in bodies]
    assert len(uids[0]) == len(uids[1]) == 4 and not uids[0] & uids[1]
