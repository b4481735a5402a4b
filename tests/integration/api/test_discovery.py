"""Discovery, /version, health, OpenAPI and Table output."""

from __future__ import annotations

import pytest

from tests.integration.api.conftest import Api


@pytest.mark.parametrize("path", ["/api", "/api/", "/apis", "/apis/", "/version", "/version/"])
async def test_discovery_roots_with_and_without_trailing_slash(api: Api, path: str) -> None:
    status, body = await api.request("GET", path)
    assert status == 200 and isinstance(body, dict)


async def test_version_reports_1_37(api: Api) -> None:
    body = await api.ok("GET", "/version")
    assert (body["major"], body["minor"]) == ("1", "37") and body["gitVersion"].startswith("v1.37")


async def test_resource_lists_name_subresources(api: Api) -> None:
    core = await api.ok("GET", "/api/v1")
    names = {r["name"]: r for r in core["resources"]}
    assert names["pods"]["shortNames"] == ["po"] and names["pods"]["namespaced"]
    assert names["pods/binding"]["verbs"] == ["create"]
    assert names["pods/status"]["verbs"] == ["get", "patch", "update"]
    resource = await api.ok("GET", "/apis/resource.k8s.io/v1")
    assert {r["name"] for r in resource["resources"]} >= {
        "deviceclasses", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates", "resourceslices",
        "devicetaintrules"}
    groups = await api.ok("GET", "/apis")
    sched = next(g for g in groups["groups"] if g["name"] == "scheduling.k8s.io")
    assert [v["version"] for v in sched["versions"]] == ["v1", "v1beta1", "v1alpha1"]


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
async def test_health(api: Api, path: str) -> None:
    assert await api.request("GET", path) == (200, "ok")


async def test_openapi_v3_enables_kubectl_server_validation(api: Api) -> None:
    root = await api.ok("GET", "/openapi/v3")
    url = root["paths"]["apis/resource.k8s.io/v1"]["serverRelativeURL"]
    doc = await api.ok("GET", url)
    patch = doc["paths"]["/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "resource.k8s.io", "version": "v1",
                                                        "kind": "ResourceClaim"}
    assert any(p["name"] == "fieldValidation" for p in patch["parameters"])


async def test_table_output_for_pods(api: Api) -> None:
    await api.ok("POST", "/api/v1/namespaces/default/pods", {
        "metadata": {"name": "t"}, "spec": {"nodeName": "node-9", "containers": [{"name": "c", "image": "i"}]}})
    table = await api.ok("GET", "/api/v1/namespaces/default/pods",
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    assert table["kind"] == "Table"
    cols = [c["name"] for c in table["columnDefinitions"]]
    assert cols == ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]
    assert {c["name"] for c in table["columnDefinitions"] if c["priority"] == 1} == {
        "IP", "Node", "Nominated Node", "Readiness Gates"}, "only with -o wide"
    row = table["rows"][0]
    assert row["cells"][0] == "t" and row["cells"][cols.index("Status")] == "Pending"
    assert row["cells"][cols.index("Node")] == "node-9"
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert "conditions" not in row
    restarts = next(c for c in table["columnDefinitions"] if c["name"] == "Restarts")
    assert restarts["type"] == "string" and restarts["description"].startswith("The number of times")

    await api.ok("PATCH", "/api/v1/namespaces/default/pods/t/status", {"status": {"phase": "Succeeded"}},
                 content_type="application/merge-patch+json")
    table = await api.ok("GET", "/api/v1/namespaces/default/pods",
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert table["rows"][0]["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                               "message": "The pod has completed successfully."}]
