"""``apiextensions.k8s.io/v1`` CustomResourceDefinition: defaults, validation, status and deletion.

Upstream: ``apiextensions-apiserver/pkg/apis/apiextensions/v1/defaults.go``,
``pkg/apis/apiextensions/validation/validation.go`` (messages), ``pkg/registry/
customresourcedefinition/strategy.go`` and ``etcd.go`` (status on create, the cleanup finalizer
on delete).  Error paths use upstream's *internal* form: when every version shares one schema
(always, for a one-version CRD) errors point at ``spec.validation.openAPIV3Schema``, as the v1 to
internal conversion hoists it; otherwise at ``spec.versions[i].schema.openAPIV3Schema``.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, duplicate, forbidden, invalid, not_supported, required, too_many
from fakeapi.machinery.jsonpath import is_simple_path
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.models.apiextensions_v1 import CLEANUP_FINALIZER
from fakeapi.validation import names
from fakeapi.validation.common import immutable
from fakeapi.validation.crd_schema import check_schema
from fakeapi.validation.strategy import AdmissionContext, Strategy

COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
SELECTABLE_FIELDS_MAX = 8
PROTECTED_GROUPS = ("k8s.io", "kubernetes.io")
APPROVAL_ANNOTATION = "api-approved.kubernetes.io"


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    """The CRD's condition ``type_``, or None."""
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == type_), None)


def is_true(obj: dict[str, Any], type_: str) -> bool:
    found = condition(obj, type_)
    return found is not None and found.get("status") == "True"


def set_condition(obj: dict[str, Any], type_: str, status: str, reason: str, message: str) -> None:
    """Set a condition in place; ``lastTransitionTime`` changes only when the status flips
    (upstream's ``SetCRDCondition``)."""
    conditions = obj.setdefault("status", {}).setdefault("conditions", [])
    new = {"type": type_, "status": status, "lastTransitionTime": now_rfc3339(), "reason": reason,
           "message": message}
    for i, old in enumerate(conditions):
        if old.get("type") == type_:
            if old.get("status") == status:
                new["lastTransitionTime"] = old.get("lastTransitionTime", new["lastTransitionTime"])
            conditions[i] = new
            return
    conditions.append(new)


def storage_version(crd: dict[str, Any]) -> str | None:
    return next((v.get("name") for v in (crd.get("spec") or {}).get("versions") or [] if v.get("storage")), None)


def shared_schema(spec: dict[str, Any]) -> bool:
    """Whether every version has the same schema (upstream then reports ``spec.validation``)."""
    versions = spec.get("versions") or []
    return len({repr(v.get("schema")) for v in versions}) <= 1


def schema_path(spec: dict[str, Any], index: int) -> str:
    return ("spec.validation.openAPIV3Schema" if shared_schema(spec)
            else f"spec.versions[{index}].schema.openAPIV3Schema")


class CustomResourceDefinitionStrategy(Strategy):
    """Defaults, validation, status bookkeeping and the cleanup finalizer of CRDs."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.setdefault("spec", {})
        names_ = spec.get("names")
        if isinstance(names_, dict) and names_.get("kind"):
            names_.setdefault("singular", names_["kind"].lower())
            names_.setdefault("listKind", names_["kind"] + "List")
        conversion = spec.setdefault("conversion", {"strategy": "None"})
        service = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)
        status = obj.setdefault("status", {"conditions": [], "acceptedNames": {"plural": "", "kind": ""},
                                           "storedVersions": []})
        stored = status.setdefault("storedVersions", [])
        current = storage_version(obj)
        if current and current not in stored:
            stored.append(current)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_crd(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errors = validate_crd(new)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        errors += immutable(spec.get("group"), old_spec.get("group"), "spec.group")
        errors += immutable((spec.get("names") or {}).get("plural"), (old_spec.get("names") or {}).get("plural"),
                            "spec.names.plural")
        if is_true(old, "Established"):
            errors += immutable(spec.get("scope"), old_spec.get("scope"), "spec.scope")
            errors += immutable((spec.get("names") or {}).get("kind"), (old_spec.get("names") or {}).get("kind"),
                                "spec.names.kind")
        return errors

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return _validate_stored_versions(new)

    def prepare_delete(self, obj: dict[str, Any]) -> None:
        """Upstream's ``REST.Delete``: the cleanup finalizer holds the CRD until its objects are gone."""
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in finalizers:
            finalizers.append(CLEANUP_FINALIZER)
        if condition(obj, "Terminating") is None:
            set_condition(obj, "Terminating", "True", "InstanceDeletionPending",
                          "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon")

    def finalized(self, obj: dict[str, Any]) -> bool:
        # A CRD is deleted through its cleanup finalizer: never at once on the first DELETE.
        return bool(obj["metadata"].get("deletionTimestamp"))


def validate_crd(obj: dict[str, Any]) -> list[FieldError]:
    """``ValidateCustomResourceDefinition``: name, group, scope, names, versions, schemas, columns."""
    errors: list[FieldError] = []
    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    group = spec.get("group") or ""
    names_ = spec.get("names") or {}
    plural = names_.get("plural") or ""
    if meta.get("name") and meta.get("name") != f"{plural}.{group}":
        errors.append(invalid("metadata.name", meta.get("name"), 'must be spec.names.plural+"."+spec.group'))
    if not group:
        errors.append(required("spec.group"))
    else:
        errors += names.check("spec.group", group, names.dns1123_subdomain)
        if "." not in group:
            errors.append(invalid("spec.group", group, "should be a domain with at least one dot"))
        elif _protected(group) and not _approved(meta):
            errors.append(required(f"metadata.annotations[{APPROVAL_ANNOTATION}]",
                                   f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", see '
                                   f"https://github.com/kubernetes/enhancements/pull/1111"))
    scope = spec.get("scope")
    if not scope:
        errors.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errors.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    errors += _validate_names(names_, "spec.names")
    errors += _validate_versions(spec)
    errors += _validate_conversion(spec)
    if spec.get("preserveUnknownFields"):
        errors.append(invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                                                                "x-kubernetes-preserve-unknown-fields to true in "
                                                                "spec.versions[*].schema instead"))
    errors += _validate_stored_versions(obj)
    return errors


def _protected(group: str) -> bool:
    return any(group == g or group.endswith("." + g) for g in PROTECTED_GROUPS)


def _approved(meta: dict[str, Any]) -> bool:
    value = (meta.get("annotations") or {}).get(APPROVAL_ANNOTATION, "")
    return value.startswith(("unapproved", "http://", "https://"))


def _validate_names(names_: dict[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in ("plural", "singular", "kind", "listKind"):
        value = names_.get(key)
        if not value:
            errors.append(required(f"{path}.{key}"))
            continue
        if key in ("kind", "listKind"):
            msgs = names.dns1035_label(value.lower())
            errors += [invalid(f"{path}.{key}", value, f"may have mixed case, but should otherwise match: {m}")
                       for m in msgs]
        else:
            errors += [invalid(f"{path}.{key}", value, m) for m in names.dns1035_label(value)]
    if names_.get("kind") and names_.get("kind") == names_.get("listKind"):
        errors.append(invalid(f"{path}.listKind", names_["listKind"], "kind and listKind may not be the same"))
    for key in ("shortNames", "categories"):
        for i, value in enumerate(names_.get(key) or []):
            errors += [invalid(f"{path}.{key}[{i}]", value, m) for m in names.dns1035_label(value)]
    return errors


def _validate_versions(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    versions = spec.get("versions") or []
    if not versions:
        errors.append(invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
        return errors
    seen: set[str] = set()
    storage = 0
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        name = version.get("name") or ""
        if not name:
            errors.append(required(f"{path}.name"))
        else:
            errors += [invalid(f"{path}.name", name, m) for m in names.dns1035_label(name)]
        if name in seen:
            errors.append(invalid("spec.versions", versions, "must contain unique version names"))
        seen.add(name)
        storage += bool(version.get("storage"))
        if version.get("deprecationWarning") is not None:
            warning = version["deprecationWarning"]
            if not version.get("deprecated"):
                errors.append(invalid(f"{path}.deprecationWarning", warning, "can only be set for deprecated "
                                                                             "versions"))
            elif len(warning) > 256:
                errors.append(too_many(f"{path}.deprecationWarning", len(warning), 256))
            elif not warning:
                errors.append(invalid(f"{path}.deprecationWarning", warning, "must not be an empty string"))
        schema_errors = _validate_version_schema(spec, version, i)
        errors += schema_errors
        errors += _validate_subresources(version.get("subresources"), _hoisted(spec, "subresources", i))
        errors += _validate_columns(version.get("additionalPrinterColumns") or [],
                                    _hoisted(spec, "additionalPrinterColumns", i))
        if not schema_errors:  # selectable fields are resolved in the structural schema
            errors += _validate_selectable_fields(version, _hoisted(spec, "selectableFields", i))
    if storage != 1:
        errors.append(invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    return errors


def _hoisted(spec: dict[str, Any], key: str, index: int) -> str:
    """Upstream's path of a per-version field: top level when identical in every version."""
    versions = spec.get("versions") or []
    if len({repr(v.get(key)) for v in versions}) <= 1:
        return f"spec.{key}"
    return f"spec.versions[{index}].{key}"


def _validate_version_schema(spec: dict[str, Any], version: dict[str, Any], index: int) -> list[FieldError]:
    raw = (version.get("schema") or {}).get("openAPIV3Schema")
    path = schema_path(spec, index)
    if raw is None:
        return [required(f"spec.versions[{index}].schema.openAPIV3Schema", "schemas are required")]
    if index > 0 and shared_schema(spec):
        return []  # one hoisted schema: reported once
    status_enabled = (version.get("subresources") or {}).get("status") is not None
    return check_schema(raw, path, status_enabled=status_enabled)


def _validate_subresources(subresources: dict[str, Any] | None, path: str) -> list[FieldError]:
    scale = (subresources or {}).get("scale")
    if not isinstance(scale, dict):
        return []
    errors: list[FieldError] = []
    path = f"{path}.scale"
    for key, prefix, where in (("specReplicasPath", ".spec.", "spec"), ("statusReplicasPath", ".status.", "status")):
        value = scale.get(key)
        if not value:
            errors.append(required(f"{path}.{key}"))
        elif not is_simple_path(value):
            errors.append(invalid(f"{path}.{key}", value, "should be a json path under ." + where))
        elif not value.startswith(prefix):
            errors.append(invalid(f"{path}.{key}", value, f"should be a json path under .{where}"))
    selector = scale.get("labelSelectorPath")
    if selector and (not is_simple_path(selector) or not selector.startswith((".spec.", ".status."))):
        errors.append(invalid(f"{path}.labelSelectorPath", selector, "should be a json path under either .spec or "
                                                                     ".status"))
    return errors


def _validate_columns(columns: list[dict[str, Any]], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, column in enumerate(columns):
        cpath = f"{path}[{i}]"
        if not column.get("name"):
            errors.append(required(f"{cpath}.name"))
        if column.get("type") not in COLUMN_TYPES:
            errors.append(not_supported(f"{cpath}.type", column.get("type"), list(COLUMN_TYPES)))
        if column.get("format") and column["format"] not in COLUMN_FORMATS:
            errors.append(not_supported(f"{cpath}.format", column["format"], list(COLUMN_FORMATS)))
        json_path = column.get("jsonPath") or ""
        if not json_path:
            errors.append(required(f"{cpath}.JSONPath"))
        elif not json_path.startswith("."):
            errors.append(invalid(f"{cpath}.JSONPath", json_path, "must be a simple json path starting with ."))
    return errors


def _validate_selectable_fields(version: dict[str, Any], path: str) -> list[FieldError]:
    fields = version.get("selectableFields") or []
    errors: list[FieldError] = []
    if len(fields) > SELECTABLE_FIELDS_MAX:
        errors.append(too_many(path, len(fields), SELECTABLE_FIELDS_MAX))
    schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
    seen: set[str] = set()
    for i, entry in enumerate(fields):
        json_path = entry.get("jsonPath") or ""
        fpath = f"{path}[{i}].jsonPath"
        if not json_path:
            errors.append(required(fpath))
            continue
        steps = json_path.split(".")[1:] if json_path.startswith(".") else None
        node: Any = schema
        for step in steps or [None]:
            node = ((node or {}).get("properties") or {}).get(step) if step else None
        if not steps or node is None:
            errors.append(invalid(fpath, json_path, "is an invalid path: does not refer to a valid field"))
        elif steps[0] == "metadata":
            errors.append(invalid(fpath, json_path, "must not point to fields in metadata"))
        elif node.get("type") not in ("string", "boolean", "integer"):
            errors.append(invalid(fpath, json_path, "must point to a field of type string, boolean or integer. Enum "
                                                    "string fields and strings with formats are allowed."))
        if json_path in seen:
            errors.append(duplicate(fpath, json_path))
        seen.add(json_path)
    return errors


def _validate_conversion(spec: dict[str, Any]) -> list[FieldError]:
    conversion = spec.get("conversion") or {}
    strategy = conversion.get("strategy")
    if not strategy:
        return [required("spec.conversion.strategy")]
    if strategy == "Webhook":
        return [forbidden("spec.conversion.strategy", "Webhook conversion is not supported by fakeapi; use None "
                                                      "(only apiVersion changes between versions)")]
    if strategy != "None":
        return [not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"])]
    errors: list[FieldError] = []
    if conversion.get("webhook") is not None:
        errors.append(forbidden("spec.conversion.webhook", "should not be set when strategy is not set to Webhook"))
    return errors


def _validate_stored_versions(obj: dict[str, Any]) -> list[FieldError]:
    stored = (obj.get("status") or {}).get("storedVersions") or []
    if not stored:
        return [invalid("status.storedVersions", stored, "must have at least one stored version")]
    versions = {v.get("name") for v in (obj.get("spec") or {}).get("versions") or []}
    errors = []
    for i, name in enumerate(stored):
        if name not in versions:
            errors.append(invalid(f"status.storedVersions[{i}]", name,
                                  f"missing from spec.versions; {name} was previously a storage version, and must "
                                  f"remain in spec.versions until a storage migration ensures no data remains "
                                  f"persisted in {name} and removes {name} from status.storedVersions"))
    current = storage_version(obj)
    if current and current not in stored:
        errors.append(invalid("status.storedVersions", stored, f"must have the storage version {current}"))
    return errors


STRATEGIES = {"CustomResourceDefinition": CustomResourceDefinitionStrategy()}
