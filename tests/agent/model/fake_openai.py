"""A scripted OpenAI-compatible chat-completions server: real HTTP/1.1 and real SSE, on
127.0.0.1 only.

A test scripts the replies, in order, one per request (:meth:`ScriptedOpenAI.script`); the
server records every request it receives (method, path, headers, JSON body). A streamed
reply is a list of chunk objects, each sent as ``data: {...}\\n\\n``, then ``data: [DONE]``;
a :class:`Pause` in it holds the stream until the test releases it or the client goes away
(which the server counts in ``disconnects``); ``drop`` cuts the connection mid-stream; a
``before`` pause holds the answer before its first byte (an endpoint that accepts a request
and does not answer: never released, it never does). A
request beyond the script is answered 500 with ``x-should-retry: false``, so a test that
makes one fails clearly.

``ScriptedOpenAI(strict=True)`` answers like a popular local server whose chat template is
strict: a request whose messages that template refuses (an assistant message with ``null``
content, two user or two assistant messages next to each other) gets HTTP 500 with a long body that
ends in a stack-trace line (:data:`TEMPLATE_ERROR`), without taking a scripted reply.

With ``key`` set, the server wants that bearer key: a request without it (``GET /models``
included) is answered 401 with a body that quotes the key it was sent, as OpenAI's does,
without taking a scripted reply.

``GET …/models`` is answered apart from the script (it never takes a scripted reply, and is
counted in ``listings``, not ``requests``): 404 by default, as a server without a listing
answers; set ``models`` to a :class:`Listing` to list models (slowly, or failing, if wanted).

A reply may carry ``usage`` (:func:`usage`): like real providers, the server sends it as a last
chunk with no choices — only when the request asked for it with
``stream_options: {"include_usage": true}``.

The chunk helpers (:func:`say`, :func:`think`, :func:`call`, :func:`stop`) build the JSON
objects real providers send.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

MAX_HEADER_BYTES = 64 * 1024
REASONS = {
    200: "OK",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@attrs.define(eq=False)
class Pause:
    """Holds a stream here until ``release`` is set or the client disconnects."""

    release: asyncio.Event = attrs.field(factory=asyncio.Event)
    reached: asyncio.Event = attrs.field(factory=asyncio.Event)
    """Set when the stream got here (everything before it was written)."""
    left: asyncio.Event = attrs.field(factory=asyncio.Event)
    """Set when the client disconnected during the pause."""


@attrs.define
class Reply:
    """One scripted answer: a stream of chunk objects (status 200) or an error."""

    events: Sequence[dict[str, Any] | str | Pause] = attrs.field(factory=list)
    """Chunk objects (sent as JSON), raw ``data:`` payloads (``str``) and pauses."""
    status: int = 200
    body: Any = None
    """The JSON body of a non-200 answer."""
    headers: dict[str, str] = attrs.field(factory=dict)
    done: bool = True
    """End the stream with ``data: [DONE]``."""
    drop: bool = False
    """Cut the connection after ``events``: no end of the chunked body, no ``[DONE]``."""
    usage: dict[str, Any] | None = None
    """The usage object sent in a last chunk, when the request asked for usage."""
    before: Pause | None = None
    """Hold the answer here, before its first byte (no status line yet), until released or
    the client goes."""
    encoded: bytes | None = None
    """The whole stream's bytes, already encoded (``events`` and ``done`` are then ignored):
    a benchmark's answer goes out at once, not after encoding thousands of chunks."""


@attrs.define
class Listing:
    """The answer to ``GET /models``: ``{"object": "list", "data": entries}`` after ``delay``
    seconds, or an error ``status``."""

    entries: Sequence[dict[str, Any]] = ()
    status: int = 200
    delay: float = 0.0


def listed(*names: str, **windows: int) -> Listing:
    """A listing of ``names``; ``windows`` maps a field (``context_length``, …) to a window
    every entry carries."""
    return Listing(
        [{"id": name, "object": "model", "owned_by": "test", **windows} for name in names]
    )


@attrs.frozen
class Request:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any
    """The parsed JSON body."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages the model was sent."""
        messages: list[dict[str, Any]] = self.body["messages"]
        return messages


class ScriptedOpenAI:
    """The server (an async context manager; ``base_url`` once entered)."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        """Refuse what a strict chat template refuses (see the module docstring)."""
        self.refused: list[str] = []
        """Why each request the strict template refused was refused."""
        self.replies: deque[Reply] = deque()
        self.requests: list[Request] = []
        self.disconnects = 0
        self.first_byte_at: list[float] = []
        """``time.perf_counter()`` when each streamed answer's first byte was written."""
        self.on_first_byte: Callable[[], None] | None = None
        """Called just before each streamed answer's first byte is written."""
        self.models: Listing | None = None
        """The answer to ``GET /models`` (``None``: 404)."""
        self.listings = 0
        """How many times ``GET /models`` was asked."""
        self.listings_answered = 0
        """How many of those were answered (after the listing's delay)."""
        self.key: str | None = None
        """The bearer key the server wants (``None``: any, or none)."""
        self._server: asyncio.Server | None = None
        self._port = 0
        self._connections: set[asyncio.StreamWriter] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def __aenter__(self) -> ScriptedOpenAI:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._connections):  # keep-alive connections the client left open
            writer.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                refusal = self._refuse_key(request)
                if refusal is not None:
                    if not await self._answer(refusal, reader, writer):
                        return
                    continue
                if request.method == "GET" and request.path.endswith("/models"):
                    self.listings += 1
                    if not await self._list(writer):
                        return
                    continue
                self.requests.append(request)
                if not await self._answer(self.reply_to(request), reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            self.disconnects += 1
        except asyncio.CancelledError:
            return  # the server's loop is shutting down
        finally:
            self._connections.discard(writer)
            writer.close()

    def reply_to(self, request: Request) -> Reply:
        """The answer to a chat request: what the strict template refuses, else the next
        scripted reply (a subclass may answer some requests itself)."""
        problem = template_problem(request.messages) if self.strict else None
        if problem is not None:
            self.refused.append(problem)
            return template_error(problem)
        reply = self.replies.popleft() if self.replies else _unscripted()
        return _with_usage(reply, request)

    def _refuse_key(self, request: Request) -> Reply | None:
        """The 401 for a request without the wanted key (``None``: it may pass)."""
        sent = request.headers.get("authorization", "").removeprefix("Bearer ")
        if self.key is None or sent == self.key:
            return None
        message = f"Incorrect API key provided: {sent}. You can find your API key in your account."
        return Reply(
            status=401,
            body={"error": {"message": message, "type": "invalid_request_error"}},
            headers={"x-should-retry": "false"},
        )

    async def _list(self, writer: asyncio.StreamWriter) -> bool:
        """Answer ``GET /models``; ``False`` once the client has gone."""
        listing = self.models or Listing(status=404)
        if listing.delay:
            await asyncio.sleep(listing.delay)
        if writer.is_closing():
            return False
        if listing.status == 200:
            body = json.dumps({"object": "list", "data": list(listing.entries)}).encode()
        else:
            body = json.dumps({"error": {"message": "no such route"}}).encode()
        head = _head(
            listing.status,
            {"content-type": "application/json", "content-length": str(len(body))},
        )
        writer.write(head + body)
        self.listings_answered += 1
        await writer.drain()
        return True

    async def _answer(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Write one answer; ``False`` once the client has gone."""
        if reply.before is not None:
            reply.before.reached.set()
            if await _client_left(reply.before, reader):
                reply.before.left.set()
                self.disconnects += 1
                return False
        if reply.status != 200:
            body = json.dumps(reply.body).encode()
            head = _head(
                reply.status,
                {"content-type": "application/json", "content-length": str(len(body))}
                | reply.headers,
            )
            writer.write(head + body)
            await writer.drain()
            return True
        if self.on_first_byte is not None:
            self.on_first_byte()
        self.first_byte_at.append(time.perf_counter())
        headers = {"content-type": "text/event-stream", "transfer-encoding": "chunked"}
        writer.write(_head(200, headers | reply.headers))
        for segment in _segments(reply):
            if isinstance(segment, Pause):
                segment.reached.set()
                if await _client_left(segment, reader):
                    segment.left.set()
                    self.disconnects += 1
                    return False
                continue
            writer.write(b"%x\r\n%s\r\n" % (len(segment), segment))
            await writer.drain()
        if reply.drop:
            writer.transport.abort()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


def _with_usage(reply: Reply, request: Request) -> Reply:
    """``reply`` with its usage chunk, if it has usage and the request asked for it."""
    options = (request.body or {}).get("stream_options") or {}
    if reply.usage is None or options.get("include_usage") is not True:
        return reply
    last = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "test-model",
        "choices": [],
        "usage": reply.usage,
    }
    return attrs.evolve(reply, events=[*reply.events, last])


def _unscripted() -> Reply:
    return Reply(
        status=500,
        body={"error": {"message": "the test did not script this request"}},
        headers={"x-should-retry": "false"},
    )


TEMPLATE_TRACE = '  File "/srv/llm/server/chat_template.py", line 412, in render_messages'
"""The stack-trace line the strict server's error body carries."""


def template_problem(messages: list[dict[str, Any]]) -> str | None:
    """What a strict chat template refuses in ``messages`` (``None``: nothing)."""
    last = None
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("content") is None:
            return "Value is not callable: null"
        if role in ("user", "assistant") and role == last:
            return "Conversation roles must alternate user/assistant/user/assistant/..."
        last = role
    return None


def template_error(problem: str) -> Reply:
    """The 500 a strict local server answers: about 2 KB, the template, a stack trace."""
    template = "{%- for message in messages %}{{ message.content | trim }}{%- endfor %}\n" * 24
    message = f"{problem} at row 1, column 30:\n{template}Traceback (most recent call last):\n"
    return Reply(
        status=500,
        body={"error": {"code": 500, "message": message + TEMPLATE_TRACE, "type": "server_error"}},
        headers={"x-should-retry": "false"},
    )


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _segments(reply: Reply) -> Iterator[bytes | Pause]:
    """The stream's bytes, one segment between pauses (written in one go, as fast as can be)."""
    if reply.encoded is not None:
        yield reply.encoded
        return
    pending: list[bytes] = []
    for event in reply.events:
        if isinstance(event, Pause):
            if pending:
                yield b"".join(pending)
                pending = []
            yield event
            continue
        data = event if isinstance(event, str) else json.dumps(event)
        pending.append(b"data: " + data.encode() + b"\n\n")
    if reply.done:
        pending.append(b"data: [DONE]\n\n")
    if pending:
        yield b"".join(pending)


async def _client_left(pause: Pause, reader: asyncio.StreamReader) -> bool:
    released = asyncio.ensure_future(pause.release.wait())
    closed = asyncio.ensure_future(reader.read(1))
    try:
        await asyncio.wait((released, closed), return_when=asyncio.FIRST_COMPLETED)
    finally:
        released.cancel()
        closed.cancel()
        # Done before the connection is read again: a read still waiting would refuse it.
        await asyncio.wait((released, closed))
    return closed.done() and not closed.cancelled() and closed.result() == b""


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # the client closed an idle connection
    if len(head) > MAX_HEADER_BYTES:
        raise ConnectionError("request head too large")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    raw = await reader.readexactly(length) if length else b""
    return Request(method, path, headers, json.loads(raw) if raw else None)


# -- chunks -------------------------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a single choice."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }


def say(*texts: str) -> list[dict[str, Any]]:
    """Text deltas, one chunk each."""
    return [chunk({"content": text}) for text in texts]


def think(*texts: str, field: str = "reasoning_content") -> list[dict[str, Any]]:
    """Reasoning deltas in ``field`` (DeepSeek's ``reasoning_content`` by default)."""
    return [chunk({field: text}) for text in texts]


def call(
    index: int | None,
    *,
    call_id: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
) -> dict[str, Any]:
    """One tool-call delta (``index=None`` leaves the index out, as some servers do)."""
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    fragment: dict[str, Any] = {"function": function}
    if index is not None:
        fragment["index"] = index
    if call_id is not None:
        fragment["id"] = call_id
        fragment["type"] = "function"
    return chunk({"tool_calls": [fragment]})


def tool_call(index: int, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A whole tool call in one delta."""
    return call(index, call_id=call_id, name=name, arguments=arguments)


def stop(reason: str = "stop") -> dict[str, Any]:
    """The last chunk, with the finish reason."""
    return chunk({}, reason)


def usage(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    """A usage object as OpenAI sends it (``cached``: prompt tokens served from cache)."""
    data: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        data["prompt_tokens_details"] = {"cached_tokens": cached}
    return data


def answer(*texts: str) -> Reply:
    """A plain text answer."""
    return Reply([*say(*texts), stop()])


def calling(*calls: dict[str, Any], text: str | None = None) -> Reply:
    """An answer that calls tools (optionally after some text)."""
    return Reply([*(say(text) if text else []), *calls, stop("tool_calls")])


# -- in a thread (for the benchmark) ------------------------------------------------------


@contextlib.contextmanager
def serve_in_thread() -> Iterator[ScriptedOpenAI]:
    """Run a server on its own event loop in a daemon thread, so it never waits on the
    client's loop (``script`` appends to a deque, which is safe across threads)."""
    ready = threading.Event()
    holder: dict[str, Any] = {}

    async def main() -> None:
        stopped = asyncio.Event()
        holder["loop"] = asyncio.get_running_loop()
        holder["stop"] = stopped
        async with ScriptedOpenAI() as server:
            holder["server"] = server
            ready.set()
            await stopped.wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the scripted server did not start")
    try:
        yield holder["server"]
    finally:
        holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(10)


def encoded(reply: Reply) -> Reply:
    """``reply`` with its stream encoded once, up front (it must hold no pause)."""
    parts = list(_segments(reply))
    if any(isinstance(part, Pause) for part in parts):
        raise ValueError("a stream with pauses cannot be encoded up front")
    return attrs.evolve(reply, encoded=b"".join(part for part in parts if isinstance(part, bytes)))
