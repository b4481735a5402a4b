"""CustomResourceDefinitions with real clients: kubectl 1.37 (apply, wait, get with printer columns,
explain from the schema, replace, ``get all``) and the official DynamicClient."""

from __future__ import annotations

import json

from fakeapi.fixtures.plugin import Kubectl
from kubernetes import client, dynamic

from tests.crds import GROUP, crontab, crontab_crd
from tests.e2e.api.conftest import call, table, to_yaml


async def install(kubectl: Kubectl) -> None:
    out = await kubectl.run("apply", "-f", "-", input=to_yaml(crontab_crd()))
    assert out.stdout.strip() == f"customresourcedefinition.apiextensions.k8s.io/crontabs.{GROUP} created"
    await kubectl.run("wait", "--for=condition=Established", f"crd/crontabs.{GROUP}", "--timeout=10s")


async def test_kubectl_apply_get_explain_replace_and_delete(kubectl: Kubectl) -> None:
    await install(kubectl)
    applied = await kubectl.run("apply", "-f", "-", input=to_yaml(crontab("nightly", replicas=2)))
    assert applied.stdout.strip() == "crontab.stable.example.com/nightly created"
    rows = table((await kubectl.run("get", "crontabs")).stdout)
    assert rows["NAME"][:3] == ["NAME", "SPEC", "REPLICAS"] and rows["nightly"][:3] == ["nightly", "* * * * */5", "2"]
    assert "nightly" in table((await kubectl.run("get", "ct")).stdout)  # the short name
    assert "crontab.stable.example.com/nightly" in (await kubectl.run("get", "all")).stdout  # categories: [all]
    explained = (await kubectl.run("explain", "crontabs.spec")).stdout
    assert "What to run and when." in explained and "cronSpec" in explained
    # Server-side field validation: kubectl asks for Strict, so an unknown field is refused.
    bad = await kubectl.run("apply", "-f", "-", input=to_yaml(crontab("bad", colour="red")), check=False)
    assert bad.returncode != 0 and 'unknown field "spec.colour"' in bad.stderr
    invalid = await kubectl.run("apply", "-f", "-", input=to_yaml(crontab("bad", replicas=50)), check=False)
    assert "spec.replicas in body should be less than or equal to 10" in invalid.stderr
    current = json.loads((await kubectl.run("get", "crontab", "nightly", "-o", "json")).stdout)
    current["spec"]["replicas"] = 3
    assert (await kubectl.run("replace", "-f", "-", input=json.dumps(current))).stdout.strip() == \
        "crontab.stable.example.com/nightly replaced"
    await kubectl.run("scale", "crontab", "nightly", "--replicas=4")
    assert json.loads((await kubectl.run("get", "ct", "nightly", "-o", "json")).stdout)["spec"]["replicas"] == 4
    crds = table((await kubectl.run("get", "crd")).stdout)
    assert crds[f"crontabs.{GROUP}"][0] == f"crontabs.{GROUP}" and crds["NAME"] == ["NAME", "CREATED AT"]
    deleted = await kubectl.run("delete", "crd", f"crontabs.{GROUP}")
    assert deleted.stdout.strip() == f'customresourcedefinition.apiextensions.k8s.io "crontabs.{GROUP}" deleted'
    gone = await kubectl.run("get", "crontabs", check=False)
    assert gone.returncode != 0


async def test_dynamic_client_round_trip(kubectl: Kubectl, api_client: client.ApiClient) -> None:
    await install(kubectl)
    dyn = await call(dynamic.DynamicClient, api_client)
    crontabs = await call(dyn.resources.get, api_version=f"{GROUP}/v1", kind="CronTab")
    created = await call(crontabs.create, body=crontab("dyn", replicas=1), namespace="default")
    assert created.spec.image == "busybox" and created.metadata.generation == 1
    patched = await call(crontabs.patch, name="dyn", namespace="default", body={"spec": {"replicas": 2}},
                         content_type="application/merge-patch+json")
    assert patched.spec.replicas == 2 and patched.metadata.generation == 2
    status = await call(crontabs.status.patch, name="dyn", namespace="default",
                        body={"status": {"phase": "Running"}}, content_type="application/merge-patch+json")
    assert status.status.phase == "Running"
    listed = await call(crontabs.get, namespace="default", field_selector="metadata.name=dyn")
    assert [item.metadata.name for item in listed.items] == ["dyn"]
    await call(crontabs.delete, name="dyn", namespace="default")
    assert (await call(crontabs.get, namespace="default")).items == []
