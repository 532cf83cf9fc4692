"""What a llama.cpp server (``llama-server``, router mode included) sends, replayed on the
scripted endpoint of :mod:`tests.agent.model.fake_openai`.

Shapes are llama.cpp's (``tools/server``): a ``/models`` entry carries ``meta`` with ``n_ctx``,
the context one request gets (a slot's), beside the model's trained ``n_ctx_train``; a
router lists every model it knows with a ``status``, and only a loaded one has ``meta``. A
request whose prompt has as many tokens as the context (or more) is refused with HTTP 400
``exceed_context_size_error``, its counts in the body. An answer that fills the context stops
with ``finish_reason: "length"``, as one that reaches ``max_tokens`` does: only the usage
tells them apart.

:class:`LlamaServer` decides the refusal by size, as the real server does, counting
:data:`BYTES_PER_TOKEN` bytes of the request's JSON a token (about what its tokenizers do with
English and code, so fewer tokens than the sidecar's own estimate counts).
"""

from __future__ import annotations

import json
from typing import Any, Final

from tests.agent.model.fake_openai import Listing, Reply, Request, ScriptedOpenAI, say, stop, usage

BYTES_PER_TOKEN: Final = 4


def model_entry(name: str, n_ctx: int | None, *, status: str | None = None) -> dict[str, Any]:
    """One ``GET /models`` entry: a single-model server's (``status=None``), or a router's
    with that status (``meta`` only while the model is loaded, as the router forwards it from
    the model's own server)."""
    entry: dict[str, Any] = {
        "id": name,
        "object": "model",
        "created": 1735142223,
        "owned_by": "llamacpp",
    }
    if status is not None:
        entry["status"] = {"value": status, "args": ["llama-server", "-c", str(n_ctx or 0)]}
    if n_ctx is not None and status in (None, "loaded"):
        entry["meta"] = {
            "vocab_type": 2,
            "n_vocab": 151936,
            "n_ctx": n_ctx,
            "n_ctx_train": 32768,
            "n_embd": 896,
            "n_params": 494032768,
            "size": 531066880,
        }
    return entry


def listing(*entries: dict[str, Any]) -> Listing:
    """``GET /models`` answering with these entries."""
    return Listing(list(entries))


def context_refusal(prompt_tokens: int, n_ctx: int) -> Reply:
    """The 400 llama.cpp answers a request whose prompt does not fit its context."""
    message = (
        f"request ({prompt_tokens} tokens) exceeds the available context size "
        f"({n_ctx} tokens), try increasing it"
    )
    error = {
        "code": 400,
        "message": message,
        "type": "exceed_context_size_error",
        "n_prompt_tokens": prompt_tokens,
        "n_ctx": n_ctx,
    }
    return Reply(status=400, body={"error": error})


def context_full(text: str, prompt_tokens: int, n_ctx: int) -> Reply:
    """An answer the server stopped because the context was full: ``length``, and usage
    that adds up to the context (less the one free cell a decode needs)."""
    return Reply(
        [*say(text), stop("length")], usage=usage(prompt_tokens, n_ctx - 1 - prompt_tokens)
    )


def broken(*texts: str) -> Reply:
    """An answer whose connection breaks after ``texts`` streamed (the server died)."""
    return Reply(say(*texts), done=False, drop=True)


def prompt_tokens(request: Request) -> int:
    """The tokens the server counts in a chat request."""
    body = request.body or {}
    size = len(json.dumps([body.get("messages"), body.get("tools")]).encode())
    return -(-size // BYTES_PER_TOKEN)


class LlamaServer(ScriptedOpenAI):
    """A llama.cpp server with an ``n_ctx``-token context: it refuses what does not fit, and
    takes scripted replies for the rest. It lists ``models`` (none: ``/models`` is 404): as a
    single-model server, loaded; as a ``router``, unloaded until a request names one."""

    def __init__(self, n_ctx: int, *models: str, router: bool = False) -> None:
        super().__init__()
        self.n_ctx = n_ctx
        self.too_long = 0
        """How many requests were refused for their length."""
        self.router = router
        self.loaded: set[str] = set() if router else set(models)
        self._names = models
        self._relist()

    def _relist(self) -> None:
        if not self._names:
            return
        entries = []
        for name in self._names:
            status = None
            if self.router:
                status = "loaded" if name in self.loaded else "unloaded"
            entries.append(model_entry(name, self.n_ctx, status=status))
        self.models = listing(*entries)

    def reply_to(self, request: Request) -> Reply:
        name = (request.body or {}).get("model")
        if self.router and name in self._names and name not in self.loaded:
            self.loaded.add(name)  # the router loads a model for the first request naming it
            self._relist()
        tokens = prompt_tokens(request)
        if tokens >= self.n_ctx:
            self.too_long += 1
            return context_refusal(tokens, self.n_ctx)
        return super().reply_to(request)
