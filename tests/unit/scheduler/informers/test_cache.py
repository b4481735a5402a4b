"""Indexed store and lister: keys, indexes kept in step with updates and removals."""

import pytest
from fakeapi.scheduler.informers.cache import Lister, Store


def obj(name, namespace=None, node="", rv="1"):
    meta = {"name": name, "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "spec": {"nodeName": node}}


def by_node(o):
    return [o["spec"]["nodeName"]] if o["spec"]["nodeName"] else []


def test_index_follows_updates_and_removals():
    store = Store()
    store.add_index("node", by_node)
    lister = Lister(store)
    store.upsert(obj("p1", "ns", node="a"))
    store.upsert(obj("p2", "ns", node="a"))
    assert [o["metadata"]["name"] for o in lister.by_index("node", "a")] == ["p1", "p2"]
    old = store.upsert(obj("p1", "ns", node="b", rv="2"))
    assert old["spec"]["nodeName"] == "a"
    assert [o["metadata"]["name"] for o in lister.by_index("node", "a")] == ["p2"]
    assert [o["metadata"]["name"] for o in lister.by_index("node", "b")] == ["p1"]
    store.remove("ns/p2")
    assert lister.by_index("node", "a") == []


def test_index_added_late_covers_existing_objects():
    store = Store()
    store.upsert(obj("p1", "ns", node="a"))
    store.add_index("node", by_node)
    assert len(Lister(store).by_index("node", "a")) == 1


def test_lister_get_and_list_by_namespace():
    store = Store()
    for o in (obj("b", "ns1"), obj("a", "ns1"), obj("c", "ns2"), obj("n1")):
        store.upsert(o)
    lister = Lister(store)
    assert lister.get("ns1", "a")["metadata"]["name"] == "a"
    assert lister.get(None, "n1") is not None
    assert lister.get("ns2", "a") is None
    assert [o["metadata"]["name"] for o in lister.list("ns1")] == ["a", "b"]
    assert len(lister.list()) == 4


def test_unknown_index_and_duplicate_index_fail():
    store = Store()
    with pytest.raises(KeyError):
        store.by_index("nope", "x")
    store.add_index("node", by_node)
    with pytest.raises(ValueError):
        store.add_index("node", by_node)
