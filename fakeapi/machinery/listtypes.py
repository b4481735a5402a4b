"""List semantics as values: how each list field merges under SSA and strategic merge patch.

Upstream derives both from markers on the Go types (``staging/src/k8s.io/api/*/types.go``):
``+listType=map|set|atomic`` with ``+listMapKey`` drive server-side apply (structured-merge-diff),
``+patchStrategy=merge`` with ``+patchMergeKey`` drive strategic merge patch.  The two are
independent: ``status.hostIPs`` merges by ``ip`` under SMP but is atomic under SSA, ResourceClaim
``status.devices`` is an SSA map but replaced by SMP.  This module holds only the pure table types
the patch and apply code consume; :mod:`fakeapi.models.listtypes` builds a kind's table from its
model.  A list field without markers is atomic for SSA and replaced by SMP, as upstream treats
unmarked lists.

Field paths are tuples of JSON field names; ``*`` stands for "any list item" and, in table
entries, for "any map value" (a map keyed by user data, such as ``attributes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Path = tuple[str, ...]

MAP, SET, ATOMIC = "map", "set", "atomic"


@dataclass(frozen=True)
class ListSpec:
    """The markers of one list field.

    ``merge_key`` set means SMP ``patchStrategy=merge`` on a list of objects; ``merges_primitives``
    means ``patchStrategy=merge`` on a list of scalars.  ``key_defaults`` gives values for SSA map
    keys the API server defaults (a container port's ``protocol``), so that an applied item without
    the key still matches the stored, defaulted one.
    """

    list_type: str = ATOMIC
    keys: tuple[str, ...] = ()
    merge_key: str | None = None
    merges_primitives: bool = False
    key_defaults: tuple[tuple[str, Any], ...] = ()


_ATOMIC = ListSpec()
_MEMO_LIMIT = 4096


@dataclass(frozen=True)
class ListTypes:
    """Per kind: for each list field path (e.g. ``('spec','containers')``, with ``'*'`` for list
    items and map values, e.g. ``('spec','containers','*','env')``) its SSA list type (``'map'``
    with keys, ``'set'``, or ``'atomic'``) and its strategic-merge strategy (merge key / ``'merge'``
    for primitives / replace)."""

    fields: Mapping[Path, ListSpec] = field(default_factory=dict, hash=False)
    # Answers to list_spec by walked path: a path missing from ``fields`` (an atomic list, or a
    # map value matched by a '*' pattern) would otherwise scan the whole table on every write.
    # ``fields`` is never changed after construction, so the answers never go stale; walked
    # paths hold user map keys, so the memo is bounded.
    _found: dict[Path, ListSpec] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def list_spec(self, path: Path) -> ListSpec:
        """All markers of the list at ``path`` (atomic / replace when unknown)."""
        spec = self._found.get(path)
        if spec is None:
            spec = self._lookup(path)
            if len(self._found) < _MEMO_LIMIT:
                self._found[path] = spec
        return spec

    def _lookup(self, path: Path) -> ListSpec:
        spec = self.fields.get(path)
        if spec is not None:
            return spec
        # Table entries may use '*' for map values, where the walked path has the real map key.
        for pattern, spec in self.fields.items():
            if len(pattern) == len(path) and all(p in ("*", q) for p, q in zip(pattern, path, strict=True)):
                return spec
        return _ATOMIC

    def list_type(self, path: Path) -> tuple[str, tuple[str, ...]]:
        """``('map', keys)``, ``('set', ())`` or ``('atomic', ())``."""
        spec = self.list_spec(path)
        return spec.list_type, spec.keys

    def merge_key(self, path: Path) -> str | None:
        """The SMP ``patchMergeKey`` of a list of objects, or None."""
        return self.list_spec(path).merge_key

    def merges_primitives(self, path: Path) -> bool:
        """True when SMP unions this list of scalars instead of replacing it."""
        return self.list_spec(path).merges_primitives
