"""``coordination.k8s.io/v1`` Lease: leader election and node heartbeats (``kube-node-lease``)."""

from typing import ClassVar

from fakeapi.models.base import VALUE_STRUCT, Int32, KubeModel, MicroTime, TopLevel, opt
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.coordination.v1"


class LeaseSpec(KubeModel):
    """Who holds the lease and until when."""

    holder_identity: str | None = opt("Current holder.")
    lease_duration_seconds: Int32 | None = opt("How long candidates wait before forcing acquisition.")
    acquire_time: MicroTime | None = opt("When the current holder acquired the lease.")
    renew_time: MicroTime | None = opt("When the holder last renewed the lease.")
    lease_transitions: Int32 | None = opt("How often the lease changed holders.")
    strategy: str | None = opt("Coordinated leader election strategy (OldestEmulationVersion).")
    preferred_holder: str | None = opt("Signals to the holder that another should take over.")


class Lease(TopLevel):
    """A lease."""

    gvk: ClassVar[tuple[str, str, str]] = ("coordination.k8s.io", "v1", "Lease")
    api_version: str | None = opt("coordination.k8s.io/v1")
    kind: str | None = opt("Lease")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: LeaseSpec | None = opt("The lease.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Lease,)}
