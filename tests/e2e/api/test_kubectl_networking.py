"""kubectl 1.37 with the networking.k8s.io kinds: ``create ingress`` (a protobuf body: class, rules
with Exact and Prefix paths, TLS, a default backend, annotations), ``get ingress`` and
``get netpol`` with upstream's columns, and an Ingress without a class given the default one."""

from __future__ import annotations

import json

from fakeapi.fixtures.plugin import Kubectl

from tests.e2e.api.conftest import table, to_yaml

NETWORKING = "networking.k8s.io/v1"
NGINX = {"apiVersion": NETWORKING, "kind": "IngressClass",
         "metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
         "spec": {"controller": "k8s.io/ingress-nginx",
                  "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "lb"}}}
POLICY = {"apiVersion": NETWORKING, "kind": "NetworkPolicy", "metadata": {"name": "db", "namespace": "default"},
          "spec": {"podSelector": {"matchLabels": {"app": "db"},
                                   "matchExpressions": [{"key": "tier", "operator": "In", "values": ["data"]}]},
                   "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}],
                                "ports": [{"port": 5432}]}]}}


async def test_create_ingress_sends_every_generator_field(kubectl: Kubectl) -> None:
    out = await kubectl.run("create", "ingress", "shop", "--class=nginx",
                            "--rule=shop.example.com/api=api:8080,tls=shop-tls",
                            "--rule=shop.example.com/static/*=static:http",
                            "--default-backend=fallback:80", "--annotation=example.com/team=web")

    assert out.stdout.strip() == "ingress.networking.k8s.io/shop created"
    ingress = json.loads((await kubectl.run("get", "ingress", "shop", "-o", "json")).stdout)
    assert ingress["metadata"]["annotations"] == {"example.com/team": "web"}
    assert ingress["spec"] == {
        "ingressClassName": "nginx",
        "defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}},
        "tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}],
        "rules": [{"host": "shop.example.com", "http": {"paths": [
            {"path": "/api", "pathType": "Exact", "backend": {"service": {"name": "api", "port": {"number": 8080}}}},
            {"path": "/static/", "pathType": "Prefix",
             "backend": {"service": {"name": "static", "port": {"name": "http"}}}}]}}],
    }
    assert ingress["status"] == {"loadBalancer": {}}


async def test_get_ingress_and_ingressclass_print_upstream_columns(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(NGINX))
    await kubectl.run("create", "ingress", "shop", "--rule=shop.example.com/*=web:80,tls",
                      "--rule=admin.example.com/*=admin:80")
    await kubectl.run("create", "ingress", "fallback", "--default-backend=web:80")
    await kubectl.run("patch", "ingress", "shop", "--subresource=status", "--type=merge",
                      "-p", '{"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}}')

    ingresses = table((await kubectl.run("get", "ing")).stdout)
    classes = table((await kubectl.run("get", "ingressclass")).stdout)

    assert ingresses["NAME"] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    # No class on the command line: the DefaultIngressClass admission gave them nginx.
    assert ingresses["shop"][1:5] == ["nginx", "shop.example.com,admin.example.com", "192.0.2.10", "80, 443"]
    assert ingresses["fallback"][1:3] + ingresses["fallback"][-2:-1] == ["nginx", "*", "80"]
    assert classes["NAME"] == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert classes["nginx"][1:3] == ["k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/lb"]


async def test_get_netpol_prints_the_pod_selector(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=to_yaml(POLICY))

    rows = table((await kubectl.run("get", "netpol")).stdout)
    policy = json.loads((await kubectl.run("get", "networkpolicy", "db", "-o", "json")).stdout)

    assert rows["NAME"] == ["NAME", "POD-SELECTOR", "AGE"]
    assert rows["db"][1] == "app=db,tier in (data)"
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    assert policy["spec"]["ingress"][0]["ports"] == [{"port": 5432, "protocol": "TCP"}]
