"""Subresources with semantics of their own, each a small handler declared on its kind.

``status`` is the generic pipeline's (a write that changes status only); ``pods/binding`` and
``namespaces/{name}/finalize`` are upstream's ``BindingREST`` and ``FinalizeREST``: they change
one field of the parent directly, without its strategy, and commit through the pipeline's tail.
"""

from __future__ import annotations

from typing import Any

from fakeapi.errors import Conflict, conflict, invalid_object, required, success_status
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.registry.resource import ResourceType, Subresource
from fakeapi.registry.writes import WriteOptions, Writer


def bind_pod(writer: Writer, rt: ResourceType, namespace: str, name: str, binding: dict[str, Any],
             opts: WriteOptions) -> dict[str, Any]:
    """``POST pods/{name}/binding``: assign an unbound, live pod to ``target.name``."""
    pod = writer.reads.get(rt, namespace, name)
    node = (binding.get("target") or {}).get("name")
    if not node:
        raise invalid_object("Binding", "", name, [required("target.name")])
    uid = (binding.get("metadata") or {}).get("uid")
    if uid and uid != pod["metadata"]["uid"]:
        raise Conflict(f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                       f"{pod['metadata']['uid']}")
    if pod["metadata"].get("deletionTimestamp"):
        raise conflict("pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned to a host")
    current = (pod.get("spec") or {}).get("nodeName")
    if current:
        raise conflict("pods/binding", "", name, f'pod {name} is already assigned to node "{current}"')
    new = deep_copy(pod)
    new["spec"]["nodeName"] = node
    conditions = [c for c in new.setdefault("status", {}).get("conditions") or []
                  if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now_rfc3339()})
    new["status"]["conditions"] = conditions
    writer.commit_update(rt, pod, new, opts.dry_run)
    return success_status(201)


def finalize_namespace(writer: Writer, rt: ResourceType, namespace: str, name: str, body: dict[str, Any],
                       opts: WriteOptions) -> dict[str, Any]:
    """``PUT namespaces/{name}/finalize``: set ``spec.finalizers``; an emptied, deleting namespace goes."""
    old = writer.reads.get(rt, namespace, name)
    new = deep_copy(old)
    new.setdefault("spec", {})["finalizers"] = list((body.get("spec") or {}).get("finalizers") or [])
    return writer.commit_update(rt, old, new, opts.dry_run)


STATUS = Subresource("status", ("get", "patch", "update"))
BINDING = Subresource("binding", ("create",), kind="Binding", handler=bind_pod)
FINALIZE = Subresource("finalize", ("update",), handler=finalize_namespace)
