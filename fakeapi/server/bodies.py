"""Request bodies: the media types the API server reads, decoded within upstream's bounds.

Creates, updates, subresources and DeleteOptions take JSON, YAML or (for the kinds kubectl sends
that way) protobuf; any other Content-Type is 415, as upstream's input negotiation answers, and
none at all means JSON.  Patches name their syntax by their own media type.  Before the registry
sees a body it is bounded: 3 MiB (aiohttp's ``client_max_size``), at most
:data:`~fakeapi.machinery.jsonlimits.MAX_DEPTH` levels deep, and for YAML no more alias expansion
than go-yaml (behind sigs.k8s.io/yaml) allows, so a few hundred bytes of anchors cannot expand
into gigabytes.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from typing import Any

import orjson
import yaml
from aiohttp import hdrs, web
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from fakeapi.errors import BadRequest, RequestEntityTooLarge, UnsupportedMediaType
from fakeapi.machinery.jsonlimits import MAX_DEPTH, may_nest_too_deep, too_deep
from fakeapi.server import protobuf

try:  # libyaml, when PyYAML was built with it
    from yaml._yaml import CParser
except ImportError:  # pragma: no cover - PyYAML's wheels ship libyaml
    CParser = None

JSON = "application/json"
YAML = "application/yaml"
INPUT_MEDIA_TYPES = (JSON, YAML, protobuf.MEDIA_TYPE)
# The syntax each patch type is written in (CBOR apply patches are not served).
PATCH_SYNTAX = {"application/json-patch+json": JSON, "application/merge-patch+json": JSON,
                "application/strategic-merge-patch+json": JSON, "application/apply-patch+yaml": YAML}

TOO_LARGE = "the server has received a request that is too large"

# go-yaml v2's alias budget (decode.go ``allowedAliasRatio``): nodes decoded through aliases may be
# 99 % of a document up to 400,000 decoded nodes, falling linearly to 10 % at 4,000,000.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


def allowed_alias_ratio(decoded: int) -> float:
    """The share of ``decoded`` nodes that may come from alias expansion (go-yaml's rule)."""
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def excessive_aliasing(decoded: int, aliased: int) -> bool:
    """Whether a document that decodes ``decoded`` nodes, ``aliased`` of them through aliases,
    is refused ("document contains excessive aliasing")."""
    return aliased > 100 and decoded > 1000 and aliased / decoded > allowed_alias_ratio(decoded)


class _Refused(yaml.YAMLError):
    """A YAML document outside the bounds; the message follows go-yaml's."""


class _BoundedComposer(Composer):
    """PyYAML's composer, counting as go-yaml's decoder counts: every node, and every node an
    alias expands to (expansions are measured, never materialized), so excessive aliasing is
    refused before anything is constructed; and nesting deeper than ``MAX_DEPTH`` is refused
    before the recursive composer can exhaust the stack."""

    def __init__(self) -> None:
        super().__init__()
        self._depth = 0
        self._decoded = 0
        self._aliased = 0
        self._expanded: dict[int, int] = {}  # id(anchored node) -> nodes it decodes to
        self._open: list[int] = []  # nodes each collection being composed decodes to, so far

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)
            expanded = self._expanded.get(id(node))
            if expanded is None:  # the anchor's node is still being composed
                raise _Refused(f"anchor '{event.anchor}' value contains itself")
            self._count(1 + expanded, expanded)
            if self._open:
                self._open[-1] += 1 + expanded
            return node
        nested = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
        self._depth += nested
        if self._depth > MAX_DEPTH:
            raise _Refused(f"exceeded max depth of {MAX_DEPTH}")
        self._count(1, 0)
        self._open.append(1)
        node = super().compose_node(parent, index)
        size = self._open.pop()
        if event.anchor is not None:
            self._expanded[id(node)] = size
        if self._open:
            self._open[-1] += size
        self._depth -= nested
        return node

    def _count(self, decoded: int, aliased: int) -> None:
        """Count nodes in document order, as go-yaml does, and apply its alias budget."""
        self._decoded += decoded
        self._aliased += aliased
        if excessive_aliasing(self._decoded, self._aliased):
            raise _Refused("document contains excessive aliasing")


class _JsonResolver(Resolver):
    """YAML 1.1's implicit types but timestamps: go-yaml leaves a plain scalar that looks like a
    time as its text when the target is JSON (sigs.k8s.io/yaml's), so ``2024-13-01`` is a string."""

    yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in Resolver.yaml_implicit_resolvers.items()
    }


class _JsonConstructor(SafeConstructor):
    """The safe constructor, building only what sigs.k8s.io/yaml turns into JSON: map keys that
    are numbers or booleans become their text, ``!!binary`` its bytes as text, infinities and NaN
    are refused, and so is a scalar whose explicit tag does not fit it, as go-yaml does."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, LookupError, AttributeError, OverflowError):
            # What PyYAML's builders raise for a tagged value that is not one (``!!int abc``).
            if not isinstance(node, yaml.ScalarNode):
                raise
            implicit = self.resolve(yaml.ScalarNode, node.value, (True, False))
            raise _Refused(f"cannot decode {_short_tag(implicit)} `{node.value}` as a {_short_tag(node.tag)}") from None

    def construct_yaml_binary(self, node: yaml.ScalarNode) -> str:
        return super().construct_yaml_binary(node).decode("utf-8", "replace")

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep)
        if all(type(key) is str for key in mapping):
            return mapping
        return {json_key(key): value for key, value in mapping.items()}

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if math.isinf(value) or math.isnan(value):
            shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
            raise _Refused(f"json: unsupported value: {shown}")
        return value


_JsonConstructor.add_constructor("tag:yaml.org,2002:float", _JsonConstructor.construct_yaml_float)
_JsonConstructor.add_constructor("tag:yaml.org,2002:binary", _JsonConstructor.construct_yaml_binary)


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix("tag:yaml.org,2002:")


def json_key(key: Any) -> str:
    """A YAML map key as sigs.k8s.io/yaml writes it in JSON (400 for keys it cannot write)."""
    if type(key) is str:
        return key
    if type(key) is bool:
        return "true" if key else "false"
    if type(key) is int:
        return str(key)
    if type(key) is float:
        return _go_float32_text(key)
    raise _Refused(f"unsupported map key of type: {type(key).__name__}, key: {key!r}")


def _go_float32_text(value: float) -> str:
    # strconv.FormatFloat(value, 'g', -1, 32), with go-yaml's names for the infinities a finite
    # float64 becomes as a float32 (NaN and infinite keys were refused when they were built).
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        single = math.copysign(math.inf, value)
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    for digits in range(1, 10):  # the fewest significant digits that read back as the same float32
        text = f"{single:.{digits - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    exponent = int(text.partition("e")[2])
    if exponent < -4 or exponent >= 6:
        return text
    return f"{single:.{max(digits - exponent - 1, 0)}f}"


class PyLoader(Reader, Scanner, Parser, _BoundedComposer, _JsonConstructor, _JsonResolver):
    """The bounded safe loader in pure Python."""

    def __init__(self, stream: bytes) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        _BoundedComposer.__init__(self)
        _JsonConstructor.__init__(self)
        _JsonResolver.__init__(self)


if CParser is None:
    LOADERS: tuple[type, ...] = (PyLoader,)
else:
    class CLoader(_BoundedComposer, _JsonConstructor, _JsonResolver, CParser):
        """The bounded safe loader on libyaml's (several times faster) parser; the composer stays
        the Python one the bounds hook into."""

        def __init__(self, stream: bytes) -> None:
            CParser.__init__(self, stream)
            _BoundedComposer.__init__(self)
            _JsonConstructor.__init__(self)
            _JsonResolver.__init__(self)

    LOADERS = (CLoader, PyLoader)


def load_yaml(raw: bytes, loader_class: type = LOADERS[0]) -> Any:
    """One YAML document as JSON values, within the depth and alias bounds (400 otherwise)."""
    loader = loader_class(raw)
    try:
        # Through JSON, as the apiserver converts YAML: values JSON cannot carry (integers
        # beyond 64 bits, a !!binary's bytes) are refused here rather than deep inside.
        value = orjson.loads(orjson.dumps(loader.get_single_data()))
        if too_deep(value):  # measured again with aliases expanded: each nests its anchor where it stands
            raise _Refused(f"exceeded max depth of {MAX_DEPTH}")
        return value
    except _Refused as exc:
        raise BadRequest(f"error converting YAML to JSON: yaml: {exc}") from None
    except (yaml.YAMLError, orjson.JSONEncodeError) as exc:
        raise BadRequest(f"error converting YAML to JSON: {exc}") from exc
    finally:
        loader.dispose()


def parse_body(raw: bytes, media: str) -> Any:
    """The JSON value of a request body in ``media`` (one of :data:`INPUT_MEDIA_TYPES`)."""
    if media == protobuf.MEDIA_TYPE:
        return protobuf.decode_protobuf(raw)
    if media == YAML:
        return load_yaml(raw)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"couldn't get version/kind; json parse error: {exc}") from exc
    if may_nest_too_deep(raw) and too_deep(value):
        raise BadRequest(f"couldn't get version/kind; json parse error: exceeded max depth of {MAX_DEPTH}")
    return value


# Content-Type values that are already a bare media type, as clients send them: taken as they
# are, without aiohttp parsing the header (parameters, case) on every request.
_PLAIN_MEDIA_TYPES = frozenset((*INPUT_MEDIA_TYPES, *PATCH_SYNTAX))


def body_media_type(request: web.Request) -> str:
    """The request body's media type; no Content-Type at all means JSON, as upstream assumes."""
    raw = request.headers.get(hdrs.CONTENT_TYPE)
    if raw is None:
        return JSON
    return raw if raw in _PLAIN_MEDIA_TYPES else request.content_type


async def read_body(request: web.Request, *, allow_empty: bool = False, syntax: str | None = None) -> Any:
    """The request body as JSON values.  Its Content-Type must be one the server reads (a patch
    type for PATCH, which implies JSON or YAML), else 415; ``syntax``: what the caller already
    found it implies.  An empty body is a 400 unless ``allow_empty`` (then None whatever the
    Content-Type, as upstream's DELETE)."""
    media = syntax or (None if allow_empty else syntax_of(request))
    content = request.content
    try:
        if content.is_eof():
            # The whole body is in already (nearly always: it came with the headers), so it is taken
            # as it is rather than through read()'s loop of awaits and copies; the same limit applies.
            raw = content.read_nowait()
            if len(raw) > request.client_max_size:
                raise RequestEntityTooLarge(TOO_LARGE)
        else:
            raw = await request.read()
    except web.HTTPRequestEntityTooLarge as exc:
        raise RequestEntityTooLarge(TOO_LARGE) from exc
    except web.RequestPayloadError as exc:  # e.g. a Content-Encoding: gzip body that is not gzip
        # The rest of the connection's bytes cannot be framed: answer, then close it (without
        # aiohttp draining a body that would raise again).
        content.feed_eof()
        request.protocol.close()
        raise BadRequest(f"the request body could not be read: {getattr(exc.__cause__, 'message', exc)}") from exc
    if not raw or raw.isspace():  # (strip() would copy the body)
        if allow_empty:
            return None
        raise BadRequest("the request body is empty; expected an object")
    return parse_body(raw, media or syntax_of(request))


def syntax_of(request: web.Request) -> str:
    """The syntax to parse the body in: its media type, or the one its patch type implies (415 for
    anything else)."""
    media = body_media_type(request)
    if request.method == "PATCH":
        if media in PATCH_SYNTAX:
            return PATCH_SYNTAX[media]
        accepted: Iterable[str] = PATCH_SYNTAX
    elif media in INPUT_MEDIA_TYPES:
        return media
    else:
        accepted = INPUT_MEDIA_TYPES
    raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                               f"include: {', '.join(accepted)}")
