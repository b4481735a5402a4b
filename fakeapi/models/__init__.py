"""Typed models of every served kind (pydantic v2), the one source of schema facts.

``MODELS`` maps (group, version, kind) to the model class of the whole object.  Each module
covers one group/version; :mod:`fakeapi.models.schema` derives decoding (strict unknown-field
detection, Go type checks) and the OpenAPI components from the same classes.
"""

from __future__ import annotations

from pydantic import BaseModel

from fakeapi.models import apiextensions_v1, core_v1, resource_v1, scheduling_v1alpha1, scheduling_v1beta1

MODELS: dict[tuple[str, str, str], type[BaseModel]] = {
    model.gvk: model
    for module in (core_v1, resource_v1, scheduling_v1beta1, scheduling_v1alpha1, apiextensions_v1)
    for model in module.MODELS.values()
}
