"""DRA CEL's ``device`` variable as the cost estimate sees it: its declared shape (upstream's
``deviceType``) and the largest sizes its fields can have (:class:`DeviceSizes`;
:data:`API_LIMITS` are the ``resource.k8s.io/v1`` limits).

A declaration is ``(kind, size field, key, element)``: the kind, the :class:`DeviceSizes` field
that bounds its ``size()`` (None: a scalar), and for a map its key and value declarations.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

from fakeapi.machinery.resourcelimits import (
    ATTRIBUTE_VALUE_MAX,
    ATTRIBUTES_AND_CAPACITIES_MAX,
    DOMAIN_MAX,
    DRIVER_NAME_MAX,
    ID_MAX,
)

__all__ = ["API_LIMITS", "DeviceSizes", "declaration", "declared_deep_size", "declared_size"]


class DeviceSizes(NamedTuple):
    """Largest sizes the ``device`` variable can have, as CEL's ``size()`` counts them."""

    driver: int = DRIVER_NAME_MAX
    domains: int = ATTRIBUTES_AND_CAPACITIES_MAX  # domains per map
    entries: int = ATTRIBUTES_AND_CAPACITIES_MAX  # attributes or capacities per domain
    domain: int = DOMAIN_MAX
    id: int = ID_MAX
    value: int = ATTRIBUTE_VALUE_MAX
    quantity: int = 64  # fakeapi's encoding of a capacity value (an opaque object upstream)

    def covers(self, other: DeviceSizes) -> bool:
        """True when every size of ``other`` is within this one's."""
        return all(map(operator.ge, self, other))

    def grown(self, **at_least: int) -> DeviceSizes:
        """A copy with each named size raised to at least the given value."""
        return self._replace(**{k: max(v, getattr(self, k)) for k, v in at_least.items()})


API_LIMITS = DeviceSizes()

_ATTRIBUTE = ("any", "value", None, None)
_QUANTITY = ("any", "quantity", None, None)
_BOOL = ("bool", None, None, None)


def _domain_map(value: tuple[Any, ...]) -> tuple[Any, ...]:
    inner = ("map", "entries", ("string", "id", None, None), value)
    return ("map", "domains", ("string", "domain", None, None), inner)


_DEVICE_FIELDS = {
    "driver": ("string", "driver", None, None),
    "attributes": _domain_map(_ATTRIBUTE),
    "capacity": _domain_map(_QUANTITY),
    "allowMultipleAllocations": _BOOL,
}


def declaration(path: tuple[str, ...] | None) -> tuple[Any, ...] | None:
    """The declaration a ``device`` path leads to, like upstream's sizeEstimator walks it."""
    if not path or path[0] != "device" or len(path) < 2:
        return None
    node = _DEVICE_FIELDS.get(path[1])
    for name in path[2:]:
        if node is None or node[0] != "map":
            return None
        # A field selected on an inner map is one of its values, whatever its name.
        node = node[2] if name == "@keys" else node[3]
    return node


def declared_size(node: tuple[Any, ...], sizes: DeviceSizes) -> int:
    """The largest ``size()`` of a declared value under ``sizes`` (0 for a scalar)."""
    return getattr(sizes, node[1]) if node[1] else 0


def declared_deep_size(node: tuple[Any, ...], sizes: DeviceSizes) -> int:
    """How many values a declared value nests at most, itself included (what an equality may compare)."""
    if node[0] == "map":
        inner = declared_deep_size(node[2], sizes) + declared_deep_size(node[3], sizes)
        return 1 + declared_size(node, sizes) * (1 + inner)
    return max(declared_size(node, sizes), 1)
