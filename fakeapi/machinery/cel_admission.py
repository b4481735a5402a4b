"""Admission CEL, compiled as upstream's admission compiler does
(``apiserver/pkg/admission/plugin/cel/compile.go``): webhook match conditions (compiled, and
evaluated when webhooks are called), and ValidatingAdmissionPolicy expressions.

The variables are upstream's: ``object``, ``oldObject`` (dyn), ``request`` and
``namespaceObject``, ``authorizer`` and ``authorizer.requestResource`` with the authz library's
types and functions; for policies also ``params`` (dyn) and ``variables``.  The authorizer is
declared, not provided: an evaluation that calls it fails (and the policy's failurePolicy decides).

Differences from upstream, by engine limits:

- ``request`` and ``namespaceObject`` are ``map(string, dyn)`` (cel-expr-python declares no object
  types), so their fields are not checked and are dyn; an expression whose result is dyn is
  accepted where upstream wants exactly bool (``object.spec.enabled`` compiles here, not there).
- Kubernetes' own CEL libraries (lists, regex, URLs, IPs, CIDRs, quantities, semver, images,
  format, sets) are not in the engine: an expression whose only undeclared names are those
  libraries' names is accepted once it parses, unchecked.  Two-variable comprehensions
  (``all(k, v, ...)``, upstream since 1.32) are refused: their iteration variables read as
  undeclared.
- No cost estimate: upstream's per-expression cost limit is not enforced.
- cel-cpp's parser nests at most 32 deep (cel-go's default: 250): a longer chain of operators,
  selectors or parentheses is refused here.  Other checker differences: ``1 < 1.0`` is refused
  (upstream compares numbers across types), ``[1, 'a']`` is accepted (upstream wants one element
  type), and regular-expression literals are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from fakeapi.machinery.cel_messages import engine_message, issues, run, type_name

__all__ = ["evaluate", "expression_problem", "match_condition_problem", "match_conditions", "policy_program"]

# Names of Kubernetes' CEL libraries (apiserver/pkg/cel/library, cel-go extensions the apiserver
# enables) that cel-expr-python lacks.  The engine reports a namespaced call (``sets.contains``)
# as its parts, so the parts are names here.
_LIBRARY_NAMES = frozenset({
    # lists
    "lists", "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "slice", "flatten", "distinct", "sort",
    "sortBy", "reverse", "range", "first", "last",
    # regex, URLs
    "find", "findAll", "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
    "getQuery",
    # IPs and CIDRs
    "ip", "isIP", "isCanonical", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
    "isLinkLocalUnicast", "isGlobalUnicast", "cidr", "isCIDR", "containsIP", "containsCIDR", "masked",
    "prefixLength",
    # quantities, semver
    "quantity", "isQuantity", "sign", "isGreaterThan", "isLessThan", "compareTo", "asApproximateFloat",
    "asInteger", "isInteger", "add", "sub", "semver", "isSemver", "major", "minor", "patch",
    # container images (1.33+)
    "image", "isImage", "containsDigest", "registry", "repository", "identifier", "tag", "digest",
    # format and its named formats, sets, JSON patch keys
    "format", "named", "validate", "dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName",
    "dns1123LabelPrefix", "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte",
    "date", "datetime", "sets", "contains", "equivalent", "intersects", "jsonpatch", "escapeKey",
    # two-variable comprehensions' transforms (their iteration variables are not recognized: see above)
    "transformList", "transformMap", "transformMapEntry",
})
# An issue's first line (the echoed source lines start with " | ", so they cannot match).
_UNDECLARED = re.compile(r"^ERROR: <input>:\d+:\d+: undeclared reference to '([^']*)'", re.M)


def _authz_functions() -> list[cel.FunctionDecl]:
    """The authz library's member functions (``authorizer.group('apps').resource(...)...``)."""
    t = cel.Type
    authorizer, path_check, group_check, resource_check, decision = (
        t.AbstractType(f"kubernetes.authorization.{name}")
        for name in ("Authorizer", "PathCheck", "GroupCheck", "ResourceCheck", "Decision"))
    s = t.STRING
    signatures: dict[str, list[tuple[str, cel.Type, list[cel.Type]]]] = {
        "path": [("authorizer_path", path_check, [authorizer, s])],
        "group": [("authorizer_group", group_check, [authorizer, s])],
        "serviceAccount": [("authorizer_serviceaccount", authorizer, [authorizer, s, s])],
        "resource": [("groupcheck_resource", resource_check, [group_check, s])],
        **{name: [(f"resourcecheck_{name.lower()}", resource_check, [resource_check, s])]
           for name in ("subresource", "namespace", "name")},
        "fieldSelector": [("authorizer_fieldselector", resource_check, [resource_check, s])],
        "labelSelector": [("authorizer_labelselector", resource_check, [resource_check, s])],
        "check": [("pathcheck_check", decision, [path_check, s]),
                  ("resourcecheck_check", decision, [resource_check, s])],
        "errored": [("decision_errored", t.BOOL, [decision])],
        "error": [("decision_error", s, [decision])],
        "allowed": [("decision_allowed", t.BOOL, [decision])],
        "reason": [("decision_reason", s, [decision])],
    }
    return [cel.FunctionDecl(name, [cel.Overload(oid, result, params, is_member=True)
                                    for oid, result, params in overloads])
            for name, overloads in signatures.items()]


@lru_cache(maxsize=3)
def _env(policy: bool = False, params: bool = False) -> cel.Env:
    t = cel.Type
    record = t.Map(t.STRING, t.DYN)
    policy_variables: dict[str, cel.Type] = {"variables": record} if policy else {}
    if params:  # declared only for a policy with a paramKind, as upstream
        policy_variables["params"] = t.DYN
    return cel.NewEnv(
        variables={"object": t.DYN, "oldObject": t.DYN, "request": record, "namespaceObject": record,
                   "authorizer": t.AbstractType("kubernetes.authorization.Authorizer"),
                   "authorizer.requestResource": t.AbstractType("kubernetes.authorization.ResourceCheck"),
                   **policy_variables},
        extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(), ext_math.ExtMath(),
                    ext_encoders.ExtEncoders(), ext_optional.ExtOptional()],
        functions=_authz_functions(),
    )


def expression_problem(expression: str, *, policy: bool = False, params: bool = False,
                       result: str | None = "BOOL") -> str | None:
    """Why an admission expression does not compile (upstream's detail), or None if it does.
    ``result``: the type it must have (BOOL, STRING for a message expression, None for any).
    A policy's expression typed dyn is refused, as upstream's checker refuses it (``object`` is
    dyn there too), unless it reads ``variables``: upstream types each variable, this engine
    cannot declare their types.  A webhook's match condition typed dyn is accepted (see above)."""
    try:
        program = _env(policy, params).compile(expression)
    except RuntimeError as err:
        message = engine_message(err, truncate=False)
        undeclared = _UNDECLARED.findall(message)
        # Accepted only when every issue is such a function: a syntax error stops the checker
        # before any name is looked up, and any other issue is the expression's own.
        if undeclared and len(undeclared) == issues(message) and \
                all(name in _LIBRARY_NAMES for name in undeclared):
            return None
        return f"compilation failed: {engine_message(err)}"
    found = program.return_type().name()
    if result is None or found == result or (found == "DYN" and (not policy or "variables" in expression)):
        return None
    return f"must evaluate to {type_name(result)} but got {type_name(found)}"


def match_condition_problem(expression: str) -> str | None:
    """Why a webhook match condition does not compile, or None if it does."""
    return expression_problem(expression)


@lru_cache(maxsize=4096)
def policy_program(expression: str) -> cel.Expression | str:
    """A policy expression compiled, or why it cannot be (a library function the engine lacks
    compiles at validation but not here: its evaluation fails)."""
    try:
        return _env(True, True).compile(expression)
    except RuntimeError as err:
        return f"compilation failed: {engine_message(err)}"


def evaluate(expression: str, activation: dict[str, Any]) -> tuple[Any, str | None]:
    """A policy expression's value over ``activation`` (object, oldObject, request, params,
    namespaceObject, variables), or (None, the error)."""
    program = policy_program(expression)
    if isinstance(program, str):
        return None, program
    return run(program, activation)


def match_conditions(conditions: Iterable[Mapping[str, Any]],
                     activation: dict[str, Any]) -> tuple[bool, list[tuple[Mapping[str, Any], str]]]:
    """Upstream's match-condition matcher: (False, []) as soon as one condition is false (errors
    of others then do not count), else (True, each failing condition with its error)."""
    errors = []
    for condition in conditions:
        value, error = evaluate(condition.get("expression") or "", activation)
        if error is not None:
            errors.append((condition, error))
        elif value is not True:
            return False, []
    return True, errors
