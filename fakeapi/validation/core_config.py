"""Core ``v1`` Secret, ServiceAccount, ResourceQuota, LimitRange and PodTemplate strategies.

Secrets: ``stringData`` is folded into ``data`` (the v1 conversion), type defaults to Opaque and
is immutable, each built-in type's required keys are checked, the whole is at most 1 MiB, and an
``immutable`` Secret keeps its data.  Quotas and limit ranges are validated and stored only.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from fakeapi.errors import FieldError, invalid, not_supported, required
from fakeapi.machinery.quantity import QuantityError, parse_quantity
from fakeapi.validation import names
from fakeapi.validation.common import field_bytes, immutable, validate_immutable_data, validate_list
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import default_template, validate_pod_template

MAX_SECRET_SIZE = 1024 * 1024
# Keys a Secret of each built-in type must carry (kubernetes.io/dockercfg and -json as JSON).
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.key", "tls.crt"),
}
SERVICE_ACCOUNT_NAME = "kubernetes.io/service-account.name"
LIMIT_TYPES = ["Container", "PersistentVolumeClaim", "Pod"]


def fold_string_data(secret: dict[str, Any]) -> None:
    """``stringData`` values overwrite ``data`` (base64-encoded) and are never stored."""
    string_data = secret.pop("stringData", None) or {}
    if string_data:
        data = secret.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(value.encode()).decode()


def validate_secret(secret: dict[str, Any]) -> list[FieldError]:
    """``ValidateSecret``: keys, total size, the type's required data."""
    data = secret.get("data") or {}
    errs: list[FieldError] = []
    size = 0
    for key, value in data.items():
        errs += names.check_config_key("data", key)
        size += len(field_bytes(value))
    if size > MAX_SECRET_SIZE:
        errs.append(FieldError("FieldValueTooLong", "data", f"may not be more than {MAX_SECRET_SIZE} bytes"))
    kind = secret.get("type", "")
    if kind == "kubernetes.io/service-account-token":
        annotations = (secret.get("metadata") or {}).get("annotations") or {}
        if not annotations.get(SERVICE_ACCOUNT_NAME):
            errs.append(required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME}]"))
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs += [required("data[username]"), required("data[password]")]
    for key in REQUIRED_KEYS.get(kind, ()):
        if key not in data:
            errs.append(required(f"data[{key}]"))
        elif key.startswith(".docker"):
            try:
                json.loads(field_bytes(data[key]))
            except ValueError as exc:
                errs.append(invalid(f"data[{key}]", "<secret contents redacted>", str(exc)))
    return errs


class SecretStrategy(Strategy):
    """Secrets."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        fold_string_data(obj)
        obj.setdefault("type", "Opaque")

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_secret(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return (validate_secret(new) + immutable(new.get("type"), old.get("type"), "type")
                + validate_immutable_data(new, old, ("data",)))


class ServiceAccountStrategy(Strategy):
    """ServiceAccounts: named secrets and pull secrets must be named."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs: list[FieldError] = []
        for key in ("secrets", "imagePullSecrets"):
            errs += validate_list(obj.get(key), key, -1,
                                  lambda ref, p: [] if ref.get("name") else [required(f"{p}.name")])
        return errs


def _quantities(values: dict[str, Any] | None, path: str, *, qualified: bool = True) -> list[FieldError]:
    errs: list[FieldError] = []
    for name, value in (values or {}).items():
        if qualified:
            errs += names.check(path, name, names.qualified_name)
        try:
            negative = parse_quantity(str(value)) < 0
        except QuantityError:
            errs.append(invalid(f"{path}[{name}]", value, "must be a valid quantity"))
            continue
        if negative:
            errs.append(invalid(f"{path}[{name}]", value, "must be greater than or equal to 0"))
    return errs


class ResourceQuotaStrategy(Strategy):
    """ResourceQuotas: non-negative hard limits (stored, not enforced)."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        return (_quantities(spec.get("hard"), "spec.hard") + _quantities(status.get("hard"), "status.hard")
                + _quantities(status.get("used"), "status.used"))

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return self.validate(new, ctx)


class LimitRangeStrategy(Strategy):
    """LimitRanges: known limit types and non-negative quantities (stored, not applied)."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        def item(limit: dict[str, Any], path: str) -> list[FieldError]:
            errs = [] if limit.get("type") in LIMIT_TYPES else [
                not_supported(f"{path}.type", limit.get("type", ""), LIMIT_TYPES)]
            for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
                errs += _quantities(limit.get(key), f"{path}.{key}")
            return errs

        return validate_list((obj.get("spec") or {}).get("limits"), "spec.limits", -1, item)


class PodTemplateStrategy(Strategy):
    """PodTemplates: the template gets pod spec defaults and pod spec validation."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        default_template(obj.get("template"))

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_pod_template(obj.get("template"), "template", restart_policies=["Always", "Never", "OnFailure"])


STRATEGIES: dict[str, Strategy] = {
    "Secret": SecretStrategy(), "ServiceAccount": ServiceAccountStrategy(), "ResourceQuota": ResourceQuotaStrategy(),
    "LimitRange": LimitRangeStrategy(), "PodTemplate": PodTemplateStrategy(),
}
