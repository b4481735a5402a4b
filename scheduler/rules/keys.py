"""Object keys as client-go's ``MetaNamespaceKeyFunc`` builds them: ``namespace/name``, or
``name`` for cluster-scoped objects.  Informer caches, indexes and messages all use this form.
And a device's key, ``driver/pool/device``."""

from __future__ import annotations

DeviceID = tuple[str, str, str]  # (driver, pool, device)


def key_for(namespace: str | None, name: str) -> str:
    """The key of object ``name`` in ``namespace`` (None or "" for cluster-scoped kinds)."""
    return f"{namespace}/{name}" if namespace else name


def object_key(obj: dict) -> str:
    """The key of ``obj`` from its metadata."""
    meta = obj.get("metadata") or {}
    return key_for(meta.get("namespace"), meta["name"])


def device_id_text(device_id: DeviceID) -> str:
    """``driver/pool/device``."""
    return "/".join(device_id)
