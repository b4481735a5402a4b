"""Per-kind hooks, modelled on upstream's ``rest.RESTCreateStrategy``/``RESTUpdateStrategy``/
``RESTGracefulDeleteStrategy``, and the validation every kind shares around them.

The registry runs the generic pipeline (metadata, status/spec split, generation, finalizers,
unknown fields) and calls these hooks for what only the kind knows.  Hooks get plain JSON dicts
and mutate in place (``default``, ``admit``, ``prepare_delete``) or return field errors
(``validate*``).  ObjectMeta is validated once for every kind by :func:`validate_create` and
:func:`validate_update`, so a strategy only names its name format (:meth:`Strategy.validate_name`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fakeapi.auth.users import UserInfo
from fakeapi.config import FeatureGates
from fakeapi.errors import FieldError
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.servicenet import ServiceNetwork
from fakeapi.validation import names
from fakeapi.validation.common import validate_object_meta, validate_object_meta_update

# (group, plural, namespace, name) -> stored object or None; read-only view for admission checks.
Lookup = Callable[[str, str, str, str], "dict[str, Any] | None"]


def _no_lookup(group: str, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
    return None


# (group, plural) -> every stored object of the kind, all namespaces (allocators scan what is taken).
ListAll = Callable[[str, str], "list[dict[str, Any]]"]


def _no_objects(group: str, plural: str) -> list[dict[str, Any]]:
    return []


@dataclass(frozen=True)
class AdmissionContext:
    """What a hook may know about the request besides the object."""

    gates: FeatureGates = field(default_factory=FeatureGates)
    operation: str = "CREATE"  # CREATE | UPDATE
    subresource: str = ""
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    lookup: Lookup = _no_lookup
    list_all: ListAll = _no_objects
    # Where Services get their cluster IPs and node ports.
    service_network: ServiceNetwork = field(default_factory=ServiceNetwork.parse)
    # Who sent a create, for a kind whose strategy ``wants_user`` (None: nobody, an in-server write).
    user: UserInfo | None = None


class Strategy:
    """Default hooks: accept everything, delete at once.  Kinds subclass and override what they need."""

    # Upstream strategies reset status on create; a kind whose clients may set it (nodes) says so.
    keeps_status_on_create: ClassVar[bool] = False
    # Whether a create needs the requesting user in ``ctx.user`` (CSRs record who asked); other
    # kinds' creates skip finding it.
    wants_user: ClassVar[bool] = False
    # Status counts Go always writes (int32 without ``omitempty``): absent, they read back as 0,
    # on every write (a new object's ``status: {}``, a status patch that nulls one).
    zero_counts: ClassVar[tuple[str, ...]] = ()

    def decode(self, obj: dict[str, Any], field_validation: str, *, patch: bool = False
               ) -> tuple[dict[str, Any], list[str]]:
        """Decode a request body of a kind without a model (returns a private copy and the
        ``fieldValidation=Warn`` warnings); kinds with a model are decoded from it instead."""
        return deep_copy(obj), []

    def validate_name(self, name: str) -> list[str]:
        """The kind's name format (upstream's ``ValidateNameFunc``): problems, or none."""
        return names.dns1123_subdomain(name)

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        """Apply defaults and drop fields of disabled feature gates (create and update)."""

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> None:
        """Upstream's ``PrepareForUpdate`` of the endpoint written (``ctx.subresource``): keep what
        the write may not change and fill in what the server derives, before defaults and validation
        (the pipeline has already kept status on the main resource and metadata on ``status``)."""

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        """Drop fields whose feature gate is off, unless the old object already used them."""

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        """Mutating/validating admission plugins; may raise a StatusError (e.g. Forbidden)."""

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        """Validate a whole object as for create (ObjectMeta aside)."""
        return []

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        """Validate an update of the main resource (immutability rules live here)."""
        return self.validate(new, ctx)

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        """Validate a write through the ``status`` subresource."""
        return []

    def admit_delete(self, obj: dict[str, Any]) -> None:
        """Refuse a deletion by raising a StatusError (admission plugins such as NamespaceLifecycle)."""

    def grace_period(self, obj: dict[str, Any], options: Mapping[str, Any]) -> int:
        """Seconds a deletion waits for someone else (the kubelet) before the object may go."""
        return 0

    def prepare_delete(self, obj: dict[str, Any]) -> None:
        """Mark an object that starts deleting (a namespace turns Terminating)."""

    def finalized(self, obj: dict[str, Any]) -> bool:
        """Whether nothing but ``metadata.finalizers`` holds a deleting object back.

        Upstream's ``ShouldDeleteDuringUpdate``: a deleting object without finalizers goes, unless
        the kind keeps it for its own finalization (namespaces wait for ``spec.finalizers``).
        """
        return True


def validate_create(strategy: Strategy, obj: dict[str, Any], ctx: AdmissionContext, *,
                    namespaced: bool) -> list[FieldError]:
    """What a create checks: ObjectMeta (``ValidateObjectMeta``), then the kind's rules."""
    errors = validate_object_meta(obj.get("metadata"), "metadata", namespaced=namespaced,
                                  name_check=strategy.validate_name)
    return errors + strategy.validate(obj, ctx)


def validate_update(strategy: Strategy, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext, *,
                    namespaced: bool) -> list[FieldError]:
    """What an update checks: ObjectMeta and its update rules, then the kind's (status) rules.

    Metadata equal to the stored object's (a status write's, a binding's) passed these checks
    when it was stored, and cannot break an update rule, so it is not walked again."""
    new_meta, old_meta = new.get("metadata"), old.get("metadata")
    errors: list[FieldError] = []
    if new_meta != old_meta:
        errors += validate_object_meta(new_meta, "metadata", namespaced=namespaced, name_check=strategy.validate_name,
                                       old=old_meta)
        errors += validate_object_meta_update(new_meta, old_meta)
    if ctx.subresource == "status":
        return errors + strategy.validate_status_update(new, old, ctx)
    return errors + strategy.validate_update(new, old, ctx)
