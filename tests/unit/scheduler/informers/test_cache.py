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


def test_indexes_of_one_function_share_one_computation():
    calls = []

    def counted_by_node(o):
        calls.append(o["metadata"]["name"])
        return by_node(o)

    store = Store()
    store.add_index("scheduler/node", counted_by_node)
    store.add_index("kubelet/node", counted_by_node)
    store.add_index("other/node", lambda o: [o["spec"]["nodeName"].upper()] if o["spec"]["nodeName"] else [])
    lister = Lister(store)
    store.upsert(obj("p1", "ns", node="a"))
    assert calls == ["p1"]  # once for both names
    store.upsert(obj("p1", "ns", node="b", rv="2"))
    assert calls == ["p1", "p1"]  # the new object only: the replaced one's values are remembered
    for name in ("scheduler/node", "kubelet/node"):
        assert lister.by_index(name, "a") == []
        assert [o["metadata"]["name"] for o in lister.by_index(name, "b")] == ["p1"]
    assert [o["metadata"]["name"] for o in lister.by_index("other/node", "B")] == ["p1"]
    assert lister.by_index("other/node", "b") == []


@pytest.mark.parametrize(("before", "after", "expected"), [
    pytest.param(["a"], ["a"], {"a": ["p1"]}, id="unchanged"),
    pytest.param(["a"], ["a", "b"], {"a": ["p1"], "b": ["p1"]}, id="value-added"),
    pytest.param(["a", "b"], ["b"], {"a": [], "b": ["p1"]}, id="value-dropped"),
    pytest.param(["a", "b"], ["b", "a"], {"a": ["p1"], "b": ["p1"]}, id="reordered"),
    pytest.param(["a"], [], {"a": []}, id="all-dropped"),
])
def test_update_moves_only_changed_index_values(before, after, expected):
    store = Store()
    store.add_index("tags", lambda o: o["spec"]["tags"])
    store.upsert({"metadata": {"name": "p1", "namespace": "ns"}, "spec": {"tags": before}})
    store.upsert({"metadata": {"name": "p2", "namespace": "ns"}, "spec": {"tags": ["b"]}})
    store.upsert({"metadata": {"name": "p1", "namespace": "ns"}, "spec": {"tags": after}})
    got = {value: [o["metadata"]["name"] for o in store.by_index("tags", value) if o["metadata"]["name"] == "p1"]
           for value in expected}
    assert got == expected
    assert [o["metadata"]["name"] for o in store.by_index("tags", "b")][-1] == "p2"
    store.remove("ns/p1")
    assert all(o["metadata"]["name"] == "p2" for value in ("a", "b") for o in store.by_index("tags", value))


def test_late_index_values_are_remembered_for_updates_and_removals():
    store = Store()
    store.upsert(obj("p1", "ns", node="a"))
    store.add_index("node", by_node)
    store.upsert(obj("p1", "ns", node="b", rv="2"))
    assert store.by_index("node", "a") == []
    assert [o["metadata"]["name"] for o in store.by_index("node", "b")] == ["p1"]
    store.remove("ns/p1")
    assert store.by_index("node", "b") == []
    assert store.by_index("namespace", "ns") == []
    store.upsert(obj("p1", "ns", node="b", rv="3"))  # back after its removal: indexed as new
    assert [o["metadata"]["name"] for o in store.by_index("node", "b")] == ["p1"]
