"""``admissionregistration.k8s.io/v1`` strategies: ValidatingWebhookConfiguration and
MutatingWebhookConfiguration, stored and validated (their webhooks are called only when the
server is told to: fakeapi.server.webhooks);
ValidatingAdmissionPolicy and its bindings, stored, validated and enforced
(:mod:`fakeapi.registry.policies`).

Defaults follow ``pkg/apis/admissionregistration/v1/defaults.go`` (failurePolicy Fail, matchPolicy
Equivalent, empty selectors, timeoutSeconds 10, reinvocationPolicy Never, rule scope ``*``, service
port 443; sideEffects and admissionReviewVersions have none in v1), validation
``pkg/apis/admissionregistration/validation/validation.go`` and ``apiserver/pkg/util/webhook``
(field paths and messages).

Updates: upstream relaxes four create rules for a configuration already stored without them (side
effects, review versions, unique names, label values); every configuration fakeapi stores passed
them at create, so an update is validated as a create, except that match conditions identical to
the stored ones are not compiled again (as upstream, whose CEL environment may have changed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from fakeapi.errors import (
    FieldError,
    GoSyntax,
    duplicate,
    forbidden,
    go_quote,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from fakeapi.machinery.cel_admission import expression_problem, match_condition_problem
from fakeapi.validation import names
from fakeapi.validation.services import port_number_problems
from fakeapi.validation.strategy import AdmissionContext, Strategy
from fakeapi.validation.templates import validate_label_selector

FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
# v1 accepts only the classes without side effects (Unknown and Some were v1beta1's).
SIDE_EFFECTS = ["None", "NoneOnDryRun"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
REINVOCATION_POLICIES = ["IfNeeded", "Never"]
SCOPES = ["*", "Cluster", "Namespaced"]
REVIEW_VERSIONS = ["v1", "v1beta1"]
MAX_MATCH_CONDITIONS = 64
MIN_TIMEOUT, MAX_TIMEOUT = 1, 30
_URL_FORM = "; desired format: https://host[/path]"


def _go_strings(values: list[Any], type_name: str = "string") -> GoSyntax:
    """A string slice as Go's ``%#v`` prints it in a field error (``[]string{"*", "a"}``)."""
    return GoSyntax(f"[]{type_name}{{" + ", ".join(go_quote(str(v)) for v in values) + "}")


# --- defaults ----------------------------------------------------------------------------------


def default_webhook(hook: dict[str, Any], *, mutating: bool) -> None:
    """``SetDefaults_ValidatingWebhook``/``MutatingWebhook``, with its rules' and service's defaults."""
    for key, value in (("failurePolicy", "Fail"), ("matchPolicy", "Equivalent"), ("timeoutSeconds", 10)):
        if hook.get(key) is None:
            hook[key] = value
    for key in ("namespaceSelector", "objectSelector"):
        if hook.get(key) is None:
            hook[key] = {}
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    for rule in hook.get("rules") or []:
        if isinstance(rule, dict) and rule.get("scope") is None:
            rule["scope"] = "*"
    service = (hook.get("clientConfig") or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


# --- client config -----------------------------------------------------------------------------

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
# Characters Go's net/url accepts unescaped in a host (shouldEscape with encodeHost), and in user
# information (validUserinfo).
_HOST_SAFE = frozenset(_ALNUM + "-_.~!$&'()*+,;=:[]<>\"")
_USERINFO_SAFE = frozenset(_ALNUM + "-._:~!$&'()*+,;=%@")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*")
_PORT = re.compile(r"(:[0-9]*)?")
_HEX = "0123456789abcdefABCDEF"


def _unescape(text: str, *, host: bool = False) -> str:
    """Go's ``unescape``: the percent escapes must be well formed (in a host, only of non-ASCII
    bytes or ``%25``), and a host holds no character that needs escaping; raises ValueError with
    Go's error text."""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%":
            escape = text[i:i + 3]
            if len(escape) < 3 or escape[1] not in _HEX or escape[2] not in _HEX or \
                    (host and int(escape[1], 16) < 8 and escape != "%25"):
                raise ValueError(f"invalid URL escape {go_quote(escape)}")
            i += 3
            continue
        if host and ord(ch) < 0x80 and ch not in _HOST_SAFE:
            raise ValueError(f"invalid character {go_quote(ch)} in host name")
        i += 1
    return re.sub(r"%([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def _authority(authority: str) -> tuple[str | None, str]:
    """Go's ``parseAuthority``: (user information as written or None, host)."""
    user: str | None = None
    host = authority
    if "@" in authority:
        user, _, host = authority.rpartition("@")
        if any(ch not in _USERINFO_SAFE for ch in user):
            raise ValueError("net/url: invalid userinfo")
        _unescape(user)
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise ValueError("missing ']' in host")
        port = host[end + 1:]
    else:
        colon = host.rfind(":")
        port = host[colon:] if colon >= 0 else ""
    if not _PORT.fullmatch(port):
        raise ValueError(f"invalid port {go_quote(port)} after host")
    return user, _unescape(host, host=True)


def _parse_url(url: str) -> tuple[str, str, str | None, str, str]:
    """Go's ``url.Parse`` as far as webhook validation reads it: (scheme, host, user information or
    None, fragment, raw query); raises ValueError with Go's error text."""
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise ValueError("net/url: invalid control character in URL")
    rest, _, fragment = url.partition("#")
    scheme = ""
    match = _SCHEME.match(rest)
    if rest.startswith(":"):
        raise ValueError("missing protocol scheme")
    if match and rest[match.end():match.end() + 1] == ":":
        scheme, rest = match.group(0).lower(), rest[match.end() + 1:]
    if rest.endswith("?") and rest.count("?") == 1:
        rest, query = rest[:-1], ""
    else:
        rest, _, query = rest.partition("?")
    host, user = "", None
    if not rest.startswith("/"):
        if not scheme and ":" in rest.partition("/")[0]:
            raise ValueError("first path segment in URL cannot contain colon")
    elif rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, _, path = rest[2:].partition("/")
        user, host = _authority(authority)
        _unescape(path)
    else:
        _unescape(rest)
    return scheme, host, user, _unescape(fragment), query


def validate_webhook_url(url: str, path: str) -> list[FieldError]:
    """``ValidateWebhookURL`` with https forced: a parsable https URL with a host, and no user
    information, fragment or query."""
    try:
        scheme, host, user, fragment, query = _parse_url(url)
    except ValueError as err:
        # Go's *url.Error: the operation, the quoted URL, the cause.
        return [required(path, f"url must be a valid URL: parse {go_quote(url)}: {err}{_URL_FORM}")]
    errs: list[FieldError] = []
    if scheme != "https":
        errs.append(invalid(path, scheme, "'https' is the only allowed URL scheme" + _URL_FORM))
    if not host:
        errs.append(invalid(path, host, "host must be provided" + _URL_FORM))
    if user is not None:
        errs.append(invalid(path, user, "user information is not permitted in the URL"))
    if fragment:
        errs.append(invalid(path, fragment, "fragments are not permitted in the URL"))
    if query:
        errs.append(invalid(path, query, "query parameters are not permitted in the URL"))
    return errs


def validate_webhook_service(service: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateWebhookService``: name and namespace present, a port number, a path of DNS
    subdomain segments."""
    errs: list[FieldError] = []
    if not service.get("name"):
        errs.append(required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        errs.append(required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port") or 0
    errs += [invalid(f"{path}.port", port, f"port is not valid: {m}") for m in port_number_problems(port)]
    url_path = service.get("path")
    if url_path in (None, "", "/"):
        return errs
    if url_path == "//":
        return [*errs, invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    # Go slices off the first byte whether or not it is the '/', then at most one trailing '/'.
    steps = url_path[1:].removesuffix("/").split("/")
    for i, step in enumerate(steps):
        if not step:
            errs.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [invalid(f"{path}.path", url_path, f"segment[{i}]: {msg}") for msg in names.dns1123_subdomain(step)]
    return errs


def _client_config(config: dict[str, Any], path: str) -> list[FieldError]:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(url, f"{path}.url")
    return validate_webhook_service(service, f"{path}.service")


# --- rules -------------------------------------------------------------------------------------


def _resources(resources: list[str], path: str) -> list[FieldError]:
    """``validateResources``: wildcard resources and subresources that do not overlap."""
    errs = [required(path)] if not resources else []
    wildcard_subresources: set[str] = set()  # x/*
    wildcard_resources: set[str] = set()  # */x
    single_wildcard = plain_resource = False
    for i, item in enumerate(resources):
        if not item:
            errs.append(required(f"{path}[{i}]"))
            continue
        single_wildcard = single_wildcard or item == "*"
        resource, sep, sub = item.partition("/")
        if not sep:
            # Upstream keeps only the last plain entry's answer.
            plain_resource = item != "*"
            continue
        if resource in wildcard_subresources:
            errs.append(invalid(f"{path}[{i}]", item, f"if '{resource}/*' is present, must not specify {item}"))
        if sub in wildcard_resources:
            errs.append(invalid(f"{path}[{i}]", item, f"if '*/{sub}' is present, must not specify {item}"))
        if sub == "*":
            wildcard_subresources.add(resource)
        if resource == "*":
            wildcard_resources.add(sub)
    if len(resources) > 1 and "*/*" in resources:
        errs.append(invalid(path, _go_strings(resources), "if '*/*' is present, must not specify other resources"))
    if single_wildcard and plain_resource:
        errs.append(invalid(path, _go_strings(resources),
                            "if '*' is present, must not specify other resources without subresources"))
    return errs


def _rule(rule: dict[str, Any], path: str) -> list[FieldError]:
    """``validateRuleWithOperations``: operations, then the embedded rule's groups, versions,
    resources and scope."""
    errs: list[FieldError] = []
    operations = rule.get("operations") or []
    if not operations:
        errs.append(required(f"{path}.operations"))
    if len(operations) > 1 and "*" in operations:
        errs.append(invalid(f"{path}.operations", _go_strings(operations, "admissionregistration.OperationType"),
                            "if '*' is present, must not specify other operations"))
    errs += [not_supported(f"{path}.operations[{i}]", op, OPERATIONS)
             for i, op in enumerate(operations) if op not in OPERATIONS]
    for key, what in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = rule.get(key) or []
        if not values:
            errs.append(required(f"{path}.{key}"))
        if len(values) > 1 and "*" in values:
            errs.append(invalid(f"{path}.{key}", _go_strings(values),
                                f"if '*' is present, must not specify other {what}"))
    errs += [required(f"{path}.apiVersions[{i}]") for i, v in enumerate(rule.get("apiVersions") or []) if not v]
    errs += _resources(rule.get("resources") or [], f"{path}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(not_supported(f"{path}.scope", scope, SCOPES))
    return errs


# --- match conditions --------------------------------------------------------------------------


def _match_conditions(conditions: list[dict[str, Any]], path: str,
                      problem: Callable[[str], str | None] = match_condition_problem) -> list[FieldError]:
    """``validateMatchConditions``: at most 64, each a compiling expression (``problem`` says why
    not) and a qualified name, names unique."""
    errs: list[FieldError] = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        errs.append(too_many(path, len(conditions), MAX_MATCH_CONDITIONS))
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        p = f"{path}[{i}]"
        expression = (condition.get("expression") or "").strip()
        if not expression:
            errs.append(required(f"{p}.expression"))
        else:
            detail = problem(expression)
            if detail is not None:
                errs.append(invalid(f"{p}.expression", expression, detail))
        name = condition.get("name") or ""
        errs += names.check_required(f"{p}.name", name, names.qualified_name)
        if name:
            if name in seen:
                errs.append(duplicate(f"{p}.name", name))
            seen.add(name)
    return errs


# --- webhooks ----------------------------------------------------------------------------------


def _fully_qualified_name(name: str, path: str) -> list[FieldError]:
    """``IsFullyQualifiedName``: a DNS subdomain of at least three segments."""
    if not name:
        return [required(path)]
    problems = names.dns1123_subdomain(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _review_versions(versions: list[str], path: str) -> list[FieldError]:
    """``validateAdmissionReviewVersions``: present, unique DNS-1035 labels, v1 or v1beta1 among them."""
    if not versions:
        return [required(path, "must specify one of " + ", ".join(REVIEW_VERSIONS))]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += names.check(f"{path}[{i}]", version, names.dns1035_label)
    if not seen.intersection(REVIEW_VERSIONS):
        errs.append(invalid(path, _go_strings(versions), "must include at least one of " + ", ".join(REVIEW_VERSIONS)))
    return errs


def _enum(hook: dict[str, Any], key: str, allowed: list[str], path: str) -> list[FieldError]:
    value = hook.get(key)
    return [not_supported(f"{path}.{key}", value, allowed)] if value is not None and value not in allowed else []


def validate_webhook(hook: dict[str, Any], path: str, *, mutating: bool, match_conditions: bool = True
                     ) -> list[FieldError]:
    """``validateValidatingWebhook``/``validateMutatingWebhook`` (review versions aside)."""
    errs = _fully_qualified_name(hook.get("name") or "", f"{path}.name")
    for i, rule in enumerate(hook.get("rules") or []):
        errs += _rule(rule or {}, f"{path}.rules[{i}]")
    errs += _enum(hook, "failurePolicy", FAILURE_POLICIES, path) + _enum(hook, "matchPolicy", MATCH_POLICIES, path)
    if hook.get("sideEffects") is None:
        errs.append(required(f"{path}.sideEffects", "must specify one of " + ", ".join(SIDE_EFFECTS)))
    errs += _enum(hook, "sideEffects", SIDE_EFFECTS, path)
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT:
        errs.append(invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"))
    for key in ("namespaceSelector", "objectSelector"):
        if hook.get(key) is not None:
            errs += validate_label_selector(hook[key], f"{path}.{key}")
    if mutating:
        errs += _enum(hook, "reinvocationPolicy", REINVOCATION_POLICIES, path)
    errs += _client_config(hook.get("clientConfig") or {}, f"{path}.clientConfig")
    if match_conditions:
        errs += _match_conditions([c or {} for c in hook.get("matchConditions") or []], f"{path}.matchConditions")
    return errs


def validate_configuration(obj: dict[str, Any], *, mutating: bool, old: dict[str, Any] | None = None
                           ) -> list[FieldError]:
    """``validate(Validating|Mutating)WebhookConfiguration`` (ObjectMeta aside): each webhook, its
    review versions, unique webhook names.  With ``old``, match conditions unchanged at every
    position are not compiled again."""
    hooks = [hook or {} for hook in obj.get("webhooks") or []]
    old_hooks = [hook or {} for hook in (old or {}).get("webhooks") or []]
    recompile = old is None or len(hooks) != len(old_hooks) or any(
        hook.get("matchConditions") != was.get("matchConditions") for hook, was in zip(hooks, old_hooks, strict=True))
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, hook in enumerate(hooks):
        path = f"webhooks[{i}]"
        errs += validate_webhook(hook, path, mutating=mutating, match_conditions=recompile)
        errs += _review_versions(hook.get("admissionReviewVersions") or [], f"{path}.admissionReviewVersions")
        name = hook.get("name") or ""
        if name:
            if name in seen:
                errs.append(duplicate(f"{path}.name", name))
            seen.add(name)
    return errs


class WebhookConfigurationStrategy(Strategy):
    """Validating or mutating webhook configurations: defaults and validation."""

    def __init__(self, *, mutating: bool) -> None:
        self.mutating = mutating

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        for hook in obj.get("webhooks") or []:
            if isinstance(hook, dict):
                default_webhook(hook, mutating=self.mutating)

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_configuration(obj, mutating=self.mutating)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_configuration(new, mutating=self.mutating, old=old)


# --- ValidatingAdmissionPolicy and its bindings ---------------------------------------------------

POLICY_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]  # Unauthorized is refused, as upstream
VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"]
PARAMETER_NOT_FOUND_ACTIONS = ["Allow", "Deny"]
MAX_AUDIT_ANNOTATIONS = 20
MAX_VALUE_EXPRESSION_BYTES = 5 * 1024
_CEL_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")


def default_match_resources(match: Any) -> None:
    """``SetDefaults_MatchResources``: matchPolicy Equivalent, empty selectors, rule scope ``*``."""
    if not isinstance(match, dict):
        return
    match.setdefault("matchPolicy", "Equivalent")
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            match[key] = {}
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or []:
            if isinstance(rule, dict) and rule.get("scope") is None:
                rule["scope"] = "*"


def _match_resources(match: dict[str, Any], path: str, *, rules_required: bool) -> list[FieldError]:
    """``validateMatchResources``: rules (required for a policy), selectors, matchPolicy."""
    errs: list[FieldError] = []
    if match.get("matchPolicy") is None:
        errs.append(required(f"{path}.matchPolicy"))
    errs += _enum(match, "matchPolicy", MATCH_POLICIES, path)
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            errs.append(required(f"{path}.{key}"))
        else:
            errs += validate_label_selector(match[key], f"{path}.{key}")
    rules = match.get("resourceRules") or []
    if rules_required and not rules:
        errs.append(required(f"{path}.resourceRules"))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(match.get(key) or []):
            rule = rule or {}
            errs += _rule(rule, f"{path}.{key}[{i}]")
            seen: set[str] = set()
            for j, name in enumerate(rule.get("resourceNames") or []):
                if name in seen:
                    errs.append(duplicate(f"{path}.{key}[{i}].resourceNames[{j}]", name))
                seen.add(name)
    return errs


def _validations(validations: list[dict[str, Any]], path: str, params: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, validation in enumerate(validations):
        p = f"{path}[{i}]"
        expression = (validation.get("expression") or "").strip()
        if not expression:
            errs.append(required(f"{p}.expression", "expression is not specified"))
        elif (problem := expression_problem(expression, policy=True, params=params)) is not None:
            errs.append(invalid(f"{p}.expression", expression, problem))
        message = validation.get("message")
        if message is not None and not message.strip():
            errs.append(invalid(f"{p}.message", message, "message must be non-empty if specified"))
        elif message is not None and ("\n" in message or "\r" in message):
            errs.append(invalid(f"{p}.message", message, "message must not contain line breaks"))
        message_expression = validation.get("messageExpression")
        if message_expression is not None:
            if not message_expression.strip():
                errs.append(invalid(f"{p}.messageExpression", message_expression, "must be non-empty if specified"))
            elif (problem := expression_problem(message_expression, policy=True, params=params,
                                                result="STRING")) is not None:
                errs.append(invalid(f"{p}.messageExpression", message_expression, problem))
        errs += _enum(validation, "reason", POLICY_REASONS, p)
    return errs


def _variables(variables: list[dict[str, Any]], path: str, params: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, variable in enumerate(variables):
        p = f"{path}[{i}]"
        name = variable.get("name") or ""
        if not name:
            errs.append(required(f"{p}.name", "name is not specified"))
        elif not _CEL_IDENTIFIER.match(name):
            errs.append(invalid(f"{p}.name", name, "name is not a valid CEL identifier"))
        expression = (variable.get("expression") or "").strip()
        if not expression:
            errs.append(required(f"{p}.expression", "expression is not specified"))
        elif (problem := expression_problem(expression, policy=True, params=params, result=None)) is not None:
            errs.append(invalid(f"{p}.expression", expression, problem))
    return errs


def _audit_annotations(annotations: list[dict[str, Any]], policy: str, path: str, params: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(annotations) > MAX_AUDIT_ANNOTATIONS:
        errs.append(too_many(path, len(annotations), MAX_AUDIT_ANNOTATIONS))
    seen: set[str] = set()
    for i, annotation in enumerate(annotations):
        p = f"{path}[{i}]"
        key = annotation.get("key") or ""
        errs += names.check_required(f"{p}.key", f"{policy}/{key}" if key else "", names.qualified_name)
        if key in seen:
            errs.append(duplicate(f"{p}.key", key))
        seen.add(key)
        value = (annotation.get("valueExpression") or "").strip()
        if not value:
            errs.append(required(f"{p}.valueExpression", "valueExpression is not specified"))
        elif len(value.encode()) > MAX_VALUE_EXPRESSION_BYTES:
            errs.append(too_long(f"{p}.valueExpression", MAX_VALUE_EXPRESSION_BYTES))
        elif (problem := expression_problem(value, policy=True, params=params, result=None)) is not None:
            errs.append(invalid(f"{p}.valueExpression", value, problem))
    return errs


def validate_policy(obj: dict[str, Any]) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicy`` (ObjectMeta aside)."""
    spec = obj.get("spec") or {}
    params = bool(spec.get("paramKind"))
    errs: list[FieldError] = []
    if spec.get("failurePolicy") is None:
        errs.append(required("spec.failurePolicy"))
    errs += _enum(spec, "failurePolicy", FAILURE_POLICIES, "spec")
    kind = spec.get("paramKind")
    if kind is not None:
        for key in ("apiVersion", "kind"):
            if not kind.get(key):
                errs.append(required(f"spec.paramKind.{key}"))
    if spec.get("matchConstraints") is None:
        errs.append(required("spec.matchConstraints"))
    else:
        errs += _match_resources(spec["matchConstraints"], "spec.matchConstraints", rules_required=True)
    validations = [v or {} for v in spec.get("validations") or []]
    annotations = [a or {} for a in spec.get("auditAnnotations") or []]
    if not validations and not annotations:
        errs += [required("spec.validations", "validations or auditAnnotations must contain at least one item"),
                 required("spec.auditAnnotations", "validations or auditAnnotations must contain at least one item")]
    errs += _validations(validations, "spec.validations", params)
    errs += _audit_annotations(annotations, (obj.get("metadata") or {}).get("name") or "", "spec.auditAnnotations",
                               params)
    errs += _match_conditions([c or {} for c in spec.get("matchConditions") or []], "spec.matchConditions",
                              partial(expression_problem, policy=True, params=params))
    errs += _variables([v or {} for v in spec.get("variables") or []], "spec.variables", params)
    return errs


def validate_binding(obj: dict[str, Any]) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicyBinding`` (ObjectMeta aside)."""
    spec = obj.get("spec") or {}
    errs = names.check_required("spec.policyName", spec.get("policyName") or "", names.dns1123_subdomain)
    actions = spec.get("validationActions") or []
    if not actions:
        errs.append(required("spec.validationActions", "at least one validation action is required"))
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(not_supported(f"spec.validationActions[{i}]", action, VALIDATION_ACTIONS))
        elif action in seen:
            errs.append(duplicate(f"spec.validationActions[{i}]", action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(invalid("spec.validationActions", _go_strings(actions, "admissionregistration.ValidationAction"),
                            "must not contain both Deny and Warn (repeating the same validation failure "
                            "information in the API response and headers serves no purpose)"))
    if spec.get("matchResources") is not None:
        # (upstream's field path has this spelling)
        errs += _match_resources(spec["matchResources"], "spec.matchResouces", rules_required=False)
    ref = spec.get("paramRef")
    if ref is not None:
        if ref.get("name") and ref.get("selector") is not None:
            errs += [forbidden("spec.paramRef.name", "name and selector are mutually exclusive"),
                     forbidden("spec.paramRef.selector", "name and selector are mutually exclusive")]
        elif not ref.get("name") and ref.get("selector") is None:
            errs.append(required("spec.paramRef", "one of name or selector must be specified"))
        if ref.get("selector") is not None:
            errs += validate_label_selector(ref["selector"], "spec.paramRef.selector")
        if ref.get("parameterNotFoundAction") is None:
            errs.append(required("spec.paramRef.parameterNotFoundAction"))
        errs += _enum(ref, "parameterNotFoundAction", PARAMETER_NOT_FOUND_ACTIONS, "spec.paramRef")
    return errs


class ValidatingAdmissionPolicyStrategy(Strategy):
    """Policies: defaults and validation; the registry enforces them (registry.policies)."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("failurePolicy", "Fail")
            default_match_resources(spec.get("matchConstraints"))

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_policy(obj)


class ValidatingAdmissionPolicyBindingStrategy(Strategy):
    """Bindings: defaults and validation."""

    def default(self, obj: dict[str, Any], ctx: AdmissionContext) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            default_match_resources(spec.get("matchResources"))

    def validate(self, obj: dict[str, Any], ctx: AdmissionContext) -> list[FieldError]:
        return validate_binding(obj)


STRATEGIES: dict[str, Strategy] = {
    "ValidatingWebhookConfiguration": WebhookConfigurationStrategy(mutating=False),
    "MutatingWebhookConfiguration": WebhookConfigurationStrategy(mutating=True),
    "ValidatingAdmissionPolicy": ValidatingAdmissionPolicyStrategy(),
    "ValidatingAdmissionPolicyBinding": ValidatingAdmissionPolicyBindingStrategy(),
}
