"""lightkube (a third-party client nobody here wrote) over every stored kind: create, get, list,
merge patch, server-side apply, watch and delete with its typed models (lightkube-models 1.37;
a generic resource for the v1alpha1 Workload it does not know).

The access reviews are create-only and have their own tests (tests/e2e/api/test_auth.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from lightkube import AsyncClient, KubeConfig, codecs
from lightkube.generic_resource import create_namespaced_resource
from lightkube.types import PatchType

from fakeapi.cluster import FakeCluster
from tests.e2e.models import objects

# Known to no lightkube-models release (upstream removed it in 1.36): a generic resource.
create_namespaced_resource("scheduling.k8s.io", "v1alpha1", "Workload", "workloads")


def ident(obj: dict[str, Any]) -> str:
    return f"{obj['apiVersion']}/{obj['kind']}"


@pytest.fixture
async def lightkube(fake_api: FakeCluster) -> AsyncIterator[AsyncClient]:
    kube = AsyncClient(config=KubeConfig.from_file(str(fake_api.kubeconfig_path)), namespace="default",
                       field_manager="lightkube")
    yield kube
    await kube.close()


@pytest.mark.parametrize("sent", objects.ALL, ids=ident)
async def test_crud_watch_and_apply_of_every_kind(lightkube: AsyncClient, sent: dict[str, Any]) -> None:
    resource = codecs.from_dict(sent)
    kind = type(resource)
    name = sent["metadata"]["name"]
    namespaced = "namespace" in sent["metadata"]
    name_kw = {"namespace": "default"} if namespaced else {}

    created = await lightkube.create(resource)
    fetched = await lightkube.get(kind, name, **name_kw)
    listed = [o.metadata.name async for o in lightkube.list(kind, **name_kw)]
    patched = await lightkube.patch(kind, name, {"metadata": {"labels": {"seen-by": "lightkube"}}},
                                    patch_type=PatchType.MERGE, **name_kw)
    # The object as read (defaults and admission's additions included, as a controller applies what
    # it read), forced over the creator's ownership.
    config = {k: v for k, v in fetched.to_dict().items() if k != "status"}
    config["metadata"] = {**sent["metadata"], "annotations": {"applied": "yes"}}
    applied = await lightkube.apply(codecs.from_dict(config), force=True, **name_kw)

    assert created.metadata.uid == fetched.metadata.uid and name in listed
    assert patched.metadata.labels["seen-by"] == "lightkube"
    assert applied.metadata.annotations["applied"] == "yes"
    assert applied.metadata.resourceVersion != created.metadata.resourceVersion

    seen: list[str] = []

    async def watch() -> None:
        async for event_type, obj in lightkube.watch(kind, **name_kw,
                                                     resource_version=applied.metadata.resourceVersion):
            if obj.metadata.name == name:
                seen.append(event_type)
                # Kinds with a protection finalizer (pod groups) or a Terminating phase (namespaces)
                # linger with a deletionTimestamp; no control plane runs here to finish them.
                if event_type == "DELETED" or obj.metadata.deletionTimestamp is not None:
                    return

    watching = asyncio.create_task(watch())
    try:
        await asyncio.sleep(0)
        await lightkube.delete(kind, name, **name_kw)
        await asyncio.wait_for(watching, timeout=10)
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
    assert seen[-1] in ("DELETED", "MODIFIED")
