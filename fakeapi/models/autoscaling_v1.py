"""``autoscaling/v1`` Scale: the body of every ``.../scale`` subresource (not a stored kind)."""

from typing import ClassVar

from fakeapi.models.base import Int32, KubeModel, TopLevel, opt, req
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.autoscaling.v1"


class ScaleStatus(KubeModel):
    """ScaleStatus represents the current status of a scale subresource."""

    replicas: Int32 = req('replicas is the actual number of observed instances of the scaled object.')
    selector: str | None = opt('selector is the label query over pods that should match the replicas count.')


class ScaleSpec(KubeModel):
    """ScaleSpec describes the attributes of a scale subresource."""

    replicas: Int32 | None = opt('replicas is the desired number of instances for the scaled object.')


class Scale(TopLevel):
    """Scale represents a scaling request for a resource."""

    gvk: ClassVar[tuple[str, str, str]] = ('autoscaling', 'v1', 'Scale')
    api_version: str | None = opt('autoscaling/v1')
    kind: str | None = opt('Scale')
    metadata: ObjectMeta | None = opt('metadata is the standard object metadata; More info:...')
    spec: ScaleSpec | None = opt('spec defines the behavior of the scale.')
    status: ScaleStatus | None = opt('status is the current status of the scale.')
