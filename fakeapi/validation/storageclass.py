"""``storage.k8s.io/v1`` StorageClass and the ``DefaultStorageClass`` admission plugin.

- StorageClass (``pkg/apis/storage/validation``): ``reclaimPolicy`` defaults to Delete and
  ``volumeBindingMode`` to Immediate; the provisioner is a qualified name (checked lowercased);
  at most 512 parameters of 256 KiB in all; allowed topologies without duplicate keys, values or
  terms.  Parameters, provisioner, reclaim policy and binding mode are immutable.
- PersistentVolumeClaims (create): a claim that names no class (``spec.storageClassName`` absent,
  not ``""``, and no beta class annotation) gets the default class, the one annotated
  ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta annotation); of several,
  the newest wins, then the first by name (``pkg/volume/util/storageclass.go``).
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, duplicate, forbidden, invalid, not_supported, required, too_long
from fakeapi.validation import names
from fakeapi.validation.common import immutable, newest
from fakeapi.validation.strategy import AdmissionContext, Strategy

GROUP, PLURAL = "storage.k8s.io", "storageclasses"
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")
# A claim's class as the beta API named it; a claim carrying it asks for a class.
BETA_CLAIM_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
RECLAIM_POLICIES = ["Delete", "Retain"]
BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024


def validate_provisioner(provisioner: Any, path: str) -> list[FieldError]:
    """``validateProvisioner``: required, a qualified name once lowercased."""
    if not provisioner:
        return [required(path)]
    return names.check(path, provisioner.lower(), names.qualified_name)


def _parameters(params: dict[str, str] | None, path: str) -> list[FieldError]:
    params = params or {}
    if len(params) > MAX_PARAMETERS:
        return [too_long(path, MAX_PARAMETERS)]
    errs = [invalid(path, key, "field can not be empty.") for key in params if not key]
    if sum(len(k.encode()) + len(v.encode()) for k, v in params.items()) > MAX_PARAMETERS_SIZE:  # Go's len: bytes
        errs.append(too_long(path, MAX_PARAMETERS_SIZE))
    return errs


def _topology_term(term: dict[str, Any], path: str) -> tuple[dict[str, frozenset[str]], list[FieldError]]:
    """``ValidateTopologySelectorTerm``: each key once, each with distinct values; returns the
    term as key -> values for the duplicate-term check."""
    errs: list[FieldError] = []
    expressions: dict[str, frozenset[str]] = {}
    for i, requirement in enumerate(term.get("matchLabelExpressions") or []):
        p = f"{path}.matchLabelExpressions[{i}]"
        values = requirement.get("values") or []
        if not values:
            errs.append(required(f"{p}.values"))
        errs += [duplicate(f"{p}.values[{j}]", value) for j, value in enumerate(values) if value in values[:j]]
        key = requirement.get("key", "")
        errs += names.check(f"{p}.key", key, names.qualified_name)
        if key in expressions:
            errs.append(duplicate(f"{p}.key", key))
        expressions[key] = frozenset(values)
    return expressions, errs


def _allowed_topologies(terms: list[dict[str, Any]] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    # Upstream's list of seen terms starts with empty ones, so a term without expressions is
    # reported as a duplicate.
    seen: list[dict[str, frozenset[str]]] = [{}] if terms else []
    for i, term in enumerate(terms or []):
        expressions, term_errs = _topology_term(term, f"{path}[{i}]")
        errs += term_errs
        if expressions in seen:
            errs.append(duplicate(f"{path}[{i}].matchLabelExpressions", ""))
        seen.append(expressions)
    return errs


def validate_storage_class(sc: dict[str, Any]) -> list[FieldError]:
    """``ValidateStorageClass`` (ObjectMeta aside)."""
    errs = validate_provisioner(sc.get("provisioner"), "provisioner") + _parameters(sc.get("parameters"), "parameters")
    policy = sc.get("reclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", policy, RECLAIM_POLICIES))
    mode = sc.get("volumeBindingMode")
    if mode is None:
        errs.append(required("volumeBindingMode"))
    elif mode not in BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    return errs + _allowed_topologies(sc.get("allowedTopologies"), "allowedTopologies")


def is_default_class(sc: dict[str, Any]) -> bool:
    """Whether a StorageClass is annotated as the default (``IsDefaultAnnotation``)."""
    annotations = (sc.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


def default_class(classes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The default StorageClass (``GetDefaultClass``): of several, the newest, then the first by name."""
    return newest([sc for sc in classes if is_default_class(sc)])


def admit_claim_class(claim: dict[str, Any], ctx: AdmissionContext) -> None:
    """The ``DefaultStorageClass`` plugin: a new claim that asks for no class gets the default one."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    spec = claim.setdefault("spec", {})
    if spec.get("storageClassName") is not None or BETA_CLAIM_CLASS_ANNOTATION in annotations:
        return
    sc = default_class(ctx.list_all(GROUP, PLURAL))
    if sc is not None:
        spec["storageClassName"] = sc["metadata"]["name"]


class StorageClassStrategy(Strategy):
    """StorageClasses: defaults, the provisioner and its parameters, immutability."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        for key, value in (("reclaimPolicy", "Delete"), ("volumeBindingMode", "Immediate")):
            if obj.get(key) is None:
                obj[key] = value

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_storage_class(obj)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        errs = validate_storage_class(new)
        # Absent and empty parameters are the same map once stored.
        for key in ("parameters", "provisioner", "reclaimPolicy"):
            if (new.get(key) or None) != (old.get(key) or None):
                errs.append(forbidden(key, f"updates to {key} are forbidden."))
        return errs + immutable(new.get("volumeBindingMode"), old.get("volumeBindingMode"), "volumeBindingMode")


STRATEGIES: dict[str, Strategy] = {"StorageClass": StorageClassStrategy()}
