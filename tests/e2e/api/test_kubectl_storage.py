"""kubectl 1.37 with the storage.k8s.io kinds: ``get storageclass`` marks the default class and
prints upstream's columns, ``get csistoragecapacities`` (the plural kr8s lists) resolves and
prints, and a claim applied without a class gets the default one."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fakeapi.fixtures.plugin import Kubectl

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import table, to_yaml

STANDARD = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True}
FAST = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
        "provisioner": "pd.csi.storage.gke.io", "reclaimPolicy": "Retain"}
CAPACITY = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
            "metadata": {"name": "csisc-standard-a", "namespace": "default"}, "storageClassName": "standard",
            "capacity": "500Gi", "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}}
CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


@pytest.fixture
def kubectl(fake_api: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_api)


async def test_get_storageclass_marks_the_default_and_prints_upstream_columns(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(STANDARD, FAST))

    rows = table((await kubectl.run("get", "sc")).stdout)

    assert rows["NAME"] == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION",
                            "AGE"]
    assert rows["standard (default)"][1:5] == ["ebs.csi.aws.com", "Delete", "WaitForFirstConsumer", "true"]
    assert rows["fast"][1:5] == ["pd.csi.storage.gke.io", "Retain", "Immediate", "false"]


async def test_get_csistoragecapacities_and_a_claim_defaulted_to_the_default_class(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(STANDARD, CAPACITY, CLAIM))

    capacities = table((await kubectl.run("get", "csistoragecapacities.storage.k8s.io")).stdout)
    claim_class = await kubectl.run("get", "pvc", "data", "-o", "jsonpath={.spec.storageClassName}")

    assert capacities == {"NAME": ["NAME", "STORAGECLASSNAME", "CAPACITY"],
                          "csisc-standard-a": ["csisc-standard-a", "standard", "500Gi"]}
    assert claim_class.stdout == "standard"
