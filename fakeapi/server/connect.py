"""The pod subresources that reach containers: ``log``, ``exec``, ``attach`` and ``portforward``.

fakeapi runs no containers, so there is no kubelet to proxy to.  ``exec``, ``attach`` and
``portforward`` answer a 400 Status saying so.  ``log`` is rendered from the pod itself: for each
container, what the kubelet emulation recorded in its status (a line when it started, one when
it terminated) around the text of the pod's ``fakeapi.dev/log`` annotation (every container)
or ``fakeapi.dev/log.<container>`` (that container).  ``follow=true`` streams new lines as the
pod changes and ends when the container terminates or the pod goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from aiohttp import web

from fakeapi.errors import BadRequest, forbidden, invalid, invalid_object
from fakeapi.machinery.goparse import parse_int64
from fakeapi.machinery.timestamps import TimeParseError, parse_go_time
from fakeapi.registry import listing
from fakeapi.registry.rest import Registry
from fakeapi.server.routes import Target

LOG_ANNOTATION = "fakeapi.dev/log"
DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"
_STATUS_KEYS = (("containers", "containerStatuses"), ("initContainers", "initContainerStatuses"),
                ("ephemeralContainers", "ephemeralContainerStatuses"))
NO_CONTAINERS = "fakeapi runs no containers"


@dataclass(frozen=True)
class LogLine:
    """One line of a container's log and when it was written (RFC 3339)."""

    time: str
    text: str


def _containers(pod: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return list((pod.get("spec") or {}).get(key) or [])


def pick_container(pod: dict[str, Any], requested: str | None) -> str:
    """The container a log request means: the one named, else the pod's only (or default) one;
    400 as upstream's ``validateContainer`` otherwise."""
    meta = pod.get("metadata") or {}
    name = meta.get("name", "")
    groups = {key: [c.get("name", "") for c in _containers(pod, key)] for key, _ in _STATUS_KEYS}
    if requested:
        if not any(requested in names for names in groups.values()):
            raise BadRequest(f"container {requested} is not valid for pod {name}")
        return requested
    default = (meta.get("annotations") or {}).get(DEFAULT_CONTAINER)
    if default in groups["containers"]:
        return default
    if len(groups["containers"]) == 1:
        return groups["containers"][0]
    message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(groups['containers'])}]"
    if groups["initContainers"]:
        message += f" or one of the init containers: [{' '.join(groups['initContainers'])}]"
    if groups["ephemeralContainers"]:
        message += f" or one of the ephemeral containers: [{' '.join(groups['ephemeralContainers'])}]"
    raise BadRequest(message)


def container_status(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    """The status the kubelet emulation reported for ``container``, or None."""
    status = pod.get("status") or {}
    for _, status_key in _STATUS_KEYS:
        for entry in status.get(status_key) or []:
            if entry.get("name") == container:
                return entry
    return None


def _image(pod: dict[str, Any], container: str) -> str:
    return next((c.get("image", "") for key, _ in _STATUS_KEYS for c in _containers(pod, key)
                 if c.get("name") == container), "")


def container_log(pod: dict[str, Any], container: str) -> list[LogLine]:
    """The log of a started container: lifecycle lines around the annotation's text.  400 (as
    the kubelet's answer) while the container has not started."""
    meta = pod.get("metadata") or {}
    state = (container_status(pod, container) or {}).get("state") or {}
    started = (state.get("running") or state.get("terminated") or {}).get("startedAt")
    if not started:
        reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
        raise BadRequest(f'container "{container}" in pod "{meta.get("name", "")}" is waiting to start: {reason}')
    annotations = meta.get("annotations") or {}
    text = "".join(annotations.get(key, "") for key in (LOG_ANNOTATION, f"{LOG_ANNOTATION}.{container}"))
    lines = [LogLine(started, f'fakeapi: started container "{container}" (image {_image(pod, container)})')]
    lines += [LogLine(started, line) for line in text.splitlines()]
    terminated = state.get("terminated")
    if terminated:
        lines.append(LogLine(terminated.get("finishedAt") or started,
                             f'fakeapi: container "{container}" terminated with exit code '
                             f'{terminated.get("exitCode", 0)} ({terminated.get("reason") or "Completed"})'))
    return lines


def is_finished(pod: dict[str, Any], container: str) -> bool:
    """Whether nothing more will be logged: the container terminated."""
    state = (container_status(pod, container) or {}).get("state") or {}
    return "terminated" in state


@dataclass(frozen=True)
class LogOptions:
    """``PodLogOptions`` from the query."""

    container: str | None = None
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since: datetime | None = None

    @classmethod
    def parse(cls, query: Mapping[str, str], pod_name: str, now: datetime) -> LogOptions:
        """Validate the options as upstream does (``ValidatePodLogOptions``: 422; syntax: 400)."""
        def number(key: str) -> int | None:
            if not query.get(key):
                return None
            try:
                return parse_int64(query[key])
            except ValueError as exc:
                raise BadRequest(str(exc)) from None

        tail, limit, since_seconds = number("tailLines"), number("limitBytes"), number("sinceSeconds")
        errs = []
        if tail is not None and tail < 0:
            errs.append(invalid("tailLines", tail, "must be greater than or equal to 0"))
        if limit is not None and limit < 1:
            errs.append(invalid("limitBytes", limit, "must be greater than 0"))
        if since_seconds is not None and query.get("sinceTime"):
            errs.append(forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
        elif since_seconds is not None and since_seconds < 1:
            errs.append(invalid("sinceSeconds", since_seconds, "must be greater than 0"))
        if errs:
            raise invalid_object("PodLogOptions", "", pod_name, errs)
        since = None
        if since_seconds is not None:
            try:
                since = now - timedelta(seconds=since_seconds)
            except OverflowError:  # further back than datetime reaches: every line is newer
                since = datetime.min.replace(tzinfo=UTC)
        elif query.get("sinceTime"):
            try:
                since = parse_go_time(query["sinceTime"])
            except TimeParseError as exc:
                raise BadRequest(str(exc)) from None
        return cls(container=query.get("container") or None, follow=_truthy(query.get("follow")),
                   previous=_truthy(query.get("previous")), timestamps=_truthy(query.get("timestamps")),
                   tail_lines=tail, limit_bytes=limit, since=since)


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true")


def render(lines: list[LogLine], opts: LogOptions) -> bytes:
    """The lines as the kubelet writes them: since, tail, timestamps (RFC 3339, nanoseconds), limit."""
    if opts.since is not None:
        lines = [line for line in lines if parse_go_time(line.time) >= opts.since]
    if opts.tail_lines is not None:
        lines = lines[len(lines) - opts.tail_lines:] if opts.tail_lines else []
    out = b"".join(((f"{_nano(line.time)} " if opts.timestamps else "") + line.text + "\n").encode() for line in lines)
    return out if opts.limit_bytes is None else out[:opts.limit_bytes]


def _nano(time: str) -> str:
    return parse_go_time(time).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


async def serve(request: web.Request, registry: Registry, target: Target) -> web.StreamResponse:
    """A pod's ``log``, ``exec``, ``attach`` or ``portforward`` request."""
    rt = target.resource
    namespace, name = target.namespace or "", target.name or ""
    pod = registry.reads.get(rt, namespace, name)
    if target.subresource != "log":
        container = request.query.get("container") or ""
        what = {"exec": f'exec into container "{container}" of', "attach": f'attach to container "{container}" of',
                "portforward": "forward ports to"}[target.subresource]
        raise BadRequest(f'{NO_CONTAINERS}: cannot {what} pod "{name}"; its log is served by pods/log')
    if not (pod.get("spec") or {}).get("nodeName"):
        raise BadRequest(f"pod {name} does not have a host assigned")
    opts = LogOptions.parse(request.query, name, datetime.now(UTC))
    container = pick_container(pod, opts.container)
    if opts.previous:
        raise BadRequest(f'previous terminated container "{container}" in pod "{name}" not found')
    lines = container_log(pod, container)
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    if not opts.follow:
        body = render(lines, opts)
        response.content_length = len(body)
        await response.prepare(request)
        await response.write(body)
        return response
    await response.prepare(request)
    await response.write(render(lines, opts))
    await _follow(request, registry, target, response, container, pod, len(lines),
                  LogOptions(timestamps=opts.timestamps))
    return response


async def _follow(request: web.Request, registry: Registry, target: Target, response: web.StreamResponse,
                  container: str, pod: dict[str, Any], sent: int, opts: LogOptions) -> None:
    """Write lines added after the first ``sent`` as the pod changes, until the container
    terminates, the pod is deleted or the client goes."""
    rt = target.resource
    query = {"fieldSelector": f"metadata.name={target.name}", "resourceVersion": pod["metadata"]["resourceVersion"]}
    watcher = await registry.reads.watch(rt, target.namespace, listing.parse_list_options(query, rt))
    try:
        while not is_finished(pod, container) and not watcher.closed:
            for line in await watcher.next_lines(None):
                event = orjson.loads(line)
                if event["type"] == "DELETED":
                    return
                if event["type"] != "MODIFIED":
                    continue
                pod = event["object"]
                lines = container_log(pod, container)
                if len(lines) > sent:
                    await response.write(render(lines[sent:], opts))
                    sent = len(lines)
        await response.write_eof()
    except (ConnectionResetError, BadRequest):
        pass  # the client went away, or the container was replaced by one that has not started
    finally:
        registry.reads.close_watch(rt, watcher)

