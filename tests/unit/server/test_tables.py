"""Which Accept headers ask for server-side printing (a Table)."""

from __future__ import annotations

import pytest

from fakeapi.server.tables import accepts_only_table, wants_table

KUBECTL_GET = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
               "application/json")


@pytest.mark.parametrize(("accept", "table", "only_table"), [
    ("", False, False),
    ("application/json", False, False),
    ("*/*", False, False),
    (KUBECTL_GET, True, False),
    ("application/json; as=Table; v=v1; g=meta.k8s.io", True, True),
    ("application/json;as=Table;v=v1;g=meta.k8s.io", True, True),
    ("application/json;as=Table;v=v1", False, True),
    ("application/json,application/json;as=Table;v=v1;g=meta.k8s.io", False, False),
    ("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", False, False),
], ids=["none", "json", "anything", "kubectl-get", "spaced-params", "table-only", "table-without-group",
        "table-second", "partial-metadata"])
def test_table_negotiation(accept: str, table: bool, only_table: bool) -> None:
    assert wants_table(accept) is table
    assert accepts_only_table(accept) is only_table
