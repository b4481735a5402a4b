"""Object keys: ``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones."""

import pytest
from fakeapi.scheduler.rules.keys import key_for, object_key


@pytest.mark.parametrize(
    ("obj", "key"),
    [
        ({"metadata": {"name": "n1"}}, "n1"),
        ({"metadata": {"name": "n1", "namespace": ""}}, "n1"),
        ({"metadata": {"name": "p1", "namespace": "ns"}}, "ns/p1"),
    ],
    ids=["cluster-scoped", "empty-namespace", "namespaced"],
)
def test_object_key(obj, key):
    assert object_key(obj) == key
    assert key_for(obj["metadata"].get("namespace"), obj["metadata"]["name"]) == key
