"""The informer's local copy of the API: an indexed store and a generic read-only lister.

Like client-go's ``cache.Indexer``, objects are keyed ``namespace/name`` (``name`` for
cluster-scoped kinds) and any number of named indexes map a computed value to keys.  Objects
are stored as received and must be treated as read-only by everyone (copy before mutating).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fakeapi.scheduler.rules.keys import key_for, object_key

IndexFunc = Callable[[dict], Iterable[str]]

NAMESPACE_INDEX = "namespace"


def _namespace_of(obj: dict) -> Iterable[str]:
    return [(obj.get("metadata") or {}).get("namespace") or ""]


class Store:
    """Thread-free indexed map of key -> object; mutated only by the owning informer.

    Indexes registered with the same function (several loops index pods by their claims) share
    one mapping, computed once per change; an update whose index values did not change (most
    status writes) leaves that index alone.  Each key's values are kept beside the object, so an
    update runs the index functions on the new object only (not again on the one it replaces).
    """

    def __init__(self) -> None:
        self._items: dict[str, dict] = {}
        # index name -> index value -> set of keys; names of one function share the mapping
        namespaces: dict[str, set[str]] = {}
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE_INDEX: namespaces}
        # one (function, mapping) per distinct index function
        self._computed: list[tuple[IndexFunc, dict[str, set[str]]]] = [(_namespace_of, namespaces)]
        # key -> its values in each computed index, in ``_computed`` order
        self._values: dict[str, tuple[tuple[str, ...], ...]] = {}

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Register an index; existing objects are indexed immediately."""
        if name in self._indices:
            raise ValueError(f"index {name!r} already exists")
        for known, index in self._computed:
            if known is fn:
                self._indices[name] = index
                return
        index = self._indices[name] = {}
        self._computed.append((fn, index))
        for key, obj in self._items.items():
            values = tuple(fn(obj))
            _add(index, key, values)
            self._values[key] += (values,)

    def has_index(self, name: str) -> bool:
        return name in self._indices

    def get(self, key: str) -> dict | None:
        return self._items.get(key)

    def items(self) -> list[tuple[str, dict]]:
        return list(self._items.items())

    def __len__(self) -> int:
        return len(self._items)

    def upsert(self, obj: dict) -> dict | None:
        """Store ``obj``; return the previous version (None when new)."""
        key = object_key(obj)
        old = self._items.get(key)
        self._items[key] = obj
        fresh = tuple([tuple(fn(obj)) for fn, _ in self._computed])
        before = self._values.get(key)
        self._values[key] = fresh
        if before is None:
            for (_, index), values in zip(self._computed, fresh, strict=True):
                _add(index, key, values)
            return None
        for (_, index), values, old_values in zip(self._computed, fresh, before, strict=True):
            if values != old_values:
                _discard(index, key, set(old_values).difference(values))
                _add(index, key, values)
        return old

    def remove(self, key: str) -> dict | None:
        old = self._items.pop(key, None)
        if old is not None:
            for (_, index), values in zip(self._computed, self._values.pop(key), strict=True):
                _discard(index, key, values)
        return old

    def by_index(self, index_name: str, value: str) -> list[dict]:
        try:
            keys = self._indices[index_name].get(value, ())
        except KeyError:
            raise KeyError(f"no index named {index_name!r}") from None
        return [self._items[k] for k in sorted(keys)]

    def index_size(self, index_name: str, value: str) -> int:
        """How many objects :meth:`by_index` would return, without building the list."""
        return len(self._indices[index_name].get(value, ()))


def _add(index: dict[str, set[str]], key: str, values: Iterable[str]) -> None:
    for value in values:
        index.setdefault(value, set()).add(key)


def _discard(index: dict[str, set[str]], key: str, values: Iterable[str]) -> None:
    for value in values:
        keys = index.get(value)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del index[value]


class Lister:
    """Read-only view of a :class:`Store` (client-go's ``GenericLister``)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, namespace: str | None, name: str) -> dict | None:
        """The cached object or None; ``namespace`` None/"" for cluster-scoped kinds."""
        return self._store.get(key_for(namespace, name))

    def list(self, namespace: str | None = None) -> list[dict]:
        """All cached objects, or those of one namespace, in key order."""
        if namespace:
            return self._store.by_index(NAMESPACE_INDEX, namespace)
        return [obj for _, obj in sorted(self._store.items())]

    def by_index(self, index_name: str, value: str) -> list[dict]:
        return self._store.by_index(index_name, value)

    def count_index(self, index_name: str, value: str) -> int:
        """The number of objects :meth:`by_index` would return (constant time)."""
        return self._store.index_size(index_name, value)
