"""kubectl round trips of one realistic object per served kind: apply, read back, compare with what was sent.

A field the server drops, renames or mistypes shows up as a difference from ``sent + upstream
defaults``; strict field validation and validation errors must read as a 1.37 apiserver's do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from fakeapi.fixtures.plugin import Kubectl

from fakeapi.cluster import FakeCluster
from fakeapi.models import MODELS
from fakeapi.registry.kinds import KINDS
from tests.e2e.models import objects
from tests.e2e.models.objects import payload, with_defaults, with_field


def to_yaml(*docs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def gvk(obj: dict[str, Any]) -> tuple[str, str, str]:
    group, _, version = obj["apiVersion"].rpartition("/")
    return group, version, obj["kind"]


@pytest.fixture
def kubectl(fake_api: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_api)


def test_the_objects_cover_every_served_kind() -> None:
    # The access reviews are create-only, nothing to apply and read back (tests/e2e/api/test_auth.py).
    reviews = {(k.group, k.version, k.kind) for k in KINDS if k.review is not None}
    # Subresource bodies (Binding, Eviction, Scale, TokenRequest) are posted, never stored.
    bodies = {(*(s.api_version or k.api_version).rpartition("/")[::2], s.kind)
              for k in KINDS for s in k.subresources if s.kind}
    assert {gvk(o) for o in objects.ALL} == set(MODELS) - reviews - bodies


@pytest.mark.parametrize("apply", [(), ("--server-side",)], ids=["client-side", "server-side"])
async def test_apply_then_get_returns_what_was_sent_plus_defaults(kubectl: Kubectl, apply: tuple[str, ...]) -> None:
    manifest = to_yaml(*objects.ALL)

    applied = await kubectl.run("apply", *apply, "-f", "-", input=manifest)
    listed = yaml.safe_load((await kubectl.run("get", "-f", "-", "-o", "yaml", input=manifest)).stdout)

    assert len(applied.stdout.splitlines()) == len(objects.ALL)
    got = {item["metadata"]["name"]: payload(item) for item in listed["items"]}
    assert got == {o["metadata"]["name"]: payload(with_defaults(o)) for o in objects.ALL}


def decoding_error(obj: dict[str, Any], detail: str) -> str:
    kind, version = obj["kind"], obj["apiVersion"].rpartition("/")[2]
    return (f'Error from server (BadRequest): error when creating "STDIN": {kind} in version "{version}" '
            f"cannot be handled as a {kind}: {detail}")


@pytest.mark.parametrize(("obj", "path"), [
    (objects.CLAIM, ("spec", "devices", "requests", 0, "firstAvailable", 0, "deviceClassNmae")),
    (objects.SLICE, ("spec", "devices", 0, "attributes", "model", "str")),
    (objects.ALPHA_WORKLOAD, ("spec", "podGroups", 0, "resourceClaims", 0, "constraints", 0, "matchAtribute")),
    (objects.POD_GROUP, ("spec", "schedulingPolicy", "gang", "min")),
    (objects.POD, ("spec", "schedulingGroup", "podGroup")),
    # An empty upstream struct (BasicSchedulingPolicy, SingleDisruptionMode) has no fields at all.
    (with_field(objects.POD_GROUP, ("spec", "schedulingPolicy"), {"basic": {}}),
     ("spec", "schedulingPolicy", "basic", "minCount")),
    (with_field(objects.WORKLOAD, ("spec", "podGroupTemplates", 0, "disruptionMode"), {"single": {}}),
     ("spec", "podGroupTemplates", 0, "disruptionMode", "single", "pods")),
], ids=["claim-subrequest", "slice-attribute", "alpha-workload-constraint", "podgroup-gang", "pod-scheduling-group",
        "podgroup-basic-empty-struct", "workload-single-empty-struct"])
async def test_strict_validation_rejects_an_unknown_field(kubectl: Kubectl, obj: dict[str, Any],
                                                          path: tuple[str | int, ...]) -> None:
    bad = with_field(obj, path, 1)

    out = await kubectl.run("apply", "--validate=strict", "-f", "-", input=to_yaml(bad), check=False)

    field_path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    assert out.returncode == 1
    assert out.stderr.strip() == decoding_error(obj, f'strict decoding error: unknown field "{field_path}"')


async def test_warn_validation_stores_the_object_without_the_unknown_field(kubectl: Kubectl) -> None:
    bad = with_field(objects.CLAIM, ("spec", "devices", "extra"), "x")

    out = await kubectl.run("apply", "--validate=warn", "-f", "-", input=to_yaml(bad))

    assert 'Warning: unknown field "spec.devices.extra"' in out.stderr
    stored = json.loads((await kubectl.run("get", "resourceclaim", "gpu-claim", "-o", "json")).stdout)
    assert payload(stored) == payload(with_defaults(objects.CLAIM))


@pytest.mark.parametrize(("obj", "detail"), [
    (with_field(objects.CLAIM_TEMPLATE, ("spec", "spec", "devices", "requests", 0, "exactly", "count"), "2"),
     "json: cannot unmarshal string into Go struct field ExactDeviceRequest.spec.spec.devices.requests.exactly.count "
     "of type int64"),
    (with_field(objects.POD_GROUP, ("spec", "schedulingPolicy"), {"basic": []}),
     "json: cannot unmarshal array into Go struct field PodGroupSchedulingPolicy.spec.schedulingPolicy.basic "
     "of type v1beta1.BasicSchedulingPolicy"),
    (with_field(objects.CONFIG_MAP, ("binaryData", "seed"), "AAE"), "illegal base64 data at input byte 0"),
    (with_field(objects.CONFIG_MAP, ("binaryData", "seed"), "AAEC!!!!"), "illegal base64 data at input byte 4"),
], ids=["count-as-string", "basic-as-list", "base64-incomplete", "base64-bad-character"])
async def test_undecodable_value_fails_like_gos_decoder(kubectl: Kubectl, obj: dict[str, Any], detail: str) -> None:
    out = await kubectl.run("apply", "-f", "-", input=to_yaml(obj), check=False)

    assert out.returncode == 1
    assert out.stderr.strip() == decoding_error(obj, detail)


def too_many_requests() -> dict[str, Any]:
    requests = [{"name": f"r{i}", "exactly": {"deviceClassName": objects.DRIVER}} for i in range(33)]
    return with_field(objects.CLAIM, ("spec", "devices"), {"requests": requests})


@pytest.mark.parametrize(("obj", "message"), [
    (too_many_requests(),
     'The ResourceClaim "gpu-claim" is invalid: spec.devices.requests: Too many: 33: must have at most 32 items'),
    (with_field(objects.CLAIM, ("spec", "devices", "requests", 1, "exactly", "selectors", 0, "cel", "expression"),
                "device.attributes["),
     'The ResourceClaim "gpu-claim" is invalid: '
     'spec.devices.requests[1].exactly.selectors[0].cel.expression: Invalid value: "device.attributes[": '
     "compilation failed: "),
    (with_field(objects.ALPHA_WORKLOAD, ("spec", "podGroups", 0, "resourceClaims", 0, "constraints", 0,
                                         "matchAttribute"), "numa"),
     'The Workload "trainer-alpha" is invalid: spec.podGroups[0].resourceClaims[0].constraints[0].matchAttribute: '
     'Invalid value: "numa": a fully qualified name must be a domain and a name separated by a slash'),
    # 1.36+ reports a zero minCount as Required (declarative validation); 1.35's v1alpha1 as not positive.
    (with_field(objects.POD_GROUP, ("spec", "schedulingPolicy", "gang", "minCount"), 0),
     'The PodGroup "trainer-workers" is invalid: spec.schedulingPolicy.gang.minCount: Required value'),
    (with_field(objects.ALPHA_WORKLOAD, ("spec", "podGroups", 0, "policy", "gang", "minCount"), 0),
     'The Workload "trainer-alpha" is invalid: spec.podGroups[0].policy.gang.minCount: Invalid value: 0: '
     "must be greater than zero"),
    (with_field(objects.ALPHA_WORKLOAD, ("spec", "podGroups", 0, "policy", "basic"), {}),
     'The Workload "trainer-alpha" is invalid: spec.podGroups[0].policy: Invalid value: "{`basic`, `gang`}": '
     "exactly one of `basic`, `gang` is required, but multiple fields are set"),
    (with_field(objects.POD_GROUP, ("spec", "schedulingPolicy"), {}),
     'The PodGroup "trainer-workers" is invalid: spec.schedulingPolicy: Invalid value: "": '
     "must specify one of: `basic`, `gang`"),
], ids=["33-requests", "bad-cel", "alpha-constraint-attribute", "gang-min-count", "alpha-gang-min-count",
        "alpha-two-policies", "no-policy"])
async def test_invalid_object_fails_with_the_field_path(kubectl: Kubectl, obj: dict[str, Any], message: str) -> None:
    out = await kubectl.run("apply", "-f", "-", input=to_yaml(obj), check=False)

    assert out.returncode == 1
    # kubectl prints a 422's message as is: "The <Kind> "<name>" is invalid: <path>: <detail>".
    assert out.stderr.startswith(message)
