"""List pagination, ported from upstream's e2e apimachinery chunking conformance."""

from __future__ import annotations

import random

from tests.integration.api.conftest import CM, Api, configmap


async def _fill(api: Api, count: int) -> None:
    for i in range(count):
        await api.ok("POST", CM, configmap(f"template-{i:04d}"))


async def test_random_limits_return_every_object_in_order_at_one_version(api: Api) -> None:
    await _fill(api, 400)
    rng = random.Random(1)
    for _ in range(3):
        names: list[str] = []
        token, list_rv = "", None
        while True:
            limit = rng.randrange(1, 120)
            path = f"{CM}?limit={limit}" + (f"&continue={token}" if token else "")
            page = await api.ok("GET", path)
            assert len(page["items"]) <= limit
            list_rv = list_rv or page["metadata"]["resourceVersion"]
            assert page["metadata"]["resourceVersion"] == list_rv
            names += [o["metadata"]["name"] for o in page["items"]]
            token = page["metadata"].get("continue", "")
            if not token:
                assert "remainingItemCount" not in page["metadata"]
                break
            assert page["metadata"]["remainingItemCount"] == 400 - len(names)
        assert names == [f"template-{i:04d}" for i in range(400)]


async def test_pages_keep_the_first_pages_version_despite_writes(api: Api) -> None:
    await _fill(api, 10)
    first = await api.ok("GET", f"{CM}?limit=4")
    await api.ok("DELETE", f"{CM}/template-0005")
    await api.ok("POST", CM, configmap("template-0004a"))
    rest = await api.ok("GET", f"{CM}?limit=100&continue={first['metadata']['continue']}")
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert [o["metadata"]["name"] for o in rest["items"]] == [f"template-{i:04d}" for i in range(4, 10)]


async def test_expired_continue_token_is_410_with_inconsistent_token(api: Api) -> None:
    await _fill(api, 10)
    first = await api.ok("GET", f"{CM}?limit=5")
    await api.ok("POST", CM, configmap("late"))
    store = api.cluster.registry.store
    store.log.compact(store.rv)
    status, body = await api.request("GET", f"{CM}?limit=5&continue={first['metadata']['continue']}")
    assert status == 410 and body["reason"] == "Expired"
    inconsistent = body["metadata"]["continue"]
    page = await api.ok("GET", f"{CM}?limit=100&continue={inconsistent}")
    assert [o["metadata"]["name"] for o in page["items"]] == [f"template-{i:04d}" for i in range(5, 10)]
    assert int(page["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])


async def test_selectors_page_without_remaining_count(api: Api) -> None:
    for i in range(6):
        await api.ok("POST", CM, configmap(f"s{i}", {"parity": "even" if i % 2 == 0 else "odd"}))
    page = await api.ok("GET", f"{CM}?limit=2&labelSelector=parity%3Deven")
    assert [o["metadata"]["name"] for o in page["items"]] == ["s0", "s2"]
    assert "continue" in page["metadata"] and "remainingItemCount" not in page["metadata"]
    rest = await api.ok("GET", f"{CM}?limit=2&labelSelector=parity%3Deven&continue={page['metadata']['continue']}")
    assert [o["metadata"]["name"] for o in rest["items"]] == ["s4"]


async def test_bad_continue_token_is_400(api: Api) -> None:
    status, body = await api.request("GET", f"{CM}?limit=1&continue=not-a-token")
    assert status == 400 and body["reason"] == "BadRequest"
    assert "continue key is not valid" in body["message"]
