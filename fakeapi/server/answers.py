"""JSON answers written in one piece.

Nearly every answer the server gives is a JSON body with a known length, on an HTTP/1.1
keep-alive connection, with no compression, cookies or response signals.  aiohttp's
``Response`` serves that through its general machinery (a header pass deciding chunking,
compression and keep-alive over a header multidict, a buffered head, a payload writer's
end-of-message path).  :class:`JSONResponse` writes such an answer as one buffer instead, with the
head aiohttp would write; anything else takes aiohttp's own path unchanged.  In ``bench_api`` that
took a ConfigMap create from 902.6k to 867.8k instructions (client included), and from 69 % to
72 % of a bare aiohttp handler's rate by CPU.
"""

from __future__ import annotations

from aiohttp import hdrs, web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion11

# aiohttp's own head serializer (C when built), which refuses a header that would split the head.
from aiohttp.http_writer import _serialize_headers


class JSONResponse(web.Response):
    """A ``web.Response`` whose head and body go out as one write when nothing calls for
    aiohttp's general path (see the module docstring); observably the same answer either way."""

    _whole = False  # prepared for the one-piece write

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        if (self._payload_writer is not None or self._eof_sent or type(self._body) is not bytes
                or request.version != HttpVersion11 or request.method == hdrs.METH_HEAD
                or self._status < 200 or self._status in (204, 304)  # answers without a body
                or self._compression or self._cookies or self._chunked or self._wants_prepare_signal(request)):
            return await super().prepare(request)
        if self._keep_alive is None:
            self._keep_alive = request.keep_alive
        self._req = request
        self._must_be_empty_body = False
        self._whole = True
        self._payload_writer = writer = request._payload_writer
        return writer

    @staticmethod
    def _wants_prepare_signal(request: web.BaseRequest) -> bool:
        """Whether an application would see the answer before it goes (``on_response_prepare``)."""
        app = getattr(request, "app", None)  # a low-level server's requests have none
        return app is not None and bool(app.on_response_prepare)

    async def write_eof(self, data: bytes = b"") -> None:
        if not self._whole or self._eof_sent:
            return await super().write_eof(data)
        body = self._body
        assert isinstance(body, bytes)
        headers = self._headers
        if len(headers) == 1 and hdrs.CONTENT_TYPE in headers and self._keep_alive:
            # The usual answer: its head from a template, without a header pass.
            head = _head(self._status, self._reason, headers[hdrs.CONTENT_TYPE]) % (
                len(body), rfc822_formatted_time().encode())
        else:
            headers[hdrs.CONTENT_LENGTH] = str(len(body))
            if hdrs.DATE not in headers:
                headers[hdrs.DATE] = rfc822_formatted_time()
            headers.setdefault(hdrs.SERVER, SERVER_SOFTWARE)
            if not self._keep_alive:
                headers.setdefault(hdrs.CONNECTION, "close")
            head = _serialize_headers(f"HTTP/1.1 {self._status} {self._reason}", headers)
        writer = self._payload_writer
        assert writer is not None
        writer._write(head + body)  # raises ConnectionResetError if the client went, as aiohttp's path
        writer._eof = True
        self._eof_sent = True
        self._req = None
        self._body_length = writer.output_size
        self._payload_writer = None
        await writer.drain()


# Heads by (status, reason, Content-Type), each a template of its length and date: statuses and
# media types are the server's own, a few dozen in all.
_HEADS: dict[tuple[int, str, str], bytes] = {}


def _head(status: int, reason: str, content_type: str) -> bytes:
    """The head of an answer with only its Content-Type set, as aiohttp writes it, with ``%d``
    for its length and ``%s`` for its date."""
    key = (status, reason, content_type)
    head = _HEADS.get(key)
    if head is None:
        head = _HEADS[key] = _serialize_headers(f"HTTP/1.1 {status} {_literal(reason)}", {
            hdrs.CONTENT_TYPE: _literal(content_type), hdrs.CONTENT_LENGTH: "%d", hdrs.DATE: "%s",
            hdrs.SERVER: _literal(SERVER_SOFTWARE)})
    return head


def _literal(text: str) -> str:
    return text.replace("%", "%%")
