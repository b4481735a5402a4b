"""Ephemeral (debug) containers, added through ``pods/{name}/ephemeralcontainers`` (``kubectl
debug``): upstream's ``validateEphemeralContainers`` and ``ValidatePodEphemeralContainersUpdate``.

They are only ever added: existing ones may be neither removed nor changed.  They run no
processes a pod plans for, so ports, probes, lifecycle hooks and resources are forbidden.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import FieldError, duplicate, forbidden, required
from fakeapi.validation import names

FORBIDDEN_FIELDS = ("ports", "lifecycle", "livenessProbe", "readinessProbe", "startupProbe", "resizePolicy",
                    "restartPolicy")
PATH = "spec.ephemeralContainers"


def _ephemeral(container: dict[str, Any], path: str, others: set[str], regular: set[str]) -> list[FieldError]:
    errs = names.check_required(f"{path}.name", container.get("name"), names.dns1123_label)
    if container.get("name") in others:
        errs.append(duplicate(f"{path}.name", container["name"]))
    if not container.get("image"):
        errs.append(required(f"{path}.image"))
    errs += [forbidden(f"{path}.{key}", "cannot be set for an Ephemeral Container")
             for key in FORBIDDEN_FIELDS if container.get(key)]
    resources = container.get("resources") or {}
    if resources.get("requests") or resources.get("limits"):
        errs.append(forbidden(f"{path}.resources", "cannot be set for an Ephemeral Container"))
    target = container.get("targetContainerName")
    if target and target not in regular:
        errs.append(FieldError("FieldValueNotFound", f"{path}.targetContainerName", "", target))
    return errs


def validate_ephemeral_containers_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """New ephemeral containers are valid and uniquely named; the existing ones are unchanged."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    regular = {c.get("name") for key in ("containers", "initContainers") for c in spec.get(key) or []}
    added = spec.get("ephemeralContainers") or []
    errs: list[FieldError] = []
    seen = set(regular)
    for i, container in enumerate(added):
        errs += _ephemeral(container, f"{PATH}[{i}]", seen, regular)
        seen.add(container.get("name"))
    by_name = {c.get("name"): c for c in added}
    for existing in old_spec.get("ephemeralContainers") or []:
        name = existing.get("name")
        if name not in by_name:
            errs.append(forbidden(PATH, f'existing ephemeral containers "{name}" may not be removed'))
        elif by_name[name] != existing:
            errs.append(forbidden(PATH, f'existing ephemeral containers "{name}" may not be changed'))
    return errs
