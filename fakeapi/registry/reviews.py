"""The access-review kinds: create-only, never stored; each answers its question in ``status``
(upstream's ``pkg/registry/authorization`` and ``pkg/registry/authentication`` REST storage).

A handler gets the server's :class:`~.access.Access`, the requesting user, the URL's namespace
and the decoded body, and returns the object to answer with (201).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakeapi.auth.attributes import Attributes
from fakeapi.auth.users import UserInfo
from fakeapi.errors import BadRequest, FieldError, invalid, invalid_object
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.machinery.tokens import InvalidToken
from fakeapi.models.authentication_v1 import GROUP as AUTHENTICATION
from fakeapi.models.authorization_v1 import GROUP as AUTHORIZATION
from fakeapi.registry.access import Access

ReviewHandler = Callable[[Access, UserInfo, str, dict[str, Any]], dict[str, Any]]


def _spec_errors(spec: dict[str, Any], *, self_review: bool) -> list[FieldError]:
    """``ValidateSubjectAccessReviewSpec`` / ``ValidateSelfSubjectAccessReviewSpec``."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errs = []
    if resource is not None and non_resource is not None:
        errs.append(invalid("spec.nonResourceAttributes", non_resource,
                            "cannot be specified in combination with resourceAttributes"))
    if resource is None and non_resource is None:
        errs.append(invalid("spec.resourceAttributes", None,
                            "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    if not self_review and not spec.get("user") and not spec.get("groups"):
        errs.append(invalid("spec.user", spec.get("user") or "", "at least one of user or group must be specified"))
    return errs


def _meta_errors(meta: dict[str, Any], *, allow_namespace: bool = False) -> list[FieldError]:
    """Reviews carry no metadata (managedFields aside; a local review its namespace)."""
    # Zero values count as empty (clients send an empty name, a zero generation).
    rest = {k: v for k, v in meta.items() if v and k != "managedFields" and not (allow_namespace and k == "namespace")}
    if not rest:
        return []
    return [invalid("metadata", meta, "must be empty except for namespace" if allow_namespace else "must be empty")]


def _attributes(user: UserInfo, spec: dict[str, Any]) -> Attributes:
    """``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``."""
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return Attributes(user, resource.get("verb") or "", namespace=resource.get("namespace") or "",
                          api_group=resource.get("group") or "", api_version=resource.get("version") or "*",
                          resource=resource.get("resource") or "", subresource=resource.get("subresource") or "",
                          name=resource.get("name") or "")
    non_resource = spec.get("nonResourceAttributes") or {}
    return Attributes(user, non_resource.get("verb") or "", resource_request=False, path=non_resource.get("path") or "")


def _answer(access: Access, review: dict[str, Any], attrs: Attributes) -> dict[str, Any]:
    decision = access.authorize(attrs)
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return {"metadata": {}, **review, "status": status}


def _check(kind: str, errors: list[FieldError]) -> None:
    if errors:
        raise invalid_object(kind, AUTHORIZATION, "", errors)


def self_subject_access_review(access: Access, user: UserInfo, namespace: str,
                               review: dict[str, Any]) -> dict[str, Any]:
    """May I? (``kubectl auth can-i``)"""
    spec = review.get("spec") or {}
    _check("SelfSubjectAccessReview",
           _spec_errors(spec, self_review=True) + _meta_errors(review.get("metadata") or {}))
    return _answer(access, review, _attributes(user, spec))


def _subject(spec: dict[str, Any]) -> UserInfo:
    extra = {key: tuple(values or ()) for key, values in (spec.get("extra") or {}).items()}
    return UserInfo(spec.get("user") or "", spec.get("uid") or "", tuple(spec.get("groups") or ()), extra)


def subject_access_review(access: Access, user: UserInfo, namespace: str, review: dict[str, Any]) -> dict[str, Any]:
    """May this user?  (What webhooks and aggregated API servers ask.)"""
    spec = review.get("spec") or {}
    _check("SubjectAccessReview", _spec_errors(spec, self_review=False) + _meta_errors(review.get("metadata") or {}))
    return _answer(access, review, _attributes(_subject(spec), spec))


def local_subject_access_review(access: Access, user: UserInfo, namespace: str,
                                review: dict[str, Any]) -> dict[str, Any]:
    """May this user, in this namespace?"""
    meta = review.setdefault("metadata", {})
    meta.setdefault("namespace", namespace)
    if meta["namespace"] != namespace:
        raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
    spec = review.get("spec") or {}
    errs = _spec_errors(spec, self_review=False) + _meta_errors(meta, allow_namespace=True)
    resource = spec.get("resourceAttributes")
    if resource is not None and (resource.get("namespace") or "") != namespace:
        errs.append(invalid("spec.resourceAttributes.namespace", resource.get("namespace") or "",
                            "must match metadata.namespace"))
    if spec.get("nonResourceAttributes") is not None:
        errs.append(invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                            "disallowed on this kind of request"))
    _check("LocalSubjectAccessReview", errs)
    return _answer(access, review, _attributes(_subject(spec), spec))


def self_subject_rules_review(access: Access, user: UserInfo, namespace: str,
                              review: dict[str, Any]) -> dict[str, Any]:
    """What may I do in a namespace?  (``kubectl auth can-i --list``)"""
    wanted = (review.get("spec") or {}).get("namespace")
    if not wanted:
        raise BadRequest("no namespace on request")
    return {"kind": review.get("kind", "SelfSubjectRulesReview"), "apiVersion": f"{AUTHORIZATION}/v1",
            "metadata": {}, "spec": {}, "status": access.rules_review(user, wanted)}


def self_subject_review(access: Access, user: UserInfo, namespace: str, review: dict[str, Any]) -> dict[str, Any]:
    """Who am I?  (``kubectl auth whoami``)"""
    return {"kind": "SelfSubjectReview", "apiVersion": f"{AUTHENTICATION}/v1",
            "metadata": {"creationTimestamp": now_rfc3339()}, "status": {"userInfo": user.to_api()}}


def token_review(access: Access, user: UserInfo, namespace: str, review: dict[str, Any]) -> dict[str, Any]:
    """Who does this token authenticate as?  Checked the way bearer tokens are."""
    spec = review.get("spec") or {}
    if not spec.get("token"):
        raise BadRequest("token is required for TokenReview in authentication")
    try:
        reviewed, audiences = access.authenticate_token(spec["token"], spec.get("audiences") or ())
    except InvalidToken as exc:
        return {**review, "status": {"user": {}, "error": f"[invalid bearer token, {exc}]"}}
    return {**review, "status": {"authenticated": True, "user": reviewed.to_api(), "audiences": list(audiences)}}
