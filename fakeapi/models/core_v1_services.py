"""Core ``v1`` Service and Endpoints.

A Service gets a cluster IP from the server's ``service_cluster_ip_range`` and node ports from
``service_node_port_range`` (see ``fakeapi.validation.services``); Endpoints are written by the
control plane's endpoints controller from the Ready pods a Service selects.
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    VALUE_STRUCT,
    Int32,
    IntOrString,
    KubeModel,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.core_v1 import ObjectReference
from fakeapi.models.meta import Condition, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.core.v1"


class ServicePort(KubeModel):
    """A port the service exposes and where it sends traffic."""

    name: str | None = opt("DNS label; required when the service has more than one port.")
    protocol: str | None = opt("TCP (default), UDP or SCTP.")
    app_protocol: str | None = opt("Application protocol (IANA service name or domain-prefixed name).")
    port: Int32 = req("The port the service listens on.")
    target_port: IntOrString | None = opt("Port number or name on the pods; defaults to port.")
    node_port: Int32 | None = opt("Port on every node (NodePort and LoadBalancer services); allocated when unset.")


class ClientIPConfig(KubeModel):
    """ClientIP session affinity settings."""

    timeout_seconds: Int32 | None = opt("Sticky session timeout, 1-86400 (default 10800).")


class SessionAffinityConfig(KubeModel):
    """Session affinity settings."""

    client_ip: ClientIPConfig | None = opt("ClientIP affinity settings.", alias="clientIP")


class ServiceSpec(KubeModel):
    """Desired state of a service."""

    ports: list[ServicePort] | None = opt("Exposed ports.",
                                          markers=list_map("port", "protocol") | patch_merge("port"))
    selector: dict[str, str] | None = opt("Pods with these labels back the service.")
    cluster_ip: str | None = opt("Virtual IP, allocated unless set; None for a headless service.",
                                 alias="clusterIP")
    cluster_ips: list[str] | None = opt("Virtual IPs (first equals clusterIP).", alias="clusterIPs",
                                        markers=ATOMIC)
    type: str | None = opt("ClusterIP (default), NodePort, LoadBalancer or ExternalName.")
    external_ips: list[str] | None = opt("Extra IPs that route to the service.", alias="externalIPs",
                                         markers=ATOMIC)
    session_affinity: str | None = opt("None (default) or ClientIP.")
    load_balancer_ip: str | None = opt("Deprecated requested load balancer IP.", alias="loadBalancerIP")
    load_balancer_source_ranges: list[str] | None = opt("Client CIDRs allowed through the load balancer.",
                                                        markers=ATOMIC)
    external_name: str | None = opt("DNS name an ExternalName service aliases.")
    external_traffic_policy: str | None = opt("Cluster (default) or Local.")
    health_check_node_port: Int32 | None = opt("Health check node port of Local LoadBalancer services.")
    publish_not_ready_addresses: bool | None = opt("Publish endpoints of pods that are not Ready.")
    session_affinity_config: SessionAffinityConfig | None = opt("Session affinity settings.")
    ip_families: list[str] | None = opt("IPv4 and/or IPv6.", markers=ATOMIC)
    ip_family_policy: str | None = opt("SingleStack (default), PreferDualStack or RequireDualStack.")
    allocate_load_balancer_node_ports: bool | None = opt("Allocate node ports for LoadBalancer services.")
    load_balancer_class: str | None = opt("Load balancer implementation.")
    internal_traffic_policy: str | None = opt("Cluster (default) or Local.")
    traffic_distribution: str | None = opt("PreferClose, PreferSameZone or PreferSameNode.")


class PortStatus(KubeModel):
    """A load balancer port's state."""

    port: Int32 = req("Port number.")
    protocol: str = req("TCP, UDP or SCTP.")
    error: str | None = opt("Error, if any.")


class LoadBalancerIngress(KubeModel):
    """A load balancer ingress point."""

    ip: str | None = opt("IP of the ingress point.")
    hostname: str | None = opt("Hostname of the ingress point.")
    ip_mode: str | None = opt("VIP or Proxy.")
    ports: list[PortStatus] | None = opt("Port states.", markers=ATOMIC)


class LoadBalancerStatus(KubeModel):
    """The load balancer, if any."""

    ingress: list[LoadBalancerIngress] | None = opt("Ingress points.", markers=ATOMIC)


class ServiceStatus(KubeModel):
    """Observed state of a service."""

    load_balancer: LoadBalancerStatus | None = opt("Load balancer status.", markers=VALUE_STRUCT)
    conditions: list[Condition] | None = opt("Service conditions.",
                                             markers=list_map("type") | patch_merge("type"))


class Service(TopLevel):
    """A stable virtual IP and name in front of the pods its selector matches."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Service")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Service")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: ServiceSpec | None = opt("Desired state.", markers=VALUE_STRUCT)
    status: ServiceStatus | None = opt("Observed state.", markers=VALUE_STRUCT)


class EndpointAddress(KubeModel):
    """One endpoint: a pod's IP."""

    ip: str = req("The IP.")
    hostname: str | None = opt("Hostname of the endpoint.")
    node_name: str | None = opt("Node hosting the endpoint.")
    target_ref: ObjectReference | None = opt("The pod behind the address.")


class EndpointPort(KubeModel):
    """A port of the endpoints."""

    name: str | None = opt("Name matching the service port's name.")
    port: Int32 = req("Port number.")
    protocol: str | None = opt("TCP (default), UDP or SCTP.")
    app_protocol: str | None = opt("Application protocol.")


class EndpointSubset(KubeModel):
    """Addresses that share the same ports."""

    addresses: list[EndpointAddress] | None = opt("Ready addresses.", markers=ATOMIC)
    not_ready_addresses: list[EndpointAddress] | None = opt("Addresses not ready yet.", markers=ATOMIC)
    ports: list[EndpointPort] | None = opt("Ports of the addresses.", markers=ATOMIC)


class Endpoints(TopLevel):
    """The addresses behind a service (legacy; EndpointSlices supersede it)."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Endpoints")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Endpoints")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    subsets: list[EndpointSubset] | None = opt("Address sets.", markers=ATOMIC)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Service, Endpoints)}
