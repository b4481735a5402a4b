"""Per-kind admission hooks, modelled on upstream's ``rest.RESTCreateStrategy``/``RESTUpdateStrategy``.

The registry runs the generic pipeline (metadata, status/spec split, generation, finalizers,
unknown fields) and calls these hooks for what only the kind knows.  Hooks get plain JSON dicts
and mutate in place (``default``, ``admit``) or return field errors (``validate*``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fakeapi.config import FeatureGates
from fakeapi.errors import FieldError

# (group, plural, namespace, name) -> stored object or None; read-only view for admission checks.
Lookup = Callable[[str, str, str, str], "dict[str, Any] | None"]


def _no_lookup(group: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
    return None


@dataclass(frozen=True)
class AdmissionContext:
    """What a hook may know about the request besides the object."""

    gates: FeatureGates = field(default_factory=FeatureGates)
    operation: str = "CREATE"  # CREATE | UPDATE
    subresource: str = ""
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    lookup: Lookup = _no_lookup


class Strategy:
    """Default hooks: accept everything.  Kinds subclass and override what they need."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        """Apply defaults and drop fields of disabled feature gates (create and update)."""

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        """Drop fields whose feature gate is off, unless the old object already used them."""

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        """Mutating/validating admission plugins; may raise a StatusError (e.g. Forbidden)."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        """Validate a whole object as for create."""
        return []

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        """Validate an update of the main resource (immutability rules live here)."""
        return self.validate(new, ctx)

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        """Validate a write through the ``status`` subresource."""
        return []
