"""The everyday kinds over HTTP: Service allocation, Secrets, TokenRequest, events.k8s.io Events,
Leases, EndpointSlices and the pod subresources that reach containers."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.integration.api.conftest import Api

NS = "/api/v1/namespaces/default"
SERVICES = f"{NS}/services"


def svc(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


# --- Service ---------------------------------------------------------------------------------

async def test_a_service_gets_the_next_cluster_ip_and_upstream_defaults(api: Api) -> None:
    kubernetes = await api.ok("GET", f"{SERVICES}/kubernetes")
    web = await api.ok("POST", SERVICES, svc("web"))

    assert kubernetes["spec"]["clusterIP"] == "10.96.0.1"
    assert web["spec"] == {"selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                           "sessionAffinity": "None", "type": "ClusterIP", "internalTrafficPolicy": "Cluster",
                           "clusterIP": "10.96.0.2", "clusterIPs": ["10.96.0.2"], "ipFamilyPolicy": "SingleStack",
                           "ipFamilies": ["IPv4"]}
    assert web["status"] == {"loadBalancer": {}}


@pytest.mark.parametrize(("spec", "field", "message"), [
    ({"clusterIP": "10.96.0.1"}, "spec.clusterIPs[0]",
     'Invalid value: "10.96.0.1": failed to allocate IP 10.96.0.1: provided IP is already allocated'),
    ({"clusterIP": "192.168.0.1"}, "spec.clusterIPs[0]",
     'Invalid value: "192.168.0.1": failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the '
     "valid range. The range of valid IPs is 10.96.0.0/12"),
    ({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}, "spec.ports[0].nodePort",
     "Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"),
    ({"ports": []}, "spec.ports", "Required value"),
    ({"ports": [{"port": 80, "nodePort": 30080}]}, "spec.ports[0].nodePort",
     "Forbidden: may not be used when `type` is 'ClusterIP'"),
    ({"type": "Other"}, "spec.type",
     'Unsupported value: "Other": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'),
    ({"ports": [{"port": 80}, {"port": 81}]}, "spec.ports[0].name", "Required value"),
], ids=["ip-taken", "ip-outside", "node-port-outside", "no-ports", "node-port-on-cluster-ip", "type",
        "unnamed-ports"])
async def test_services_that_cannot_be_served_are_422(api: Api, spec: dict[str, Any], field: str, message: str) -> None:
    status, body = await api.request("POST", SERVICES, svc("bad", **spec))

    assert status == 422, body
    assert (field, message) in causes(body)
    assert (await api.request("GET", f"{SERVICES}/bad"))[0] == 404


async def test_node_ports_are_allocated_and_conflicts_refused(api: Api) -> None:
    first = await api.ok("POST", SERVICES, svc("a", type="NodePort", ports=[{"name": "h", "port": 80},
                                                                          {"name": "m", "port": 9090}]))
    second = await api.ok("POST", SERVICES, svc("b", type="LoadBalancer"))
    status, body = await api.request("POST", SERVICES, svc("c", type="NodePort", ports=[{"port": 80,
                                                                                       "nodePort": 30001}]))

    assert [p["nodePort"] for p in first["spec"]["ports"]] == [30000, 30001]
    assert second["spec"]["ports"][0]["nodePort"] == 30002
    assert (second["spec"]["externalTrafficPolicy"], second["spec"]["allocateLoadBalancerNodePorts"]) == ("Cluster",
                                                                                                        True)
    assert status == 422 and ("spec.ports[0].nodePort", "Invalid value: 30001: provided port is already allocated") \
        in causes(body)


async def test_headless_and_external_name_services_get_no_ip(api: Api) -> None:
    headless = await api.ok("POST", SERVICES, svc("h", clusterIP="None", ports=[]))
    external = await api.ok("POST", SERVICES, {"metadata": {"name": "x"},
                                               "spec": {"type": "ExternalName", "externalName": "db.example.com"}})

    assert (headless["spec"]["clusterIPs"], headless["spec"]["ipFamilies"]) == (["None"], ["IPv4"])
    assert "clusterIP" not in external["spec"] and "internalTrafficPolicy" not in external["spec"]


async def test_an_update_keeps_what_was_allocated_and_the_ip_is_immutable(api: Api) -> None:
    created = await api.ok("POST", SERVICES, svc("web", type="NodePort"))
    body = svc("web", type="NodePort")  # a PUT without the allocated values, as a naive client sends
    body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]

    updated = await api.ok("PUT", f"{SERVICES}/web", body)
    status, error = await api.request("PATCH", f"{SERVICES}/web", {"spec": {"clusterIP": "10.96.0.99",
                                                                         "clusterIPs": ["10.96.0.99"]}},
                                      content_type="application/merge-patch+json")

    assert updated["spec"]["clusterIP"] == created["spec"]["clusterIP"]
    assert updated["spec"]["ports"][0]["nodePort"] == created["spec"]["ports"][0]["nodePort"]
    assert status == 422 and ("spec.clusterIPs[0]", 'Invalid value: "10.96.0.99": may not change once set') \
        in causes(error)


async def test_a_deleted_service_frees_its_ip(api: Api) -> None:
    first = await api.ok("POST", SERVICES, svc("web"))
    await api.ok("DELETE", f"{SERVICES}/web")

    again = await api.ok("POST", SERVICES, svc("other"))

    assert again["spec"]["clusterIP"] == first["spec"]["clusterIP"]


# --- Secret ----------------------------------------------------------------------------------

async def test_string_data_is_folded_into_data_and_never_stored(api: Api) -> None:
    created = await api.ok("POST", f"{NS}/secrets", {"metadata": {"name": "s"}, "data": {"a": "eA=="},
                                                     "stringData": {"a": "over", "b": "plain"}})
    patched = await api.ok("PATCH", f"{NS}/secrets/s", {"stringData": {"c": "more"}},
                           content_type="application/merge-patch+json")

    assert created["type"] == "Opaque" and "stringData" not in created
    assert {k: base64.b64decode(v).decode() for k, v in patched["data"].items()} == {"a": "over", "b": "plain",
                                                                                   "c": "more"}


@pytest.mark.parametrize(("secret", "expected"), [
    ({"type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}}, [("data[tls.key]", "Required value")]),
    ({"type": "kubernetes.io/basic-auth", "data": {}}, [("data[username]", "Required value"),
                                                       ("data[password]", "Required value")]),
    ({"type": "kubernetes.io/service-account-token"},
     [("metadata.annotations[kubernetes.io/service-account.name]", "Required value")]),
    ({"data": {"bad key": "eA=="}}, [("data[bad key]", 'Invalid value: "bad key": a valid config key must consist of '
                                     "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
                                     "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")]),
], ids=["tls", "basic-auth", "service-account-token", "key"])
async def test_secret_types_need_their_keys(api: Api, secret: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    status, body = await api.request("POST", f"{NS}/secrets", {"metadata": {"name": "s"}, **secret})
    assert status == 422 and causes(body) == expected


async def test_an_immutable_secret_keeps_its_data_and_a_secret_its_type(api: Api) -> None:
    await api.ok("POST", f"{NS}/secrets", {"metadata": {"name": "s"}, "immutable": True, "data": {"a": "eA=="}})

    status, body = await api.request("PATCH", f"{NS}/secrets/s", {"data": {"a": "eQ=="}, "type": "Other"},
                                     content_type="application/merge-patch+json")

    assert status == 422
    assert causes(body) == [("type", 'Invalid value: "Other": field is immutable'),
                            ("data", "Forbidden: field is immutable when `immutable` is set")]


# --- ServiceAccount token --------------------------------------------------------------------

TOKEN = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}


async def test_a_token_request_answers_a_token_the_server_accepts(api: Api) -> None:
    account = await api.ok("POST", f"{NS}/serviceaccounts", {"metadata": {"name": "builder"}})

    answer = await api.ok("POST", f"{NS}/serviceaccounts/builder/token",
                          {**TOKEN, "spec": {"audiences": ["vault"], "expirationSeconds": 900}})

    assert answer["kind"] == "TokenRequest" and answer["spec"] == {"audiences": ["vault"], "expirationSeconds": 900}
    claims = api.cluster.registry.tokens.verify_token(answer["status"]["token"], ["vault"])
    assert (claims.username, claims.service_account_uid) == ("system:serviceaccount:default:builder",
                                                             account["metadata"]["uid"])
    assert claims.expiration.strftime("%Y-%m-%dT%H:%M:%SZ") == answer["status"]["expirationTimestamp"]


@pytest.mark.parametrize(("path", "spec", "code", "message"), [
    ("nobody", {}, 404, 'serviceaccounts "nobody" not found'),
    ("builder", {"expirationSeconds": 60}, 422,
     'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a '
     "duration less than 10 minutes"),
    ("builder", {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}, 400,
     'cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.'),
    ("builder", {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}}, 400,
     "cannot bind token to object of type /v1, Kind=ConfigMap"),
    ("builder", {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "gone"}}, 404,
     'secrets "gone" not found'),
], ids=["no-account", "too-short", "pod-of-another-account", "unbindable-kind", "missing-secret"])
async def test_token_requests_upstream_refuses(api: Api, path: str, spec: dict[str, Any], code: int,
                                               message: str) -> None:
    await api.ok("POST", f"{NS}/serviceaccounts", {"metadata": {"name": "builder"}})
    await api.ok("POST", f"{NS}/pods", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
                                                                                           "image": "i"}]}})

    status, body = await api.request("POST", f"{NS}/serviceaccounts/{path}/token", {**TOKEN, "spec": spec})

    assert (status, body["message"]) == (code, message)


# --- events.k8s.io/v1 ------------------------------------------------------------------------

EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def event_v1(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2026-01-01T00:00:00.000001Z", "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "web", "namespace": "default"}, "note": "synced", **fields}


async def test_events_v1_are_the_core_events_in_another_shape(api: Api) -> None:
    created = await api.ok("POST", EVENTS_V1, event_v1("e1", deprecatedCount=0))
    core = await api.ok("GET", f"{NS}/events/e1")
    await api.ok("POST", f"{NS}/events", {"metadata": {"name": "e2"}, "involvedObject": {"kind": "Node", "name": "n"},
                                          "message": "core", "source": {"component": "kubelet"}})
    listed = await api.ok("GET", f"{EVENTS_V1}?fieldSelector=regarding.name%3Dweb")

    assert (core["apiVersion"], core["involvedObject"]["name"], core["message"], core["reportingComponent"]) == (
        "v1", "web", "synced", "example.com/ctl")
    assert core["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert [e["metadata"]["name"] for e in listed["items"]] == ["e1"]
    v1_of_core = await api.ok("GET", f"{EVENTS_V1}/e2")
    assert (v1_of_core["note"], v1_of_core["deprecatedSource"], v1_of_core["regarding"]["kind"]) == (
        "core", {"component": "kubelet"}, "Node")


async def test_a_watch_on_the_events_v1_view_sees_core_writes_converted(api: Api) -> None:
    async with api.watch(f"{EVENTS_V1}?watch=1&fieldSelector=reason%3DSynced") as watch:
        await api.ok("POST", f"{NS}/events", {"metadata": {"name": "other"}, "involvedObject": {"kind": "Pod",
                                                                                              "name": "x"},
                                              "reason": "Other"})
        await api.ok("POST", EVENTS_V1, event_v1("e1"))
        (event,) = await watch.events(1)

    assert (event["type"], event["object"]["apiVersion"], event["object"]["note"]) == ("ADDED", "events.k8s.io/v1",
                                                                                      "synced")


@pytest.mark.parametrize(("fields", "expected"), [
    ({"eventTime": None}, ("eventTime", "Required value")),
    ({"type": "Info"}, ("type", 'Invalid value: "": has invalid value: Info')),
    ({"reportingController": None}, ("reportingController", "Required value")),
    ({"deprecatedCount": 3}, ("deprecatedCount", 'Invalid value: "": needs to be unset')),
    ({"series": {"count": 1, "lastObservedTime": "2026-01-01T00:00:00.000001Z"}},
     ("series.count", 'Invalid value: "": should be at least 2')),
], ids=["no-event-time", "type", "no-controller", "deprecated-field", "series"])
async def test_events_v1_validation(api: Api, fields: dict[str, Any], expected: tuple[str, str]) -> None:
    status, body = await api.request("POST", EVENTS_V1, event_v1("bad", **fields))
    assert status == 422 and expected in causes(body)


async def test_an_events_v1_update_may_change_only_the_series(api: Api) -> None:
    await api.ok("POST", EVENTS_V1, event_v1("e1"))
    series = {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000001Z"}}

    grown = await api.ok("PATCH", f"{EVENTS_V1}/e1", series, content_type="application/merge-patch+json")
    status, body = await api.request("PATCH", f"{EVENTS_V1}/e1", {"note": "changed"},
                                     content_type="application/merge-patch+json")

    assert grown["series"]["count"] == 2
    assert status == 422 and ("message", 'Invalid value: "changed": field is immutable') in causes(body)


# --- Lease, EndpointSlice --------------------------------------------------------------------

@pytest.mark.parametrize(("path", "body", "expected"), [
    ("/apis/coordination.k8s.io/v1/namespaces/default/leases",
     {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}},
     ("spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0")),
    ("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
     {"metadata": {"name": "s"}, "addressType": "IPv4", "endpoints": [{"addresses": ["fe80::1"]}]},
     ("endpoints[0].addresses[0]", 'Invalid value: "fe80::1": must be a valid IPv4 address')),
    ("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
     {"metadata": {"name": "s"}, "addressType": "IPv6", "endpoints": [{"addresses": ["::ffff:10.0.0.1"]}]},
     ("endpoints[0].addresses[0]", 'Invalid value: "::ffff:10.0.0.1": must be a valid IPv6 address')),
    ("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
     {"metadata": {"name": "s"}, "addressType": "IP", "endpoints": []},
     ("addressType", 'Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"')),
], ids=["lease-duration", "slice-address", "slice-ipv4-mapped", "slice-address-type"])
async def test_lease_and_slice_validation(api: Api, path: str, body: dict[str, Any], expected: tuple[str, str]) -> None:
    status, answer = await api.request("POST", path, body)
    assert status == 422 and expected in causes(answer)


# --- pod subresources ------------------------------------------------------------------------

POD = {"metadata": {"name": "p", "annotations": {"fakeapi.dev/log": "line one\nline two\n",
                                                 "fakeapi.dev/log.side": "side only\n"}},
       "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "busybox"},
                                                 {"name": "side", "image": "envoy"}]}}


async def started(api: Api, pod: dict[str, Any] = POD) -> None:
    created = await api.ok("POST", f"{NS}/pods", pod)
    statuses = [{"name": c["name"], "image": c["image"], "imageID": "", "ready": True, "restartCount": 0,
                 "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}} for c in pod["spec"]["containers"]]
    rv = created["metadata"]["resourceVersion"]
    await api.ok("PATCH", f"{NS}/pods/p/status", {"metadata": {"resourceVersion": rv},
                                                 "status": {"phase": "Running", "containerStatuses": statuses}},
                 content_type="application/merge-patch+json")


async def test_pod_logs_show_lifecycle_lines_and_the_annotation(api: Api) -> None:
    await started(api)

    main = await api.request("GET", f"{NS}/pods/p/log?container=main")
    side = await api.request("GET", f"{NS}/pods/p/log?container=side&timestamps=true&tailLines=1")

    assert main == (200, 'fakeapi: started container "main" (image busybox)\nline one\nline two\n')
    assert side == (200, "2026-01-01T00:00:00.000000000Z side only\n")


@pytest.mark.parametrize(("query", "code", "message"), [
    ("", 400, "a container name must be specified for pod p, choose one of: [main side]"),
    ("?container=nope", 400, "container nope is not valid for pod p"),
    ("?container=main&previous=true", 400, 'previous terminated container "main" in pod "p" not found'),
    ("?container=main&tailLines=-1", 422,
     'PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0'),
], ids=["which-container", "unknown-container", "previous", "negative-tail"])
async def test_pod_log_requests_upstream_refuses(api: Api, query: str, code: int, message: str) -> None:
    await started(api)
    status, body = await api.request("GET", f"{NS}/pods/p/log{query}")
    assert (status, body["message"]) == (code, message)


async def test_logs_of_a_pod_that_has_not_started(api: Api) -> None:
    await api.ok("POST", f"{NS}/pods", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
                                                                                           "image": "i"}]}})
    unbound = await api.request("GET", f"{NS}/pods/p/log")
    await api.ok("POST", f"{NS}/pods/p/binding", {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}})
    waiting = await api.request("GET", f"{NS}/pods/p/log")

    assert unbound[0] == 400 and unbound[1]["message"] == "pod p does not have a host assigned"
    assert waiting[1]["message"] == 'container "c" in pod "p" is waiting to start: ContainerCreating'


@pytest.mark.parametrize(("sub", "what"), [
    ("exec?container=main&command=ls", 'exec into container "main" of'),
    ("attach?container=main", 'attach to container "main" of'),
    ("portforward?ports=80", "forward ports to"),
], ids=["exec", "attach", "portforward"])
async def test_exec_attach_and_port_forward_say_there_is_no_container(api: Api, sub: str, what: str) -> None:
    await started(api)
    for method in ("GET", "POST"):
        status, body = await api.request(method, f"{NS}/pods/p/{sub}")
        assert (status, body["reason"]) == (400, "BadRequest")
        assert body["message"] == f'fakeapi runs no containers: cannot {what} pod "p"; its log is served by pods/log'


async def test_ephemeral_containers_are_added_through_their_subresource_only(api: Api) -> None:
    await started(api)
    debugger = {"name": "debugger", "image": "busybox", "targetContainerName": "main"}

    added = await api.ok("PATCH", f"{NS}/pods/p/ephemeralcontainers",
                         {"spec": {"ephemeralContainers": [debugger], "nodeName": "elsewhere"},
                          "metadata": {"labels": {"x": "y"}}},
                         content_type="application/strategic-merge-patch+json")
    removed = await api.request("PATCH", f"{NS}/pods/p/ephemeralcontainers", {"spec": {"ephemeralContainers": []}},
                                content_type="application/merge-patch+json")
    direct = await api.request("PATCH", f"{NS}/pods/p", {"spec": {"ephemeralContainers": [{**debugger,
                                                                                          "name": "other"}]}},
                               content_type="application/strategic-merge-patch+json")

    assert [c["name"] for c in added["spec"]["ephemeralContainers"]] == ["debugger"]
    assert added["spec"]["ephemeralContainers"][0]["terminationMessagePolicy"] == "File"
    # The rest of the pod stays as stored.
    assert (added["spec"]["nodeName"], added["metadata"].get("labels")) == ("n1", None)
    assert removed[0] == 422 and causes(removed[1]) == [
        ("spec.ephemeralContainers", 'Forbidden: existing ephemeral containers "debugger" may not be removed')]
    assert direct[0] == 422 and direct[1]["details"]["causes"][0]["field"] == "spec"


async def test_applied_service_ports_without_protocol_merge_with_the_stored_ones(api: Api) -> None:
    config = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
              "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80},
                                                             {"name": "metrics", "port": 9090}]}}
    path = f"{SERVICES}/web?fieldManager=deployer"
    await api.ok("PATCH", path, config, content_type="application/apply-patch+yaml")

    again = await api.ok("PATCH", path, config, content_type="application/apply-patch+yaml")

    # The list is keyed by (port, protocol); an applied port without protocol is the stored TCP one.
    assert [(p["name"], p["protocol"]) for p in again["spec"]["ports"]] == [("http", "TCP"), ("metrics", "TCP")]


async def test_a_claim_may_be_bound_and_grow_but_not_change(api: Api) -> None:
    claims = f"{NS}/persistentvolumeclaims"
    created = await api.ok("POST", claims, {"metadata": {"name": "c"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})

    bound = await api.ok("PATCH", f"{claims}/c", {"spec": {"volumeName": "pv-1",
                                                           "resources": {"requests": {"storage": "2Gi"}}}},
                         content_type="application/merge-patch+json")
    status, body = await api.request("PATCH", f"{claims}/c", {"spec": {"storageClassName": "fast"}},
                                     content_type="application/merge-patch+json")

    assert (created["spec"]["volumeMode"], created["status"]["phase"]) == ("Filesystem", "Pending")
    assert bound["spec"]["volumeName"] == "pv-1"
    assert status == 422 and causes(body) == [("spec", "Forbidden: spec is immutable after creation except "
                                                       "resources.requests and volumeAttributesClassName for bound "
                                                       "claims")]
