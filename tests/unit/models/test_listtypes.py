"""List tables read from the models: SSA list types and SMP strategies per field path."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.listtypes import ATOMIC, MAP, SET, ListSpec
from fakeapi.models.base import SET as SET_MARKERS
from fakeapi.models.base import list_map, patch_merge
from fakeapi.models.core_v1 import ContainerPort
from fakeapi.models.listtypes import list_spec_of, list_types_for
from fakeapi.models.schema import Scalar, Struct

CORE, RESOURCE, SCHEDULING = "", "resource.k8s.io", "scheduling.k8s.io"


def keyed(*keys: str, merge_key: str | None = None, **defaults: Any) -> ListSpec:
    """An SSA list map, optionally an SMP merge list too."""
    return ListSpec(MAP, keys, merge_key, key_defaults=tuple(defaults.items()))


SPECS = [
    ("containers", CORE, "Pod", ("spec", "containers"), keyed("name", merge_key="name")),
    ("ports", CORE, "Pod", ("spec", "initContainers", "*", "ports"),
     keyed("containerPort", "protocol", merge_key="containerPort", protocol="TCP")),
    ("container-claims", CORE, "Pod", ("spec", "containers", "*", "resources", "claims"), keyed("name")),
    ("hostIPs", CORE, "Pod", ("status", "hostIPs"), ListSpec(ATOMIC, merge_key="ip")),
    ("tolerations", CORE, "Pod", ("spec", "tolerations"), ListSpec()),
    ("podCIDRs", CORE, "Node", ("spec", "podCIDRs"), ListSpec(SET, merges_primitives=True)),
    ("finalizers", CORE, "ConfigMap", ("metadata", "finalizers"), ListSpec(SET, merges_primitives=True)),
    ("ownerReferences", RESOURCE, "DeviceClass", ("metadata", "ownerReferences"), keyed("uid", merge_key="uid")),
    ("template-metadata", RESOURCE, "ResourceClaimTemplate", ("spec", "metadata", "ownerReferences"),
     keyed("uid", merge_key="uid")),
    ("reservedFor", RESOURCE, "ResourceClaim", ("status", "reservedFor"), keyed("uid", merge_key="uid")),
    ("claim-devices", RESOURCE, "ResourceClaim", ("status", "devices"),
     keyed("driver", "device", "pool", "shareID")),
    ("claim-skipNodeOperations", RESOURCE, "ResourceClaim",
     ("status", "allocation", "devices", "results", "*", "skipNodeOperations"), ListSpec(SET)),
    ("slice-skipNodeOperations", RESOURCE, "ResourceSlice", ("spec", "skipNodeOperations"), ListSpec(SET)),
    ("v1beta1-claims", SCHEDULING, "Workload", ("spec", "podGroupTemplates", "*", "resourceClaims"),
     keyed("name", merge_key="name")),
    ("v1alpha1-claims", SCHEDULING, "Workload", ("spec", "podGroups", "*", "resourceClaims"),
     keyed("name", merge_key="name")),
    ("nested-composite", SCHEDULING, "Workload",
     ("spec", *("compositePodGroupTemplates", "*") * 3, "podGroupTemplates"), keyed("name")),
    ("group-status", SCHEDULING, "PodGroup", ("status", "resourceClaimStatuses"), keyed("name", merge_key="name")),
    ("unknown-kind", "example.com", "Unknown", ("metadata", "finalizers"), ListSpec(SET, merges_primitives=True)),
]


@pytest.mark.parametrize(("group", "kind", "path", "expected"), [case[1:] for case in SPECS],
                         ids=[case[0] for case in SPECS])
def test_list_types_follow_the_model_markers(group: str, kind: str, path: tuple[str, ...],
                                             expected: ListSpec) -> None:
    assert list_types_for(group, kind).list_spec(path) == expected


def test_unmarked_lists_are_left_out_of_the_table() -> None:
    # Atomic / replace is the default; storing it would only slow down wildcard lookups.
    assert ListSpec() not in list_types_for(CORE, "Pod").fields.values()


MARKERS = [
    ("set", SET_MARKERS, Scalar("string"), ListSpec(SET)),
    ("set-merged", SET_MARKERS | patch_merge(), Scalar("string"), ListSpec(SET, merges_primitives=True)),
    ("key-defaults-by-item-model", list_map("a", "b"), Struct(ContainerPort),
     ListSpec(MAP, ("a", "b"), key_defaults=(("protocol", "TCP"),))),
    ("retain-keys", list_map("name") | patch_merge("name", retain_keys=True), Scalar("string"),
     keyed("name", merge_key="name")),
    ("replace", {"x-kubernetes-patch-strategy": "replace"}, Scalar("string"), ListSpec()),
    ("unmarked", {}, Scalar("string"), ListSpec()),
]


@pytest.mark.parametrize(("markers", "item", "expected"), [case[1:] for case in MARKERS],
                         ids=[case[0] for case in MARKERS])
def test_list_spec_of_reads_openapi_markers(markers: dict[str, Any], item: Any, expected: ListSpec) -> None:
    assert list_spec_of(markers, item) == expected


# --- list table cases first written with the patch engines ---------------------------------------

LIST_TYPES = [
    ("", "Pod", ("spec", "containers"), ("map", ("name",)), "name", False),
    ("", "Pod", ("spec", "containers", "*", "ports"), ("map", ("containerPort", "protocol")), "containerPort", False),
    ("", "Pod", ("spec", "initContainers", "*", "env"), ("map", ("name",)), "name", False),
    ("", "Pod", ("spec", "containers", "*", "resources", "claims"), ("map", ("name",)), None, False),
    ("", "Pod", ("spec", "tolerations"), ("atomic", ()), None, False),
    ("", "Pod", ("status", "hostIPs"), ("atomic", ()), "ip", False),
    ("", "Pod", ("metadata", "finalizers"), ("set", ()), None, True),
    ("", "Node", ("spec", "taints"), ("atomic", ()), None, False),
    ("", "Node", ("status", "addresses"), ("map", ("type",)), "type", False),
    ("", "ConfigMap", ("metadata", "ownerReferences"), ("map", ("uid",)), "uid", False),
    ("resource.k8s.io", "ResourceClaim", ("status", "devices"),
     ("map", ("driver", "device", "pool", "shareID")), None, False),
    ("resource.k8s.io", "ResourceClaim", ("spec", "devices", "requests"), ("atomic", ()), None, False),
    ("resource.k8s.io", "ResourceSlice", ("spec", "devices"), ("atomic", ()), None, False),
    ("scheduling.k8s.io", "PodGroup", ("status", "resourceClaimStatuses"), ("map", ("name",)), "name", False),
    ("scheduling.k8s.io", "Workload", ("spec", "podGroups", "*", "resourceClaims"), ("map", ("name",)), "name", False),
    ("example.com", "Unknown", ("spec", "items"), ("atomic", ()), None, False),
]


@pytest.mark.parametrize(("group", "kind", "path", "list_type", "merge_key", "merges_primitives"), LIST_TYPES,
                         ids=[f"{kind}{'.'.join(('', *path))}" for _, kind, path, *_ in LIST_TYPES])
def test_list_types(group: str, kind: str, path: tuple, list_type: tuple, merge_key: str | None,
                    merges_primitives: bool) -> None:
    types = list_types_for(group, kind)
    assert types.list_type(path) == list_type
    assert types.merge_key(path) == merge_key
    assert types.merges_primitives(path) is merges_primitives

