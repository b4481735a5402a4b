"""The streaming GET the client reads watches with: heads, chunked and delimited bodies, breakage."""

import asyncio

import pytest
from fakeapi.scheduler.streaming import Head, StreamBroken, body_chunks, chunk_size, parse_head, request_bytes


def reader_of(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def pieces(data: bytes, headers: dict[str, str]) -> list[bytes]:
    return [chunk async for chunk in body_chunks(reader_of(data), Head(200, headers))]


def test_request_bytes():
    headers = {"Host": "127.0.0.1:8080", "Accept": "application/json"}
    assert request_bytes("GET", "/api/v1/pods?watch=true", headers) == (
        b"GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: application/json\r\n\r\n")


HEADS = {
    "chunked": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n",
                Head(200, {"transfer-encoding": "chunked", "content-type": "application/json"})),
    "status without reason": (b"HTTP/1.1 410\r\nContent-Length: 0\r\n\r\n", Head(410, {"content-length": "0"})),
    "value with colons": (b"HTTP/1.0 200 OK\r\nDate: Tue, 01 Dec 2026 17:00:00 GMT\r\n\r\n",
                          Head(200, {"date": "Tue, 01 Dec 2026 17:00:00 GMT"})),
}


@pytest.mark.parametrize(("raw", "head"), HEADS.values(), ids=HEADS.keys())
def test_parse_head(raw, head):
    assert parse_head(raw) == head


BAD_HEADS = {"not http": b"SSH-2.0-OpenSSH\r\n\r\n", "no status": b"HTTP/1.1 OK\r\n\r\n",
             "header without colon": b"HTTP/1.1 200 OK\r\nbroken\r\n\r\n", "http/2": b"HTTP/2 200\r\n\r\n"}


@pytest.mark.parametrize("raw", BAD_HEADS.values(), ids=BAD_HEADS.keys())
def test_malformed_heads_break_the_stream(raw):
    with pytest.raises(StreamBroken):
        parse_head(raw)


@pytest.mark.parametrize(("line", "size"), [(b"0\r\n", 0), (b"1a\r\n", 26), (b"FF;name=value\r\n", 255)],
                         ids=["last", "hex", "extension"])
def test_chunk_size(line, size):
    assert chunk_size(line) == size


BODIES = {
    "chunked": (b"5\r\nhello\r\n7\r\n world\n\r\n0\r\n\r\n", {"transfer-encoding": "chunked"}, [b"hello", b" world\n"]),
    "chunked with trailers": (b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n", {"transfer-encoding": "Chunked"}, [b"abc"]),
    "content-length": (b'{"kind":"Status"}', {"content-length": "17"}, [b'{"kind":"Status"}']),
    "to the end": (b"line one\nline two\n", {}, [b"line one\nline two\n"]),
}


@pytest.mark.parametrize(("data", "headers", "expected"), BODIES.values(), ids=BODIES.keys())
async def test_body_chunks(data, headers, expected):
    assert await pieces(data, headers) == expected


BROKEN_BODIES = {
    "ends mid-chunk": (b"a\r\nshort", {"transfer-encoding": "chunked"}),
    "ends before the last chunk": (b"3\r\nabc\r\n", {"transfer-encoding": "chunked"}),
    "chunk without CRLF": (b"3\r\nabcXY0\r\n\r\n", {"transfer-encoding": "chunked"}),
    "bad chunk size": (b"zz\r\nabc\r\n", {"transfer-encoding": "chunked"}),
    "shorter than its length": (b"abc", {"content-length": "10"}),
    "bad length": (b"abc", {"content-length": "-3"}),
}


@pytest.mark.parametrize(("data", "headers"), BROKEN_BODIES.values(), ids=BROKEN_BODIES.keys())
async def test_broken_bodies_raise_a_transport_error(data, headers):
    with pytest.raises(StreamBroken) as err:
        await pieces(data, headers)
    assert isinstance(err.value, OSError), "the client's callers retry OSErrors as lost connections"
