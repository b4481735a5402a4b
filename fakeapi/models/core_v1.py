"""Core ``v1`` kinds the scheduler and clients need: Pod, Node, Namespace, Event, ConfigMap.

Everything scheduling and DRA read is modelled field by field.  Deep structs the control plane
never looks at (probes, security contexts, volume sources, container states) are kept as open
JSON objects (``dict[str, Any]``) so ordinary manifests round-trip; strict unknown-field checks
stop at those boundaries.
"""

from typing import Any, ClassVar

from pydantic import ConfigDict

from fakeapi.models.base import (
    ATOMIC,
    SET,
    VALUE_STRUCT,
    Bytes,
    Int32,
    Int64,
    KubeModel,
    MicroTime,
    Quantity,
    Time,
    TopLevel,
    list_map,
    opt,
    patch_merge,
    req,
)
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.core.v1"
Open = dict[str, Any]

# --- selectors and tolerations (shared with resource.k8s.io) -------------------------------


class NodeSelectorRequirement(KubeModel):
    """A key, an operator (In, NotIn, Exists, DoesNotExist, Gt, Lt) and values."""

    key: str = req("Label key (or field name for matchFields).")
    operator: str = req("In, NotIn, Exists, DoesNotExist, Gt or Lt.")
    values: list[str] | None = opt("Values for In/NotIn (non-empty) or Gt/Lt (one integer).",
                                   markers=ATOMIC)


class NodeSelectorTerm(KubeModel):
    """Requirements ANDed together; an empty term matches nothing."""

    match_expressions: list[NodeSelectorRequirement] | None = opt("Requirements on node labels.",
                                                                  markers=ATOMIC)
    match_fields: list[NodeSelectorRequirement] | None = opt("Requirements on node fields.",
                                                             markers=ATOMIC)


class NodeSelector(KubeModel):
    """Terms ORed together."""

    node_selector_terms: list[NodeSelectorTerm] = req("At least one term.", markers=ATOMIC)


class PreferredSchedulingTerm(KubeModel):
    """A weighted node preference."""

    weight: Int32 = req("Weight 1-100.")
    preference: NodeSelectorTerm = req("The preferred term.")


class NodeAffinity(KubeModel):
    """Node affinity rules."""

    required_during_scheduling_ignored_during_execution: NodeSelector | None = opt(
        "Hard requirement on the node.")
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = opt(
        "Soft preferences.", markers=ATOMIC)


class Affinity(KubeModel):
    """Scheduling affinity; pod (anti-)affinity terms are kept as opaque JSON."""

    node_affinity: NodeAffinity | None = opt("Node affinity.")
    pod_affinity: Open | None = opt("Pod affinity terms (not evaluated by fakeapi).")
    pod_anti_affinity: Open | None = opt("Pod anti-affinity terms (not evaluated by fakeapi).")


class Toleration(KubeModel):
    """Lets a pod schedule onto (or stay on) nodes with a matching taint."""

    key: str | None = opt("Taint key; empty with Exists tolerates everything.")
    operator: str | None = opt("Exists or Equal (default).")
    value: str | None = opt("Taint value for Equal.")
    effect: str | None = opt("NoSchedule, PreferNoSchedule or NoExecute; empty = all.")
    toleration_seconds: Int64 | None = opt("How long a NoExecute taint is tolerated.")


class Taint(KubeModel):
    """A node taint."""

    key: str = req("Taint key.")
    value: str | None = opt("Taint value.")
    effect: str = req("NoSchedule, PreferNoSchedule or NoExecute.")
    time_added: Time | None = opt("When a NoExecute taint was added.")


# --- containers ----------------------------------------------------------------------------


class ResourceClaim(KubeModel):
    """A container's reference to one entry of ``pod.spec.resourceClaims``."""

    name: str = req("Name of the pod's resource claim entry.")
    request: str | None = opt("Only the devices of this request; empty = all requests.")


class ResourceRequirements(KubeModel):
    """Compute resources and claims of a container (or the pod)."""

    limits: dict[str, Quantity] | None = opt("Maximum amounts.")
    requests: dict[str, Quantity] | None = opt("Minimum amounts; the scheduler fits these.")
    claims: list[ResourceClaim] | None = opt("Pod resource claims the container uses.",
                                             markers=list_map("name"))


class ContainerPort(KubeModel):
    """A port the container exposes."""

    name: str | None = opt("IANA_SVC_NAME port name.")
    host_port: Int32 | None = opt("Port on the host.")
    container_port: Int32 = req("Port in the container.")
    protocol: str | None = opt("TCP (default), UDP or SCTP.")
    host_ip: str | None = opt("Host IP to bind.", alias="hostIP")


class EnvVar(KubeModel):
    """An environment variable."""

    name: str = req("Variable name.")
    value: str | None = opt("Literal value.")
    value_from: Open | None = opt("Source of the value (fieldRef, configMapKeyRef, ...).")


class VolumeMount(KubeModel):
    """A volume mounted into a container."""

    model_config = ConfigDict(extra="allow")
    name: str = req("Name of the pod volume.")
    mount_path: str = req("Path in the container.")
    read_only: bool | None = opt("Mount read-only.")
    sub_path: str | None = opt("Sub-path of the volume.")


class Container(KubeModel):
    """A container of a pod."""

    name: str = req("DNS label, unique within the pod.")
    image: str | None = opt("Container image.")
    command: list[str] | None = opt("Entrypoint.", markers=ATOMIC)
    args: list[str] | None = opt("Arguments.", markers=ATOMIC)
    working_dir: str | None = opt("Working directory.")
    ports: list[ContainerPort] | None = opt("Exposed ports.",
                                            markers=list_map("containerPort", "protocol")
                                            | patch_merge("containerPort"))
    env_from: list[Open] | None = opt("Sources of environment variables.", markers=ATOMIC)
    env: list[EnvVar] | None = opt("Environment variables.",
                                   markers=list_map("name") | patch_merge("name"))
    resources: ResourceRequirements | None = opt("Compute resources and resource claims.")
    resize_policy: list[Open] | None = opt("Resize policies.", markers=ATOMIC)
    restart_policy: str | None = opt("Always for restartable init (sidecar) containers.")
    restart_policy_rules: list[Open] | None = opt("Per-exit-code restart rules.", markers=ATOMIC)
    volume_mounts: list[VolumeMount] | None = opt("Volume mounts.",
                                                  markers=list_map("mountPath") | patch_merge("mountPath"))
    volume_devices: list[Open] | None = opt("Raw block devices.",
                                            markers=list_map("devicePath") | patch_merge("devicePath"))
    liveness_probe: Open | None = opt("Liveness probe.")
    readiness_probe: Open | None = opt("Readiness probe.")
    startup_probe: Open | None = opt("Startup probe.")
    lifecycle: Open | None = opt("Lifecycle hooks.")
    termination_message_path: str | None = opt("Defaults to /dev/termination-log.")
    termination_message_policy: str | None = opt("File (default) or FallbackToLogsOnError.")
    image_pull_policy: str | None = opt("Always, Never or IfNotPresent.")
    security_context: Open | None = opt("Security options.")
    stdin: bool | None = opt("Allocate a stdin buffer.")
    stdin_once: bool | None = opt("Close stdin after the first attach.")
    tty: bool | None = opt("Allocate a TTY.")


class EphemeralContainer(Container):
    """A debugging container added to a running pod."""

    target_container_name: str | None = opt("The container whose namespaces this one joins.")


class Volume(KubeModel):
    """A pod volume; its source (emptyDir, configMap, ...) is kept as opaque JSON."""

    model_config = ConfigDict(extra="allow")
    name: str = req("DNS label, unique within the pod.")


# --- pod -----------------------------------------------------------------------------------


class PodResourceClaim(KubeModel):
    """A pod's reference to a ResourceClaim or a ResourceClaimTemplate (exactly one)."""

    name: str = req("DNS label, unique within the pod; referenced by containers.")
    resource_claim_name: str | None = opt("An existing ResourceClaim in the pod's namespace.")
    resource_claim_template_name: str | None = opt("A template; one claim is generated per pod.")


class PodSchedulingGroup(KubeModel):
    """The pod group a pod belongs to (Kubernetes 1.36+ shape)."""

    pod_group_name: str | None = opt("Name of the PodGroup in the pod's namespace; immutable.")


class WorkloadReference(KubeModel):
    """The Workload pod group a pod belongs to (Kubernetes 1.35 / KEP-5729 draft shape)."""

    name: str = req("Name of the Workload (v1alpha1) in the pod's namespace.")
    pod_group: str = req("Name of the pod group inside the Workload.")
    pod_group_replica_key: str | None = opt("Replica key; each key is a separate gang instance.")


class PodSchedulingGate(KubeModel):
    """A gate that keeps the pod out of scheduling while present."""

    name: str = req("Gate name (qualified name), unique.")


class PodReadinessGate(KubeModel):
    """An extra condition required for readiness."""

    condition_type: str = req("Condition type in status.conditions.")


class PodSpec(KubeModel):
    """The desired state of a pod."""

    volumes: list[Volume] | None = opt("Volumes.",
                                       markers=list_map("name") | patch_merge("name", retain_keys=True))
    init_containers: list[Container] | None = opt("Init containers.",
                                                  markers=list_map("name") | patch_merge("name"))
    containers: list[Container] = req("At least one container.",
                                       markers=list_map("name") | patch_merge("name"))
    ephemeral_containers: list[EphemeralContainer] | None = opt("Debug containers.",
                                                  markers=list_map("name") | patch_merge("name"))
    restart_policy: str | None = opt("Always (default), OnFailure or Never.")
    termination_grace_period_seconds: Int64 | None = opt("Grace period; defaults to 30.")
    active_deadline_seconds: Int64 | None = opt("Deadline for the pod's run.")
    dns_policy: str | None = opt("ClusterFirst (default), Default, ClusterFirstWithHostNet, None.")
    node_selector: dict[str, str] | None = opt("Labels the node must carry.")
    service_account_name: str | None = opt("Service account of the pod.")
    service_account: str | None = opt("Deprecated alias of serviceAccountName.")
    automount_service_account_token: bool | None = opt("Mount the service account token.")
    node_name: str | None = opt("Node the pod is bound to; set through pods/binding.")
    host_network: bool | None = opt("Use the host network namespace.")
    host_pid: bool | None = opt("Use the host PID namespace.", alias="hostPID")
    host_ipc: bool | None = opt("Use the host IPC namespace.", alias="hostIPC")
    share_process_namespace: bool | None = opt("Share one PID namespace between containers.")
    security_context: Open | None = opt("Pod-level security options.")
    image_pull_secrets: list[Open] | None = opt("Image pull secrets.",
                                                markers=list_map("name") | patch_merge("name"))
    hostname: str | None = opt("Hostname of the pod.")
    hostname_override: str | None = opt("Hostname override.")
    subdomain: str | None = opt("Subdomain of the pod.")
    affinity: Affinity | None = opt("Scheduling constraints.")
    scheduler_name: str | None = opt("Scheduler responsible; defaults to default-scheduler.")
    tolerations: list[Toleration] | None = opt("Tolerated taints.", markers=ATOMIC)
    host_aliases: list[Open] | None = opt("Extra /etc/hosts entries.",
                                          markers=list_map("ip") | patch_merge("ip"))
    priority_class_name: str | None = opt("Priority class name.")
    priority: Int32 | None = opt("Priority value.")
    dns_config: Open | None = opt("DNS parameters.")
    readiness_gates: list[PodReadinessGate] | None = opt("Readiness gates.", markers=ATOMIC)
    runtime_class_name: str | None = opt("RuntimeClass name.")
    enable_service_links: bool | None = opt("Inject service environment variables.")
    preemption_policy: str | None = opt("Never or PreemptLowerPriority.")
    overhead: dict[str, Quantity] | None = opt("Pod overhead.")
    topology_spread_constraints: list[Open] | None = opt(
        "Topology spread constraints.",
        markers=list_map("topologyKey", "whenUnsatisfiable") | patch_merge("topologyKey"))
    set_hostname_as_fqdn: bool | None = opt("Use the FQDN as hostname.", alias="setHostnameAsFQDN")
    os: Open | None = opt("Operating system of the pod.")
    host_users: bool | None = opt("Use the host user namespace.")
    scheduling_gates: list[PodSchedulingGate] | None = opt(
        "Scheduling gates.", markers=list_map("name") | patch_merge("name"))
    resource_claims: list[PodResourceClaim] | None = opt(
        "Resource claims.", markers=list_map("name") | patch_merge("name", retain_keys=True))
    resources: ResourceRequirements | None = opt("Pod-level resources.")
    scheduling_group: PodSchedulingGroup | None = opt("Pod group of the pod (1.36+); immutable.")
    workload_ref: WorkloadReference | None = opt(
        "Workload pod group of the pod (1.35 shape, KEP-5729 draft); immutable.")
    eviction_responders: list[Open] | None = opt("Alpha eviction responders.",
                                                 markers=list_map("name") | patch_merge("name"))


class PodCondition(KubeModel):
    """A pod condition (PodScheduled, Ready, ...)."""

    type: str = req("Condition type.")
    status: str = req("True, False or Unknown.")
    observed_generation: Int64 | None = opt("Pod generation the condition was set for.")
    last_probe_time: Time | None = opt("Last probe.")
    last_transition_time: Time | None = opt("Last status change.")
    reason: str | None = opt("Machine-readable reason.")
    message: str | None = opt("Human-readable message.")


class PodResourceClaimStatus(KubeModel):
    """The generated ResourceClaim name for a template-based pod claim."""

    name: str = req("Name of the entry in pod.spec.resourceClaims.")
    resource_claim_name: str | None = opt("Generated claim; unset means no claim is needed.")


class PodIP(KubeModel):
    """An IP of the pod."""

    ip: str = req("The IP address.")


class PodStatus(KubeModel):
    """Observed state of a pod."""

    observed_generation: Int64 | None = opt("Generation observed by the kubelet.")
    phase: str | None = opt("Pending, Running, Succeeded, Failed or Unknown.")
    conditions: list[PodCondition] | None = opt("Current conditions.",
                                                 markers=list_map("type") | patch_merge("type"))
    message: str | None = opt("Why the pod is in this state.")
    reason: str | None = opt("Brief CamelCase reason.")
    nominated_node_name: str | None = opt("Node nominated by preemption.")
    host_ip: str | None = opt("IP of the node.", alias="hostIP")
    # Atomic for server-side apply yet merged by ip under strategic merge patch, as upstream marks it.
    host_ips: list[PodIP] | None = opt("IPs of the node.", alias="hostIPs",
                                       markers=ATOMIC | patch_merge("ip"))
    pod_ip: str | None = opt("IP of the pod.", alias="podIP")
    pod_ips: list[PodIP] | None = opt("IPs of the pod.", alias="podIPs",
                                      markers=list_map("ip") | patch_merge("ip"))
    start_time: Time | None = opt("When the kubelet acknowledged the pod.")
    init_container_statuses: list[Open] | None = opt("Init container statuses.", markers=ATOMIC)
    container_statuses: list[Open] | None = opt("Container statuses.", markers=ATOMIC)
    ephemeral_container_statuses: list[Open] | None = opt("Ephemeral container statuses.",
                                                          markers=ATOMIC)
    qos_class: str | None = opt("Guaranteed, Burstable or BestEffort.")
    resize: str | None = opt("Deprecated resize status.")
    resource_claim_statuses: list[PodResourceClaimStatus] | None = opt(
        "Generated claim names.", markers=list_map("name") | patch_merge("name", retain_keys=True))
    extended_resource_claim_status: Open | None = opt("Claim generated for extended resources.")
    allocated_resources: dict[str, Quantity] | None = opt("Allocated pod-level resources.")
    resources: ResourceRequirements | None = opt("Actual pod-level resources.")
    volume_health: list[Open] | None = opt("Alpha volume health.", markers=list_map("name"))
    node_allocatable_resource_claim_statuses: list[Open] | None = opt(
        "Alpha node-allocatable claim status.",
        markers=list_map("resourceClaimName") | patch_merge("resourceClaimName"))


class Pod(TopLevel):
    """A group of containers scheduled onto one node."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Pod")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Pod")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: PodSpec | None = opt("Desired state.", markers=VALUE_STRUCT)
    status: PodStatus | None = opt("Observed state; written via the status subresource.",
                                   markers=VALUE_STRUCT)



class PodTemplateSpec(KubeModel):
    """The pod a workload controller creates: metadata and a full pod spec."""

    metadata: ObjectMeta | None = opt("Labels and annotations of the created pods.")
    spec: PodSpec | None = opt("The pod spec; resource claims, schedulingGroup and workloadRef included.")


# --- node ----------------------------------------------------------------------------------


class NodeSpec(KubeModel):
    """Desired state of a node."""

    pod_cidr: str | None = opt("Pod IP range.", alias="podCIDR")
    pod_cidrs: list[str] | None = opt("Pod IP ranges.", alias="podCIDRs",
                                      markers=SET | patch_merge())
    provider_id: str | None = opt("Cloud provider id.", alias="providerID")
    unschedulable: bool | None = opt("Cordoned: no new pods are scheduled here.")
    taints: list[Taint] | None = opt("Node taints.", markers=ATOMIC)
    config_source: Open | None = opt("Deprecated dynamic kubelet config.")
    external_id: str | None = opt("Deprecated.", alias="externalID")
    pod_preemption_policy: Open | None = opt("Alpha pod preemption policy.")


class NodeCondition(KubeModel):
    """A node condition (Ready, MemoryPressure, ...)."""

    type: str = req("Condition type.")
    status: str = req("True, False or Unknown.")
    last_heartbeat_time: Time | None = opt("Last heartbeat.")
    last_transition_time: Time | None = opt("Last status change.")
    reason: str | None = opt("Machine-readable reason.")
    message: str | None = opt("Human-readable message.")


class NodeAddress(KubeModel):
    """An address of the node."""

    type: str = req("Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.")
    address: str = req("The address.")


class NodeSystemInfo(KubeModel):
    """Versions and identifiers reported by the kubelet."""

    model_config = ConfigDict(extra="allow")
    machine_id: str | None = opt("Machine id.", alias="machineID")
    system_uuid: str | None = opt("System UUID.", alias="systemUUID")
    boot_id: str | None = opt("Boot id.", alias="bootID")
    kernel_version: str | None = opt("Kernel version.")
    os_image: str | None = opt("OS image.")
    container_runtime_version: str | None = opt("Container runtime version.")
    kubelet_version: str | None = opt("Kubelet version.")
    kube_proxy_version: str | None = opt("Deprecated kube-proxy version.")
    operating_system: str | None = opt("linux or windows.")
    architecture: str | None = opt("CPU architecture.")


class NodeStatus(KubeModel):
    """Observed state of a node."""

    capacity: dict[str, Quantity] | None = opt("Total resources.")
    allocatable: dict[str, Quantity] | None = opt("Resources available to pods.")
    phase: str | None = opt("Deprecated node phase.")
    conditions: list[NodeCondition] | None = opt("Node conditions.",
                                                  markers=list_map("type") | patch_merge("type"))
    addresses: list[NodeAddress] | None = opt("Node addresses.",
                                              markers=list_map("type") | patch_merge("type"))
    daemon_endpoints: Open | None = opt("Kubelet endpoint.")
    node_info: NodeSystemInfo | None = opt("System information.")
    images: list[Open] | None = opt("Images on the node.", markers=ATOMIC)
    volumes_in_use: list[str] | None = opt("Volumes in use.", markers=ATOMIC)
    volumes_attached: list[Open] | None = opt("Attached volumes.", markers=ATOMIC)
    config: Open | None = opt("Deprecated config status.")
    runtime_handlers: list[Open] | None = opt("Runtime handlers.", markers=ATOMIC)
    features: Open | None = opt("Node features.")
    declared_features: list[str] | None = opt("Declared features.", markers=ATOMIC)


class Node(TopLevel):
    """A worker node; labels, taints and allocatable resources drive scheduling."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Node")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Node")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: NodeSpec | None = opt("Desired state.", markers=VALUE_STRUCT)
    status: NodeStatus | None = opt("Observed state.", markers=VALUE_STRUCT)


# --- namespace, event, configmap -----------------------------------------------------------


class NamespaceSpec(KubeModel):
    """Desired state of a namespace."""

    finalizers: list[str] | None = opt("Must be empty before the namespace is removed.",
                                       markers=ATOMIC)


class NamespaceCondition(KubeModel):
    """A namespace condition."""

    type: str = req("Condition type.")
    status: str = req("True, False or Unknown.")
    last_transition_time: Time | None = opt("Last status change.")
    reason: str | None = opt("Machine-readable reason.")
    message: str | None = opt("Human-readable message.")


class NamespaceStatus(KubeModel):
    """Observed state of a namespace."""

    phase: str | None = opt("Active or Terminating.")
    conditions: list[NamespaceCondition] | None = opt("Conditions.",
                                                       markers=list_map("type") | patch_merge("type"))


class Namespace(TopLevel):
    """A scope for names."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Namespace")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Namespace")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: NamespaceSpec | None = opt("Desired state.", markers=VALUE_STRUCT)
    status: NamespaceStatus | None = opt("Observed state.", markers=VALUE_STRUCT)


class ObjectReference(KubeModel):
    """A reference to an object (the subject of an event)."""

    kind: str | None = opt("Kind of the referent.")
    namespace: str | None = opt("Namespace of the referent.")
    name: str | None = opt("Name of the referent.")
    uid: str | None = opt("UID of the referent.")
    api_version: str | None = opt("API version of the referent.")
    resource_version: str | None = opt("Resource version of the referent.")
    field_path: str | None = opt("Part of the object, e.g. spec.containers{name}.")


class Binding(TopLevel):
    """Ties one object to another: the body of ``pods/binding``, by which a scheduler assigns a pod
    to a node."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Binding")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Binding")
    metadata: ObjectMeta | None = opt("Standard object metadata: the name (and namespace) of the pod to bind.")
    target: ObjectReference = req("The object to bind to: a Node, by name.")


class EventSource(KubeModel):
    """The component that reported an event."""

    component: str | None = opt("Component name.")
    host: str | None = opt("Node name.")


class EventSeries(KubeModel):
    """A series of repeated events."""

    count: Int32 | None = opt("Occurrences so far.")
    last_observed_time: MicroTime | None = opt("Time of the last occurrence.")


class Event(TopLevel):
    """A report of something that happened to an object (core/v1 shape)."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "Event")
    api_version: str | None = opt("v1")
    kind: str | None = opt("Event")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    involved_object: ObjectReference = req("The object the event is about.")
    reason: str | None = opt("Short, machine-readable reason.")
    message: str | None = opt("Human-readable description.")
    source: EventSource | None = opt("Reporting component.", markers=VALUE_STRUCT)
    first_timestamp: Time | None = opt("First occurrence.")
    last_timestamp: Time | None = opt("Last occurrence.")
    count: Int32 | None = opt("Number of occurrences.")
    type: str | None = opt("Normal or Warning.")
    event_time: MicroTime | None = opt("When the event was first observed.")
    series: EventSeries | None = opt("Series data for repeated events.")
    action: str | None = opt("Action taken or failed.")
    related: ObjectReference | None = opt("A secondary object.")
    reporting_component: str | None = opt("Controller that emitted the event.")
    reporting_instance: str | None = opt("Instance of the controller.")


class ConfigMap(TopLevel):
    """Non-confidential key/value data."""

    gvk: ClassVar[tuple[str, str, str]] = ("", "v1", "ConfigMap")
    api_version: str | None = opt("v1")
    kind: str | None = opt("ConfigMap")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    immutable: bool | None = opt("If true, data cannot be changed.")
    data: dict[str, str] | None = opt("UTF-8 data.")
    binary_data: dict[str, Bytes] | None = opt("Base64-encoded binary data.")


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (Namespace, Node, Pod, Event, ConfigMap, Binding)}
