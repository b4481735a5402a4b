"""Typed application state keys (aiohttp ``AppKey``), so handlers never guess types."""

from __future__ import annotations

from aiohttp import web

from fakeapi.config import ServerOptions
from fakeapi.registry.access import Access
from fakeapi.registry.rest import Registry
from fakeapi.server.openapi import OpenAPICache
from fakeapi.server.webhooks import Webhooks

REGISTRY = web.AppKey("registry", Registry)
OPTIONS = web.AppKey("options", ServerOptions)
OPENAPI = web.AppKey("openapi", OpenAPICache)
ACCESS = web.AppKey("access", Access)
WEBHOOKS = web.AppKey("webhooks", Webhooks)
