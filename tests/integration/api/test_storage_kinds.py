"""storage.k8s.io/v1 over HTTP: StorageClass, CSIDriver, CSINode and CSIStorageCapacity defaults,
validation and immutability as a 1.37 apiserver answers, and the DefaultStorageClass admission of
new PersistentVolumeClaims."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from fakeapi.machinery import timestamps
from tests.integration.api.conftest import Api

STORAGE = "/apis/storage.k8s.io/v1"
CLASSES, DRIVERS, NODES = f"{STORAGE}/storageclasses", f"{STORAGE}/csidrivers", f"{STORAGE}/csinodes"
CAPACITIES = f"{STORAGE}/namespaces/default/csistoragecapacities"
CLAIMS = "/api/v1/namespaces/default/persistentvolumeclaims"
DEFAULT = {"storageclass.kubernetes.io/is-default-class": "true"}
MERGE = "application/merge-patch+json"


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


def storage_class(name: str, annotations: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"annotations": annotations} if annotations else {})}
    return {"metadata": meta, "provisioner": "ebs.csi.aws.com", **fields}


def claim(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": "1Gi"}}, **spec}}


def capacity(name: str, **fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "storageClassName": "fast", "capacity": "100Gi",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}, **fields}


def csi_node(name: str, *drivers: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"drivers": list(drivers)}}


async def refused(api: Api, method: str, path: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    status, out = await api.request(method, path, body, content_type=MERGE if method == "PATCH" else
                                    "application/json")
    assert status == 422, out
    return causes(out)


# --- StorageClass ----------------------------------------------------------------------------

async def test_a_storage_class_gets_upstream_defaults_and_no_generation(api: Api) -> None:
    sc = await api.ok("POST", CLASSES, storage_class("fast"))

    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")
    assert "generation" not in sc["metadata"]


@pytest.mark.parametrize(("fields", "expected"), [
    ({"provisioner": ""}, ("provisioner", "Required value")),
    ({"provisioner": "Bad Provisioner"}, (
        "provisioner", 'Invalid value: "bad provisioner": name part must consist of alphanumeric characters, '
                       "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                       "'my.name',  or '123-abc', regex used for validation is "
                       "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")),
    ({"reclaimPolicy": "Recycle"}, ("reclaimPolicy", 'Unsupported value: "Recycle": supported values: "Delete", '
                                                     '"Retain"')),
    ({"volumeBindingMode": "Later"}, ("volumeBindingMode", 'Unsupported value: "Later": supported values: '
                                                           '"Immediate", "WaitForFirstConsumer"')),
    ({"parameters": {"": "x"}}, ("parameters", 'Invalid value: "": field can not be empty.')),
    ({"parameters": {f"k{i}": "v" for i in range(513)}}, ("parameters", "Too long: may not be more than 512 bytes")),
    ({"allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]}]},
     ("allowedTopologies[0].matchLabelExpressions[0].values[1]", 'Duplicate value: "a"')),
    ({"allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]},
                                                       {"key": "zone", "values": ["b"]}]}]},
     ("allowedTopologies[0].matchLabelExpressions[1].key", 'Duplicate value: "zone"')),
    ({"allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]},
                            {"matchLabelExpressions": [{"key": "zone", "values": ["b", "a"]}]}]},
     ("allowedTopologies[1].matchLabelExpressions", 'Duplicate value: ""')),
    # Upstream's list of seen terms starts out with empty ones.
    ({"allowedTopologies": [{}]}, ("allowedTopologies[0].matchLabelExpressions", 'Duplicate value: ""')),
], ids=["no-provisioner", "provisioner-format", "recycle", "binding-mode", "empty-parameter", "too-many-parameters",
        "duplicate-value", "duplicate-key", "duplicate-term", "empty-term"])
async def test_invalid_storage_classes_are_422(api: Api, fields: dict[str, Any], expected: tuple[str, str]) -> None:
    assert expected in await refused(api, "POST", CLASSES, storage_class("bad", **fields))


async def test_a_storage_class_keeps_its_provisioner_parameters_policy_and_mode(api: Api) -> None:
    await api.ok("POST", CLASSES, storage_class("fast", parameters={"type": "gp3"}))

    grown = await api.ok("PATCH", f"{CLASSES}/fast", {"allowVolumeExpansion": True, "mountOptions": ["noatime"]},
                         content_type=MERGE)
    changed = await refused(api, "PATCH", f"{CLASSES}/fast", {
        "provisioner": "pd.csi.storage.gke.io", "parameters": {"type": "io2"}, "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer"})

    assert (grown["allowVolumeExpansion"], grown["mountOptions"]) == (True, ["noatime"])
    assert changed == [("parameters", "Forbidden: updates to parameters are forbidden."),
                       ("provisioner", "Forbidden: updates to provisioner are forbidden."),
                       ("reclaimPolicy", "Forbidden: updates to reclaimPolicy are forbidden."),
                       ("volumeBindingMode", 'Invalid value: "WaitForFirstConsumer": field is immutable')]


# --- DefaultStorageClass admission -----------------------------------------------------------

async def test_a_new_claim_without_a_class_gets_the_default_one(api: Api) -> None:
    before = await api.ok("POST", CLAIMS, claim("before"))
    await api.ok("POST", CLASSES, storage_class("fast"))
    await api.ok("POST", CLASSES, storage_class("standard", DEFAULT))

    absent = await api.ok("POST", CLAIMS, claim("absent"))
    empty = await api.ok("POST", CLAIMS, claim("empty", storageClassName=""))
    explicit = await api.ok("POST", CLAIMS, claim("explicit", storageClassName="fast"))
    beta = await api.ok("POST", CLAIMS, {**claim("beta"), "metadata": {
        "name": "beta", "annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}}})
    relabeled = await api.ok("PATCH", f"{CLAIMS}/before", {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE)

    assert "storageClassName" not in before["spec"]
    assert absent["spec"]["storageClassName"] == "standard"
    assert empty["spec"]["storageClassName"] == ""
    assert explicit["spec"]["storageClassName"] == "fast"
    assert "storageClassName" not in beta["spec"]
    assert "storageClassName" not in relabeled["spec"]  # the plugin admits creates only


async def test_the_newest_default_class_wins_then_the_first_by_name(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_700_000_000.0]
    monkeypatch.setattr(timestamps, "time", SimpleNamespace(time=lambda: now[0], strftime=time.strftime,
                                                            gmtime=time.gmtime))
    await api.ok("POST", CLASSES, storage_class("old", DEFAULT))
    now[0] += 60
    await api.ok("POST", CLASSES, storage_class("zz-new", DEFAULT))
    await api.ok("POST", CLASSES, storage_class("new", {"storageclass.beta.kubernetes.io/is-default-class": "true"}))
    await api.ok("POST", CLASSES, storage_class("newest-but-not-default", {**DEFAULT, **{
        "storageclass.kubernetes.io/is-default-class": "false"}}))

    created = await api.ok("POST", CLAIMS, claim("c"))

    assert created["spec"]["storageClassName"] == "new"


# --- CSIDriver -------------------------------------------------------------------------------

async def test_a_csi_driver_gets_the_137_defaults_and_a_generation(api: Api) -> None:
    driver = await api.ok("POST", DRIVERS, {"metadata": {"name": "ebs.csi.aws.com"}})
    edited = await api.ok("PATCH", f"{DRIVERS}/ebs.csi.aws.com", {"spec": {"podInfoOnMount": True}},
                          content_type=MERGE)

    assert driver["spec"] == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                              "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                              "requiresRepublish": False, "seLinuxMount": False}
    assert (driver["metadata"]["generation"], edited["metadata"]["generation"]) == (1, 2)


@pytest.mark.parametrize(("spec", "expected"), [
    ({"fsGroupPolicy": "Always"}, ("spec.fsGroupPolicy", 'Unsupported value: "Always": supported values: "File", '
                                                         '"None", "ReadWriteOnceWithFSType"')),
    ({"volumeLifecycleModes": ["Inline"]}, ("spec.volumeLifecycleModes", 'Unsupported value: "Inline": supported '
                                                                         'values: "Persistent", "Ephemeral"')),
    ({"tokenRequests": [{"audience": "vault"}, {"audience": "vault"}]},
     ("spec.tokenRequests[1].audience", 'Duplicate value: "vault"')),
    ({"tokenRequests": [{"audience": "vault", "expirationSeconds": 60}]},
     ("spec.tokenRequests[0].expirationSeconds", "Invalid value: 60: may not specify a duration less than 10 "
                                                 "minutes")),
    ({"nodeAllocatableUpdatePeriodSeconds": 5},
     ("spec.nodeAllocatableUpdatePeriodSeconds", "Invalid value: 5: must be greater than or equal to 10 seconds")),
    ({"serviceAccountTokenInSecrets": True},
     ("spec.serviceAccountTokenInSecrets", "Invalid value: true: serviceAccountTokenInSecrets is set but no "
                                           "tokenRequests are specified")),
], ids=["fs-group-policy", "lifecycle-mode", "duplicate-audience", "short-token", "update-period", "token-secrets"])
async def test_invalid_csi_drivers_are_422(api: Api, spec: dict[str, Any], expected: tuple[str, str]) -> None:
    assert expected in await refused(api, "POST", DRIVERS, {"metadata": {"name": "d.example.com"}, "spec": spec})


async def test_a_csi_driver_keeps_attach_and_lifecycle_modes(api: Api) -> None:
    await api.ok("POST", DRIVERS, {"metadata": {"name": "d.example.com"}})

    changed = await refused(api, "PATCH", f"{DRIVERS}/d.example.com", {"spec": {
        "attachRequired": False, "volumeLifecycleModes": ["Ephemeral"]}})

    assert changed == [("spec.attachRequired", "Invalid value: false: field is immutable"),
                       ("spec.volumeLifecycleModes", 'Invalid value: ["Ephemeral"]: field is immutable')]


# --- CSINode ---------------------------------------------------------------------------------

DRIVER = {"name": "ebs.csi.aws.com", "nodeID": "i-1", "topologyKeys": ["topology.ebs.csi.aws.com/zone"]}


@pytest.mark.parametrize(("drivers", "expected"), [
    ((DRIVER, DRIVER), ("spec.drivers[1].name", 'Duplicate value: "ebs.csi.aws.com"')),
    (({**DRIVER, "nodeID": ""},), ("spec.drivers[0].nodeID", "Required value")),
    (({**DRIVER, "nodeID": "i" * 257},), ("spec.drivers[0].nodeID", f'Invalid value: "{"i" * 257}": must be 256 '
                                                                    "characters or less")),
    (({**DRIVER, "allocatable": {"count": -1}},),
     ("spec.drivers[0].allocatable.count", "Invalid value: -1: must be greater than or equal to 0")),
    (({**DRIVER, "topologyKeys": ["zone", "zone"]},), ("spec.drivers[0]", 'Duplicate value: "zone"')),
    (({**DRIVER, "name": "Not_A_Driver"},), ("spec.drivers[0].name", 'Invalid value: "Not_A_Driver": a lowercase '
                                                                     "RFC 1123 subdomain must consist of lower case "
                                                                     "alphanumeric characters, '-' or '.', and must "
                                                                     "start and end with an alphanumeric character "
                                                                     "(e.g. 'example.com', regex used for validation "
                                                                     "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
                                                                     "([-a-z0-9]*[a-z0-9])?)*')")),
], ids=["duplicate-driver", "no-node-id", "long-node-id", "negative-count", "duplicate-topology-key", "driver-name"])
async def test_invalid_csi_nodes_are_422(api: Api, drivers: tuple[dict[str, Any], ...],
                                         expected: tuple[str, str]) -> None:
    assert expected in await refused(api, "POST", NODES, csi_node("n1", *drivers))


async def test_a_registered_driver_may_change_only_its_allocatable_count(api: Api) -> None:
    node = await api.ok("POST", NODES, {**csi_node("n1", DRIVER), "status": {"storageHealth": [{"name": "x"}]}})

    counted = await api.ok("PUT", f"{NODES}/n1", {**node, "spec": {"drivers": [{**DRIVER,
                                                                                "allocatable": {"count": 25}}]}})
    status, body = await api.request("PUT", f"{NODES}/n1", {**counted, "spec": {"drivers": [{**DRIVER,
                                                                                            "nodeID": "i-2"}]}})

    assert "status" not in node and "generation" not in node["metadata"]
    assert counted["spec"]["drivers"][0]["allocatable"] == {"count": 25}
    assert status == 422 and [(f, m.rsplit(": ", 1)[-1]) for f, m in causes(body)] == [
        ("spec.drivers", "field is immutable")]


# --- CSIStorageCapacity ----------------------------------------------------------------------

@pytest.mark.parametrize(("fields", "expected"), [
    ({"capacity": "-1Gi"}, ("capacity", 'Invalid value: "-1Gi": must be greater than or equal to 0')),
    ({"storageClassName": ""}, ("storageClassName", 'Invalid value: "": a lowercase RFC 1123 subdomain must '
                                                    "consist of lower case alphanumeric characters, '-' or '.', and "
                                                    "must start and end with an alphanumeric character (e.g. "
                                                    "'example.com', regex used for validation is '[a-z0-9]"
                                                    "([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
    ({"nodeTopology": {"matchExpressions": [{"key": "zone", "operator": "In"}]}},
     ("nodeTopology.matchExpressions[0].values", "Required value: must be specified when `operator` is 'In' or "
                                                 "'NotIn'")),
], ids=["negative-capacity", "no-class", "selector"])
async def test_invalid_capacities_are_422(api: Api, fields: dict[str, Any], expected: tuple[str, str]) -> None:
    assert expected in await refused(api, "POST", CAPACITIES, capacity("bad", **fields))


async def test_a_capacity_keeps_its_class_and_topology_but_not_its_size(api: Api) -> None:
    created = await api.ok("POST", CAPACITIES, capacity("c"))

    resized = await api.ok("PATCH", f"{CAPACITIES}/c", {"capacity": "50Gi", "maximumVolumeSize": "10Gi"},
                           content_type=MERGE)
    moved = await refused(api, "PATCH", f"{CAPACITIES}/c", {"storageClassName": "slow", "nodeTopology": {
        "matchLabels": {"topology.kubernetes.io/zone": "b"}}})

    assert (created["metadata"]["namespace"], "generation" in created["metadata"]) == ("default", False)
    assert (resized["capacity"], resized["maximumVolumeSize"]) == ("50Gi", "10Gi")
    assert moved == [("nodeTopology", 'Invalid value: {"matchLabels":{"topology.kubernetes.io/zone":"b"}}: field is '
                                      "immutable"),
                     ("storageClassName", 'Invalid value: "slow": field is immutable')]


async def test_tables_print_upstream_columns(api: Api) -> None:
    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    await api.ok("POST", CLASSES, storage_class("standard", DEFAULT, allowVolumeExpansion=True))
    await api.ok("POST", DRIVERS, {"metadata": {"name": "d.example.com"},
                                   "spec": {"tokenRequests": [{"audience": "vault"}, {"audience": "sts"}]}})
    await api.ok("POST", NODES, csi_node("n1", DRIVER))
    await api.ok("POST", CAPACITIES, capacity("c", capacity=None))

    tables = {path: await api.ok("GET", path, headers={"Accept": table})
              for path in (CLASSES, DRIVERS, NODES, CAPACITIES)}

    assert {path: [c["name"] for c in t["columnDefinitions"]] for path, t in tables.items()} == {
        CLASSES: ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
        DRIVERS: ["Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests",
                  "RequiresRepublish", "Modes", "Age"],
        NODES: ["Name", "Drivers", "Age"], CAPACITIES: ["Name", "StorageClassName", "Capacity"]}
    assert {path: t["rows"][0]["cells"][:-1] for path, t in tables.items() if path != CAPACITIES} == {
        CLASSES: ["standard (default)", "ebs.csi.aws.com", "Delete", "Immediate", True],
        DRIVERS: ["d.example.com", True, False, False, "vault,sts", False, "Persistent"], NODES: ["n1", 1]}
    assert tables[CAPACITIES]["rows"][0]["cells"] == ["c", "fast", "<unset>"]
