"""The ServiceAccount and DefaultTolerationSeconds admission plugins on pod create."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.validation.pod_admission import admit_pod_create

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {**NOT_READY, "key": "node.kubernetes.io/unreachable"}


@pytest.mark.parametrize(("tolerations", "added"), [
    ([], [NOT_READY, UNREACHABLE]),
    ([{"operator": "Exists"}], []),
    ([{"operator": "Exists", "effect": "NoExecute"}], []),
    ([{"operator": "Exists", "effect": "NoSchedule"}], [NOT_READY, UNREACHABLE]),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}], [UNREACHABLE]),
    ([{"key": "other", "operator": "Exists", "effect": "NoExecute"}], [NOT_READY, UNREACHABLE]),
], ids=["none", "tolerates-everything", "tolerates-every-noexecute", "noschedule-only", "not-ready-any-effect",
        "other-key"])
def test_default_tolerations_fill_only_what_the_pod_lacks(tolerations: list[dict[str, Any]],
                                                          added: list[dict[str, Any]]) -> None:
    pod = {"spec": {"tolerations": list(tolerations)}}
    admit_pod_create(pod)
    assert pod["spec"]["tolerations"] == tolerations + added


@pytest.mark.parametrize(("spec", "name"), [
    ({}, "default"),
    ({"serviceAccountName": "builder"}, "builder"),
    ({"serviceAccount": "legacy"}, "legacy"),
    ({"serviceAccountName": "new", "serviceAccount": "old"}, "new"),
], ids=["unset", "named", "deprecated-field", "both"])
def test_service_account_is_defaulted_and_mirrored(spec: dict[str, str], name: str) -> None:
    pod: dict[str, Any] = {"spec": dict(spec)}
    admit_pod_create(pod)
    assert (pod["spec"]["serviceAccountName"], pod["spec"]["serviceAccount"]) == (name, name)
