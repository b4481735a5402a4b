"""``cryptography`` is loaded only when a server first needs it (a token, or ``--secure``).

Importing it adds ~16 ms to the start of every process that imports fakeapi: each pytest worker,
``fakeapi serve``, the demo.  Plain clusters never sign anything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Runs in a fresh interpreter: another test of this process has loaded cryptography already.
SERVE_THEN_SIGN = textwrap.dedent("""
    import asyncio, json, sys
    import aiohttp
    import fakeapi.fixtures
    from fakeapi.cluster import FakeCluster

    def loaded():
        return any(name == "cryptography" or name.startswith("cryptography.") for name in sys.modules)

    async def main():
        seen = {"imported": loaded()}
        async with FakeCluster() as cluster, aiohttp.ClientSession(cluster.url) as http:
            async with http.post("/api/v1/namespaces/default/serviceaccounts",
                                 json={"metadata": {"name": "robot"}}) as resp:
                assert resp.status == 201, await resp.text()
            seen["served"] = loaded()
            async with http.post("/api/v1/namespaces/default/serviceaccounts/robot/token",
                                 json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                       "spec": {}}) as resp:
                assert resp.status == 201, await resp.text()
                token = (await resp.json())["status"]["token"]
            async with http.post("/apis/authentication.k8s.io/v1/tokenreviews",
                                 json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                       "spec": {"token": token}}) as resp:
                review = (await resp.json())["status"]
            seen["signed"] = loaded()
            seen["user"] = review.get("user", {}).get("username")
        print(json.dumps(seen))

    asyncio.run(main())
""")


def test_cryptography_is_loaded_with_the_first_token() -> None:
    out = subprocess.run([sys.executable, "-c", SERVE_THEN_SIGN], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    seen = json.loads(out.splitlines()[-1])
    assert seen == {"imported": False, "served": False, "signed": True,
                    "user": "system:serviceaccount:default:robot"}
