"""Fault injection at the HTTP edge: what the server's middleware asks to apply
:class:`~fakeapi.machinery.faults.FaultSet` decisions, and the admin endpoint that manages faults
from outside the process.

It costs one truth test per request while no fault is set.  The admin endpoint lives
under ``/fakeapi/v1/``, a path upstream never serves, and only when the server was started with
``ServerOptions.enable_faults`` (``fakeapi serve --enable-faults``):

- ``GET /fakeapi/v1/faults`` lists the active faults; ``POST`` adds one (a JSON rule, see
  :func:`~fakeapi.machinery.faults.parse_rule`) and answers it with its ``id``;
  ``DELETE /fakeapi/v1/faults[/{id}]`` ends all faults, or one.
- ``POST /fakeapi/v1/watches/close`` ends every open watch; ``POST /fakeapi/v1/history/compact``
  compacts the event history, so resuming any watch from an earlier revision gets 410.

Requests to ``/fakeapi/`` itself are never faulted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web
from aiohttp.typedefs import Handler

from fakeapi.auth.attributes import request_attributes
from fakeapi.auth.users import INSECURE_SUPERUSER
from fakeapi.errors import BadRequest, NotFound, success_status
from fakeapi.machinery.faults import Decision, FaultSet, RequestFacts, parse_rule
from fakeapi.server.handlers import json_response
from fakeapi.server.state import REGISTRY

FAULTS = web.AppKey("faults", FaultSet)
ADMIN_PREFIX = "/fakeapi/"


def request_facts(request: web.Request) -> RequestFacts:
    """The request as fault rules see it."""
    attrs = request_attributes(INSECURE_SUPERUSER, request.method, request.path, request.query)
    return RequestFacts(verb=attrs.verb, resource=attrs.resource, subresource=attrs.subresource,
                        api_group=attrs.api_group, namespace=attrs.namespace, name=attrs.name,
                        user_agent=request.headers.get("User-Agent", ""), resource_request=attrs.resource_request)


def fault_for(request: web.Request, faults: FaultSet) -> Decision | None:
    """What ``faults`` decide for ``request``: None while no fault is set (one truth test), for
    the admin endpoint's own requests, and for requests no fault matches."""
    if not faults or request.path.startswith(ADMIN_PREFIX):
        return None
    return faults.decide(request_facts(request))


async def faulted(request: web.Request, handler: Handler, decision: Decision) -> web.StreamResponse:
    """Serve ``request`` as ``decision`` says: after its latency, its error or the handler's answer."""
    if decision.latency:
        await asyncio.sleep(decision.latency)
    if decision.error is None:
        return await handler(request)
    response = json_response(decision.error.to_status(), decision.error.code)
    response.headers.update(decision.headers)
    return response


async def _list(request: web.Request) -> web.Response:
    items = [fault.to_dict() for fault in request.app[FAULTS]]
    return json_response({"kind": "FaultList", "apiVersion": "fakeapi.dev/v1", "items": items})


async def _add(request: web.Request) -> web.Response:
    try:
        body = await request.json()
    except ValueError as exc:
        raise BadRequest(f"the fault is not JSON: {exc}") from exc
    fault = request.app[FAULTS].add(parse_rule(body))
    return json_response(fault.to_dict(), 201)


async def _remove(request: web.Request) -> web.Response:
    text = request.match_info["id"]
    fault = request.app[FAULTS].get(int(text)) if text.isdigit() else None
    if fault is None:
        raise NotFound(f'fault "{text}" not found', details={"name": text, "kind": "faults"})
    fault.remove()
    return json_response(success_status())


async def _clear(request: web.Request) -> web.Response:
    request.app[FAULTS].clear()
    return json_response(success_status())


async def _close_watches(request: web.Request) -> web.Response:
    request.app[REGISTRY].reads.close_all_watches()
    return json_response(success_status())


async def _compact(request: web.Request) -> web.Response:
    rv = request.app[REGISTRY].reads.compact_history()
    return json_response({**success_status(), "metadata": {"resourceVersion": str(rv)}})


def add_admin_routes(app: web.Application, wrap: Callable[[Handler], Handler]) -> None:
    """Serve the fault-injection admin endpoint on ``app``, each handler wrapped by ``wrap``."""
    r = app.router
    r.add_get("/fakeapi/v1/faults", wrap(_list))
    r.add_post("/fakeapi/v1/faults", wrap(_add))
    r.add_delete("/fakeapi/v1/faults", wrap(_clear))
    r.add_delete("/fakeapi/v1/faults/{id}", wrap(_remove))
    r.add_post("/fakeapi/v1/watches/close", wrap(_close_watches))
    r.add_post("/fakeapi/v1/history/compact", wrap(_compact))
