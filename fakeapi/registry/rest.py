"""One API server's state: the served kinds, the one read path and the one write pipeline,
over one store.

Handlers go ``registry.reads`` / ``registry.writes`` → store; nothing else touches the store.
"""

from __future__ import annotations

from collections.abc import Iterable

from fakeapi.config import FeatureGates
from fakeapi.machinery.servicenet import ServiceNetwork
from fakeapi.machinery.tokens import TokenIssuer
from fakeapi.registry.reads import Reader
from fakeapi.registry.resource import KindTable, ResourceType
from fakeapi.registry.writes import Writer
from fakeapi.store.objects import ObjectStore


class Registry:
    """The kind table with the reader and writer of one store."""

    def __init__(self, store: ObjectStore, kinds: Iterable[ResourceType], gates: FeatureGates, *,
                 network: ServiceNetwork | None = None) -> None:
        """``network``: where Services get cluster IPs and node ports (default: upstream's ranges)."""
        # Tests reach the store to provoke compaction and count watchers; the server never does.
        self.store = store
        self.gates = gates
        self.kinds = KindTable(kinds)
        self.reads = Reader(store)
        # The server's ServiceAccount token issuer: TokenRequest signs with it, authentication checks.
        self.tokens = TokenIssuer()
        self.writes = Writer(store, self.reads, self.kinds, gates, network=network or ServiceNetwork.parse(),
                             tokens=self.tokens)


__all__ = ["Registry"]
