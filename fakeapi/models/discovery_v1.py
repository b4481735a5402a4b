"""``discovery.k8s.io/v1`` EndpointSlice: the pods behind a Service, as the endpointslice
controller publishes them (label ``kubernetes.io/service-name``)."""

from typing import ClassVar

from fakeapi.models.base import ATOMIC, SET, Int32, KubeModel, TopLevel, opt, req
from fakeapi.models.core_v1 import ObjectReference
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.discovery.v1"


class EndpointConditions(KubeModel):
    """Whether an endpoint can take traffic."""

    ready: bool | None = opt("Ready to receive traffic (its pod is Ready and not terminating).")
    serving: bool | None = opt("Ready to receive traffic, regardless of termination.")
    terminating: bool | None = opt("Terminating.")


class ForZone(KubeModel):
    """A zone that should consume the endpoint."""

    name: str = req("Zone name.")


class ForNode(KubeModel):
    """A node that should consume the endpoint."""

    name: str = req("Node name.")


class EndpointHints(KubeModel):
    """Topology hints."""

    for_zones: list[ForZone] | None = opt("Zones that should consume the endpoint.", markers=ATOMIC)
    for_nodes: list[ForNode] | None = opt("Nodes that should consume the endpoint.", markers=ATOMIC)


class Endpoint(KubeModel):
    """One backend of a service."""

    addresses: list[str] = req("Addresses of the endpoint (1 to 100).", markers=SET)
    conditions: EndpointConditions | None = opt("Readiness of the endpoint.")
    hostname: str | None = opt("Hostname of the endpoint.")
    target_ref: ObjectReference | None = opt("The pod behind the endpoint.")
    deprecated_topology: dict[str, str] | None = opt("Deprecated topology labels.")
    node_name: str | None = opt("Node hosting the endpoint.")
    zone: str | None = opt("Zone of the endpoint.")
    hints: EndpointHints | None = opt("Topology hints.")


class EndpointPort(KubeModel):
    """A port of the slice's endpoints."""

    name: str | None = opt("Name matching the service port's name.")
    protocol: str | None = opt("TCP (default), UDP or SCTP.")
    port: Int32 | None = opt("Port number; unset means all ports.")
    app_protocol: str | None = opt("Application protocol.")


class EndpointSlice(TopLevel):
    """A subset of the endpoints of a service."""

    gvk: ClassVar[tuple[str, str, str]] = ("discovery.k8s.io", "v1", "EndpointSlice")
    api_version: str | None = opt("discovery.k8s.io/v1")
    kind: str | None = opt("EndpointSlice")
    metadata: ObjectMeta | None = opt("Standard object metadata; label kubernetes.io/service-name names the "
                                      "service.")
    address_type: str = req("IPv4, IPv6 or FQDN; immutable.")
    endpoints: list[Endpoint] = req("Endpoints (at most 1000).", markers=ATOMIC)
    ports: list[EndpointPort] | None = opt("Ports of every endpoint (at most 100).", markers=ATOMIC)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (EndpointSlice,)}
