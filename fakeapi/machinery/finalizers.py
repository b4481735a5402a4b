"""Finalizers of built-in kinds that the API server and the control plane both name: one source.

They live here rather than beside the models because importing :mod:`fakeapi.models` makes every
pydantic model class (~130 ms with bytecode cached), which the control plane, a client of the
wire, never needs.
"""

# Set by the scheduler on a ResourceClaim it allocates; the allocation is the scheduler's to clear.
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
# Keeps a PodGroup while claims are reserved for it (KEP-5729); added by admission.
PODGROUP_PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"
