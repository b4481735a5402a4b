"""Regression tests, over raw HTTP, for fidelity bugs third-party clients found (issue 10)."""

from __future__ import annotations

import pytest

from tests.integration.api.conftest import Api

NODES = "/api/v1/nodes"
EVENTS = "/api/v1/namespaces/default/events"


def node(name: str, heartbeat: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": heartbeat}]}}


# 4. Times are validated as Go parses them and stored in UTC (seconds; microseconds for MicroTime).

async def test_a_time_that_is_no_time_is_refused(api: Api) -> None:
    status, body = await api.request("POST", NODES, node("n1", "yesterday"))

    assert status == 400
    assert body["reason"] == "BadRequest"
    assert body["message"] == ('Node in version "v1" cannot be handled as a Node: parsing time "yesterday" as '
                               '"2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"')
    assert (await api.request("GET", f"{NODES}/n1"))[0] == 404


@pytest.mark.parametrize(("sent", "stored"), [
    ("2026-05-01T10:00:00+01:00", "2026-05-01T09:00:00Z"),
    ("2026-05-01T10:00:00.734Z", "2026-05-01T10:00:00Z"),
], ids=["offset", "fraction"])
async def test_times_are_stored_as_utc_seconds(api: Api, sent: str, stored: str) -> None:
    created = await api.ok("POST", NODES, node("n1", sent))
    patched = await api.ok("PATCH", f"{NODES}/n1/status", {"status": {"conditions": [
        {"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": sent}]}},
        content_type="application/strategic-merge-patch+json")

    assert created["status"]["conditions"][0]["lastHeartbeatTime"] == stored
    assert [c["lastHeartbeatTime"] for c in patched["status"]["conditions"]] == [stored, stored]


async def test_micro_times_keep_microseconds_and_need_them(api: Api) -> None:
    event = {"involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "Started",
             "action": "Start", "reportingComponent": "example.com/ctl", "reportingInstance": "ctl-1"}
    ok = await api.ok("POST", EVENTS, {"metadata": {"name": "e1"}, **event,
                                       "eventTime": "2026-05-01T10:00:00.123456+02:00"})
    assert ok["eventTime"] == "2026-05-01T08:00:00.123456Z"

    status, body = await api.request("POST", EVENTS, {"metadata": {"name": "e2"}, **event,
                                                      "eventTime": "2026-05-01T10:00:00Z"})
    assert status == 400
    assert body["message"].endswith('cannot parse "Z" as ".000000"')


# 5. The generic 404 carries an empty details, which kubectl dereferences.

@pytest.mark.parametrize("path", ["/api/v1/foos", "/apis/example.com/v1", "/apis/example.com",
                                  "/api/v1/namespaces/default/pods/p/nothing"])
async def test_generic_not_found_has_empty_details(api: Api, path: str) -> None:
    status, body = await api.request("GET", path)

    assert status == 404
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "the server could not find the requested resource", "reason": "NotFound",
                    "details": {}, "code": 404}


# 6. Go value structs read back as {}; pods get the admission plugins' defaults.

async def test_a_node_created_without_spec_reads_back_with_an_empty_spec(api: Api) -> None:
    created = await api.ok("POST", NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"}})

    assert created["spec"] == {}
    assert created["status"] == {}
    assert (await api.ok("GET", f"{NODES}/bare"))["spec"] == {}


_TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
_SELECTED = {"selector": {"matchLabels": {"app": "a"}}, "template": _TEMPLATE}
_JOB_TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}


@pytest.mark.parametrize(("api_version", "plural", "kind", "spec", "status"), [
    pytest.param("apps/v1", "deployments", "Deployment", _SELECTED, {}, id="Deployment"),
    pytest.param("apps/v1", "replicasets", "ReplicaSet", _SELECTED, {"replicas": 0}, id="ReplicaSet"),
    pytest.param("apps/v1", "statefulsets", "StatefulSet", _SELECTED, {"replicas": 0, "availableReplicas": 0},
                 id="StatefulSet"),
    pytest.param("apps/v1", "daemonsets", "DaemonSet", _SELECTED,
                 {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                  "numberReady": 0}, id="DaemonSet"),
    pytest.param("batch/v1", "jobs", "Job", {"template": _JOB_TEMPLATE}, {}, id="Job"),
    pytest.param("batch/v1", "cronjobs", "CronJob",
                 {"schedule": "@hourly", "jobTemplate": {"spec": {"template": _JOB_TEMPLATE}}}, {}, id="CronJob"),
    pytest.param("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", {"minAvailable": 1},
                 {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0},
                 id="PodDisruptionBudget"),
    pytest.param("resource.k8s.io/v1", "resourceclaims", "ResourceClaim", {"devices": {}}, {}, id="ResourceClaim"),
])
async def test_a_new_object_reads_back_with_its_go_zero_status(api: Api, api_version: str, plural: str, kind: str,
                                                               spec: dict, status: dict) -> None:
    # Status is a Go value struct: an apiserver writes it even when empty, with the counts that have
    # no omitempty as 0 (clients such as kr8s read status["replicas"] right after a create).
    path = f"/apis/{api_version}/namespaces/default/{plural}"
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "zero"}, "spec": spec,
            "status": {"observedGeneration": 7}}
    created = await api.ok("POST", path, body)

    assert created["status"] == status
    assert (await api.ok("GET", f"{path}/zero"))["status"] == status
    # A status write that removes them (a merge patch's nulls) leaves the same zero values.
    nulled = {key: None for key in status} or None
    emptied = await api.ok("PATCH", f"{path}/zero/status", {"status": nulled},
                           content_type="application/merge-patch+json")
    assert emptied["status"] == status


async def test_pods_get_the_default_service_account_and_tolerations(api: Api) -> None:
    pods = "/api/v1/namespaces/default/pods"
    container = [{"name": "c", "image": "busybox"}]
    plain = await api.ok("POST", pods, {"metadata": {"name": "plain"}, "spec": {"containers": container}})
    own = await api.ok("POST", pods, {"metadata": {"name": "own"}, "spec": {
        "containers": container, "serviceAccountName": "builder",
        "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 60}]}})

    assert (plain["spec"]["serviceAccountName"], plain["spec"]["serviceAccount"]) == ("default", "default")
    assert plain["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    assert own["spec"]["serviceAccountName"] == "builder"
    # A pod that already tolerates a taint keeps its own toleration and gets only the other one.
    assert [(t["key"], t["tolerationSeconds"]) for t in own["spec"]["tolerations"]] == [
        ("node.kubernetes.io/unreachable", 60), ("node.kubernetes.io/not-ready", 300)]


# 7. One ObjectMeta validation: a missing name is reported once.

async def test_missing_name_is_reported_once(api: Api) -> None:
    status, body = await api.request("POST", "/api/v1/namespaces/default/configmaps",
                                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})

    assert status == 422
    assert body["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value: name or "
                                          "generateName is required", "field": "metadata.name"}]


async def test_a_pods_unset_requests_default_to_its_limits_and_a_templates_do_not(api: Api) -> None:
    # SetDefaults_Pod: for a Pod's containers and init containers only, each limit not requested
    # becomes the request; the QoS class follows (limits for cpu and memory only: Guaranteed).
    limits = {"cpu": "500m", "memory": "64Mi", "example.com/gpu": "1"}
    pod = {"metadata": {"name": "limited"}, "spec": {
        "initContainers": [{"name": "init", "image": "busybox", "resources": {"limits": {"cpu": "1"}}}],
        "containers": [{"name": "main", "image": "busybox",
                        "resources": {"limits": limits, "requests": {"memory": "64Mi"}}}]}}
    created = await api.ok("POST", "/api/v1/namespaces/default/pods", pod)
    assert created["spec"]["containers"][0]["resources"] == {"limits": limits, "requests": limits}
    assert created["spec"]["initContainers"][0]["resources"] == {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}
    assert created["status"]["qosClass"] == "Burstable"  # the init container limits no memory
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [
        {"name": "main", "image": "busybox", "resources": {"limits": {"cpu": "1"}}}]}}
    deployment = await api.ok("POST", "/apis/apps/v1/namespaces/default/deployments", {
        "metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template}})
    assert deployment["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}}


def _pod_with(resources: dict, name: str = "r") -> dict:
    return {"metadata": {"name": name}, "spec": {"containers": [
        {"name": "main", "image": "busybox", "resources": resources}]}}


async def test_quantities_read_back_in_canonical_form(api: Api) -> None:
    # Go's Quantity decoder parses what is sent and its encoder writes the canonical form.
    created = await api.ok("POST", "/api/v1/namespaces/default/pods", _pod_with(
        {"requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": 1.5, "memory": " 2048Mi "}}))
    assert created["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1", "memory": "1Gi"},
                                                             "limits": {"cpu": "1500m", "memory": "2Gi"}}
    read = await api.ok("GET", "/api/v1/namespaces/default/pods/r")
    assert read["spec"]["containers"][0]["resources"] == created["spec"]["containers"][0]["resources"]


async def test_a_quantity_that_is_no_quantity_is_a_bad_request(api: Api) -> None:
    status, body = await api.request("POST", "/api/v1/namespaces/default/pods", _pod_with({"requests": {"cpu": "abc"}}))
    assert status == 400
    assert body["message"] == ('Pod in version "v1" cannot be handled as a Pod: quantities must match the regular '
                               "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    status, _ = await api.request("GET", "/api/v1/namespaces/default/pods/r")
    assert status == 404


@pytest.mark.parametrize(("resources", "field", "message"), [
    ({"requests": {"cpu": "-1"}}, "spec.containers[0].resources.requests[cpu]",
     'Invalid value: "-1": must be greater than or equal to 0'),
    ({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}, "spec.containers[0].resources.requests",
     'Invalid value: "2": must be less than or equal to cpu limit of 1'),
    ({"requests": {"example.com/gpu": "1"}}, "spec.containers[0].resources.limits",
     "Required value: Limit must be set for non overcommitable resources"),
    ({"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}},
     "spec.containers[0].resources.requests", 'Invalid value: "1": must be equal to example.com/gpu limit of 2'),
    ({"limits": {"example.com/gpu": "500m"}, "requests": {"example.com/gpu": "500m"}},
     "spec.containers[0].resources.limits[example.com/gpu]", 'Invalid value: "500m": must be an integer'),
    ({"requests": {"gpu": "1"}}, "spec.containers[0].resources.requests[gpu]",
     'Invalid value: "gpu": must be a standard resource for containers'),
], ids=["negative", "request-above-limit", "extended-without-limit", "extended-not-equal", "extended-fraction",
        "unknown-name"])
async def test_container_resources_are_validated_as_upstream(api: Api, resources: dict, field: str,
                                                              message: str) -> None:
    for path, body in (("/api/v1/namespaces/default/pods", _pod_with(resources)),
                       ("/apis/apps/v1/namespaces/default/deployments", {
                           "metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {
                               "metadata": {"labels": {"app": "a"}}, "spec": _pod_with(resources)["spec"]}}})):
        status, body = await api.request("POST", path, body)
        assert status == 422, body
        prefix = "spec.template." if "deployments" in path else ""
        assert {"reason": body["details"]["causes"][0]["reason"], "field": body["details"]["causes"][0]["field"]} == {
            "reason": "FieldValueRequired" if "Required" in message else "FieldValueInvalid", "field": prefix + field}
        assert f"{prefix}{field}: {message}" in body["message"]


def _pod_level(name: str, resources: dict, container: dict | None = None) -> dict:
    resources = dict(resources)
    init = resources.pop("initContainers", None)  # a test's sidecars ride along with the resources
    return {"metadata": {"name": name}, "spec": {"resources": resources, **({"initContainers": init} if init else {}),
                                                 "containers": [
        {"name": "a", "image": "busybox", **({"resources": container} if container else {})},
        {"name": "b", "image": "busybox", **({"resources": container} if container else {})}]}}


@pytest.mark.parametrize(("resources", "container", "requests", "qos"), [
    ({"limits": {"cpu": "2", "memory": "1Gi"}}, None, {"cpu": "2", "memory": "1Gi"}, "Guaranteed"),
    ({"limits": {"cpu": "2", "memory": "1Gi"}}, {"requests": {"cpu": "250m"}}, {"cpu": "500m", "memory": "1Gi"},
     "Burstable"),
    ({"requests": {"cpu": "1"}}, {"limits": {"cpu": "500m", "memory": "1Gi"}}, {"cpu": "1"}, "Burstable"),
    ({"limits": {"cpu": "4", "memory": "1Gi"}, "initContainers": [
        {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}]},
     {"requests": {"cpu": "250m"}}, {"cpu": "1500m", "memory": "1Gi"}, "Burstable"),
], ids=["limits-only", "containers-request-cpu", "pod-requests-only", "with-a-sidecar"])
async def test_pod_level_resources_default_requests_and_decide_the_qos_class(
        api: Api, resources: dict, container: dict | None, requests: dict, qos: str) -> None:
    # defaultPodRequests: with pod-level limits, an unset pod-level request is the containers'
    # effective one (here two containers of 250m), else the limit; the QoS class is the pod level's.
    created = await api.ok("POST", "/api/v1/namespaces/default/pods", _pod_level("p", resources, container))
    assert created["spec"]["resources"].get("requests") == requests
    assert created["status"]["qosClass"] == qos


@pytest.mark.fakeapi(feature_gates="PodLevelResources=false")
async def test_without_the_gate_pod_level_resources_are_dropped(api: Api) -> None:
    created = await api.ok("POST", "/api/v1/namespaces/default/pods", _pod_level(
        "p", {"limits": {"cpu": "2", "memory": "1Gi"}}, {"limits": {"cpu": "1", "memory": "1Gi"}}))
    assert "resources" not in created["spec"]
    assert created["status"]["qosClass"] == "Guaranteed"  # the containers'


@pytest.mark.parametrize(("spec", "causes"), [
    ({"resources": {"requests": {"cpu": "1"}}, "containers": [
        {"name": "a", "image": "i", "resources": {"requests": {"cpu": "750m"}}},
        {"name": "b", "image": "i", "resources": {"requests": {"cpu": "750m"}}}]},
     [("FieldValueInvalid", "spec.resources.requests[cpu]",
       'Invalid value: "1": must be greater than or equal to aggregate container requests of 1500m')]),
    ({"resources": {"limits": {"cpu": "1"}}, "containers": [
        {"name": "a", "image": "i", "resources": {"limits": {"cpu": "2"}}}]},
     # The pod-level request defaults to the container's 2 (its request defaulted to its limit).
     [("FieldValueInvalid", "spec.resources.requests",
       'Invalid value: "2": must be less than or equal to cpu limit of 1'),
      ("FieldValueInvalid", "spec.resources.containers[0][cpu].limits",
       'Invalid value: "2": must be less than or equal to pod limits of 1')]),
    ({"resources": {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}},
      "containers": [{"name": "a", "image": "i"}]},
     [("FieldValueNotSupported", "spec.resources.limits[example.com/gpu]",
       'Unsupported value: "example.com/gpu": supported values: "cpu", "hugepages-", "memory"'),
      ("FieldValueNotSupported", "spec.resources.requests[example.com/gpu]",
       'Unsupported value: "example.com/gpu": supported values: "cpu", "hugepages-", "memory"')]),
    ({"containers": [{"name": "a", "image": "i", "resources": {"requests": {"gpu": "1"}}}]},
     [("FieldValueInvalid", "spec.containers[0].resources.requests[gpu]",
       'Invalid value: "gpu": must be a standard resource type or fully qualified'),
      ("FieldValueInvalid", "spec.containers[0].resources.requests[gpu]",
       'Invalid value: "gpu": must be a standard resource for containers')]),
    ({"containers": [{"name": "a", "image": "i", "resources": {"limits": {"hugepages-2Mi": "2Mi"}}}]},
     [("FieldValueForbidden", "spec.containers[0].resources", "Forbidden: HugePages require cpu or memory")]),
    ({"containers": [{"name": "a", "image": "i", "resources": {
        "limits": {"hugepages-2Mi": "3Mi", "hugepages-1Gi": "2Gi", "memory": "4Gi"}}}]},
     [("FieldValueInvalid", "spec.containers[0].resources.limits[hugepages-2Mi]",
       'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi')]),
], ids=["requests-below-the-containers", "a-container-above-the-pod-limit", "unsupported-at-pod-level",
        "neither-standard-nor-qualified", "hugepages-alone", "hugepages-not-whole-pages"])
async def test_pod_level_and_container_resources_are_validated_as_upstream(api: Api, spec: dict, causes: list) -> None:
    status, body = await api.request("POST", "/api/v1/namespaces/default/pods",
                                     {"metadata": {"name": "v"}, "spec": spec})
    assert status == 422, body
    assert [(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]] == causes


async def test_invalid_values_are_quoted_as_go_quotes_them(api: Api) -> None:
    """Upstream's field errors print a string with %q: non-ASCII as is, control characters escaped."""
    labels = {"app": "café\t"}
    status, body = await api.request("POST", "/api/v1/namespaces/default/configmaps",
                                     {"metadata": {"name": "quoted", "labels": labels}})
    assert status == 422
    assert body["details"]["causes"][0]["message"].startswith('Invalid value: "café\\t": a valid label must be')


async def test_times_at_the_ends_of_gos_range_are_read_not_500(api: Api) -> None:
    """Go reads years 0000-9999 with any offset; what RFC 3339 cannot write in UTC is a 400."""
    status, body = await api.request("POST", NODES, node("edge", "0001-01-01T00:00:00+01:00"))
    assert status == 201
    assert body["status"]["conditions"][0]["lastHeartbeatTime"] == "0000-12-31T23:00:00Z"
    status, body = await api.request("POST", NODES, node("beyond", "9999-12-31T23:59:59-01:00"))
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"].endswith('parsing time "9999-12-31T23:59:59-01:00": year outside of range [0,9999] in UTC')


@pytest.mark.parametrize(("key", "messages"), [
    ("..", ["must not be '..'"]),
    ("..secret", ["must not start with '..'"]),
    ("k" * 254, ["must be no more than 253 characters"]),
    ("a key\n", ["a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                 "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"]),
], ids=["dot-dot", "dot-dot-prefix", "too-long", "space-and-newline"])
async def test_config_keys_are_checked_as_upstream_checks_file_names(api: Api, key: str, messages: list[str]) -> None:
    status, body = await api.request("POST", "/api/v1/namespaces/default/configmaps",
                                     {"metadata": {"name": "keys"}, "data": {key: "v"}})
    assert status == 422
    assert [c["message"].split(": ", 2)[-1] for c in body["details"]["causes"]] == messages


async def test_a_name_with_a_trailing_newline_is_refused(api: Api) -> None:
    """Go's regexp $ matches only at the end of the text; Python's also before a final newline."""
    status, body = await api.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "cm\n"}})
    assert (status, body["details"]["causes"][0]["field"]) == (422, "metadata.name")
