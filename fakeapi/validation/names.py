"""Name-format checks as in ``k8s.io/apimachinery/pkg/util/validation``: each returns upstream's messages."""

from __future__ import annotations

import re
from collections.abc import Callable

from fakeapi.errors import FieldError, invalid, required, too_long
from fakeapi.machinery.memo import Memo
from fakeapi.machinery.resourcelimits import DRIVER_NAME_MAX

_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"
_QUALIFIED = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = rf"({_QUALIFIED})?"
_C_IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_WILDCARD_SUBDOMAIN = rf"\*\.{_DNS_SUBDOMAIN}"
_CONFIG_KEY = "[-._a-zA-Z0-9]+"

Checker = Callable[[str], list[str]]
DNS_LABEL_MAX, DNS_SUBDOMAIN_MAX, QUALIFIED_NAME_MAX, LABEL_VALUE_MAX = 63, 253, 63, 63


def _full(pattern: str) -> re.Pattern[str]:
    # \Z, not $: Go's $ matches only at the end of the text, Python's also before a final newline
    # (a name "web\n" would pass).
    return re.compile(f"^(?:{pattern})\\Z")


_RE = {name: _full(p) for name, p in (("label", _DNS_LABEL), ("subdomain", _DNS_SUBDOMAIN),
                                      ("qualified", _QUALIFIED), ("value", _LABEL_VALUE),
                                      ("cid", _C_IDENTIFIER), ("dns1035", _DNS1035_LABEL),
                                      ("wildcard", _WILDCARD_SUBDOMAIN), ("config", _CONFIG_KEY))}


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def dns1123_label(value: str) -> list[str]:
    """Messages for an invalid RFC 1123 label (empty list when valid)."""
    msgs = [_max_len(DNS_LABEL_MAX)] if len(value) > DNS_LABEL_MAX else []
    if not _RE["label"].match(value):
        msgs.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                    f"regex used for validation is '{_DNS_LABEL}')")
    return msgs


def dns1123_subdomain(value: str) -> list[str]:
    """Messages for an invalid RFC 1123 subdomain."""
    msgs = [_max_len(DNS_SUBDOMAIN_MAX)] if len(value) > DNS_SUBDOMAIN_MAX else []
    if not _RE["subdomain"].match(value):
        msgs.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                    f"used for validation is '{_DNS_SUBDOMAIN}')")
    return msgs


def dns1035_label(value: str) -> list[str]:
    """Messages for an invalid DNS-1035 label (Service names; CRD versions, plurals, short names)."""
    msgs = [_max_len(DNS_LABEL_MAX)] if len(value) > DNS_LABEL_MAX else []
    if not _RE["dns1035"].match(value):
        msgs.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                    f"regex used for validation is '{_DNS1035_LABEL}')")
    return msgs


def config_key(value: str) -> list[str]:
    """Messages for an invalid ConfigMap or Secret key (``IsConfigMapKey``: a file name in a volume)."""
    msgs = [_max_len(DNS_SUBDOMAIN_MAX)] if len(value) > DNS_SUBDOMAIN_MAX else []
    if not _RE["config"].match(value):
        msgs.append("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                    f"or 'KEY_NAME',  or 'key-name', regex used for validation is '{_CONFIG_KEY}')")
    if value in (".", ".."):
        msgs.append(f"must not be '{value}'")
    elif value.startswith(".."):
        msgs.append("must not start with '..'")
    return msgs


# The keys nearly every ConfigMap and Secret has pass with one match; only the others are checked
# for their messages.
_VALID_CONFIG_KEY = re.compile(rf"(?!\.\.)(?!\.\Z){_CONFIG_KEY}\Z")


def check_config_key(field: str, key: str) -> list[FieldError]:
    """:func:`config_key`'s messages as Invalid errors at ``field[key]`` (a path made only then)."""
    if len(key) <= DNS_SUBDOMAIN_MAX and _VALID_CONFIG_KEY.match(key):
        return []
    return check(f"{field}[{key}]", key, config_key)


def wildcard_dns1123_subdomain(value: str) -> list[str]:
    """Messages for an invalid wildcard subdomain (``*.example.com``: Ingress hosts)."""
    msgs = [_max_len(DNS_SUBDOMAIN_MAX)] if len(value) > DNS_SUBDOMAIN_MAX else []
    if not _RE["wildcard"].match(value):
        msgs.append("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which "
                    "must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric "
                    f"character (e.g. '*.example.com', regex used for validation is '{_WILDCARD_SUBDOMAIN}')")
    return msgs


def qualified_name(value: str) -> list[str]:
    """Messages for an invalid qualified name (``[prefix/]name``): label keys, finalizers, gates."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        msgs = ["prefix part " + m for m in dns1123_subdomain(prefix)]
        return msgs + _name_part(name)
    else:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
                f"for validation is '{_QUALIFIED}') with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    return _name_part(name)


def _name_part(name: str) -> list[str]:
    if not name:
        return ["name part must be non-empty"]
    msgs = ["name part " + _max_len(QUALIFIED_NAME_MAX)] if len(name) > QUALIFIED_NAME_MAX else []
    if not _RE["qualified"].match(name):
        msgs.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
                    f"for validation is '{_QUALIFIED}')")
    return msgs


def label_value(value: str) -> list[str]:
    """Messages for an invalid label value (empty is valid)."""
    msgs = [_max_len(LABEL_VALUE_MAX)] if len(value) > LABEL_VALUE_MAX else []
    if not _RE["value"].match(value):
        msgs.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                    f"'my_value',  or '12345', regex used for validation is '{_LABEL_VALUE}')")
    return msgs


def c_identifier(value: str) -> list[str]:
    """Messages for an invalid C identifier (device attribute and capacity names)."""
    if _RE["cid"].match(value):
        return []
    return ["a valid C identifier must start with alphabetic character or '_', followed by a string of "
            "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
            f"validation is '{_C_IDENTIFIER}')"]


# The checkers are pure functions of the value, and the same names and label keys come back on
# every write; answers are remembered per checker and value (cleared when full, as values are user
# data).  Keyed by the value alone within a checker's memo, a new name keeps no key tuple, nor the
# bound method a strategy's checker is, for CPython's collector to traverse.
_CHECKED: Memo[Checker, Memo[str, tuple[str, ...]]] = Memo(256)
CHECKED_PER_CHECKER = 8192


def check(path: str, value: str, checker: Checker) -> list[FieldError]:
    """Run a format checker and turn its messages into Invalid errors at ``path``."""
    return [invalid(path, value, msg) for msg in problems(value, checker)]


def problems(value: str, checker: Checker) -> tuple[str, ...] | list[str]:
    """``checker``'s messages for ``value``, remembered (a caller with a valid value formats no path)."""
    if type(value) is not str:
        return checker(value)
    checked = _CHECKED.get(checker)
    if checked is None:
        checked = _CHECKED.keep(checker, Memo(CHECKED_PER_CHECKER))
    messages = checked.get(value)
    if messages is None:
        messages = checked.keep(value, tuple(checker(value)))
    return messages


def check_required(path: str, value: str | None, checker: Checker) -> list[FieldError]:
    """Required value plus format."""
    if not value:
        return [required(path)]
    return check(path, value, checker)


def driver_name(path: str, value: str | None) -> list[FieldError]:
    """A DRA (CSI-style) driver name: required, at most 63 characters, DNS subdomain once lowercased."""
    if not value:
        return [required(path)]
    errs = [too_long(path, DRIVER_NAME_MAX)] if len(value) > DRIVER_NAME_MAX else []
    return errs + [invalid(path, value, msg) for msg in dns1123_subdomain(value.lower())]


def path_segment_name(value: str) -> list[str]:
    """Messages for a name that cannot be one URL path segment (``path.IsValidPathSegmentName``):
    the minimal rule RBAC objects and role references follow."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]
