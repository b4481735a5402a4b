"""Which pod events give the ResourceClaim controller a sync: upstream's ``podNeedsWork``."""

import pytest
from fakeapi.scheduler.controllers.resourceclaim import pod_needs_work
from fakeapi.scheduler.rules import claims as rc

POD_UID = "pod-uid"
ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "gpu-0"}]}}


def pod(claims, statuses=None, node="", group=None):
    spec = {"containers": [{"name": "c"}], "resourceClaims": claims}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    status = {"resourceClaimStatuses": statuses} if statuses is not None else {}
    return {"metadata": {"name": "p", "namespace": "ns", "uid": POD_UID}, "spec": spec, "status": status}


def claim(name, owner_uid=POD_UID, allocated=False, reserved_for=()):
    meta = {"name": name, "namespace": "ns"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid,
                                    "controller": True}]
    status = {}
    if allocated:
        status = {"allocation": ALLOCATION, "reservedFor": list(reserved_for)}
    return {"metadata": meta, "status": status}


TEMPLATE = {"name": "gpu", "resourceClaimTemplateName": "t"}
BY_NAME = {"name": "gpu", "resourceClaimName": "shared"}
GENERATED = [{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}]
POD_REF = {"resource": "pods", "name": "p", "uid": POD_UID}
FULL = [{"resource": "pods", "name": f"o{i}", "uid": f"u{i}"} for i in range(rc.RESERVED_FOR_MAX_SIZE)]


@pytest.mark.parametrize(("the_pod", "claims", "expected"), [
    pytest.param(pod([TEMPLATE]), {}, True, id="template-claim-not-generated-yet"),
    pytest.param(pod([TEMPLATE], GENERATED), {"p-gpu-abcde": claim("p-gpu-abcde")}, False,
                 id="generated-claim-known"),
    pytest.param(pod([TEMPLATE], GENERATED), {}, True, id="generated-claim-gone"),
    pytest.param(pod([TEMPLATE], GENERATED), {"p-gpu-abcde": claim("p-gpu-abcde", owner_uid="other")}, True,
                 id="generated-claim-owned-by-another"),
    pytest.param(pod([TEMPLATE], [{"name": "gpu"}]), {}, False, id="no-claim-needed"),
    pytest.param(pod([BY_NAME]), {}, False, id="claim-by-name-missing-is-the-users"),
    pytest.param(pod([BY_NAME], node="n"), {"shared": claim("shared", owner_uid=None)}, False,
                 id="bound-claim-not-allocated"),
    pytest.param(pod([BY_NAME], node="n"), {"shared": claim("shared", owner_uid=None, allocated=True)}, True,
                 id="bound-claim-allocated-not-reserved"),
    pytest.param(pod([BY_NAME], node="n"),
                 {"shared": claim("shared", owner_uid=None, allocated=True, reserved_for=[POD_REF])}, False,
                 id="bound-claim-reserved"),
    pytest.param(pod([BY_NAME], node="n"),
                 {"shared": claim("shared", owner_uid=None, allocated=True, reserved_for=FULL)}, False,
                 id="bound-claim-reservations-full"),
    pytest.param(pod([BY_NAME]), {"shared": claim("shared", owner_uid=None, allocated=True)}, False,
                 id="unbound-claim-allocated-not-reserved"),
    pytest.param(pod([TEMPLATE], GENERATED, node="n"),
                 {"p-gpu-abcde": claim("p-gpu-abcde", allocated=True, reserved_for=[POD_REF])}, False,
                 id="bound-generated-claim-reserved"),
    pytest.param(pod([BY_NAME, TEMPLATE]), {"shared": claim("shared", owner_uid=None)}, True,
                 id="second-claim-needs-generating"),
    pytest.param(pod([TEMPLATE], GENERATED, group="g"), {"p-gpu-abcde": claim("p-gpu-abcde")}, True,
                 id="pod-group-member-always"),
])
def test_pod_needs_work(the_pod, claims, expected):
    assert pod_needs_work(the_pod, lambda namespace, name: claims.get(name) if namespace == "ns" else None) is expected
