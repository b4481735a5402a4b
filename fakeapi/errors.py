"""One error tree mirroring ``metav1.Status``, rendered in exactly one place.

The API server raises :class:`StatusError` (or a subclass) anywhere below the HTTP edge; the
middleware turns it into a ``Status`` body.  The control plane's HTTP client maps a ``Status``
answer back onto the same classes, so ``except Conflict`` works on both sides of the wire.

Field errors follow ``k8s.io/apimachinery/pkg/util/validation/field``: a :class:`FieldError`
renders as ``"<path>: <Type>: <detail>"`` and becomes one ``details.causes[]`` entry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar


def success_status(code: int = 200, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``Status`` body of a success that returns no object (deletes, bindings)."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                              "code": code}
    if details:
        status["details"] = details
    return status


class StatusError(Exception):
    """An API error that renders as a Kubernetes ``Status`` object."""

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None,
                 metadata: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.metadata = metadata or {}

    def to_status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.metadata),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:  # an empty details ({}) is rendered, as upstream's generic 404
            status["details"] = self.details
        return status

    @staticmethod
    def from_status(status: dict[str, Any]) -> StatusError:
        """Rebuild the matching error class from a ``Status`` body (client side)."""
        code = int(status.get("code") or 500)
        reason = status.get("reason") or ""
        cls = _BY_REASON.get(reason) or _BY_CODE.get(code, StatusError)
        err = cls(status.get("message", ""), details=status.get("details"),
                  metadata=status.get("metadata"))
        return err


class BadRequest(StatusError):
    code, reason = 400, "BadRequest"


class Unauthorized(StatusError):
    code, reason = 401, "Unauthorized"


class Forbidden(StatusError):
    code, reason = 403, "Forbidden"


class NotFound(StatusError):
    code, reason = 404, "NotFound"


class MethodNotAllowed(StatusError):
    code, reason = 405, "MethodNotAllowed"


class NotAcceptable(StatusError):
    code, reason = 406, "NotAcceptable"


class AlreadyExists(StatusError):
    code, reason = 409, "AlreadyExists"


class Conflict(StatusError):
    code, reason = 409, "Conflict"


class Expired(StatusError):
    code, reason = 410, "Expired"


class Gone(StatusError):
    code, reason = 410, "Gone"


class RequestEntityTooLarge(StatusError):
    code, reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaType(StatusError):
    code, reason = 415, "UnsupportedMediaType"


class Invalid(StatusError):
    code, reason = 422, "Invalid"


class TooManyRequests(StatusError):
    code, reason = 429, "TooManyRequests"


class ServiceUnavailable(StatusError):
    code, reason = 503, "ServiceUnavailable"


class Timeout(StatusError):
    code, reason = 504, "Timeout"


_BY_REASON: dict[str, type[StatusError]] = {
    cls.reason: cls
    for cls in (BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, NotAcceptable, AlreadyExists,
                Conflict, Expired, Gone, RequestEntityTooLarge, UnsupportedMediaType, Invalid,
                TooManyRequests, ServiceUnavailable, Timeout)
}
_BY_CODE: dict[int, type[StatusError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed, 406: NotAcceptable,
    409: Conflict, 410: Expired, 413: RequestEntityTooLarge, 415: UnsupportedMediaType,
    422: Invalid, 429: TooManyRequests, 503: ServiceUnavailable, 504: Timeout,
}


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """``text`` as Go's ``strconv.Quote`` (``%q``) writes it, as upstream's messages show strings.

    Unlike JSON, it keeps printable non-ASCII characters and escapes the rest Go's way (``\\x01``,
    ``\\u00ad``); ``str.isprintable`` and Go's ``unicode.IsPrint`` take the same categories.
    """
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return '"' + "".join(_go_escape(ch) for ch in text) + '"'


def _go_escape(ch: str) -> str:
    if ch in _GO_ESCAPES:
        return _GO_ESCAPES[ch]
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF:  # a lone surrogate, which Go's decoders read as U+FFFD
        return "\ufffd"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class GoSyntax(str):
    """A field error's value as Go prints it with ``%#v`` (a ``[]byte`` as ``[]byte{0x2d, ...}``):
    written as is, not quoted as a string value is."""


def _fmt_value(value: Any) -> str:
    if isinstance(value, GoSyntax):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), default=str)


_OMIT = object()


@dataclass(frozen=True)
class FieldError:
    """One validation failure at a field path, as upstream's ``field.Error``.

    ``type`` is the cause reason (``FieldValueRequired``, ``FieldValueInvalid``…).
    Build them with the helpers below rather than by hand.
    """

    type: str
    field: str
    detail: str = ""
    value: Any = _OMIT

    _LABELS: ClassVar[dict[str, str]] = {
        "FieldValueRequired": "Required value",
        "FieldValueInvalid": "Invalid value",
        "FieldValueNotSupported": "Unsupported value",
        "FieldValueDuplicate": "Duplicate value",
        "FieldValueForbidden": "Forbidden",
        "FieldValueTooLong": "Too long",
        "FieldValueTooMany": "Too many",
        "FieldValueTypeInvalid": "Invalid value",
        "FieldValueNotFound": "Not found",
        "InternalError": "Internal error",
    }

    def error_body(self) -> str:
        label = self._LABELS.get(self.type, self.type)
        parts = [label]
        if self.value is not _OMIT and self.type not in ("FieldValueRequired", "FieldValueForbidden",
                                                         "FieldValueTooLong", "FieldValueTooMany",
                                                         "InternalError"):
            parts[0] = f"{label}: {_fmt_value(self.value)}"
        if self.detail:
            return f"{parts[0]}: {self.detail}"
        return parts[0]

    def __str__(self) -> str:
        return f"{self.field}: {self.error_body()}" if self.field else self.error_body()

    def to_cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.error_body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", field, detail)


def invalid(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError("FieldValueInvalid", field, detail, value)


def not_supported(field: str, value: Any, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported) if supported else ""
    return FieldError("FieldValueNotSupported", field, detail, value)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError("FieldValueDuplicate", field, "", value)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", field, detail)


def too_long(field: str, max_len: int) -> FieldError:
    return FieldError("FieldValueTooLong", field, f"may not be more than {max_len} bytes")


def too_many(field: str, actual: int, max_items: int) -> FieldError:
    return FieldError("FieldValueTooMany", field, f"{actual}: must have at most {max_items} items")


def qualified_kind(kind: str, group: str) -> str:
    """``ResourceClaim.resource.k8s.io`` or ``Pod`` for the core group."""
    return f"{kind}.{group}" if group else kind


def invalid_object(kind: str, group: str, name: str, errors: list[FieldError]) -> Invalid:
    """The 422 upstream returns for a failed validation, message shape included."""
    if len(errors) == 1:
        summary = str(errors[0])
    else:
        summary = "[" + ", ".join(str(e) for e in errors) + "]"
    message = f'{qualified_kind(kind, group)} "{name}" is invalid: {summary}'
    details: dict[str, Any] = {"name": name, "group": group, "kind": kind,
                               "causes": [e.to_cause() for e in errors]}
    if not group:
        del details["group"]
    return Invalid(message, details=details)


def resource_name(plural: str, group: str) -> str:
    """``pods`` or ``resourceclaims.resource.k8s.io`` as used in messages."""
    return f"{plural}.{group}" if group else plural


def admission_forbidden(obj: dict[str, Any], plural: str, group: str, reason: str) -> Forbidden:
    """Upstream's ``admission.NewForbidden``: ``<resource> "<name>" is forbidden: <reason>`` (a
    generated name is not known yet, so the prefix stands for it)."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    return Forbidden(f'{qualified_kind(plural, group)} "{name}" is forbidden: {reason}',
                     details=status_details(plural, group, name))


def status_details(plural: str, group: str, name: str) -> dict[str, Any]:
    """``details`` of a Status about one object (the core group is omitted, as upstream)."""
    details: dict[str, Any] = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    return details


def internal_error(cause: str) -> StatusError:
    """Upstream's ``NewInternalError``: a 500 ``InternalError`` carrying its cause."""
    return StatusError(f"Internal error occurred: {cause}", details={"causes": [{"message": cause}]})


def not_found(plural: str, group: str, name: str) -> NotFound:
    details = status_details(plural, group, name)
    return NotFound(f'{resource_name(plural, group)} "{name}" not found', details=details)


def already_exists(plural: str, group: str, name: str) -> AlreadyExists:
    return AlreadyExists(f'{resource_name(plural, group)} "{name}" already exists',
                         details=status_details(plural, group, name))


def conflict(plural: str, group: str, name: str, detail: str) -> Conflict:
    return Conflict(f'Operation cannot be fulfilled on {resource_name(plural, group)} "{name}": {detail}',
                    details=status_details(plural, group, name))


STALE_OBJECT = "the object has been modified; please apply your changes to the latest version and try again"
