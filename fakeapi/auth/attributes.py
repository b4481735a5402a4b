"""What a request asks to do, in the terms authorization decides on (upstream's ``RequestInfo``
and ``authorizer.Attributes``), parsed from the method, path and query alone.

Resource requests live under ``/api/{version}`` and ``/apis/{group}/{version}``; everything
else (``/healthz``, ``/version``, ``/openapi/v3``, discovery documents) is a non-resource
request whose verb is the lowercase HTTP method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fakeapi.auth.users import UserInfo

# Subresources of a namespace; anything else after ``namespaces/{ns}/`` is a namespaced resource.
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
VERBS_BY_METHOD = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                   "DELETE": "delete"}


@dataclass(frozen=True)
class Attributes:
    """One authorization question: may ``user`` ``verb`` this resource (or non-resource path)?"""

    user: UserInfo
    verb: str
    resource_request: bool = True
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""


def _truthy(value: str) -> bool:
    # Go's Convert_Slice_string_To_bool: anything but "false" and "0" is true.
    return value.lower() not in ("false", "0")


def _name_from_field_selector(selector: str) -> str:
    """``metadata.name=x`` (or ``==``) in a list/watch's field selector names one object, so a
    rule restricted by ``resourceNames`` can allow watching just that object."""
    for term in selector.split(","):
        for op in ("==", "="):
            key, sep, value = term.partition(op)
            if sep and key.strip() == "metadata.name" and "!" not in key:
                value = value.strip()
                return value if value and value not in (".", "..") and "/" not in value and "%" not in value else ""
    return ""


def request_attributes(user: UserInfo, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The attributes of one HTTP request, as upstream's ``RequestInfoFactory`` parses them."""
    parts = [p for p in path.strip("/").split("/")] if path.strip("/") else []
    non_resource = Attributes(user, method.lower(), resource_request=False, path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    rest = parts[1:]
    group = ""
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    verb = VERBS_BY_METHOD.get(method.upper(), "")
    if rest[0] == "watch" and len(rest) >= 2:  # the deprecated /watch/ path prefix
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 else ""
    if not name and verb == "get":
        verb = "watch" if _truthy(query.get("watch", "false")) else "list"
    if not name and verb == "delete":
        verb = "deletecollection"
    if not name and verb in ("list", "watch"):
        name = _name_from_field_selector(query.get("fieldSelector", ""))
    return Attributes(user, verb, namespace=namespace, api_group=group, api_version=version,
                      resource=resource, subresource=subresource, name=name, path=path)
