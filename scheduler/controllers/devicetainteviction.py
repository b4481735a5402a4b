"""Device taint eviction (kube-controller-manager's ``device-taint-eviction-controller``, KEP-5055).

Pods whose allocated devices carry a NoExecute taint they do not tolerate are evicted: at the
taint's ``timeAdded``, or ``tolerationSeconds`` later (see :mod:`fakeapi.scheduler.rules.devicetaints`).
Eviction is upstream's: an Event ``DeviceTaintManagerEviction`` ("Marking for deletion"), a
``DisruptionTarget`` condition (reason ``DeletionByDeviceTaintManager``) and a delete with the
pod's UID as precondition and its own grace period.  A pod whose eviction is called off before
it is due (the taint removed or tolerated) gets a "Cancelling deletion" Event.

Pods of a pod group count through their group's claim (KEP-5729): the claim is reserved for
the group, and every pod of the group that uses it goes.

Each DeviceTaintRule's status gets an ``EvictionInProgress`` condition, written by server-side
apply at most every 10 s of the control plane's clock while it changes: pods pending eviction,
evicted ones, and for an effect of None what NoExecute would do.  Times come from the control
plane's clock, so a test with a ``ManualClock`` moves past ``tolerationSeconds`` with
``advance``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fakeapi.scheduler.client import DEVICE_TAINT_RULES, PODS, RESOURCE_CLAIMS, RESOURCE_SLICES, ApiClient
from fakeapi.scheduler.clock import Clock
from fakeapi.scheduler.controllers.taintdeletion import disruption_condition, mark_and_delete
from fakeapi.scheduler.events import EventRecorder
from fakeapi.scheduler.informers import InformerFactory
from fakeapi.scheduler.rules import claims as rc
from fakeapi.scheduler.rules.devicetaints import (
    NO_EXECUTE,
    Eviction,
    TaintedDevices,
    allocated_devices,
    claim_eviction,
    result_device_id,
    rule_effect,
    rule_matches,
)
from fakeapi.scheduler.rules.keys import DeviceID, device_id_text, object_key
from fakeapi.scheduler.rules.pods import is_assigned, node_of
from fakeapi.scheduler.rules.workloads import parse_time
from fakeapi.scheduler.workqueue import WorkQueue, process

from fakeapi.errors import Conflict, NotFound

NAME = "device-taint-eviction-controller"
RULE_STATUS_PERIOD = 10.0
EVICTION_REASON = "DeviceTaintManagerEviction"
DISRUPTION = disruption_condition("DeletionByDeviceTaintManager",
                                  "Device Taint manager: deleting due to NoExecute taint")
CONDITION_TYPE = "EvictionInProgress"

_CLAIM_INDEX = "device-taint-eviction/claim"
_DEVICE_INDEX = "device-taint-eviction/device"

# Work items: ("pod", namespace, name) or ("rule", "", name).
Item = tuple[str, str, str]


def _device_keys(claim: dict) -> list[str]:
    return [device_id_text(result_device_id(r)) for r in allocated_devices(claim)]


def _plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many.format(count)


def rule_condition(rule: Mapping[str, Any], *, pending_pods: int = 0, pending_namespaces: int = 0,
                   evicted: int = 0, slice_devices: int = 0, allocated_devices: int = 0) -> dict[str, Any]:
    """The rule's ``EvictionInProgress`` condition without ``lastTransitionTime``, worded as upstream's."""
    effect = rule_effect(rule)
    status, message = "False", ""
    if effect == NO_EXECUTE:
        if pending_pods:
            status, reason = "True", "PodsPendingEviction"
            message = (_plural(pending_pods, "1 pod needs", "{} pods need") + " to be evicted in "
                       + _plural(pending_namespaces, "1 namespace.", "{} different namespaces."))
        else:
            reason = "Completed" if evicted else "NotStarted"
    elif effect == "None":
        reason = "NoEffect"
        message = (_plural(slice_devices, "1 published device", "{} published devices") + " selected. "
                   + _plural(allocated_devices, "1 allocated device", "{} allocated devices") + " selected. "
                   + _plural(pending_pods, "1 pod", "{} pods") + " would be evicted in "
                   + _plural(pending_namespaces, "1 namespace ", "{} different namespaces ")
                   + "if the effect was NoExecute. This information will not be updated again. "
                     "Recreate the DeviceTaintRule to trigger an update.")
    else:
        reason, message = "OtherEffect", "Eviction only happens for the NoExecute effect."
    if evicted:
        message += ((" " if message else "") + _plural(evicted, "1 pod", "{} pods")
                    + " evicted since starting the controller.")
    return {"type": CONDITION_TYPE, "status": status, "reason": reason, "message": message,
            "observedGeneration": (rule.get("metadata") or {}).get("generation", 0)}


class DeviceTaintEvictionController:
    """Evicts pods using devices with untolerated NoExecute taints; reports on DeviceTaintRules."""

    def __init__(self, api: ApiClient, factory: InformerFactory, recorder: EventRecorder, clock: Clock) -> None:
        self._api = api
        self._recorder = recorder
        self._clock = clock
        self._queue: WorkQueue[Item] = WorkQueue(clock=clock)
        self._view = TaintedDevices()
        # Pods found tainted, by (namespace, name): their UID and eviction.
        self._due: dict[tuple[str, str], tuple[str, Eviction]] = {}
        # Pods evicted per DeviceTaintRule UID since the controller started.
        self._evicted: dict[str, int] = {}
        self._pods = factory.informer(PODS)
        self._claims = factory.informer(RESOURCE_CLAIMS)
        self._rules = factory.informer(DEVICE_TAINT_RULES)
        self._pods.add_index(_CLAIM_INDEX, rc.pod_claim_keys)
        self._claims.add_index(_DEVICE_INDEX, _device_keys)
        factory.informer(RESOURCE_SLICES).add_event_handler(
            lambda s: self._on_slice(None, s), self._on_slice, lambda s: self._on_slice(s, None))
        self._rules.add_event_handler(lambda r: self._on_rule(None, r), self._on_rule, lambda r: self._on_rule(r, None))
        self._claims.add_event_handler(lambda c: self._on_claim(None, c), self._on_claim,
                                       lambda c: self._on_claim(c, None))
        self._pods.add_event_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)

    async def run(self) -> None:
        """Process pods and rules until cancelled."""
        await process(self._queue, self._sync, name=NAME, workers=4)

    # -- event handlers: decide what to look at again ----------------------------------------

    def _watching(self) -> bool:
        return bool(self._due) or self._view.any_no_execute

    def _enqueue_pod(self, pod: dict) -> None:
        meta = pod["metadata"]
        self._queue.add(("pod", meta["namespace"], meta["name"]))

    def _enqueue_users(self, claim: dict) -> None:
        for pod in self._pods.lister.by_index(_CLAIM_INDEX, object_key(claim)):
            self._enqueue_pod(pod)

    def _enqueue_device_users(self, devices: Iterable[DeviceID]) -> None:
        for device_id in devices:
            for claim in self._claims.lister.by_index(_DEVICE_INDEX, device_id_text(device_id)):
                self._enqueue_users(claim)

    def _on_slice(self, old: dict | None, new: dict | None) -> None:
        self._enqueue_device_users(self._view.set_slice(old, new))

    def _on_rule(self, old: dict | None, new: dict | None) -> None:
        rule = new if new is not None else old
        assert rule is not None
        meta = rule["metadata"]
        if old is None:
            self._queue.add(("rule", "", meta["name"]))  # a status at least once
        if new is None:
            self._view.remove_rule(meta["name"])
            self._evicted.pop(meta.get("uid", ""), None)
        else:
            self._view.set_rule(new)
        if old is not None and new is not None and old.get("spec") == new.get("spec"):
            return
        # Rule changes are rare: look again at the users of every device either version selects.
        changed = [r for r in (old, new) if r is not None]
        self._enqueue_device_users({device_id for claim in self._claims.lister.list()
                                    for device_id in map(result_device_id, allocated_devices(claim))
                                    if any(rule_matches(r, device_id) for r in changed)})

    def _on_claim(self, old: dict | None, new: dict | None) -> None:
        if not self._watching():
            return
        if old is not None and new is not None and (old.get("status") or {}) == (new.get("status") or {}):
            return
        claim = new if new is not None else old
        assert claim is not None
        self._enqueue_users(claim)

    def _on_pod_add(self, pod: dict) -> None:
        if self._watching() and is_assigned(pod) and (pod.get("spec") or {}).get("resourceClaims"):
            self._enqueue_pod(pod)

    def _on_pod_update(self, old: dict, pod: dict) -> None:
        # Pods change often; only binding and the claims they use matter here.
        if not self._watching() or not (pod.get("spec") or {}).get("resourceClaims"):
            return
        if (node_of(old) != node_of(pod)
                or (old.get("status") or {}).get("resourceClaimStatuses")
                != (pod.get("status") or {}).get("resourceClaimStatuses")):
            self._enqueue_pod(pod)

    def _on_pod_delete(self, pod: dict) -> None:
        meta = pod["metadata"]
        self._due.pop((meta["namespace"], meta["name"]), None)

    # -- what a pod's claims say ---------------------------------------------------------------

    def pod_eviction(self, pod: dict, simulate: Mapping[str, Any] | None = None) -> Eviction | None:
        """When ``pod`` must go because of its allocated claims' devices (upstream's
        ``podEvictionTime``), or None; ``simulate``: a rule to count as NoExecute."""
        if not is_assigned(pod):
            return None
        namespace = pod["metadata"]["namespace"]
        found: Eviction | None = None
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or ():
            try:
                name, check_owner = rc.pod_claim_name(pod, pod_claim)
            except ValueError:  # not generated yet, or unsupported: not tainted
                continue
            claim = self._claims.lister.get(namespace, name) if name else None
            if claim is None or not rc.is_allocated(claim) or not rc.claim_allows_pod(claim, pod):
                continue
            if check_owner and not rc.is_owned_by(claim, pod) and not rc.is_reserved_for_group_of(claim, pod):
                continue  # a claim of the same name generated for someone else
            eviction = claim_eviction(claim, lambda device_id: self._view.taints(device_id, simulate))
            if eviction is not None:
                found = eviction.earliest(found)
        return found

    # -- work ----------------------------------------------------------------------------------

    async def _sync(self, item: Item) -> None:
        kind, namespace, name = item
        if kind == "pod":
            await self._sync_pod(namespace, name)
        else:
            await self._sync_rule(name)

    async def _sync_pod(self, namespace: str, name: str) -> None:
        key = (namespace, name)
        pod = self._pods.lister.get(namespace, name)
        eviction = None
        if pod is not None and not pod["metadata"].get("deletionTimestamp"):
            eviction = self.pod_eviction(pod)
        if eviction is None:
            if self._due.pop(key, None) is not None and pod is not None:
                self._recorder.event(pod, "Normal", EVICTION_REASON, "Cancelling deletion")
            return
        assert pod is not None
        uid = pod["metadata"]["uid"]
        self._due[key] = (uid, eviction)
        for rule_name, _ in eviction.rules:
            self._queue.add(("rule", "", rule_name))
        delay = eviction.when - self._clock.now()
        if delay > 0:
            self._queue.add_after(("pod", namespace, name), delay)
            return
        await mark_and_delete(self._api, self._recorder, self._clock, namespace, name, uid, DISRUPTION,
                              (EVICTION_REASON, "Marking for deletion"))
        self._due.pop(key, None)
        for rule_name, rule_uid in eviction.rules:
            self._evicted[rule_uid] = self._evicted.get(rule_uid, 0) + 1
            # The status reads the cache: let it see the deletion first.
            self._queue.add_after(("rule", "", rule_name), RULE_STATUS_PERIOD)

    async def _sync_rule(self, name: str) -> None:
        rule = self._rules.lister.get(None, name)
        if rule is None:
            return
        meta = rule["metadata"]
        existing = next((c for c in (rule.get("status") or {}).get("conditions") or ()
                         if c.get("type") == CONDITION_TYPE), None)
        now = self._clock.now()
        if existing is not None and existing.get("observedGeneration") == meta.get("generation"):
            since = now - (parse_time(existing.get("lastTransitionTime")) or 0.0)
            if since < RULE_STATUS_PERIOD:
                self._queue.add_after(("rule", "", name), RULE_STATUS_PERIOD - since)
                return
        condition = rule_condition(rule, evicted=self._evicted.get(meta.get("uid", ""), 0), **self._counts(rule))
        if existing is not None and {k: existing.get(k) for k in condition} == condition:
            return
        condition["lastTransitionTime"] = self._clock.rfc3339()
        body = {"apiVersion": DEVICE_TAINT_RULES.api_version, "kind": "DeviceTaintRule",
                "metadata": {"name": name, "uid": meta.get("uid")}, "status": {"conditions": [condition]}}
        try:
            await self._api.patch(DEVICE_TAINT_RULES, None, name, body, patch_type="apply", subresource="status",
                                  field_manager=NAME, force=True, result=False)
        except (NotFound, Conflict):
            pass  # deleted or replaced meanwhile

    def _counts(self, rule: dict) -> dict[str, int]:
        """Pods pending eviction because of ``rule`` (and, for effect None, the devices it selects
        and the pods NoExecute would evict)."""
        effect = rule_effect(rule)
        if effect not in (NO_EXECUTE, "None"):
            return {}
        simulate = rule if effect == "None" else None
        ref = (rule["metadata"]["name"], rule["metadata"].get("uid", ""))
        claims = [c for c in self._claims.lister.list()
                  if any(rule_matches(rule, result_device_id(r)) for r in allocated_devices(c))]
        namespaces: list[str] = []
        seen: set[str] = set()
        for claim in claims:
            for pod in self._pods.lister.by_index(_CLAIM_INDEX, object_key(claim)):
                uid = pod["metadata"]["uid"]
                if uid in seen or pod["metadata"].get("deletionTimestamp"):
                    continue
                seen.add(uid)
                eviction = self.pod_eviction(pod, simulate)
                if eviction is not None and ref in eviction.rules:
                    namespaces.append(pod["metadata"]["namespace"])
        counts = {"pending_pods": len(namespaces), "pending_namespaces": len(set(namespaces))}
        if simulate is not None:
            counts["slice_devices"] = sum(1 for d in self._view.published() if rule_matches(rule, d))
            counts["allocated_devices"] = sum(1 for c in self._claims.lister.list() for r in allocated_devices(c)
                                              if rule_matches(rule, result_device_id(r)))
        return counts

