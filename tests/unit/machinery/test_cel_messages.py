"""cel-expr-python's errors and types as cel-go writes them."""

from __future__ import annotations

import pytest

from fakeapi.machinery.cel_messages import engine_message, issues, type_name


@pytest.mark.parametrize(("engine", "go"), [
    ("INT", "int"), ("NULL", "null_type"), ("LIST<INT>", "list(int)"), ("MAP<STRING, LIST<DOUBLE>>",
                                                                         "map(string, list(double))"),
    ("optional_type<INT>", "optional_type(int)"), ("TYPE<INT>", "type(int)"),
    ("TIMESTAMP", "google.protobuf.Timestamp"),
    ("kubernetes.authorization.Decision", "kubernetes.authorization.Decision"),
])
def test_type_names_are_cel_gos(engine: str, go: str) -> None:
    assert type_name(engine) == go


def test_messages_lose_the_engine_status_and_keep_at_most_100_issues() -> None:
    one = "ERROR: <input>:1:1: undeclared reference to 'x'\n | x\n | ^"
    err = RuntimeError("INVALID_ARGUMENT: " + "\n".join([one] * 130) + " [INVALID_ARGUMENT]")
    full = engine_message(err, truncate=False)
    assert not full.startswith("INVALID_ARGUMENT") and issues(full) == 130
    shown = engine_message(err)
    assert issues(shown) == 100 and shown.endswith("\n30 more errors were truncated")
    assert engine_message(RuntimeError("INVALID_ARGUMENT: " + one)) == one
