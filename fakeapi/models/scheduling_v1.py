"""``scheduling.k8s.io/v1`` PriorityClass: a name for a pod priority, and whether it may preempt."""

from typing import ClassVar

from fakeapi.models.base import Int32, TopLevel, opt, req
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.scheduling.v1"


class PriorityClass(TopLevel):
    """A mapping from a priority class name to the integer priority pods of that class get."""

    gvk: ClassVar[tuple[str, str, str]] = ("scheduling.k8s.io", "v1", "PriorityClass")
    api_version: str | None = opt("scheduling.k8s.io/v1")
    kind: str | None = opt("PriorityClass")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    value: Int32 = req("The priority pods of this class get; higher is more important. At most 1000000000 for "
                       "user classes; immutable.")
    global_default: bool | None = opt("Pods without a priorityClassName get this class; at most one class may "
                                      "set it.")
    description: str | None = opt("When this class should be used.")
    preemption_policy: str | None = opt("Never or PreemptLowerPriority (default); immutable.")


MODELS: dict[str, type[TopLevel]] = {"PriorityClass": PriorityClass}
