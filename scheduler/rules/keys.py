"""Object keys as client-go's ``MetaNamespaceKeyFunc`` builds them: ``namespace/name``, or
``name`` for cluster-scoped objects.  Informer caches, indexes and messages all use this form."""

from __future__ import annotations


def key_for(namespace: str | None, name: str) -> str:
    """The key of object ``name`` in ``namespace`` (None or "" for cluster-scoped kinds)."""
    return f"{namespace}/{name}" if namespace else name


def object_key(obj: dict) -> str:
    """The key of ``obj`` from its metadata."""
    meta = obj.get("metadata") or {}
    return key_for(meta.get("namespace"), meta["name"])
