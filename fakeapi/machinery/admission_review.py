"""Admission webhooks, the pure parts: the request as admission CEL reads it (shared with the
admission policies), which webhooks a request goes to, the ``admission.k8s.io/v1`` AdmissionReview
sent, the answer checked (a mutating webhook's JSON patch applied), and the Status a denial or a
failed call becomes.  After upstream's
``apiserver/pkg/admission/plugin/webhook`` (``generic``, ``request``, ``errors``) and
``apiserver/pkg/util/webhook`` (messages); the calls themselves are :mod:`fakeapi.server.webhooks`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from fakeapi.errors import StatusError, internal_error
from fakeapi.machinery.admission_match import RequestAttributes, matches_resources
from fakeapi.machinery.cel_admission import match_conditions
from fakeapi.machinery.patch import PatchError, apply_json_patch

__all__ = ["WebhookError", "cel_variables", "denial", "failure", "mutated", "request_view", "review", "verdict",
           "webhook_applies"]

REVIEW_API_VERSION = "admission.k8s.io/v1"
# Never sent to webhooks (upstream's IsExemptAdmissionConfigurationResource).
EXEMPT = frozenset({"validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                    "validatingadmissionpolicies", "validatingadmissionpolicybindings",
                    "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"})
_OPTIONS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
# namespaceObject carries only these of the Namespace's metadata (upstream's activation).
_NAMESPACE_META = ("name", "generateName", "namespace", "labels", "annotations", "uid", "creationTimestamp",
                   "deletionGracePeriodSeconds", "deletionTimestamp", "generation", "resourceVersion",
                   "finalizers")


class WebhookError(Exception):
    """A call that did not give a usable answer (``ErrCallingWebhook``'s reason): the webhook's
    ``failurePolicy`` decides whether the request fails."""


def webhook_applies(hook: Mapping[str, Any], attrs: RequestAttributes, *, namespace: Mapping[str, Any] | None,
                    obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None,
                    activation: dict[str, Any]) -> bool:
    """Whether ``hook`` gets the request: its rules, selectors and match conditions.  A match
    condition that fails to evaluate counts as not matching under ``failurePolicy: Ignore`` and
    as a failure (WebhookError) under Fail, as upstream's matcher decides."""
    if attrs.group == "admissionregistration.k8s.io" and attrs.resource in EXEMPT:
        return False
    match = {"resourceRules": hook.get("rules") or [], "namespaceSelector": hook.get("namespaceSelector"),
             "objectSelector": hook.get("objectSelector")}
    if not hook.get("rules") or not matches_resources(match, attrs, namespace=namespace, obj=obj, old=old):
        return False
    matched, errors = match_conditions(hook.get("matchConditions") or [], activation)
    if errors and hook.get("failurePolicy") != "Ignore":
        texts = [f"{condition.get('name')}: {error}" for condition, error in errors]
        raise WebhookError(f"failed to evaluate match condition: {texts[0] if len(texts) == 1 else texts}")
    return matched and not errors


def request_view(attrs: RequestAttributes, user: Mapping[str, Any], dry_run: bool,
                 options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The request as admission CEL reads it (``request``): every field present, "" when empty,
    as upstream's typed declaration gives them; ``user``: the requester's UserInfo, wire form;
    ``options``: the fields of the request's Create-, Update- or DeleteOptions as it sent them."""
    kind_group, kind_version = attrs.kind_group_version
    kind = {"group": kind_group, "version": kind_version, "kind": attrs.kind}
    resource = {"group": attrs.group, "version": attrs.version, "resource": attrs.resource}
    shown: dict[str, Any] = {}
    if attrs.operation in _OPTIONS:
        shown = {"kind": _OPTIONS[attrs.operation], "apiVersion": "meta.k8s.io/v1", **(options or {})}
        if dry_run:
            shown["dryRun"] = ["All"]
    return {"kind": kind, "resource": resource, "subResource": attrs.subresource, "requestKind": kind,
            "requestResource": resource, "requestSubResource": attrs.subresource, "name": attrs.name,
            "namespace": attrs.namespace, "operation": attrs.operation, "userInfo": dict(user),
            "dryRun": dry_run, "options": shown}


def cel_variables(attrs: RequestAttributes, obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None,
               namespace: Mapping[str, Any] | None, user: Mapping[str, Any], dry_run: bool,
               options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The CEL variables of a request (policies add ``params`` and ``variables``):
    ``namespaceObject`` is the request namespace's, with upstream's subset of its metadata, and
    null for cluster-scoped requests and Namespaces themselves."""
    namespace_object = None
    if namespace is not None and attrs.namespace:
        meta = namespace.get("metadata") or {}
        namespace_object = {"metadata": {k: meta[k] for k in _NAMESPACE_META if k in meta},
                            "spec": namespace.get("spec") or {}, "status": namespace.get("status") or {}}
    return {"object": obj, "oldObject": old, "request": request_view(attrs, user, dry_run, options),
            "namespaceObject": namespace_object}


def review(uid: str, request: Mapping[str, Any], obj: Mapping[str, Any] | None,
           old: Mapping[str, Any] | None) -> dict[str, Any]:
    """The AdmissionReview of one call (``CreateV1AdmissionReview``): ``request`` (a
    :func:`request_view`) on the wire, its empty optional fields left out."""
    sent = {k: v for k, v in request.items()
            if v != "" or k not in ("subResource", "requestSubResource", "namespace")}
    return {"apiVersion": REVIEW_API_VERSION, "kind": "AdmissionReview",
            "request": {"uid": uid, **sent, "object": obj, "oldObject": old}}


def verdict(answer: Any, uid: str, *, mutating: bool = False
            ) -> tuple[bool, dict[str, Any], list[str], list[Any] | None]:
    """(allowed, its status, warnings, a mutating webhook's JSON patch or None) of a webhook's
    AdmissionReview answer; WebhookError for an answer upstream's ``VerifyAdmissionResponse``
    refuses, or a patch that does not decode."""
    if not isinstance(answer, dict):
        raise WebhookError("received invalid webhook response: the response is not a JSON object")
    if answer.get("apiVersion") != REVIEW_API_VERSION or answer.get("kind") != "AdmissionReview":
        raise WebhookError("received invalid webhook response: expected webhook response of "
                           f"admission.k8s.io/v1, Kind=AdmissionReview, got {answer.get('apiVersion') or ''}, "
                           f"Kind={answer.get('kind') or ''}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise WebhookError("received invalid webhook response: webhook response was absent")
    if response.get("uid") != uid:
        raise WebhookError(f'received invalid webhook response: expected response.uid="{uid}", '
                           f'got "{response.get("uid") or ""}"')
    patch, patch_type = response.get("patch"), response.get("patchType")
    if not mutating:
        if patch is not None:
            raise WebhookError("received invalid webhook response: validating webhook may not return response.patch")
        if patch_type is not None:
            raise WebhookError("received invalid webhook response: validating webhook may not return "
                               "response.patchType")
    elif patch is not None and patch_type is None:
        raise WebhookError("received invalid webhook response: webhook returned response.patch but not "
                           "response.patchType")
    elif patch is None and patch_type is not None:
        raise WebhookError("received invalid webhook response: webhook returned response.patchType but not "
                           "response.patch")
    elif patch_type is not None and patch_type != "JSONPatch":
        raise WebhookError(f'received invalid webhook response: webhook returned invalid response.patchType of '
                           f'"{patch_type}"')
    operations = None
    if patch is not None:
        try:
            operations = json.loads(base64.b64decode(patch, validate=True))
        except (ValueError, TypeError) as exc:
            raise WebhookError(f"received undecodable patch in webhook response: {exc}") from None
        if not isinstance(operations, list):
            raise WebhookError("received undecodable patch in webhook response: a JSON patch is a list")
    warnings = [w for w in response.get("warnings") or [] if isinstance(w, str)]
    status = response.get("status") if isinstance(response.get("status"), dict) else {}
    return response.get("allowed") is True, status, warnings, operations


def mutated(webhook: str, obj: dict[str, Any] | None, operations: list[Any]) -> dict[str, Any] | None:
    """``obj`` with a mutating webhook's JSON patch applied; a patch that does not apply, or any
    patch of a delete's (absent) object, is upstream's 500."""
    if obj is None:
        if operations:
            raise internal_error(f'admission webhook "{webhook}" attempted to modify the object, which is not '
                                 "supported for this operation")
        return None
    try:
        result = apply_json_patch(obj, operations)  # (with the bounds of a client's JSON patch)
    except PatchError as exc:
        raise internal_error(str(exc)) from None
    if not isinstance(result.get("metadata"), dict):
        raise internal_error(f'admission webhook "{webhook}" returned a patch that does not leave an object')
    return result


def denial(webhook: str, status: Mapping[str, Any]) -> StatusError:
    """``ToStatusErr``: the webhook's Status, its code at least 400, its message prefixed."""
    denied = f'admission webhook "{webhook}" denied the request'
    if status.get("message"):
        message = f"{denied}: {status['message']}"
    elif status.get("reason"):
        message = f"{denied}: {status['reason']}"
    else:
        message = f"{denied} without explanation"
    code = status.get("code") if isinstance(status.get("code"), int) and status["code"] >= 400 else 400
    error = StatusError(message, details=status.get("details") if isinstance(status.get("details"), dict) else None)
    error.code, error.reason = code, str(status.get("reason") or "")  # type: ignore[misc]
    return error


def failure(webhook: str, reason: str) -> StatusError:
    """A failed call under ``failurePolicy: Fail``: upstream's 500 ``InternalError``."""
    return internal_error(f'failed calling webhook "{webhook}": {reason}')
