"""Subresources with semantics of their own, each a small handler declared on its kind.

``status`` is the generic pipeline's (a write that changes status only); ``pods/binding`` and
``namespaces/{name}/finalize`` are upstream's ``BindingREST`` and ``FinalizeREST``: they change
one field of the parent directly, without its strategy, and commit through the pipeline's tail.
``certificatesigningrequests/approval`` is the conditions of a CSR.
``…/scale`` is a view of a workload as an ``autoscaling/v1`` Scale whose writes set
``spec.replicas``; ``pods/eviction`` deletes a pod unless a PodDisruptionBudget forbids it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fakeapi.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    StatusError,
    TooManyRequests,
    conflict,
    invalid,
    invalid_object,
    not_supported,
    required,
    success_status,
)
from fakeapi.machinery.jsoncopy import deep_copy
from fakeapi.machinery.selectors import SelectorError, label_selector_from_dict
from fakeapi.machinery.timestamps import now_rfc3339
from fakeapi.registry.reads import Reader
from fakeapi.registry.resource import ResourceType, Subresource
from fakeapi.registry.writes import WriteOptions, Writer


def named_as(body: dict[str, Any], namespace: str, name: str, old: dict[str, Any] | None = None) -> dict[str, Any]:
    """A subresource's body named as admission names it: its parent's name and namespace (``old``,
    the view before, is :attr:`~fakeapi.registry.resource.Subresource.admitted_as`'s and unused)."""
    return {**body, "metadata": {**(body.get("metadata") or {}), "name": name, "namespace": namespace}}


def bind_pod(writer: Writer, rt: ResourceType, namespace: str, name: str, binding: dict[str, Any],
             opts: WriteOptions) -> dict[str, Any]:
    """``POST pods/{name}/binding``: assign an unbound, live pod to ``target.name``."""
    if (binding.get("metadata") or {}).get("name") != name:
        raise BadRequest("name in URL does not match name in Binding object")
    target = binding.get("target") or {}
    node = target.get("name")
    if not node:
        raise invalid_object("Binding", "", name, [required("target.name")])
    if target.get("kind") not in (None, "", "Node"):
        raise invalid_object("Binding", "", name, [not_supported("target.kind", target["kind"], ["Node", "<empty>"])])
    pod = writer.reads.get(rt, namespace, name)
    uid = (binding.get("metadata") or {}).get("uid")
    if uid and uid != pod["metadata"]["uid"]:
        raise Conflict(f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                       f"{pod['metadata']['uid']}")
    if pod["metadata"].get("deletionTimestamp"):
        raise conflict("pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned to a host")
    current = (pod.get("spec") or {}).get("nodeName")
    if current:
        raise conflict("pods/binding", "", name, f'pod {name} is already assigned to node "{current}"')
    # A binding leaves managedFields as they were (upstream's binding storage bypasses the field
    # manager).  Only the objects it changes are new (the store sets the resourceVersion in
    # metadata); the rest is the stored pod's, which no write edits in place.
    status = pod.get("status") or {}
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now_rfc3339()})
    new = {**pod, "metadata": dict(pod["metadata"]), "spec": {**pod["spec"], "nodeName": node},
           "status": {**status, "conditions": conditions}}
    writer.commit_update(rt, pod, new, opts.dry_run)
    return success_status(201)


def finalize_namespace(writer: Writer, rt: ResourceType, namespace: str, name: str, body: dict[str, Any],
                       opts: WriteOptions) -> dict[str, Any]:
    """``PUT namespaces/{name}/finalize``: set ``spec.finalizers``; an emptied, deleting namespace goes."""
    old = writer.reads.get(rt, namespace, name)
    new = deep_copy(old)
    spec = new.setdefault("spec", {})
    finalizers = list((body.get("spec") or {}).get("finalizers") or [])
    if finalizers:
        spec["finalizers"] = finalizers
    else:  # an empty list is not stored (omitempty)
        spec.pop("finalizers", None)
    return writer.commit_update(rt, old, new, opts.dry_run)


STATUS = Subresource("status", ("get", "patch", "update"))
BINDING = Subresource("binding", ("create",), kind="Binding", handler=bind_pod)
FINALIZE = Subresource("finalize", ("update",), handler=finalize_namespace)
# CertificateSigningRequests are approved or denied here: a write changes status.conditions only.
APPROVAL = Subresource("approval", ("get", "patch", "update"), scope=("status", "conditions"))


# -- scale (Deployment, ReplicaSet, StatefulSet) ------------------------------------------------

def scale_view(reads: Reader, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
    """``GET …/scale``: the ``autoscaling/v1`` Scale of a workload (upstream's ``ScaleREST``)."""
    return _scale_of(reads.get(rt, namespace, name))


def _scale_of(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    try:
        selector = str(label_selector_from_dict(spec.get("selector")))
    except SelectorError:
        selector = ""
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": spec.get("replicas", 0)},
            "status": {"replicas": status.get("replicas", 0), "selector": selector}}


def update_scale(writer: Writer, rt: ResourceType, namespace: str, name: str, scale: dict[str, Any],
                 opts: WriteOptions) -> dict[str, Any]:
    """``PUT …/scale`` (and PATCH through the view): set ``spec.replicas`` of the parent."""
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise invalid_object("Scale", "autoscaling", name, [
            invalid("spec.replicas", replicas, "must be greater than or equal to 0")])
    obj = deep_copy(writer.reads.get(rt, namespace, name))
    rv = (scale.get("metadata") or {}).get("resourceVersion")
    if rv:
        obj["metadata"]["resourceVersion"] = rv
    obj.setdefault("spec", {})["replicas"] = replicas
    updated, _ = writer.update(rt, namespace, name, obj, replace(opts, subresource="", policies=False))
    return _scale_of(updated)


def scale_admitted(scale: dict[str, Any], namespace: str, name: str, old: dict[str, Any] | None) -> dict[str, Any]:
    """The Scale admission judges, as upstream's scale storage hands it over: the parent's scale
    before the write (``old``) with the replicas asked for."""
    before = old or {}
    return {**before, "spec": {**(before.get("spec") or {}), "replicas": (scale.get("spec") or {}).get("replicas", 0)}}


SCALE = Subresource("scale", ("get", "patch", "update"), kind="Scale", handler=update_scale, view=scale_view,
                    admitted_as=scale_admitted, api_version="autoscaling/v1")


# -- pods/eviction (policy/v1 Eviction, upstream's EvictionREST) ----------------------------------

EVICTION_BLOCKED = "Cannot evict pod as it would violate the pod's disruption budget."
MAX_DISRUPTED_PODS = 2000


def _is_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _matching_budgets(writer: Writer, pod: dict[str, Any]) -> tuple[ResourceType, list[dict[str, Any]]]:
    budgets = writer.kinds.by_plural("policy", "poddisruptionbudgets")
    assert budgets is not None  # declared in kinds.py beside pods/eviction
    labels = pod["metadata"].get("labels") or {}
    matching = []
    for pdb in writer.reads.items(budgets, pod["metadata"]["namespace"]):
        selector = (pdb.get("spec") or {}).get("selector")
        try:
            if selector is not None and label_selector_from_dict(selector).matches(labels):
                matching.append(pdb)
        except SelectorError:
            continue
    return budgets, matching


def _blocked(pdb: dict[str, Any], cause: str) -> TooManyRequests:
    return TooManyRequests(EVICTION_BLOCKED, details={"causes": [{"reason": "DisruptionBudget", "message": cause}]})


def _take_disruption(writer: Writer, budgets: ResourceType, pdb: dict[str, Any], pod_name: str,
                     dry_run: bool) -> None:
    """``checkAndDecrement``: spend one allowed disruption of ``pdb`` on ``pod_name`` or refuse."""
    meta, status = pdb["metadata"], pdb.get("status") or {}
    name = meta["name"]
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0):
        raise _blocked(pdb, f"The disruption budget {name} is still being processed by the server.")
    allowed = status.get("disruptionsAllowed") or 0
    if allowed < 0:
        raise Forbidden("pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise Forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        raise _blocked(pdb, f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy pods "
                            f"and has {status.get('currentHealthy', 0)} currently")
    if dry_run:
        return
    new = deep_copy(pdb)
    new_status = new.setdefault("status", {})
    new_status["disruptionsAllowed"] = allowed - 1
    new_status.setdefault("disruptedPods", {})[pod_name] = now_rfc3339()
    conditions = [c for c in new_status.get("conditions") or [] if c.get("type") != "DisruptionAllowed"]
    old = next((c for c in new_status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    sufficient = allowed - 1 > 0
    state = "True" if sufficient else "False"
    conditions.append({"type": "DisruptionAllowed", "status": state,
                       "reason": "SufficientPods" if sufficient else "InsufficientPods", "message": "",
                       "observedGeneration": meta.get("generation"),
                       "lastTransitionTime": old["lastTransitionTime"] if old and old.get("status") == state
                       else now_rfc3339()})
    new_status["conditions"] = conditions
    writer.update(budgets, meta["namespace"], name, new, WriteOptions(manager="fakeapi-eviction",
                                                                        subresource="status", policies=False))


def evict_pod(writer: Writer, rt: ResourceType, namespace: str, name: str, eviction: dict[str, Any],
              opts: WriteOptions) -> dict[str, Any]:
    """``POST pods/{name}/eviction``: delete the pod unless a PodDisruptionBudget forbids it (429)."""
    pod = writer.reads.get(rt, namespace, name)
    options = dict(eviction.get("deleteOptions") or {})
    phase = (pod.get("status") or {}).get("phase")
    ignores_budget = phase in ("Succeeded", "Failed", "Pending") or pod["metadata"].get("deletionTimestamp")
    if not ignores_budget:
        budgets, matching = _matching_budgets(writer, pod)
        if len(matching) > 1:
            raise StatusError("This pod has more than one PodDisruptionBudget, which the eviction subresource "
                              "does not support.")
        if matching:
            pdb = matching[0]
            spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
            healthy_budget = (status.get("currentHealthy") or 0) >= (status.get("desiredHealthy") or 0) > 0
            unhealthy_goes = not _is_ready(pod) and (spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                                                     or healthy_budget)
            if not unhealthy_goes:
                _take_disruption(writer, budgets, pdb, name, opts.dry_run)
    if not opts.dry_run and not pod["metadata"].get("deletionTimestamp"):
        marked = deep_copy(pod)
        conditions = [c for c in (marked.setdefault("status", {}).get("conditions") or [])
                      if c.get("type") != "DisruptionTarget"]
        conditions.append({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                           "message": "Eviction API: evicting", "lastTransitionTime": now_rfc3339()})
        marked["status"]["conditions"] = conditions
        writer.update(rt, namespace, name, marked, WriteOptions(manager="fakeapi-eviction", subresource="status",
                                                                policies=False))
    writer.delete(rt, namespace, name, options, opts.dry_run, policies=False)
    return success_status(201)


EVICTION = Subresource("eviction", ("create",), kind="Eviction", handler=evict_pod, api_version="policy/v1")


# What reaches a pod's containers.  fakeapi runs none: the HTTP layer serves pods/log from the pod
# itself (fakeapi.server.connect) and answers exec, attach and portforward with a Status saying so.
LOG = Subresource("log", ("get",), connect=True)
EXEC = Subresource("exec", ("create", "get"), kind="PodExecOptions", connect=True)
ATTACH = Subresource("attach", ("create", "get"), kind="PodAttachOptions", connect=True)
PORT_FORWARD = Subresource("portforward", ("create", "get"), kind="PodPortForwardOptions", connect=True)
# Debug containers are added through their own endpoint, which changes nothing else of the pod.
EPHEMERAL_CONTAINERS = Subresource("ephemeralcontainers", ("get", "patch", "update"),
                                   scope=("spec", "ephemeralContainers"))
