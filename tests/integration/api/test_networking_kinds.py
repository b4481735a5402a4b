"""networking.k8s.io/v1 over HTTP: Ingress (validation, status, the DefaultIngressClass admission),
IngressClass (parameters, the immutable controller) and NetworkPolicy (defaults, ports, peers)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.validation import networking
from tests.integration.api.conftest import Api

GROUP = "/apis/networking.k8s.io/v1"
INGRESSES = f"{GROUP}/namespaces/default/ingresses"
CLASSES = f"{GROUP}/ingressclasses"
POLICIES = f"{GROUP}/namespaces/default/networkpolicies"
MERGE = "application/merge-patch+json"
DEFAULT = {"ingressclass.kubernetes.io/is-default-class": "true"}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


def backend(name: str = "web", port: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"service": {"name": name, "port": {"number": 80} if port is None else port}}


def http_path(path: str = "/", path_type: str | None = "Prefix", **extra: Any) -> dict[str, Any]:
    item = {"path": path, "backend": backend(), **extra}
    return item if path_type is None else {**item, "pathType": path_type}


def ingress(name: str = "web", *, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"annotations": annotations} if annotations else {})}
    return {"metadata": meta,
            "spec": spec or {"rules": [{"host": "shop.example.com", "http": {"paths": [http_path()]}}]}}


def ingress_class(name: str, *, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"annotations": annotations} if annotations else {})}
    return {"metadata": meta, "spec": {"controller": "example.com/ingress", **spec}}


def policy(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "deny"}, "spec": {"podSelector": {"matchLabels": {"app": "db"}}, **spec}}


async def rejected(api: Api, path: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    status, out = await api.request("POST", path, body)
    assert status == 422, out
    return causes(out)


# --- Ingress -----------------------------------------------------------------------------------

async def test_an_ingress_is_stored_with_an_empty_status_and_generation_one(api: Api) -> None:
    sent = {**ingress(), "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}
    created = await api.ok("POST", INGRESSES, sent)

    assert created["status"] == {"loadBalancer": {}}
    assert created["metadata"]["generation"] == 1
    assert "ingressClassName" not in created["spec"]


_RULE = "spec.rules[0]"
_PATH = f"{_RULE}.http.paths[0]"


@pytest.mark.parametrize(("spec", "expected"), [
    ({"tls": [{"secretName": "cert"}]}, [("spec", "Invalid value: null: either `defaultBackend` or `rules` must be "
                                                  "specified")]),
    ({"rules": [{"host": "10.0.0.1", "http": {"paths": [http_path()]}}]},
     [(f"{_RULE}.host", 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address')]),
    ({"rules": [{"host": "*.*.example.com", "http": {"paths": [http_path()]}}]},
     [(f"{_RULE}.host", "Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', "
                        "followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, "
                        "'-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for "
                        r"validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
    ({"rules": [{"http": {"paths": []}}]}, [(f"{_RULE}.http.paths", "Required value")]),
    ({"rules": [{"http": {"paths": [http_path(path_type=None)]}}]},
     [(f"{_PATH}.pathType", "Required value: pathType must be specified")]),
    ({"rules": [{"http": {"paths": [http_path(path_type="Regex")]}}]},
     [(f"{_PATH}.pathType", 'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", '
                            '"Prefix"')]),
    ({"rules": [{"http": {"paths": [http_path("api/../x", "Exact")]}}]},
     [(f"{_PATH}.path", 'Invalid value: "api/../x": must be an absolute path'),
      (f"{_PATH}.path", "Invalid value: \"api/../x\": must not contain '/../'")]),
    ({"rules": [{"http": {"paths": [http_path("rel", "ImplementationSpecific")]}}]},
     [(f"{_PATH}.path", 'Invalid value: "rel": must be an absolute path')]),
    ({"defaultBackend": {**backend(), "resource": {"kind": "Bucket", "name": "b"}}},
     [("spec.defaultBackend", 'Invalid value: "": cannot set both resource and service backends')]),
    ({"defaultBackend": {}}, [("spec.defaultBackend", 'Invalid value: "": resource or service backend is required')]),
    ({"defaultBackend": backend(port={"name": "http", "number": 80})},
     [("spec.defaultBackend", 'Invalid value: "": cannot set both port name & port number')]),
    ({"defaultBackend": backend(port={})},
     [("spec.defaultBackend", "Required value: port name or number is required")]),
    ({"defaultBackend": backend(port={"number": 70000})},
     [("spec.defaultBackend.service.port.number", "Invalid value: 70000: must be between 1 and 65535, inclusive")]),
    ({"defaultBackend": backend("1web")},
     [("spec.defaultBackend.service.name", "Invalid value: \"1web\": a DNS-1035 label must consist of lower case "
                                           "alphanumeric characters or '-', start with an alphabetic character, and "
                                           "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex "
                                           "used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")]),
    ({"defaultBackend": {"resource": {"apiGroup": "example.com", "kind": "Bucket"}}},
     [("spec.defaultBackend.resource.name", "Required value")]),
    ({"defaultBackend": backend(), "tls": [{"hosts": ["Shop.example.com"]}]},
     [("spec.tls[0].hosts[0]", "Invalid value: \"Shop.example.com\": a lowercase RFC 1123 subdomain must consist of "
                               "lower case alphanumeric characters, '-' or '.', and must start and end with an "
                               "alphanumeric character (e.g. 'example.com', regex used for validation is "
                               r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
], ids=["no-backend", "ip-host", "double-wildcard", "no-paths", "no-path-type", "path-type", "exact-path",
        "relative-path", "service-and-resource", "empty-backend", "port-name-and-number", "no-port", "port-range",
        "service-name", "resource-name", "tls-host"])
async def test_invalid_ingresses_are_422_with_upstream_causes(api: Api, spec: dict[str, Any],
                                                             expected: list[tuple[str, str]]) -> None:
    assert await rejected(api, INGRESSES, ingress(**spec)) == expected


async def test_wildcard_hosts_and_named_ports_are_valid(api: Api) -> None:
    rule = {"host": "*.example.com", "http": {"paths": [{"path": "/api", "pathType": "Exact",
                                                         "backend": backend(port={"name": "http"})}]}}
    created = await api.ok("POST", INGRESSES, ingress(rules=[rule], tls=[{"hosts": ["*.example.com"],
                                                                         "secretName": "wildcard-cert"}]))

    assert created["spec"]["rules"] == [rule]


async def test_the_class_annotation_must_match_the_class_name_on_create(api: Api) -> None:
    body = ingress(annotations={"kubernetes.io/ingress.class": "nginx"}, ingressClassName="traefik",
                   defaultBackend=backend())

    assert await rejected(api, INGRESSES, body) == [
        ("annotations.kubernetes.io/ingress.class", 'Invalid value: "nginx": must match `ingressClassName` when both '
                                                    "are specified")]


async def test_status_is_written_only_through_the_subresource_and_validated(api: Api) -> None:
    await api.ok("POST", INGRESSES, ingress())
    lb = {"loadBalancer": {"ingress": [{"ip": "192.0.2.10", "ports": [{"port": 443, "protocol": "TCP"}]}]}}

    ignored = await api.ok("PATCH", f"{INGRESSES}/web", {"status": lb}, content_type=MERGE)
    written = await api.ok("PATCH", f"{INGRESSES}/web/status", {"status": lb, "spec": {"ingressClassName": "x"}},
                           content_type=MERGE)
    status, body = await api.request("PATCH", f"{INGRESSES}/web/status", {"status": {"loadBalancer": {"ingress": [
        {"ip": "300.1.1.1"}, {"hostname": "10.0.0.1"}]}}}, content_type=MERGE)

    assert ignored["status"] == {"loadBalancer": {}}
    assert written["status"] == lb and "ingressClassName" not in written["spec"]
    assert written["metadata"]["generation"] == 1
    assert status == 422 and causes(body) == [
        ("status.loadBalancer.ingress[0].ip", 'Invalid value: "300.1.1.1": must be a valid IP address, (e.g. 10.9.8.7 '
                                              "or 2001:db8::ffff)"),
        ("status.loadBalancer.ingress[1].hostname", 'Invalid value: "10.0.0.1": must be a DNS name, not an IP '
                                                    "address")]


async def test_a_spec_change_bumps_the_generation(api: Api) -> None:
    await api.ok("POST", INGRESSES, ingress())

    patched = await api.ok("PATCH", f"{INGRESSES}/web", {"spec": {"defaultBackend": backend("api")}},
                           content_type=MERGE)

    assert patched["metadata"]["generation"] == 2


# --- DefaultIngressClass -------------------------------------------------------------------------

async def test_an_ingress_without_a_class_gets_the_default_one(api: Api) -> None:
    await api.ok("POST", CLASSES, ingress_class("plain"))
    await api.ok("POST", CLASSES, ingress_class("nginx", annotations=DEFAULT))

    defaulted = await api.ok("POST", INGRESSES, ingress("a"))
    chosen = await api.ok("POST", INGRESSES, ingress("b", ingressClassName="plain", defaultBackend=backend()))
    legacy = await api.ok("POST", INGRESSES, ingress("c", annotations={"kubernetes.io/ingress.class": "other"}))
    updated = await api.ok("PATCH", f"{INGRESSES}/b", {"spec": {"ingressClassName": None}}, content_type=MERGE)

    assert defaulted["spec"]["ingressClassName"] == "nginx"
    assert chosen["spec"]["ingressClassName"] == "plain"
    assert "ingressClassName" not in legacy["spec"]
    assert "ingressClassName" not in updated["spec"]  # admission defaults on create only


async def test_of_several_default_classes_the_newest_wins(api: Api) -> None:
    await api.ok("POST", CLASSES, ingress_class("zeta", annotations=DEFAULT))
    await api.ok("POST", CLASSES, ingress_class("alpha", annotations=DEFAULT))

    created = await api.ok("POST", INGRESSES, ingress())

    # alpha is the newer, or (created within the same second) the first name: the tie-break.
    assert created["spec"]["ingressClassName"] == "alpha"


def test_the_default_class_is_the_newest_then_the_first_name() -> None:
    def cls(name: str, created: str, default: str = "true") -> dict[str, Any]:
        return {"metadata": {"name": name, "creationTimestamp": created,
                             "annotations": {"ingressclass.kubernetes.io/is-default-class": default}}}

    newest = [cls("b", "2026-01-01T00:00:02Z"), cls("a", "2026-01-01T00:00:01Z"),
              cls("c", "2026-01-01T00:00:09Z", default="false")]
    tied = [cls("b", "2026-01-01T00:00:01Z"), cls("a", "2026-01-01T00:00:01Z")]

    assert [networking.default_class(c)["metadata"]["name"] for c in (newest, tied)] == ["b", "a"]
    assert networking.default_class(newest[2:]) is None


# --- IngressClass ------------------------------------------------------------------------------

async def test_class_parameters_default_to_cluster_scope_and_the_controller_is_immutable(api: Api) -> None:
    created = await api.ok("POST", CLASSES, ingress_class("nginx", parameters={
        "apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}))
    status, body = await api.request("PATCH", f"{CLASSES}/nginx", {"spec": {"controller": "example.com/other"}},
                                     content_type=MERGE)

    assert created["spec"]["parameters"]["scope"] == "Cluster"
    assert created["metadata"]["generation"] == 1
    assert status == 422 and causes(body) == [("spec.controller", 'Invalid value: "example.com/other": field is '
                                                                  "immutable")]


@pytest.mark.parametrize(("spec", "expected"), [
    ({"controller": ""}, [("spec.controller", "Required value")]),
    ({"controller": "nginx"}, [("spec.controller", 'Invalid value: "nginx": must be a domain-prefixed path (such as '
                                                   '"acme.io/foo")')]),
    ({"controller": "example.com/" + "x" * 250}, [("spec.controller", "Too long: may not be more than 250 bytes")]),
    ({"parameters": {"kind": "P", "name": "p", "scope": "Namespace"}},
     [("spec.parameters.namespace", "Required value: `parameters.scope` is set to 'Namespace'")]),
    ({"parameters": {"kind": "P", "name": "p", "namespace": "ns"}},
     [("spec.parameters.namespace", "Forbidden: `parameters.scope` is set to 'Cluster'")]),
    ({"parameters": {"kind": "P", "name": "p", "scope": "Global"}},
     [("spec.parameters.scope", 'Unsupported value: "Global": supported values: "Cluster", "Namespace"')]),
    ({"parameters": {"kind": "a/b", "name": ""}},
     [("spec.parameters.kind", "Invalid value: \"a/b\": may not contain '/'"),
      ("spec.parameters.name", "Required value")]),
], ids=["no-controller", "not-domain-prefixed", "too-long", "namespace-scope", "cluster-scope", "scope", "reference"])
async def test_invalid_ingress_classes_are_422(api: Api, spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert await rejected(api, CLASSES, ingress_class("c", **spec)) == expected


# --- NetworkPolicy -----------------------------------------------------------------------------

async def test_policy_types_and_port_protocols_are_defaulted(api: Api) -> None:
    ingress_only = await api.ok("POST", POLICIES, policy(ingress=[{"ports": [{"port": 5432}]}]))
    both = await api.ok("POST", POLICIES, {**policy(egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}]),
                                           "metadata": {"name": "both"}})
    selects_all = await api.ok("POST", POLICIES, {"metadata": {"name": "all"}, "spec": {}})

    assert ingress_only["spec"] == {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Ingress"],
                                    "ingress": [{"ports": [{"port": 5432, "protocol": "TCP"}]}]}
    assert both["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert selects_all["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    assert ingress_only["metadata"]["generation"] == 1


@pytest.mark.parametrize(("spec", "expected"), [
    ({"ingress": [{"ports": [{"port": 80, "endPort": 79, "protocol": "ICMP"}]}]},
     [("spec.ingress[0].ports[0].protocol", 'Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'),
      ("spec.ingress[0].ports[0].endPort", "Invalid value: 79: must be greater than or equal to `port`")]),
    ({"egress": [{"ports": [{"port": "http", "endPort": 90}, {"endPort": 90}]}]},
     [("spec.egress[0].ports[0].endPort", "Invalid value: 90: may not be specified when `port` is non-numeric"),
      ("spec.egress[0].ports[1].endPort", "Invalid value: 90: may not be specified when `port` is not specified")]),
    ({"ingress": [{"from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]},
     [("spec.ingress[0].from[0]", "Required value: must specify a peer"),
      ("spec.ingress[0].from[1]", "Forbidden: may not specify both ipBlock and another peer")]),
    ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24", "10.0.0.0/16", "x"]}}]}]},
     [("spec.egress[0].to[0].ipBlock.except[0]", 'Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`'),
      ("spec.egress[0].to[0].ipBlock.except[1]", 'Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`'),
      ("spec.egress[0].to[0].ipBlock.except[2]", 'Invalid value: "x": must be a valid CIDR value, (e.g. 10.9.8.0/24 '
                                                 "or 2001:db8::/64)")]),
    ({"egress": [{"to": [{"ipBlock": {"cidr": ""}}]}]}, [("spec.egress[0].to[0].ipBlock.cidr", "Required value")]),
    ({"policyTypes": ["Ingress", "Both"]},
     [("spec.policyTypes[1]", 'Unsupported value: "Both": supported values: "Ingress", "Egress"')]),
    ({"policyTypes": ["Ingress", "Egress", "Ingress"]},
     [("spec.policyTypes", 'Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two '
                           "policyTypes")]),
    ({"podSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
     [("spec.podSelector.matchExpressions[0].values", "Required value: must be specified when `operator` is 'In' or "
                                                      "'NotIn'")]),
], ids=["protocol-and-end-port", "end-port-without-number", "peers", "except", "no-cidr", "policy-type",
        "three-policy-types", "selector"])
async def test_invalid_network_policies_are_422(api: Api, spec: dict[str, Any],
                                                expected: list[tuple[str, str]]) -> None:
    assert await rejected(api, POLICIES, policy(**spec)) == expected


async def test_a_cidr_with_host_bits_is_accepted_as_upstream_parses_it_sloppily(api: Api) -> None:
    created = await api.ok("POST", POLICIES, policy(egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.1/8",
                                                                                  "except": ["10.1.2.3/16"]}}]}]))

    assert created["spec"]["egress"][0]["to"][0]["ipBlock"] == {"cidr": "10.0.0.1/8", "except": ["10.1.2.3/16"]}


@pytest.mark.parametrize(("hosts", "shown"), [
    ([None, None, None, "d.example.com"], "d.example.com"),
    (["a.example.com", "b.example.com", "c.example.com"], "a.example.com,b.example.com,c.example.com"),
    (["a.example.com", None, "b.example.com", "c.example.com", None], "a.example.com,b.example.com,c.example.com "
                                                                       "+ 2 more..."),
    ([None], "*"),
], ids=["hosts-after-hostless-rules", "three", "more-after-three", "none"])
async def test_the_hosts_column_is_upstreams(api: Api, hosts: list[str | None], shown: str) -> None:
    rules = [{"http": {"paths": [http_path()]}, **({"host": h} if h else {})} for h in hosts]
    await api.ok("POST", INGRESSES, ingress("table", rules=rules))
    address = "k8s-default-trainer-0123456789.elb.us-east-1.amazonaws.com"
    await api.ok("PATCH", f"{INGRESSES}/table/status", {"status": {"loadBalancer": {"ingress": [
        {"hostname": address}]}}}, content_type=MERGE)
    table = await api.ok("GET", f"{INGRESSES}/table",
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert table["rows"][0]["cells"][1:4] == ["<none>", shown, address]  # the server's tables are wide: no clipping


async def test_addresses_are_read_as_gos_sloppy_parser_reads_them(api: Api) -> None:
    """Legacy IP fields (StrictIPCIDRValidation off) take IPv4 octets with leading zeros, and no
    IPv6 zone; a CIDR's prefix is ASCII digits."""
    created = await api.ok("POST", POLICIES, {**policy(egress=[{"to": [{"ipBlock": {"cidr": "010.0.0.0/8"}}]}]),
                                              "metadata": {"name": "zeros"}})
    assert created["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"] == "010.0.0.0/8"  # stored as sent
    status, body = await api.request("POST", POLICIES, {**policy(egress=[{"to": [{"ipBlock": {
        "cidr": "10.0.0.0/\u0668"}}]}]), "metadata": {"name": "arabic-digit"}})
    assert (status, causes(body)[0][0]) == (422, "spec.egress[0].to[0].ipBlock.cidr")
    host_rule = {"host": "010.1.1.1", "http": {"paths": [http_path()]}}
    status, body = await api.request("POST", INGRESSES, ingress("ip-host", rules=[host_rule]))
    assert ("spec.rules[0].host", 'Invalid value: "010.1.1.1": must be a DNS name, not an IP address') in causes(body)
    await api.ok("POST", INGRESSES, ingress("zoned"))
    status, body = await api.request("PATCH", f"{INGRESSES}/zoned/status", {"status": {"loadBalancer": {
        "ingress": [{"ip": "fe80::1%eth0"}]}}}, content_type=MERGE)
    assert (status, causes(body)[0][0]) == (422, "status.loadBalancer.ingress[0].ip")
