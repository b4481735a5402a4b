"""``batch/v1`` strategies: Job and CronJob.

Defaults follow ``pkg/apis/batch/v1/defaults.go``; the generated selector and pod labels follow
``pkg/registry/batch/job/strategy.go``; rules and messages ``pkg/apis/batch/validation``.
``spec.scheduling`` (KEP-5547) is dropped on create while ``WorkloadWithJob`` is off, kept on
update if already stored; only ``schedulingPolicy.gang.minCount`` may change.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import replace
from typing import Any

from fakeapi.errors import FieldError, forbidden, invalid, not_supported, required, too_many
from fakeapi.machinery.cron import ScheduleError, parse_schedule
from fakeapi.validation import names
from fakeapi.validation.common import get, immutable, validate_list
from fakeapi.validation.core import validate_claim_source
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import (
    default_template,
    non_negative,
    validate_label_selector,
    validate_pod_template,
)

MAX_INT32 = 2**31 - 1
JOB_RESTART_POLICIES = ["OnFailure", "Never"]
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID = "controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME = "job-name"
MAX_POD_FAILURE_RULES = 20
MAX_SUCCESS_RULES = 20
MAX_EXIT_CODES = 255
MAX_SCHEDULING_CLAIMS = 4
CRONJOB_NAME_MAX = 52
# Template fields a suspended, never-started Job may change (KEP-2926 scheduling directives).
_MUTABLE_SCHEDULING_DIRECTIVES = ("nodeSelector", "affinity", "tolerations", "schedulingGates")


def default_job_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_Job`` on a spec (also what a CronJob's template gets when it creates a Job)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("manualSelector", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    for rule in get(spec, "podFailurePolicy", "rules") or []:
        for pattern in rule.get("onPodConditions") or []:
            pattern.setdefault("status", "True")
    default_template(spec.get("template"))


def _generate_selector(job: dict[str, Any]) -> None:
    """The API server's selector and pod labels for a Job without ``manualSelector``."""
    meta, spec = job["metadata"], job.setdefault("spec", {})
    if spec.get("manualSelector") or not meta.get("uid"):
        return
    template_meta = spec.setdefault("template", {}).setdefault("metadata", {})
    labels = template_meta.setdefault("labels", {})
    labels.update({CONTROLLER_UID: meta["uid"], LEGACY_CONTROLLER_UID: meta["uid"]})
    if meta.get("name"):
        labels.update({JOB_NAME: meta["name"], LEGACY_JOB_NAME: meta["name"]})
    if spec.get("selector") is None:
        spec["selector"] = {"matchLabels": {CONTROLLER_UID: meta["uid"]}}


def _validate_pod_failure_policy(spec: dict[str, Any]) -> list[FieldError]:
    policy = spec.get("podFailurePolicy")
    if policy is None:
        return []
    errs: list[FieldError] = []
    path = "spec.podFailurePolicy.rules"
    restart = get(spec, "template", "spec", "restartPolicy")
    if restart != "Never":
        errs.append(invalid("spec.template.spec.restartPolicy", restart,
                            'only "Never" is supported when podFailurePolicy is specified'))
    rules = policy.get("rules") or []
    if len(rules) > MAX_POD_FAILURE_RULES:
        return [*errs, too_many(path, len(rules), MAX_POD_FAILURE_RULES)]
    actions = ["Count", "FailIndex", "FailJob", "Ignore"]
    for i, rule in enumerate(rules):
        p = f"{path}[{i}]"
        if rule.get("action") not in actions:
            errs.append(not_supported(f"{p}.action", rule.get("action", ""), actions))
        codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
        if (codes is None) == (conditions is None):
            errs.append(invalid(p, rule, "specifying one of OnExitCodes and OnPodConditions is required"))
        if codes is not None:
            values = codes.get("values") or []
            if codes.get("operator") not in ("In", "NotIn"):
                errs.append(not_supported(f"{p}.onExitCodes.operator", codes.get("operator", ""), ["In", "NotIn"]))
            if not values:
                errs.append(required(f"{p}.onExitCodes.values"))
            elif len(values) > MAX_EXIT_CODES:
                errs.append(too_many(f"{p}.onExitCodes.values", len(values), MAX_EXIT_CODES))
            if codes.get("operator") == "In" and 0 in values:
                errs.append(invalid(f"{p}.onExitCodes.values", 0, "must not be 0 for the In operator"))
        for j, pattern in enumerate(conditions or []):
            if pattern.get("status") not in ("True", "False", "Unknown"):
                errs.append(not_supported(f"{p}.onPodConditions[{j}].status", pattern.get("status", ""),
                                          ["True", "False", "Unknown"]))
        if rule.get("action") == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            errs.append(invalid(f"{p}.action", "FailIndex", "requires the backoffLimitPerIndex to be set"))
    return errs


def _validate_scheduling(scheduling: dict[str, Any] | None) -> list[FieldError]:
    if scheduling is None:
        return []
    path = "spec.scheduling"
    errs: list[FieldError] = []
    policy = scheduling.get("schedulingPolicy") or {}
    if ("basic" in policy) == ("gang" in policy) and policy:
        errs.append(invalid(f"{path}.schedulingPolicy", policy, "exactly one of `basic`, `gang` is required"))
    min_count = get(policy, "gang", "minCount")
    if min_count is not None and min_count < 1:
        errs.append(invalid(f"{path}.schedulingPolicy.gang.minCount", min_count, "must be greater than 0"))
    topology = get(scheduling, "schedulingConstraints", "topology") or []
    if len(topology) > 1:
        errs.append(too_many(f"{path}.schedulingConstraints.topology", len(topology), 1))
    for i, constraint in enumerate(topology):
        errs += names.check_required(f"{path}.schedulingConstraints.topology[{i}].key", constraint.get("key"),
                                     names.qualified_name)
    mode = scheduling.get("disruptionMode") or {}
    if mode and ("single" in mode) == ("all" in mode):
        errs.append(invalid(f"{path}.disruptionMode", mode, "exactly one of `single`, `all` is required"))
    return errs + validate_list(scheduling.get("resourceClaims"), f"{path}.resourceClaims", MAX_SCHEDULING_CLAIMS,
                                validate_claim_source, key=lambda c: c.get("name"))


def _validate_scheduling_update(new: dict[str, Any] | None, old: dict[str, Any] | None) -> list[FieldError]:
    path = "spec.scheduling"
    if (new is None) != (old is None):
        return [invalid(path, new, "field is immutable")]
    if new is None or old is None:
        return []
    errs: list[FieldError] = []
    for key in ("schedulingConstraints", "disruptionMode", "resourceClaims"):
        errs += immutable(new.get(key), old.get(key), f"{path}.{key}")
    new_policy, old_policy = new.get("schedulingPolicy") or {}, old.get("schedulingPolicy") or {}
    if set(new_policy) != set(old_policy):
        errs.append(invalid(f"{path}.schedulingPolicy", new_policy, "field is immutable"))
    return errs


def validate_job_spec(spec: dict[str, Any]) -> list[FieldError]:
    """``ValidateJobSpec`` (with the template as the API server validates it)."""
    errs: list[FieldError] = []
    for key in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished",
                "backoffLimitPerIndex", "maxFailedIndexes"):
        errs += non_negative(spec.get(key), f"spec.{key}")
    mode = spec.get("completionMode")
    if mode not in (None, "NonIndexed", "Indexed"):
        errs.append(not_supported("spec.completionMode", mode, ["NonIndexed", "Indexed"]))
    if mode == "Indexed" and spec.get("completions") is None:
        errs.append(required("spec.completions", "when completion mode is Indexed"))
    if spec.get("backoffLimitPerIndex") is not None and mode != "Indexed":
        errs.append(forbidden("spec.backoffLimitPerIndex", "requires indexed completion mode"))
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        errs.append(required("spec.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    if spec.get("successPolicy") is not None:
        rules = get(spec, "successPolicy", "rules") or []
        if mode != "Indexed":
            errs.append(invalid("spec.successPolicy", spec["successPolicy"],
                                "requires indexed completion mode"))
        if len(rules) > MAX_SUCCESS_RULES:
            errs.append(too_many("spec.successPolicy.rules", len(rules), MAX_SUCCESS_RULES))
    replacement = spec.get("podReplacementPolicy")
    if replacement not in (None, "TerminatingOrFailed", "Failed"):
        errs.append(not_supported("spec.podReplacementPolicy", replacement, ["Failed", "TerminatingOrFailed"]))
    elif spec.get("podFailurePolicy") is not None and replacement == "TerminatingOrFailed":
        errs.append(not_supported("spec.podReplacementPolicy", replacement, ["Failed"]))
    errs += _validate_pod_failure_policy(spec)
    errs += _validate_scheduling(spec.get("scheduling"))
    return errs + validate_pod_template(spec.get("template"), "spec.template",
                                        restart_policies=JOB_RESTART_POLICIES)


def _validate_job_selector(job: dict[str, Any]) -> list[FieldError]:
    spec = job.get("spec") or {}
    selector = spec.get("selector")
    if selector is None:
        return [required("spec.selector")]
    errs = validate_label_selector(selector, "spec.selector")
    if spec.get("manualSelector") is not True and selector != {"matchLabels": {CONTROLLER_UID: get(
            job, "metadata", "uid")}}:
        errs.append(invalid("spec.selector", selector, "`selector` will be auto-generated"))
    return errs


def _template_change_allowed(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """A suspended Job that never started may change the template's scheduling directives."""
    if not get(old, "spec", "suspend") or get(old, "status", "startTime"):
        return False

    def masked(job: dict[str, Any]) -> dict[str, Any]:
        template = get(job, "spec", "template") or {}
        spec = {k: v for k, v in (template.get("spec") or {}).items() if k not in _MUTABLE_SCHEDULING_DIRECTIVES}
        return {"spec": spec}
    return masked(new) == masked(old)


class JobStrategy(Strategy):
    """Jobs: defaults, generated selector and labels, spec rules, mostly immutable spec."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.setdefault("spec", {})
        default_job_spec(spec)
        if ctx.operation == "CREATE":
            _generate_selector(obj)
            meta = obj.setdefault("metadata", {})
            if not meta.get("labels"):
                labels = get(spec, "template", "metadata", "labels")
                if labels:
                    meta["labels"] = dict(labels)

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        if not ctx.gates.WorkloadWithJob and get(old, "spec", "scheduling") is None:
            (new.get("spec") or {}).pop("scheduling", None)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return _validate_job_selector(obj) + validate_job_spec(obj.get("spec") or {})

    def validate_update(self, new: dict[str, Any], old: dict[str, Any],
                        ctx: AdmissionContext) -> list[FieldError]:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        errs = self.validate(new, ctx)
        errs += immutable(spec.get("selector"), old_spec.get("selector"), "spec.selector")
        errs += immutable(spec.get("completionMode"), old_spec.get("completionMode"), "spec.completionMode")
        errs += immutable(spec.get("managedBy"), old_spec.get("managedBy"), "spec.managedBy")
        elastic = spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
        if not elastic:
            errs += immutable(spec.get("completions"), old_spec.get("completions"), "spec.completions")
        if spec.get("template") != old_spec.get("template") and not _template_change_allowed(new, old):
            errs += immutable(spec.get("template"), old_spec.get("template"), "spec.template")
        return errs + _validate_scheduling_update(spec.get("scheduling"), old_spec.get("scheduling"))

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any],
                               ctx: AdmissionContext) -> list[FieldError]:
        status = new.get("status") or {}
        errs: list[FieldError] = []
        for key in ("active", "ready", "terminating", "succeeded", "failed"):
            errs += non_negative(status.get(key), f"status.{key}")
        return errs


# A part of a time zone's name, as upstream checks it before any lookup (validTimeZoneCharacters).
_TIME_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


def _time_zone(zone: str) -> list[FieldError]:
    """Upstream's validateTimeZone: a name of the IANA database, checked part by part before it
    is looked up (so no name reaches the file system but one made of such parts)."""
    if not zone:
        return [invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.fullmatch(part):
            return [invalid("spec.timeZone", zone, f"unknown time zone {zone}")]
    if zone.lower() == "local":
        return [invalid("spec.timeZone", zone,
                        "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")]
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a directory ("Europe")
        return [invalid("spec.timeZone", zone, f"unknown time zone {zone}")]
    return []


class CronJobStrategy(Strategy):
    """CronJobs: Allow, history 3/1; names fit the Job suffix; a schedule robfig/cron would parse."""

    def validate_name(self, name: str) -> list[str]:
        problems = names.dns1123_subdomain(name)
        if len(name) > CRONJOB_NAME_MAX:
            problems.append(f"must be no more than {CRONJOB_NAME_MAX} characters")
        return problems

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        default_template(get(spec, "jobTemplate", "spec", "template"))

    def drop_disabled_fields(self, new: dict[str, Any], old: dict[str, Any] | None,
                             ctx: AdmissionContext) -> None:
        if not ctx.gates.WorkloadWithJob and get(old, "spec", "jobTemplate", "spec", "scheduling") is None:
            (get(new, "spec", "jobTemplate", "spec") or {}).pop("scheduling", None)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        schedule = spec.get("schedule")
        if not schedule:
            errs.append(required("spec.schedule"))
        elif "TZ=" in schedule:
            errs.append(invalid("spec.schedule", schedule,
                                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
        else:
            try:
                parse_schedule(schedule)
            except ScheduleError as exc:
                errs.append(invalid("spec.schedule", schedule, str(exc)))
        zone = spec.get("timeZone")
        if zone is not None:
            errs += _time_zone(zone)
        policies = ["Allow", "Forbid", "Replace"]
        if spec.get("concurrencyPolicy") not in policies:
            errs.append(not_supported("spec.concurrencyPolicy", spec.get("concurrencyPolicy", ""), policies))
        for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
            errs += non_negative(spec.get(key), f"spec.{key}")
        job_spec = get(spec, "jobTemplate", "spec") or {}
        nested = validate_job_spec(job_spec)
        errs += [replace(e, field=e.field.replace("spec.", "spec.jobTemplate.spec.", 1)) for e in nested]
        return errs
