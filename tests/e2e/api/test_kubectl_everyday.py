"""kubectl 1.37 with the everyday kinds, as a user would type it: cluster-info, create secret,
create serviceaccount, create token, run + expose, get endpointslices, logs, describe node, debug,
and exec/port-forward failing with a clear message.  kubectl's generators send protobuf bodies for
secrets, service accounts, services and token requests."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest
from fakeapi.fixtures.plugin import Kubectl, wait_for

from fakeapi.cluster import FakeCluster
from tests.e2e.api.conftest import table, to_yaml
from tests.e2e.api.test_kubectl_cluster import ready_node


@pytest.fixture
def kubectl(fake_cluster: FakeCluster, kubectl_for: Callable[[FakeCluster], Kubectl]) -> Kubectl:
    return kubectl_for(fake_cluster)


async def get_json(kubectl: Kubectl, *args: str) -> dict:
    return json.loads((await kubectl.run("get", *args, "-o", "json")).stdout)


async def test_cluster_info_names_the_control_plane(kubectl: Kubectl, fake_cluster: FakeCluster) -> None:
    out = await kubectl.run("cluster-info")
    assert f"Kubernetes control plane is running at {fake_cluster.url}" in out.stdout


async def test_create_secret_generic(kubectl: Kubectl) -> None:
    out = await kubectl.run("create", "secret", "generic", "creds", "--from-literal=user=admin",
                            "--from-literal=pass=s3cret")

    assert out.stdout.strip() == "secret/creds created"
    secret = await get_json(kubectl, "secret", "creds")
    assert (secret["type"], {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}) == (
        "Opaque", {"user": "admin", "pass": "s3cret"})
    assert table((await kubectl.run("get", "secrets")).stdout)["creds"][1:3] == ["Opaque", "2"]


async def test_create_serviceaccount_and_token(kubectl: Kubectl, fake_cluster: FakeCluster) -> None:
    assert (await kubectl.run("create", "serviceaccount", "builder")).stdout.strip() == \
        "serviceaccount/builder created"

    token = (await kubectl.run("create", "token", "builder", "--duration=20m", "--audience=vault")).stdout.strip()
    short = await kubectl.run("create", "token", "builder", "--duration=1m", check=False)

    claims = fake_cluster.registry.tokens.verify_token(token, ["vault"])
    assert claims.username == "system:serviceaccount:default:builder"
    assert short.returncode != 0 and "may not specify a duration less than 10 minutes" in short.stderr


async def test_expose_a_pod_and_see_its_endpoint_slice(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))
    await kubectl.run("run", "web", "--image=nginx", "--labels=app=web", "--port=8080")

    exposed = await kubectl.run("expose", "pod", "web", "--port=80", "--target-port=8080", "--type=NodePort")
    await kubectl.run("wait", "--for=condition=Ready", "pod/web", "--timeout=10s")

    assert exposed.stdout.strip() == "service/web exposed"
    service = table((await kubectl.run("get", "svc", "web")).stdout)["web"]
    assert service[1] == "NodePort" and service[2].startswith("10.96.") and service[4].startswith("80:3")
    pod_ip = (await get_json(kubectl, "pod", "web"))["status"]["podIP"]

    async def slice_row() -> list[str] | None:
        rows = table((await kubectl.run("get", "endpointslices", "-l", "kubernetes.io/service-name=web")).stdout)
        row = next((r for name, r in rows.items() if name.startswith("web-")), None)
        return row if row is not None and row[3] == pod_ip else None

    row = await wait_for(slice_row, message="the pod's address in the service's EndpointSlice")
    assert row[1:3] == ["IPv4", "8080"]


async def test_logs_show_what_the_pod_was_given(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))
    await kubectl.run("run", "web", "--image=nginx", "--annotations=fakeapi.dev/log=serving on :8080")
    await kubectl.run("wait", "--for=condition=Ready", "pod/web", "--timeout=10s")

    out = await kubectl.run("logs", "web")
    tail = await kubectl.run("logs", "web", "--tail=1", "--timestamps")

    assert out.stdout == 'fakeapi: started container "web" (image nginx)\nserving on :8080\n'
    assert tail.stdout.endswith("Z serving on :8080\n")


async def test_describe_node_shows_its_lease(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))

    async def lease() -> str | None:
        out = (await kubectl.run("describe", "node", "n1")).stdout
        return out if "HolderIdentity:  n1" in out else None

    out = await wait_for(lease, message="the node lease in kubectl describe node")
    assert "RenewTime:" in out[out.index("Lease:"):]


async def test_debug_adds_an_ephemeral_container_and_exec_says_why_not(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(ready_node("n1")))
    await kubectl.run("run", "web", "--image=nginx")
    await kubectl.run("wait", "--for=condition=Ready", "pod/web", "--timeout=10s")

    debug = await kubectl.run("debug", "web", "--image=busybox", "--container=dbg")
    exec_ = await kubectl.run("exec", "web", "-c", "web", "--", "ls", check=False)
    forward = await kubectl.run("port-forward", "pod/web", "18080:80", check=False)

    assert debug.returncode == 0
    pod = await get_json(kubectl, "pod", "web")
    assert [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["dbg"]

    async def debugger_running():
        statuses = (await get_json(kubectl, "pod", "web"))["status"].get("ephemeralContainerStatuses") or []
        return [s for s in statuses if s["name"] == "dbg" and "running" in s["state"]]

    await wait_for(debugger_running, message="the kubelet to start the debug container of a running pod")
    assert exec_.returncode == 1 and "fakeapi runs no containers: cannot exec into" in exec_.stderr
    assert forward.returncode == 1 and "fakeapi runs no containers: cannot forward ports to" in forward.stderr
