"""Watch semantics, ported from upstream's e2e apimachinery watch and watchlist conformance."""

from __future__ import annotations

import asyncio
import random
import socket
from typing import Any

from fakeapi.fixtures.plugin import wait_for

from tests.integration.api.conftest import CM, Api, configmap


async def _update_label(api: Api, name: str, labels: dict[str, str], data: dict[str, str] | None = None) -> dict:
    obj = await api.ok("GET", f"{CM}/{name}")
    obj["metadata"]["labels"] = labels
    if data is not None:
        obj["data"] = data
    return await api.ok("PUT", f"{CM}/{name}", obj)


async def test_label_filtered_watchers_see_only_their_objects(api: Api) -> None:
    base = f"{CM}?watch=1"
    async with api.watch(f"{base}&labelSelector=watch-this%3DA") as wa, \
            api.watch(f"{base}&labelSelector=watch-this%3DB") as wb, \
            api.watch(f"{base}&labelSelector=watch-this%20in%20(A,B)") as wab:
        await api.ok("POST", CM, configmap("a", {"watch-this": "A"}))
        await api.ok("PUT", f"{CM}/a", configmap("a", {"watch-this": "A"}, {"mutation": "1"}))
        await api.ok("POST", CM, configmap("b", {"watch-this": "B"}))
        await api.ok("DELETE", f"{CM}/a")
        await api.ok("DELETE", f"{CM}/b")
        got_a = [(e["type"], e["object"]["metadata"]["name"]) for e in await wa.events(3)]
        got_b = [(e["type"], e["object"]["metadata"]["name"]) for e in await wb.events(2)]
        got_ab = [(e["type"], e["object"]["metadata"]["name"]) for e in await wab.events(5)]
        await wa.expect_silence(0.1)
        await wb.expect_silence(0.1)
    assert got_a == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert got_b == [("ADDED", "b"), ("DELETED", "b")]
    assert got_ab == [("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a"), ("DELETED", "b")]


async def test_watches_of_one_namespace_or_one_name_see_only_their_objects(api: Api) -> None:
    await api.ok("POST", "/api/v1/namespaces", {"metadata": {"name": "other"}})
    other = CM.replace("/default/", "/other/")
    everywhere = "/api/v1/configmaps?watch=1"
    async with api.watch(f"{CM}?watch=1") as here, \
            api.watch(f"{CM}?watch=1&fieldSelector=metadata.name%3Dx") as x_here, \
            api.watch(f"{everywhere}&fieldSelector=metadata.name%3Dx") as x_anywhere, \
            api.watch(f"{everywhere}&fieldSelector=metadata.namespace%3Dother") as in_other, \
            api.watch(everywhere) as every:
        await api.ok("POST", CM, configmap("x"))
        await api.ok("POST", CM, configmap("y"))
        await api.ok("POST", other, configmap("x"))
        await api.ok("DELETE", f"{CM}/x")

        def seen(events: list[dict]) -> list[tuple[str, str, str]]:
            return [(e["type"], e["object"]["metadata"]["namespace"], e["object"]["metadata"]["name"]) for e in events]

        assert seen(await here.events(3)) == [("ADDED", "default", "x"), ("ADDED", "default", "y"),
                                              ("DELETED", "default", "x")]
        assert seen(await x_here.events(2)) == [("ADDED", "default", "x"), ("DELETED", "default", "x")]
        assert seen(await x_anywhere.events(3)) == [("ADDED", "default", "x"), ("ADDED", "other", "x"),
                                                    ("DELETED", "default", "x")]
        assert seen(await in_other.events(1)) == [("ADDED", "other", "x")]
        assert len(await every.events(4)) == 4
        for watch in (here, x_here, x_anywhere, in_other):
            await watch.expect_silence(0.1)


async def test_watch_from_resource_version_sees_only_later_changes(api: Api) -> None:
    await api.ok("POST", CM, configmap("c", data={"mutation": "0"}))
    first = await api.ok("PUT", f"{CM}/c", configmap("c", data={"mutation": "1"}))
    await api.ok("PUT", f"{CM}/c", configmap("c", data={"mutation": "2"}))
    await api.ok("DELETE", f"{CM}/c")
    rv = first["metadata"]["resourceVersion"]
    async with api.watch(f"{CM}?watch=1&resourceVersion={rv}") as w:
        events = await w.events(2)
        await w.expect_silence(0.1)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["data"] == {"mutation": "2"}
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] < rvs[1]


async def test_restarted_watch_misses_nothing(api: Api) -> None:
    await api.ok("POST", CM, configmap("r", data={"n": "0"}))
    async with api.watch(f"{CM}?watch=1") as w:
        for i in range(1, 3):
            await api.ok("PUT", f"{CM}/r", configmap("r", data={"n": str(i)}))
        events = await w.events(3)
    last_rv = events[-1]["object"]["metadata"]["resourceVersion"]
    for i in range(3, 6):  # changes while nobody watches
        await api.ok("PUT", f"{CM}/r", configmap("r", data={"n": str(i)}))
    async with api.watch(f"{CM}?watch=1&resourceVersion={last_rv}") as w:
        resumed = await w.events(3)
    assert [e["object"]["data"]["n"] for e in resumed] == ["3", "4", "5"]


async def test_label_moving_away_and_back_is_deleted_then_added(api: Api) -> None:
    await api.ok("POST", CM, configmap("m", {"watch-this": "yes"}))
    async with api.watch(f"{CM}?watch=1&labelSelector=watch-this%3Dyes") as w:
        added = await w.next()
        await _update_label(api, "m", {"watch-this": "no"})
        gone = await w.next()
        await _update_label(api, "m", {"watch-this": "no"}, {"while": "away"})
        await w.expect_silence(0.1)
        await _update_label(api, "m", {"watch-this": "yes"})
        back = await w.next()
    assert added["type"] == "ADDED"
    assert gone["type"] == "DELETED" and gone["object"]["metadata"]["labels"] == {"watch-this": "yes"}
    assert int(gone["object"]["metadata"]["resourceVersion"]) > int(added["object"]["metadata"]["resourceVersion"])
    assert back["type"] == "ADDED" and back["object"]["data"] == {"while": "away"}


async def test_many_watchers_from_successive_versions_agree_on_order(api: Api) -> None:
    await api.ok("POST", CM, configmap("seed"))
    stop = asyncio.Event()
    rng = random.Random(7)

    async def churn() -> None:
        i = 0
        while not stop.is_set():
            name = f"cm-{rng.randrange(10)}"
            status, _ = await api.request("POST", CM, configmap(name))
            if status == 409:
                if rng.random() < 0.5:
                    await api.request("DELETE", f"{CM}/{name}")
                else:
                    await api.request("PUT", f"{CM}/{name}", configmap(name, data={"i": str(i)}))
            i += 1

    writer = asyncio.create_task(churn())
    watches = []
    try:
        for _ in range(30):  # open watchers at successive resourceVersions while writes continue
            listed = await api.ok("GET", CM)
            w = api.watch(f"{CM}?watch=1&resourceVersion={listed['metadata']['resourceVersion']}")
            await w.__aenter__()
            watches.append(w)
            await asyncio.sleep(0)
        store = api.cluster.registry.store
        target = store.rv + 50  # let the churn go on a while after the last watcher opened
        await wait_for(lambda: store.rv >= target, message="50 more writes")
    finally:
        stop.set()
        await writer
    final_rv = int((await api.ok("GET", CM))["metadata"]["resourceVersion"])
    orders = []
    for w in watches:
        seen: list[int] = []
        while not seen or seen[-1] < final_rv:
            ev = await w.next()
            seen.append(int(ev["object"]["metadata"]["resourceVersion"]))
        orders.append(seen)
        await w.__aexit__()
    longest = max(orders, key=len)
    assert len(longest) > 20
    for order in orders:
        assert order == sorted(order)
        assert order == longest[len(longest) - len(order):], "watchers disagree on event order"


async def test_watch_from_compacted_version_gets_410_in_stream(api: Api) -> None:
    for i in range(3):
        await api.ok("POST", CM, configmap(f"x{i}"))
    store = api.cluster.registry.store
    store.log.compact(store.rv - 1)
    async with api.watch(f"{CM}?watch=1&resourceVersion=1") as w:
        assert w.status == 200
        ev = await w.next()
    assert ev["type"] == "ERROR"
    assert ev["object"]["code"] == 410 and ev["object"]["reason"] == "Expired"
    assert "too old resource version" in ev["object"]["message"]


async def test_bookmarks_and_watchlist_initial_events_end(api: Api) -> None:
    await api.ok("POST", CM, configmap("w1"))
    await api.ok("POST", CM, configmap("w2"))
    path = (f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
            "&resourceVersion=")
    async with api.watch(path) as w:
        first = await w.events(3, skip_bookmarks=False)
        await api.ok("POST", CM, configmap("w3"))
        live = await w.next()
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in first[:2]] == [("ADDED", "w1"), ("ADDED", "w2")]
    assert first[2]["type"] == "BOOKMARK"
    assert first[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert live["type"] == "ADDED" and live["object"]["metadata"]["name"] == "w3"


async def test_watchlist_requires_not_older_than(api: Api) -> None:
    status, body = await api.request("GET", f"{CM}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true")
    assert status == 422 and body["reason"] == "Invalid"
    assert "resourceVersionMatch" in body["message"]


async def test_watchlist_with_only_table_accept_is_406(api: Api) -> None:
    status, body = await api.request(
        "GET", f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"})
    assert status == 406 and body["reason"] == "NotAcceptable"


async def test_timeout_seconds_ends_the_stream(api: Api) -> None:
    async with api.watch(f"{CM}?watch=1&timeoutSeconds=1") as w:
        assert w.resp is not None
        rest = await asyncio.wait_for(w.resp.content.read(), 5)
    assert rest == b""


async def test_slow_watcher_is_closed_with_410_and_others_keep_up() -> None:
    import aiohttp

    from fakeapi.cluster import FakeCluster
    from fakeapi.config import ServerOptions

    def small_receive_buffer(addr_info: Any) -> socket.socket:
        # A fixed receive buffer turns the kernel's autotuning off (tcp_rmem may reach 32 MB): the
        # slow reader's socket cannot absorb the 6 MB below, so the server must find it slow.
        family, kind, proto, _, _ = addr_info
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        return sock

    async with FakeCluster(control_plane=False, options=ServerOptions(watcher_queue_limit=20)) as cluster, \
            aiohttp.ClientSession(base_url=cluster.url) as session, \
            aiohttp.ClientSession(base_url=cluster.url,
                                  connector=aiohttp.TCPConnector(socket_factory=small_receive_buffer)) as slow_session:
        api = Api(session, cluster)
        big = "x" * 20_000
        async with Api(slow_session, cluster).watch(f"{CM}?watch=1") as slow, api.watch(f"{CM}?watch=1") as fast:
            seen = 0
            for i in range(300):  # the slow reader never reads while these land
                await api.ok("POST", CM, configmap(f"big-{i}", data={"v": big}))
                ev = await fast.next()
                assert ev["object"]["metadata"]["name"] == f"big-{i}"
                seen += 1
            assert seen == 300
            last = None
            async for ev in slow.lines():
                last = ev
            assert last is not None and last["type"] == "ERROR" and last["object"]["code"] == 410
        await wait_for(lambda: cluster.registry.store.hub.count() == 0, message="closed watches unregistered")


async def test_stalled_streaming_list_gets_every_event_once_in_order(api: Api) -> None:
    """Initial events and then live ones, far more than the connection buffers while the client
    reads nothing: the server's direct chunk writes and its waiting writer together deliver each
    event once, in order (neither path may drop or repeat lines the other took)."""
    big = "x" * 20_000
    for i in range(40):
        await api.ok("POST", CM, configmap(f"initial-{i:02}", data={"v": big}))
    path = (f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
            "&resourceVersion=")
    async with api.watch(path) as w:
        for i in range(300):  # nothing is read while these land
            await api.ok("POST", CM, configmap(f"live-{i:03}", data={"v": big}))
        seen = [(e["type"], e["object"]["metadata"].get("name")) for e in await w.events(341, skip_bookmarks=False)]
    assert seen == [*[("ADDED", f"initial-{i:02}") for i in range(40)], ("BOOKMARK", None),
                    *[("ADDED", f"live-{i:03}") for i in range(300)]]


async def test_bookmarks_come_every_interval_to_each_watch_and_timeouts_still_end_streams() -> None:
    """One bookmark timer per server wakes every watch with bookmarks when its next one is due; a
    watch's own deadline (timeoutSeconds) still ends it on time, bookmarks or not."""
    import aiohttp

    from fakeapi.cluster import FakeCluster
    from fakeapi.config import ServerOptions

    interval = 0.2
    async with FakeCluster(control_plane=False, options=ServerOptions(bookmark_interval=interval)) as cluster, \
            aiohttp.ClientSession(base_url=cluster.url) as session:
        api = Api(session, cluster)
        loop = asyncio.get_running_loop()
        marks = f"{CM}?watch=1&allowWatchBookmarks=true"
        # Before the watches open: each one's bookmarks are due an interval after it registered,
        # which is a little before its response reaches this client.
        opened = loop.time()
        async with api.watch(marks) as a, api.watch(marks) as b, api.watch(f"{marks}&timeoutSeconds=1") as timed, \
                api.watch(f"{CM}?watch=1&timeoutSeconds=1") as plain:
            for w in (a, b):
                ev = await w.next()
                assert ev["type"] == "BOOKMARK"
            await api.ok("POST", CM, configmap("between"))
            for w in (a, b):  # a live event, then the bookmarks go on
                assert (await w.next())["type"] == "ADDED"
                types = [ev["type"] for ev in await w.events(2, skip_bookmarks=False)]
                assert types == ["BOOKMARK", "BOOKMARK"]
            assert loop.time() - opened >= 3 * interval
            timed_events = [ev["type"] async for ev in timed.lines()]  # ends at its deadline
            assert "ADDED" in timed_events and timed_events.count("BOOKMARK") >= 2
            assert [ev["type"] async for ev in plain.lines()] == ["ADDED"]  # no bookmarks asked for
        await wait_for(lambda: cluster.registry.store.hub.count() == 0, message="closed watches unregistered")


async def test_a_deadline_before_the_next_bookmark_ends_the_watch_on_time() -> None:
    import aiohttp

    from fakeapi.cluster import FakeCluster
    from fakeapi.config import ServerOptions

    async with FakeCluster(control_plane=False, options=ServerOptions(bookmark_interval=60.0)) as cluster, \
            aiohttp.ClientSession(base_url=cluster.url) as session:
        async with Api(session, cluster).watch(f"{CM}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1") as w:
            assert w.resp is not None
            assert await asyncio.wait_for(w.resp.content.read(), 10) == b""  # long before the bookmark


async def test_a_namespace_watch_sees_its_namespace_and_an_all_namespaces_watch_sees_all(api: Api) -> None:
    await api.ok("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    other = "/api/v1/namespaces/other/configmaps"
    await api.ok("POST", CM, configmap("mine-1"))
    await api.ok("POST", other, configmap("theirs-1"))
    query = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    async with api.watch(f"{CM}?{query}") as mine, api.watch(f"/api/v1/configmaps?{query}") as every:
        mine_initial = await mine.events(2, skip_bookmarks=False)
        every_initial = await every.events(3, skip_bookmarks=False)
        await api.ok("POST", other, configmap("theirs-2"))
        await api.ok("POST", CM, configmap("mine-2"))
        assert (await mine.next())["object"]["metadata"]["name"] == "mine-2"
        assert [(await every.next())["object"]["metadata"]["name"] for _ in range(2)] == ["theirs-2", "mine-2"]
    assert [e["object"]["metadata"].get("name") for e in mine_initial] == ["mine-1", None]
    assert sorted(e["object"]["metadata"].get("name") or "" for e in every_initial) == ["", "mine-1", "theirs-1"]
