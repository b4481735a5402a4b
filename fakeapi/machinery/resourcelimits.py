"""``resource.k8s.io/v1`` size limits, as upstream declares them beside the types
(``k8s.io/api/resource/v1/types.go``): the one source for the API's validation, the CEL cost
estimator's bounds on the ``device`` variable and the control plane.
"""

from __future__ import annotations

# DriverNameMaxLength (CSI's), which also bounds the domain of a qualified attribute name
# (DeviceMaxDomainLength).
DRIVER_NAME_MAX = DOMAIN_MAX = 63
# PoolNameMaxLength (a DNS subdomain), DeviceMaxIDLength (the C identifier of an attribute or
# capacity name), DeviceAttributeMaxValueLength (a string or version attribute).
POOL_NAME_MAX, ID_MAX, ATTRIBUTE_VALUE_MAX = 253, 32, 64
# ResourceSliceMaxAttributesAndCapacitiesPerDevice.
ATTRIBUTES_AND_CAPACITIES_MAX = 32
# ResourceSliceMaxDevices, and with taints or counters (ResourceSliceMaxDevicesWithTaintsOrConsumesCounters).
DEVICES_MAX, DEVICES_MAX_WITH_TAINTS_OR_COUNTERS = 128, 64
# ResourceSliceMaxCounterSets, ResourceSliceMaxCountersPerCounterSet,
# ResourceSliceMaxDeviceCounterConsumptionsPerDevice.
COUNTER_SETS_MAX, COUNTERS_PER_SET_MAX, CONSUMES_COUNTERS_MAX = 8, 32, 2
# DeviceTaintsMaxLength, DeviceTolerationsMaxLength.
TOLERATIONS_MAX = TAINTS_MAX = 16
# DeviceRequestsMaxSize, FirstAvailableDeviceRequestMaxSize, DeviceSelectorsMaxSize,
# DeviceConstraintsMaxSize, DeviceConfigMaxSize, AllocationResultsMaxSize.
REQUESTS_MAX = 32
SUBREQUESTS_MAX = 8
SELECTORS_MAX = 32
CONSTRAINTS_MAX = CONFIG_MAX = 32
RESULTS_MAX = 32
# OpaqueParametersMaxLength, BindingConditionsMaxSize (and BindingFailureConditionsMaxSize).
OPAQUE_PARAMETERS_MAX = 10 * 1024
BINDING_CONDITIONS_MAX = 4
# ResourceClaimReservedForMaxSize: at most this many consumers in claim.status.reservedFor.
RESERVED_FOR_MAX_SIZE = 256
