"""The declaration of one served resource (everything the server needs to know about a kind),
and the table of all of them that URLs, discovery and the garbage collector look kinds up in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from fakeapi.machinery.admission_match import RequestAttributes
from fakeapi.validation.strategy import Strategy

if TYPE_CHECKING:
    from fakeapi.machinery.listtypes import ListTypes
    from fakeapi.registry.reads import Reader
    from fakeapi.registry.reviews import ReviewHandler
    from fakeapi.registry.writes import WriteOptions, Writer

    # (writer, parent kind, namespace, name, request body, options) -> response body
    SubresourceHandler = Callable[[Writer, "ResourceType", str, str, dict[str, Any], WriteOptions],
                                  dict[str, Any]]
    # (reader, parent kind, namespace, name) -> the subresource's object
    SubresourceView = Callable[[Reader, "ResourceType", str, str], dict[str, Any]]
    # (body, namespace, name, the view before the write or None) -> the object admission judges.
    AdmittedAs = Callable[[dict[str, Any], str, str, dict[str, Any] | None], dict[str, Any]]

FieldGetter = Callable[[dict[str, Any]], "str | None"]
# What a stored kind answers (discovery's verbs).
VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Subresource:
    """One ``.../{name}/{subresource}`` endpoint of a kind.

    ``handler`` serves a subresource with semantics of its own (``pods/binding``,
    ``namespaces/finalize``); without one the generic pipeline serves it (``status``).
    """

    name: str
    verbs: tuple[str, ...]
    # The body's kind when it is not the parent's (a Binding posted to pods/binding).
    kind: str = ""
    handler: SubresourceHandler | None = None
    # A subresource that is a view of its parent in another kind (``autoscaling/v1`` Scale):
    # GET answers ``view``, PUT goes to ``handler``, PATCH patches the view and goes to ``handler``.
    view: SubresourceView | None = None
    api_version: str = ""  # the body's apiVersion when it is not the parent's
    # What admission (policies, webhooks) judges for a body of ``kind``: by default the body,
    # named as its parent (a Binding, an Eviction); a Scale as the parent's scale would become.
    admitted_as: AdmittedAs | None = None
    # Served by the HTTP layer itself, not through the registry (pods/log, exec, attach, portforward).
    connect: bool = False
    # The one field (a path) a write through this subresource may change, the rest of the object
    # staying as stored (pods/ephemeralcontainers: spec.ephemeralContainers).
    scope: tuple[str, ...] = ()


@dataclass(frozen=True)
class Column:
    """A Table column: name, type and a getter (``format`` as in ``metav1.TableColumnDefinition``)."""

    name: str
    getter: Callable[[dict[str, Any]], Any]
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0
    # The getter yields an RFC 3339 timestamp that the table shows as kubectl's relative age.
    age: bool = False


def creation_timestamp(obj: dict[str, Any]) -> Any:
    return (obj.get("metadata") or {}).get("creationTimestamp")


def object_name(obj: dict[str, Any]) -> Any:
    return (obj.get("metadata") or {}).get("name", "")


# The Name column; a kind whose columns include one gives its complete list (events have no Name
# first), otherwise the table is Name, the kind's columns, then Age unless placed.
NAME = Column("Name", object_name, format="name",
              description="Name must be unique within a namespace.")
# Where a kind wants its Age column (the table layer renders it as kubectl's relative age);
# kinds that don't list it get Age last.
AGE = Column("Age", creation_timestamp, age=True,
             description="CreationTimestamp is a timestamp representing the server time when this object "
                         "was created.")


@dataclass(frozen=True)
class ResourceType:
    """One kind at one group/version, declared once in ``kinds.py``.

    Names derived from the fields are computed once (``cached_property``: every write asks them
    several times, and the fields never change)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: tuple[Subresource, ...] = ()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    model: type[BaseModel] | None = None
    strategy: Strategy = field(default_factory=Strategy)
    # Field selectors beyond metadata.name/metadata.namespace.
    field_selectors: Mapping[str, FieldGetter] = field(default_factory=dict)
    columns: tuple[Column, ...] = ()
    # A Table row's conditions (a finished pod's ``Completed``), as upstream's printers set them.
    row_conditions: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None
    # Kinds whose spec changes bump metadata.generation (everything but a few core kinds).
    tracks_generation: bool = True
    # DELETE answers with the final object instead of a Success Status (upstream ReturnDeletedObject).
    returns_deleted_object: bool = False
    # Versions whose shapes cannot be converted (v1alpha1 vs v1beta1 Workload) keep their own storage.
    separate_storage: bool = False
    # A virtual, create-only kind (the access reviews): POST answers through this handler and
    # nothing is stored; every other verb is 405.
    review: ReviewHandler | None = None
    # Kinds without a model (custom resources): their SSA list types, read from their schema.
    list_types: ListTypes | None = None
    # How a stored object reads at this version (custom resources: apiVersion, pruning and
    # defaults of the version's schema); None: as stored.  Copy-on-write: returns the object
    # itself when nothing changes.
    read_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # Custom resources do not take strategic merge patches (upstream answers 415).
    strategic_merge: bool = True
    # A version served from another kind's storage in another shape (events.k8s.io/v1 Events are
    # core Events): ``stored_as`` is that storage, ``write_view`` converts an object to its shape
    # and ``read_view`` back.
    stored_as: tuple[str, str] | None = None
    write_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # The OpenAPI v3 schema of a kind without a model (custom resources: from the CRD).
    openapi_schema: Mapping[str, Any] | None = None

    @property
    def verbs(self) -> tuple[str, ...]:
        """The verbs discovery lists: all of them, or ``create`` alone for a review kind."""
        return ("create",) if self.review is not None else VERBS

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @cached_property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @cached_property
    def api_version(self) -> str:
        return self.group_version

    @cached_property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @cached_property
    def has_status(self) -> bool:
        return self.subresource("status") is not None

    def subresource(self, name: str) -> Subresource | None:
        """The declared subresource ``name``, or None."""
        return next((s for s in self.subresources if s.name == name), None)

    def admission_attributes(self, operation: str, subresource: str, obj: dict[str, Any] | None,
                             old: dict[str, Any] | None) -> RequestAttributes:
        """A write of ``obj`` (``old`` for a delete) to this resource or its ``subresource`` as
        admission names it: the object's kind is the subresource's own where it has one (a
        Binding, an Eviction, a Scale), as upstream's attributes give it."""
        sub = self.subresource(subresource) if subresource else None
        kind, api_version = (sub.kind, sub.api_version or None) if sub is not None and sub.kind else (self.kind, None)
        return RequestAttributes.of(operation, self.group, self.version, self.plural, kind, namespaced=self.namespaced,
                                    subresource=subresource, obj=obj, old=old, kind_api_version=api_version)

    @cached_property
    def storage_key(self) -> tuple[str, str]:
        """Objects of one (group, plural) share storage across served versions."""
        if self.stored_as is not None:
            return self.stored_as
        if self.separate_storage:
            return (self.group, f"{self.plural}@{self.version}")
        return (self.group, self.plural)


class KindTable:
    """Every served kind, looked up by URL coordinates, by (group, plural) or by storage key.

    Built-in kinds are fixed; custom resources come and go at runtime (:meth:`install`,
    :meth:`uninstall`).  ``revision`` counts those changes, so caches of derived documents
    (OpenAPI) know when to rebuild.
    """

    def __init__(self, kinds: Iterable[ResourceType]) -> None:
        self._kinds = tuple(kinds)
        self.revision = 0
        self._index()
        self.namespaces = self._by_gvr[("", "v1", "namespaces")]

    def _index(self) -> None:
        self._by_gvr = {(k.group, k.version, k.plural): k for k in self._kinds}
        # The first declared version of a (group, plural) or storage key is the one admission
        # lookups, GC and namespace cleanup use.
        self._by_plural: dict[tuple[str, str], ResourceType] = {}
        self._by_storage: dict[tuple[str, str], ResourceType] = {}
        for k in self._kinds:
            self._by_plural.setdefault((k.group, k.plural), k)
            self._by_storage.setdefault(k.storage_key, k)

    def install(self, group: str, plural: str, kinds: Iterable[ResourceType]) -> None:
        """Serve ``kinds`` (the versions of one custom resource) in place of what (group, plural) had."""
        self._kinds = (*(k for k in self._kinds if (k.group, k.plural) != (group, plural)), *kinds)
        self.revision += 1
        self._index()

    def uninstall(self, group: str, plural: str) -> None:
        """Stop serving (group, plural)."""
        self.install(group, plural, ())

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(self._kinds)

    def resource(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The kind served at a URL's group, version and plural, or None."""
        return self._by_gvr.get((group, version, plural))

    def by_plural(self, group: str, plural: str) -> ResourceType | None:
        """The first declared version of a (group, plural), or None."""
        return self._by_plural.get((group, plural))

    def for_storage(self, storage: tuple[str, str]) -> ResourceType:
        """The first declared version of the kinds stored under ``storage``."""
        return self._by_storage[storage]

    def group_versions(self) -> dict[str, list[str]]:
        """group -> served versions, preferred first (declaration order)."""
        out: dict[str, list[str]] = {}
        for k in self._kinds:
            versions = out.setdefault(k.group, [])
            if k.version not in versions:
                versions.append(k.version)
        return out
