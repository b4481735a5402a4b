"""``resource.k8s.io/v1``: Dynamic Resource Allocation (structured parameters).

Field names, list markers and required-ness follow upstream ``k8s.io/api/resource/v1``.
"""

from typing import ClassVar

from fakeapi.models.base import (
    ATOMIC,
    SET,
    VALUE_STRUCT,
    Int64,
    KubeModel,
    Quantity,
    RawExtension,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.core_v1 import NodeSelector
from fakeapi.models.meta import Condition, ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.resource.v1"

# API constants, as upstream declares them beside the types; the size limits are in
# fakeapi.machinery.resourcelimits, below the CEL cost estimator, and the finalizer in
# fakeapi.machinery.finalizers, where the control plane reads it without importing the models.
GROUP, VERSION = "resource.k8s.io", "v1"


# --- selectors, configuration, tolerations -------------------------------------------------

class CELDeviceSelector(KubeModel):
    """A CEL expression over ``device`` (driver, attributes, capacity) that must evaluate to bool."""

    expression: str = req("The CEL expression; at most 10 Ki characters.")


class DeviceSelector(KubeModel):
    """One criterion a device must satisfy."""

    cel: CELDeviceSelector | None = opt("A CEL expression the device must match.")


class OpaqueDeviceConfiguration(KubeModel):
    """Driver-specific parameters, passed through to the driver unchanged."""

    driver: str = req("Name of the driver the parameters are for (DNS subdomain).")
    parameters: RawExtension = req("Arbitrary JSON object understood by the driver; at most 10 Ki.")


class DeviceClassConfiguration(KubeModel):
    """Configuration applied to every device allocated through a class."""

    opaque: OpaqueDeviceConfiguration | None = opt("Driver-specific configuration.")


class DeviceToleration(KubeModel):
    """Lets a request use devices carrying a matching taint."""

    key: str | None = opt("Taint key to match; empty with operator Exists matches every key.")
    operator: str | None = opt("Exists or Equal (default).")
    value: str | None = opt("Taint value to match; must be empty with Exists.")
    effect: str | None = opt("Taint effect to match (None, NoSchedule, NoExecute); empty = all.")
    toleration_seconds: Int64 | None = opt("How long a NoExecute taint is tolerated.")


class CapacityRequirements(KubeModel):
    """How much of a device's consumable capacity a request needs."""

    requests: dict[str, Quantity] | None = opt("Minimum amount per capacity name.")


class DeviceDerivedAttribute(KubeModel):
    """An attribute computed per device by a CEL expression (alpha, DRADerivedAttributes)."""

    name: str = req("Name of the derived attribute.")
    expression: str = req("CEL expression computing the value.")


# --- ResourceClaim spec --------------------------------------------------------------------

class ExactDeviceRequest(KubeModel):
    """A request for devices of one class."""

    device_class_name: str = req("DeviceClass the devices must belong to.")
    selectors: list[DeviceSelector] | None = opt("Extra criteria; all must match.", markers=ATOMIC)
    allocation_mode: str | None = opt("ExactCount (default) or All.")
    count: Int64 | None = opt("Number of devices for ExactCount; defaults to 1.")
    admin_access: bool | None = opt("Administrative access; needs the namespace admin-access label.")
    tolerations: list[DeviceToleration] | None = opt("Taints to tolerate.", markers=ATOMIC)
    capacity: CapacityRequirements | None = opt("Consumable capacity needed per device.")
    derived_attributes: list[DeviceDerivedAttribute] | None = opt(
        "Per-device computed attributes usable by constraints.", markers=ATOMIC)


class DeviceSubRequest(KubeModel):
    """One alternative of a ``firstAvailable`` request; like ExactDeviceRequest without adminAccess."""

    name: str = req("Name of the subrequest (DNS label), referenced as <request>/<subrequest>.")
    device_class_name: str = req("DeviceClass the devices must belong to.")
    selectors: list[DeviceSelector] | None = opt("Extra criteria; all must match.", markers=ATOMIC)
    allocation_mode: str | None = opt("ExactCount (default) or All.")
    count: Int64 | None = opt("Number of devices for ExactCount; defaults to 1.")
    tolerations: list[DeviceToleration] | None = opt("Taints to tolerate.", markers=ATOMIC)
    capacity: CapacityRequirements | None = opt("Consumable capacity needed per device.")
    derived_attributes: list[DeviceDerivedAttribute] | None = opt(
        "Per-device computed attributes usable by constraints.", markers=ATOMIC)


class DeviceRequest(KubeModel):
    """A named request: exactly one of ``exactly`` or ``firstAvailable``."""

    name: str = req("Name of the request (DNS label), unique within the claim.")
    exactly: ExactDeviceRequest | None = opt("The devices needed.")
    first_available: list[DeviceSubRequest] | None = opt(
        "Alternatives tried in order; the first satisfiable one is allocated.", markers=ATOMIC)


class DeviceConstraint(KubeModel):
    """A constraint across the devices of several requests."""

    requests: list[str] | None = opt("Requests it applies to; empty means all.", markers=ATOMIC)
    match_attribute: str | None = opt("Fully qualified attribute all devices must share.")
    distinct_attribute: str | None = opt("Fully qualified attribute whose values must all differ.")


class DeviceClaimConfiguration(KubeModel):
    """Configuration for the devices of some (or all) requests."""

    requests: list[str] | None = opt("Requests it applies to; empty means all.", markers=ATOMIC)
    opaque: OpaqueDeviceConfiguration | None = opt("Driver-specific configuration.")


class DeviceClaim(KubeModel):
    """The devices a claim asks for."""

    requests: list[DeviceRequest] | None = opt("Device requests; at most 32.", markers=ATOMIC)
    constraints: list[DeviceConstraint] | None = opt("Constraints across requests.", markers=ATOMIC)
    config: list[DeviceClaimConfiguration] | None = opt("Device configuration.", markers=ATOMIC)


class ResourceClaimSpec(KubeModel):
    """What is being requested and how to configure it; immutable."""

    devices: DeviceClaim | None = opt("The devices to allocate.")


# --- ResourceClaim status ------------------------------------------------------------------

class DeviceRequestAllocationResult(KubeModel):
    """One allocated device and the request it satisfies."""

    request: str = req("Request name, or <request>/<subrequest> for firstAvailable.")
    driver: str = req("Driver of the device.")
    pool: str = req("Pool of the device.")
    device: str = req("Device name within the pool.")
    admin_access: bool | None = opt("Copied from the request.")
    tolerations: list[DeviceToleration] | None = opt("Tolerations used at allocation.", markers=ATOMIC)
    binding_conditions: list[str] | None = opt("Copied from the device.", markers=ATOMIC)
    binding_failure_conditions: list[str] | None = opt("Copied from the device.", markers=ATOMIC)
    share_id: str | None = opt("Unique id of this share of a multi-allocatable device.",
                               alias="shareID")
    consumed_capacity: dict[str, Quantity] | None = opt("Capacity consumed by this allocation.")
    skip_node_operations: list[str] | None = opt("Node operations the kubelet skips (alpha).",
                                                 markers=SET)


class DeviceAllocationConfiguration(KubeModel):
    """Configuration recorded at allocation time, from the class or the claim."""

    source: str = req("FromClass or FromClaim.")
    requests: list[str] | None = opt("Requests it applies to; empty means all.", markers=ATOMIC)
    opaque: OpaqueDeviceConfiguration | None = opt("Driver-specific configuration.")


class DeviceAllocationResult(KubeModel):
    """The allocated devices and their configuration."""

    results: list[DeviceRequestAllocationResult] | None = opt("One entry per device.", markers=ATOMIC)
    config: list[DeviceAllocationConfiguration] | None = opt("Configuration, class first.",
                                                             markers=ATOMIC)


class AllocationResult(KubeModel):
    """Where and which devices were allocated; set once, may be cleared but never changed."""

    devices: DeviceAllocationResult | None = opt("The allocated devices.")
    node_selector: NodeSelector | None = opt("Nodes where the devices are available; nil = all.")
    allocation_timestamp: Time | None = opt("When the allocation was made.")


class ResourceClaimConsumerReference(KubeModel):
    """An object (pod or pod group) the claim is reserved for."""

    api_group: str | None = opt("API group of the consumer; empty for core.")
    resource: str = req("Resource type of the consumer, e.g. pods or podgroups.")
    name: str = req("Name of the consumer.")
    uid: str = req("UID of the consumer.")


class NetworkDeviceData(KubeModel):
    """Network details of an allocated device, reported by the driver."""

    interface_name: str | None = opt("Interface name in the pod.")
    ips: list[str] | None = opt("Assigned IPs in CIDR notation.", markers=ATOMIC)
    hardware_address: str | None = opt("MAC address.")


class AllocatedDeviceStatus(KubeModel):
    """Driver-reported status of one allocated device."""

    driver: str = req("Driver of the device.")
    pool: str = req("Pool of the device.")
    device: str = req("Device name.")
    share_id: str | None = opt("Share id for multi-allocatable devices.", alias="shareID")
    conditions: list[Condition] | None = opt("Device conditions.", markers=list_map("type"))
    data: RawExtension | None = opt("Arbitrary driver data.")
    network_data: NetworkDeviceData | None = opt("Network configuration of the device.")


class ResourceClaimStatus(KubeModel):
    """Allocation and reservation state of a claim."""

    allocation: AllocationResult | None = opt("Set once the claim is allocated.")
    reserved_for: list[ResourceClaimConsumerReference] | None = opt(
        "Consumers allowed to use the claim; at most 256.", markers=list_map("uid") | patch_merge("uid"))
    devices: list[AllocatedDeviceStatus] | None = opt(
        "Driver-reported device status.", markers=list_map("driver", "device", "pool", "shareID"))


class ResourceClaim(TopLevel):
    """A request for devices, allocated by the scheduler and reserved for its consumers."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "ResourceClaim")
    api_version: str | None = opt("resource.k8s.io/v1")
    kind: str | None = opt("ResourceClaim")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: ResourceClaimSpec = req("What is requested; immutable.")
    status: ResourceClaimStatus | None = opt("Allocation state; written via the status subresource.",
                                             markers=VALUE_STRUCT)


class ResourceClaimTemplateSpec(KubeModel):
    """The claim to create: its metadata (labels/annotations) and spec."""

    metadata: ObjectMeta | None = opt("Labels and annotations copied onto generated claims.")
    spec: ResourceClaimSpec = req("Spec copied verbatim into generated claims.")


class ResourceClaimTemplate(TopLevel):
    """A template from which one claim per pod (or pod group) is generated."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "ResourceClaimTemplate")
    api_version: str | None = opt("resource.k8s.io/v1")
    kind: str | None = opt("ResourceClaimTemplate")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: ResourceClaimTemplateSpec = req("The claim to generate; immutable.")


# --- DeviceClass ---------------------------------------------------------------------------

class DeviceClassSpec(KubeModel):
    """Selectors and configuration shared by all requests for the class."""

    selectors: list[DeviceSelector] | None = opt("Criteria every device of the class matches.",
                                                 markers=ATOMIC)
    config: list[DeviceClassConfiguration] | None = opt("Configuration for allocated devices.",
                                                        markers=ATOMIC)
    extended_resource_name: str | None = opt("Extended resource name pods may request instead.")


class DeviceClass(TopLevel):
    """A vendor- or admin-defined class of devices."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "DeviceClass")
    api_version: str | None = opt("resource.k8s.io/v1")
    kind: str | None = opt("DeviceClass")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: DeviceClassSpec = req("Selectors and configuration; mutable.")


# --- ResourceSlice -------------------------------------------------------------------------

class ResourcePool(KubeModel):
    """The pool a slice belongs to."""

    name: str = req("Pool name: DNS subdomains separated by '/', at most 253 characters.")
    generation: Int64 = req("Consumers use only slices of the highest generation seen.")
    resource_slice_count: Int64 = req("Number of slices in the pool at this generation.")


class DeviceAttribute(KubeModel):
    """A typed attribute value: exactly one field is set."""

    int_: Int64 | None = opt("An integer.", alias="int")
    bool_: bool | None = opt("A boolean.", alias="bool")
    string: str | None = opt("A string of at most 64 characters.")
    version: str | None = opt("A semantic version 2.0.0.")
    ints: list[Int64] | None = opt("A list of integers.", markers=ATOMIC)
    bools: list[bool] | None = opt("A list of booleans.", markers=ATOMIC)
    strings: list[str] | None = opt("A list of strings.", markers=ATOMIC)
    versions: list[str] | None = opt("A list of semantic versions.", markers=ATOMIC)


class CapacityRequestPolicyRange(KubeModel):
    """A range of acceptable requests."""

    min: Quantity = req("Minimum request.")
    max: Quantity | None = opt("Maximum request.")
    step: Quantity | None = opt("Requests are rounded up to min + n*step.")


class CapacityRequestPolicy(KubeModel):
    """How requests for a shared capacity are defaulted and rounded."""

    default: Quantity | None = opt("Amount consumed when a request does not say.")
    valid_values: list[Quantity] | None = opt("Allowed amounts, sorted, at most 10.", markers=ATOMIC)
    valid_range: CapacityRequestPolicyRange | None = opt("Allowed range.")


class DeviceCapacity(KubeModel):
    """A capacity of a device."""

    value: Quantity = req("Total capacity.")
    request_policy: CapacityRequestPolicy | None = opt("Only for allowMultipleAllocations devices.")


class Counter(KubeModel):
    """An amount of a shared counter."""

    value: Quantity = req("The amount.")


class CounterSet(KubeModel):
    """Named counters that devices of the same pool consume (partitionable devices)."""

    name: str = req("DNS label, unique within the pool.")
    counters: dict[str, Counter] = req("Counters by name; 1 to 32.")


class DeviceCounterConsumption(KubeModel):
    """Amounts a device draws from a counter set when allocated."""

    counter_set: str = req("Name of the CounterSet.")
    counters: dict[str, Counter] = req("Consumed amounts by counter name.")
    compatibility_groups: list[str] | None = opt("Alpha compatibility groups.", markers=ATOMIC)


class DeviceTaint(KubeModel):
    """A taint on a device; untolerated NoSchedule/NoExecute taints block allocation."""

    key: str = req("Taint key (label-name syntax).")
    value: str | None = opt("Taint value (label-value syntax).")
    effect: str = req("None, NoSchedule or NoExecute.")
    time_added: Time | None = opt("When the taint was added.")


class NodeAllocatableMapping(KubeModel):
    """Alpha: how a device maps onto node allocatable resources."""

    capacity_key: str | None = opt("Device capacity to use.")
    capacity_multiplier: Quantity | None = opt("Multiplier for the capacity.")
    device_multiplier: Quantity | None = opt("Amount per device.")


class NodeAllocatableOverhead(KubeModel):
    """Alpha: overhead added per pod or container."""

    per_pod: Quantity | None = opt("Overhead per pod.")
    per_container: Quantity | None = opt("Overhead per container.")


class NodeAllocatableResource(KubeModel):
    """Alpha: a node allocatable resource backed by the device."""

    mapping: NodeAllocatableMapping | None = opt("Mapping onto the node resource.")
    overhead: NodeAllocatableOverhead | None = opt("Additional overhead.")


class Device(KubeModel):
    """One device in a slice."""

    name: str = req("Device name (DNS label), unique within the pool.")
    attributes: dict[str, DeviceAttribute] | None = opt("Attributes by qualified name.")
    capacity: dict[str, DeviceCapacity] | None = opt("Capacities by qualified name.")
    consumes_counters: list[DeviceCounterConsumption] | None = opt("Counters drawn; at most 2.",
                                                                   markers=ATOMIC)
    node_name: str | None = opt("Node of the device (perDeviceNodeSelection only).")
    node_selector: NodeSelector | None = opt("Nodes of the device (perDeviceNodeSelection only).")
    all_nodes: bool | None = opt("Available on all nodes (perDeviceNodeSelection only).")
    taints: list[DeviceTaint] | None = opt("Taints; at most 16.", markers=ATOMIC)
    binds_to_node: bool | None = opt("Allocation pins the claim to the chosen node.")
    binding_conditions: list[str] | None = opt("Conditions that must be True before binding.",
                                               markers=ATOMIC)
    binding_failure_conditions: list[str] | None = opt("Conditions that fail binding.",
                                                       markers=ATOMIC)
    allow_multiple_allocations: bool | None = opt("The device can be shared by several allocations.")
    node_allocatable_resources: dict[str, NodeAllocatableResource] | None = opt(
        "Alpha: node allocatable resources backed by the device.")


class ResourceSliceSpec(KubeModel):
    """Devices (or shared counters) of one pool published by a driver."""

    driver: str = req("Driver name (DNS subdomain, at most 63 characters); immutable.")
    pool: ResourcePool = req("The pool this slice belongs to.")
    node_name: str | None = opt("Node whose local devices these are; immutable.")
    node_selector: NodeSelector | None = opt("Nodes the devices are reachable from (one term).")
    all_nodes: bool | None = opt("Devices are reachable from every node.")
    per_device_node_selection: bool | None = opt("Each device states its own node selection.")
    devices: list[Device] | None = opt("Devices; at most 128 (64 with taints or counters).",
                                       markers=ATOMIC)
    shared_counters: list[CounterSet] | None = opt("Counter sets; at most 8.", markers=ATOMIC)
    partition_type_attribute: str | None = opt("Alpha: attribute naming the partition type.")
    skip_node_operations: list[str] | None = opt("Alpha: node operations the kubelet skips.",
                                                 markers=SET)


class ResourceSlice(TopLevel):
    """One or more devices of a pool, published by a DRA driver."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "ResourceSlice")
    api_version: str | None = opt("resource.k8s.io/v1")
    kind: str | None = opt("ResourceSlice")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: ResourceSliceSpec = req("The published devices.")


# --- DeviceTaintRule -----------------------------------------------------------------------

class DeviceTaintSelector(KubeModel):
    """Which devices a rule taints; unset fields match any value."""

    driver: str | None = opt("Driver name.")
    pool: str | None = opt("Pool name.")
    device: str | None = opt("Device name.")


class DeviceTaintRuleSpec(KubeModel):
    """A taint applied to every selected device."""

    device_selector: DeviceTaintSelector | None = opt(
        "Devices to taint: every field set must match; empty = all devices, nil = none.")
    taint: DeviceTaint = req("The taint to add.")


class DeviceTaintRuleStatus(KubeModel):
    """Progress of a rule (eviction state)."""

    conditions: list[Condition] | None = opt("Rule conditions.",
                                             markers=list_map("type") | patch_merge("type"))


class DeviceTaintRule(TopLevel):
    """Adds a taint to devices selected by driver, pool and device name."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "DeviceTaintRule")
    api_version: str | None = opt("resource.k8s.io/v1")
    kind: str | None = opt("DeviceTaintRule")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: DeviceTaintRuleSpec = req("Which devices and which taint.")
    status: DeviceTaintRuleStatus | None = opt("Rule status.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (
    DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceTaintRule)}
