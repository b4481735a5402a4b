"""Table columns of the ``admissionregistration.k8s.io/v1`` webhook configurations, after upstream's
``pkg/printers/internalversion/printers.go`` (Name, Webhooks, Age)."""

from __future__ import annotations

from typing import Any

from fakeapi.registry.resource import AGE, Column


def _webhooks(config: dict[str, Any]) -> int:
    return len(config.get("webhooks") or [])


WEBHOOK_CONFIGURATION_COLUMNS = (
    Column("Webhooks", _webhooks, type="integer",
           description="Webhooks indicates the number of webhooks registered in this configuration"),
    AGE,
)
