"""``networking.k8s.io/v1`` Ingress (with ``status``), IngressClass and NetworkPolicy."""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    VALUE_STRUCT,
    Int32,
    IntOrString,
    KubeModel,
    TopLevel,
    opt,
    req,
)
from fakeapi.models.core_v1_storage import TypedLocalObjectReference
from fakeapi.models.meta import LabelSelector, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.networking.v1"


# --- Ingress -----------------------------------------------------------------------------------


class ServiceBackendPort(KubeModel):
    """The service port a backend sends to: a name or a number."""

    name: str | None = opt("Name of the port on the Service; exclusive with number.")
    number: Int32 | None = opt("Port number on the Service; exclusive with name.")


class IngressServiceBackend(KubeModel):
    """A Service in the Ingress's namespace as a backend."""

    name: str = req("Name of the Service.")
    port: ServiceBackendPort | None = opt("Port of the Service.", markers=VALUE_STRUCT)


class IngressBackend(KubeModel):
    """Where matching traffic goes: a Service or another resource."""

    service: IngressServiceBackend | None = opt("A Service backend; exclusive with resource.")
    resource: TypedLocalObjectReference | None = opt("Another resource in the namespace; exclusive with service.")


class HTTPIngressPath(KubeModel):
    """A path and the backend its requests go to."""

    path: str | None = opt("Matched against the request path; must begin with '/' for Exact and Prefix.")
    path_type: str = req("Exact, Prefix or ImplementationSpecific.")
    backend: IngressBackend = req("Where matching requests go.")


class HTTPIngressRuleValue(KubeModel):
    """HTTP paths of a rule."""

    paths: list[HTTPIngressPath] = req("Paths mapped to backends.", markers=ATOMIC)


class IngressRule(KubeModel):
    """Paths under one host (Go embeds IngressRuleValue, so ``http`` sits beside ``host``)."""

    host: str | None = opt("Fully qualified domain name, or a wildcard such as *.example.com; not an IP.")
    http: HTTPIngressRuleValue | None = opt("HTTP paths of the rule.")


class IngressTLS(KubeModel):
    """TLS termination for some hosts."""

    hosts: list[str] | None = opt("Hosts in the TLS certificate.", markers=ATOMIC)
    secret_name: str | None = opt("Secret holding the certificate and key.")


class IngressSpec(KubeModel):
    """What the Ingress routes."""

    ingress_class_name: str | None = opt("Name of the IngressClass; defaulted from the default class on create.")
    default_backend: IngressBackend | None = opt("Backend of requests no rule matches.")
    tls: list[IngressTLS] | None = opt("TLS configuration.", markers=ATOMIC)
    rules: list[IngressRule] | None = opt("Host rules.", markers=ATOMIC)


class IngressPortStatus(KubeModel):
    """The error condition of one port of a load balancer."""

    port: Int32 = req("Port number.")
    protocol: str = req("TCP, UDP or SCTP.")
    error: str | None = opt("The problem with the port, if any.")


class IngressLoadBalancerIngress(KubeModel):
    """One ingress point of the load balancer."""

    ip: str | None = opt("IP of an IP-based ingress point.")
    hostname: str | None = opt("Hostname of a DNS-based ingress point.")
    ports: list[IngressPortStatus] | None = opt("Port states.", markers=ATOMIC)


class IngressLoadBalancerStatus(KubeModel):
    """The load balancer of an Ingress."""

    ingress: list[IngressLoadBalancerIngress] | None = opt("Ingress points.", markers=ATOMIC)


class IngressStatus(KubeModel):
    """What the ingress controller reports."""

    load_balancer: IngressLoadBalancerStatus | None = opt("Load balancer status.", markers=VALUE_STRUCT)


class Ingress(TopLevel):
    """Rules that route external HTTP(S) traffic to Services."""

    gvk: ClassVar[tuple[str, str, str]] = ("networking.k8s.io", "v1", "Ingress")
    api_version: str | None = opt("networking.k8s.io/v1")
    kind: str | None = opt("Ingress")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: IngressSpec | None = opt("Desired state.", markers=VALUE_STRUCT)
    status: IngressStatus | None = opt("Observed state (the status subresource).", markers=VALUE_STRUCT)


# --- IngressClass ------------------------------------------------------------------------------


class IngressClassParametersReference(KubeModel):
    """A resource with the controller's parameters for the class."""

    api_group: str | None = opt("API group of the resource; empty for the core group.")
    kind: str = req("Kind of the resource.")
    name: str = req("Name of the resource.")
    scope: str | None = opt("Cluster (default) or Namespace.")
    namespace: str | None = opt("Namespace of the resource; required for scope Namespace, forbidden for Cluster.")


class IngressClassSpec(KubeModel):
    """The controller behind a class."""

    controller: str | None = opt("Domain-prefixed path of the controller (e.g. acme.io/ingress); immutable.")
    parameters: IngressClassParametersReference | None = opt("The controller's parameters.")


class IngressClass(TopLevel):
    """A class of Ingresses and the controller that serves it; annotation
    ``ingressclass.kubernetes.io/is-default-class: "true"`` makes it the default."""

    gvk: ClassVar[tuple[str, str, str]] = ("networking.k8s.io", "v1", "IngressClass")
    api_version: str | None = opt("networking.k8s.io/v1")
    kind: str | None = opt("IngressClass")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: IngressClassSpec | None = opt("Desired state.", markers=VALUE_STRUCT)


# --- NetworkPolicy -----------------------------------------------------------------------------


class NetworkPolicyPort(KubeModel):
    """A port (or port range) traffic may use."""

    protocol: str | None = opt("TCP (default), UDP or SCTP.")
    port: IntOrString | None = opt("Port number or named pod port; unset matches every port.")
    end_port: Int32 | None = opt("Last port of a range starting at a numeric port.")


class IPBlock(KubeModel):
    """A CIDR, minus some sub-ranges."""

    cidr: str = req("The CIDR, e.g. 192.168.1.0/24 or 2001:db8::/64.")
    except_: list[str] | None = opt("CIDRs inside cidr that are excluded.", alias="except", markers=ATOMIC)


class NetworkPolicyPeer(KubeModel):
    """Pods, namespaces or an IP block traffic comes from or goes to."""

    pod_selector: LabelSelector | None = opt("Pods (in the selected namespaces, else the policy's).")
    namespace_selector: LabelSelector | None = opt("Namespaces.")
    ip_block: IPBlock | None = opt("An IP block; exclusive with the selectors.")


class NetworkPolicyIngressRule(KubeModel):
    """Traffic allowed into the selected pods."""

    ports: list[NetworkPolicyPort] | None = opt("Ports; empty matches every port.", markers=ATOMIC)
    from_: list[NetworkPolicyPeer] | None = opt("Sources; empty matches every source.", alias="from",
                                                markers=ATOMIC)


class NetworkPolicyEgressRule(KubeModel):
    """Traffic allowed out of the selected pods."""

    ports: list[NetworkPolicyPort] | None = opt("Ports; empty matches every port.", markers=ATOMIC)
    to: list[NetworkPolicyPeer] | None = opt("Destinations; empty matches every destination.", markers=ATOMIC)


class NetworkPolicySpec(KubeModel):
    """Which pods the policy isolates and what traffic it allows."""

    pod_selector: LabelSelector | None = opt("Pods the policy applies to; empty selects every pod.",
                                             markers=VALUE_STRUCT)
    ingress: list[NetworkPolicyIngressRule] | None = opt("Allowed incoming traffic.", markers=ATOMIC)
    egress: list[NetworkPolicyEgressRule] | None = opt("Allowed outgoing traffic.", markers=ATOMIC)
    policy_types: list[str] | None = opt("Ingress and/or Egress; defaulted from the rules.", markers=ATOMIC)


class NetworkPolicy(TopLevel):
    """What network traffic is allowed for a set of pods."""

    gvk: ClassVar[tuple[str, str, str]] = ("networking.k8s.io", "v1", "NetworkPolicy")
    api_version: str | None = opt("networking.k8s.io/v1")
    kind: str | None = opt("NetworkPolicy")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: NetworkPolicySpec | None = opt("Desired state.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Ingress, IngressClass, NetworkPolicy)}
