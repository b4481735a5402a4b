"""The models' pydantic validators are built only on demand: nothing in serving builds them.

Requests are decoded by :mod:`fakeapi.models.schema` from the models' fields; a pydantic
validator and serializer per model (~300 of them) would cost every process that imports fakeapi
~90 ms and leave ~6,000 more objects for each of CPython's full collections to traverse.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Runs in a fresh interpreter: another test of this process may have built a model on purpose.
SERVE_AND_COUNT = textwrap.dedent("""
    import asyncio, json
    import aiohttp
    from fakeapi.cluster import FakeCluster
    from fakeapi.models.base import KubeModel

    POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}
    CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    LABEL_PATCH = json.dumps({"metadata": {"labels": {"x": "y"}}})

    async def main():
        async with FakeCluster() as cluster, aiohttp.ClientSession(cluster.url) as http:
            statuses = []
            for path, body in (("/api/v1/namespaces/default/pods", POD),
                               ("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", CLAIM)):
                async with http.post(path, json=body) as resp:
                    statuses.append(resp.status)
                async with http.patch(path + "/" + body["metadata"]["name"], data=LABEL_PATCH,
                                      headers={"Content-Type": "application/merge-patch+json"}) as resp:
                    statuses.append(resp.status)
            for path in ("/api/v1/pods", "/openapi/v3/api/v1", "/openapi/v2", "/apis"):
                async with http.get(path) as resp:
                    statuses.append(resp.status)
            models, todo = [], [KubeModel]
            while todo:
                models.append(model := todo.pop())
                todo.extend(model.__subclasses__())
            built = sorted(m.__name__ for m in models if m.__pydantic_complete__)
            print(json.dumps({"statuses": statuses, "built": built, "models": len(models)}))

    asyncio.run(main())
""")


def test_serving_builds_no_pydantic_validator() -> None:
    out = subprocess.run([sys.executable, "-c", SERVE_AND_COUNT], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["statuses"] == [201, 200, 201, 200, 200, 200, 200, 200]
    assert result["models"] > 250
    assert result["built"] == []


def test_a_model_still_validates_when_asked() -> None:
    from fakeapi.models import MODELS

    pod = MODELS[("", "v1", "Pod")].model_validate({"metadata": {"name": "p"}, "spec": {"containers": []}})
    assert pod.metadata.name == "p"
    assert type(pod).__pydantic_complete__
