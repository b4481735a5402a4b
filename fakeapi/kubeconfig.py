"""Write a kubeconfig pointing at a fakeapi server."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

CONTEXT = "default"


def kubeconfig_text(url: str, namespace: str = "default") -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {"server": url}}],
        "users": [{"name": CONTEXT, "user": {"token": "fakeapi"}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}],
        "current-context": CONTEXT,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write_kubeconfig(path: str | os.PathLike[str], url: str) -> Path:
    """Write atomically (rename), so a watcher of the file never reads half of it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(kubeconfig_text(url))
    tmp.replace(target)
    return target
