"""The strategy of one custom resource version: decoding, defaulting and validation driven by
the CRD's structural schema instead of a pydantic model.

Upstream: ``apiextensions-apiserver/pkg/apiserver/customresource_handler.go`` (the schema
coercing decoder: prune, drop nulls, coerce metadata, default),
``pkg/registry/customresource/strategy.go`` and ``validator.go`` (validation order: schema, list
types, then CEL rules unless a blocking error came first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fakeapi.errors import BadRequest, FieldError, Forbidden, invalid, status_details
from fakeapi.machinery import cel_rules
from fakeapi.machinery import structural as st
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.models.meta import ObjectMeta
from fakeapi.models.schema import decode, struct_fields
from fakeapi.validation import names
from fakeapi.validation.strategy import AdmissionContext, Strategy

CRD_GROUP, CRD_PLURAL = "apiextensions.k8s.io", "customresourcedefinitions"
# What the metadata of an embedded resource may keep (upstream prunes it to ObjectMeta).
OBJECT_META_KEYS = frozenset(struct_fields(ObjectMeta))
# Errors that keep CEL rules from running (upstream's hasBlockingErr).
BLOCKING = frozenset({"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany",
                      "FieldValueTypeInvalid"})


@dataclass(frozen=True)
class CustomKind:
    """What the strategy knows of its CRD version."""

    crd_name: str
    group: str
    version: str
    kind: str
    schema: st.Schema
    status: bool = False


@dataclass
class _Rules:
    """Compiled rules per schema node, compiled once per CRD version on first use."""

    compiled: dict[int, list[cel_rules.CompiledRule]] = field(default_factory=dict)

    def of(self, schema: st.Schema, root: bool) -> list[cel_rules.CompiledRule]:
        found = self.compiled.get(id(schema))
        if found is None:
            found = []
            for rule in schema.rules:
                try:
                    found.append(cel_rules.compile_rule(rule, schema, root=root))
                except cel_rules.RuleError:
                    continue  # refused at CRD validation; a stored rule that no longer compiles checks nothing
            self.compiled[id(schema)] = found
        return found


class CustomResourceStrategy(Strategy):
    """Decode, default and validate objects of one custom resource version."""

    def __init__(self, kind: CustomKind) -> None:
        self.kind = kind
        self._rules = _Rules()

    # -- decoding ------------------------------------------------------------------------------

    def decode(self, obj: dict[str, Any], field_validation: str, *, patch: bool = False
               ) -> tuple[dict[str, Any], list[str]]:
        out = deep_copy(obj)
        # A merge patch keeps its nulls (deletions) and its metadata as sent (the patched object's
        # metadata is validated as ObjectMeta); unknown fields are answered as for a whole body.
        unknown = [] if patch else self._coerce_metadata(out)
        unknown += st.prune(out, self.kind.schema, None if patch else OBJECT_META_KEYS, patch=patch)
        messages = [f'unknown field "{p}"' for p in unknown]
        if messages and field_validation == "Strict":
            raise BadRequest(f"{self._prefix()}strict decoding error: " + ", ".join(messages))
        return out, messages if field_validation == "Warn" else []

    def _prefix(self) -> str:
        kind, version = self.kind.kind, self.kind.version
        return f'{kind} in version "{version}" cannot be handled as a {kind}: '

    def _coerce_metadata(self, obj: dict[str, Any]) -> list[str]:
        """Metadata goes through the typed ObjectMeta: unknown keys dropped, wrong types a 400."""
        meta = obj.get("metadata")
        if meta is None:
            return []
        if not isinstance(meta, dict):
            raise BadRequest(f"{self._prefix()}json: cannot unmarshal {st.json_type(meta)} into Go struct field "
                             f"ObjectMeta.metadata of type v1.ObjectMeta")
        try:
            coerced, warnings = decode(ObjectMeta, meta, "Warn")
        except BadRequest as err:
            detail = err.message.split("cannot be handled as a ObjectMeta: ", 1)[-1]
            raise BadRequest(self._prefix() + detail) from None
        obj["metadata"] = coerced
        return ["metadata." + w.removeprefix('unknown field "').removesuffix('"') for w in warnings]

    # -- defaulting and admission ----------------------------------------------------------------

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        new = st.defaulted(obj, self.kind.schema)
        if new is not obj:
            obj.clear()
            obj.update(new)

    def admit(self, obj: dict[str, Any], old: dict[str, Any] | None, ctx: AdmissionContext) -> None:
        if old is not None:
            return
        crd = ctx.lookup(CRD_GROUP, CRD_PLURAL, "", self.kind.crd_name)
        if crd is not None and (crd.get("metadata") or {}).get("deletionTimestamp"):
            name = (obj.get("metadata") or {}).get("name", "")
            raise Forbidden("create not allowed while custom resource definition is terminating",
                            details=status_details(self.kind.crd_name.split(".", 1)[0], self.kind.group, name))

    # -- validation ------------------------------------------------------------------------------

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return self._validate(obj, None)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return self._validate(new, old)

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        return self._validate(new, old)

    def _validate(self, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        schema = self.kind.schema
        errors = st.validate_value({k: v for k, v in obj.items() if k not in st.META_KEYS}, schema)
        errors += _embedded_errors(obj, schema, "")
        if old is None or not st.validate_list_types(old, schema):
            errors += st.validate_list_types(obj, schema)
        if old is not None:
            errors = _ratchet(errors, obj, old)
        if not schema.has_rules:
            return errors
        if any(e.type in BLOCKING for e in errors):
            return [*errors, invalid("<nil>", None, cel_rules.UNCHECKED)]
        return errors + self._rule_errors(obj, old)

    def _rule_errors(self, obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        errors: list[FieldError] = []
        self._walk_rules(obj, old, old is not None, self.kind.schema, "", errors, root=True)
        return errors

    def _walk_rules(self, value: Any, old: Any, has_old: bool, schema: st.Schema, path: str,
                    errors: list[FieldError], *, root: bool = False) -> None:
        if value is None or not schema.has_rules:
            return
        for compiled in self._rules.of(schema, root):
            if compiled.transition and not has_old:
                continue
            err = cel_rules.evaluate(compiled, schema, value, old, path or "<nil>", root=root, has_old=has_old)
            if err is not None:
                errors.append(err)
        if isinstance(value, dict):
            old_map = old if has_old and isinstance(old, dict) else {}
            for key, item in value.items():
                sub = schema.child(key)
                if sub is not None and not (root and key in st.META_KEYS):
                    self._walk_rules(item, old_map.get(key), key in old_map, sub, st.join(path, key), errors)
        elif isinstance(value, list) and schema.items is not None:
            olds = _correlate(value, old if has_old else None, schema)
            for i, item in enumerate(value):
                found = olds.get(i, _ABSENT)
                self._walk_rules(item, None if found is _ABSENT else found, found is not _ABSENT, schema.items,
                                 f"{path}[{i}]", errors)


_ABSENT = object()


def _correlate(items: list[Any], old: Any, schema: st.Schema) -> dict[int, Any]:
    """Old items of a ``map`` list matched by key (other lists do not correlate)."""
    if schema.list_type != "map" or not isinstance(old, list):
        return {}
    keys = schema.list_keys

    def key(item: Any) -> Any:
        return tuple(item.get(k) for k in keys) if isinstance(item, dict) else None

    by_key = {key(o): o for o in old}
    return {i: by_key[key(item)] for i, item in enumerate(items) if key(item) in by_key}


def _ratchet(errors: list[FieldError], new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """CRDValidationRatcheting: an error whose field is unchanged from the old object is dropped."""
    return [e for e in errors if _at(new, e.field) != _at(old, e.field) or _at(new, e.field) is _ABSENT]


def _at(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(cur, list) or index >= len(cur):
                return _ABSENT
            cur = cur[index]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return _ABSENT
    return cur


def _embedded_errors(value: Any, schema: st.Schema, path: str) -> list[FieldError]:
    """``x-kubernetes-embedded-resource`` nodes: apiVersion and kind required, metadata.name a path segment."""
    errors: list[FieldError] = []
    if isinstance(value, dict):
        if schema.embedded and path:
            errors += _embedded(value, path)
        for key, item in value.items():
            sub = schema.child(key)
            if sub is not None and (sub.embedded or sub.properties or sub.items or sub.additional):
                errors += _embedded_errors(item, sub, st.join(path, key))
    elif isinstance(value, list) and schema.items is not None:
        for i, item in enumerate(value):
            errors += _embedded_errors(item, schema.items, f"{path}[{i}]")
    return errors


def _embedded(value: dict[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in ("apiVersion", "kind"):
        if not isinstance(value.get(key), str) or not value.get(key):
            errors.append(FieldError("FieldValueRequired", f"{path}.{key}", "must not be empty"))
    kind = value.get("kind")
    if isinstance(kind, str) and kind:
        errors += [invalid(f"{path}.kind", kind, f"may have mixed case, but should otherwise match: {m}")
                   for m in names.dns1035_label(kind.lower())]
    name = (value.get("metadata") or {}).get("name") if isinstance(value.get("metadata"), dict) else None
    if isinstance(name, str) and (name in (".", "..") or "/" in name or "%" in name):
        errors.append(invalid(f"{path}.metadata.name", name, f"may not be '{name}'" if name in (".", "..") else
                              f"may not contain '{'/' if '/' in name else '%'}'"))
    return errors
