"""The models a driver offers: the configured ones, completed by the endpoint's ``GET /models``.

The endpoint is asked once, lazily (never at start-up), in a task of its own; a failure is
logged, never raised. What the user configured wins over what the endpoint lists.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final

import attrs

from acp_sidecar.agent.model.config import ModelConfig, ModelProfile
from acp_sidecar.agent.model.shown import redacted

logger = logging.getLogger(__name__)

LIST_TIMEOUT_S: Final = 2.0
"""How long the endpoint's ``GET /models`` may take before the configured list is kept."""

WINDOW_FIELDS: Final = ("context_length", "context_window", "max_model_len")
"""Where ``/models`` entries carry a model's context window (OpenRouter and others, some
proxies, vLLM), in the order they are read; then llama.cpp's ``meta.n_ctx``."""


@attrs.frozen
class ListedModel:
    """One entry of the endpoint's ``GET /models``."""

    name: str
    """The model's id."""
    context_window: int | None = None
    """Its context window in tokens, when the entry says."""
    pending: bool = False
    """The entry gives no window because the model is not loaded yet (a llama.cpp router
    lists its models with a ``status``; only a loaded one carries ``meta``)."""


def _tokens(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def listed_model(entry: Mapping[str, object]) -> ListedModel | None:
    """The model a ``/models`` entry describes (``None``: it has no usable id)."""
    name = entry.get("id")
    if not isinstance(name, str) or not name.strip():
        return None
    window = None
    for field in WINDOW_FIELDS:
        window = _tokens(entry.get(field))
        if window is not None:
            break
    meta = entry.get("meta")
    if window is None and isinstance(meta, Mapping):
        window = _tokens(meta.get("n_ctx"))
    status = entry.get("status")
    state = status.get("value") if isinstance(status, Mapping) else None
    pending = window is None and isinstance(state, str) and state != "loaded"
    return ListedModel(name=name, context_window=window, pending=pending)


class ListingUnavailable(Exception):
    """The endpoint does not list its models (``GET /models`` is not there): not a failure."""


Lister = Callable[[float], Awaitable[Sequence[ListedModel]]]
"""Lists the endpoint's models, the HTTP part bounded by the given seconds; raises
:class:`ListingUnavailable` when the endpoint has no listing, anything else on failure (with
a message fit for the log: no key in it)."""


class ModelCatalog:
    """What is known of the models one driver offers (see the module invariants)."""

    def __init__(
        self, config: ModelConfig, lister: Lister, *, timeout: float = LIST_TIMEOUT_S
    ) -> None:
        self.config = config
        self._lister = lister
        self._timeout = timeout
        self._listed: tuple[ListedModel, ...] = ()
        self._task: asyncio.Task[None] | None = None
        self._latest: asyncio.Task[None] | None = None
        """The listing asked last (the first, or one asked again)."""
        self._asked_again: set[str] = set()

    @property
    def default(self) -> str:
        """The model a session uses until it chooses another."""
        return self.config.model

    @property
    def listing_started(self) -> bool:
        """Whether the endpoint was asked for its models (it is asked once)."""
        return self._task is not None

    @property
    def listing_done(self) -> bool:
        """Whether the endpoint's answer (or its failure) is in."""
        return self._task is not None and self._task.done()

    def offered(self) -> tuple[ModelProfile, ...]:
        """Every model offered, as the module invariants order and complete them."""
        configured = list(self.config.models)
        if all(profile.name != self.default for profile in configured):
            configured.insert(0, ModelProfile(name=self.default))
        windows = {listed.name: listed.context_window for listed in self._listed}
        offered = [
            attrs.evolve(profile, context_window=windows.get(profile.name))
            if profile.context_window is None and windows.get(profile.name) is not None
            else profile
            for profile in configured
        ]
        names = {profile.name for profile in offered}
        offered.extend(
            ModelProfile(name=listed.name, context_window=listed.context_window)
            for listed in self._listed
            if listed.name not in names
        )
        return tuple(offered)

    def names(self) -> tuple[str, ...]:
        """The names of the models offered, in order."""
        return tuple(profile.name for profile in self.offered())

    def profile(self, name: str | None = None) -> ModelProfile:
        """What is known of ``name`` (``None``: the default); a model not offered gets a
        profile that knows only its name."""
        wanted = name or self.default
        for profile in self.offered():
            if profile.name == wanted:
                return profile
        return ModelProfile(name=wanted)

    def list_models(self) -> Awaitable[None]:
        """Start the listing if it has not started, and return a wait for the end of the
        latest one (waiting may be abandoned: the listing goes on for the others)."""
        if self._task is None:
            self._task = self._latest = asyncio.get_running_loop().create_task(
                self._fetch(), name="list the endpoint's models"
            )
        assert self._latest is not None
        return asyncio.shield(self._latest)

    def answered(self, name: str | None) -> None:
        """The model ``name`` (``None``: the default) answered a request: if the listing gave
        no window for it only because it was not loaded, ask again (once per model)."""
        wanted = name or self.default
        if not self.listing_done or wanted in self._asked_again:
            return
        if self.profile(wanted).context_window is not None:
            return
        if not any(listed.name == wanted and listed.pending for listed in self._listed):
            return
        self._asked_again.add(wanted)
        self._latest = asyncio.get_running_loop().create_task(
            self._fetch(), name=f"list the endpoint's models again for {wanted}"
        )

    def cancel(self) -> None:
        """Abandon a listing in flight (the driver is closing); what is known stays, and the
        endpoint is not asked again."""
        for task in (self._task, self._latest):
            if task is not None and not task.done():
                task.cancel()
        self._asked_again.update(listed.name for listed in self._listed)

    async def _fetch(self) -> None:
        url = self.config.shown_url
        try:
            listed = await self._lister(self._timeout)
        except ListingUnavailable:
            logger.info("the model endpoint %s does not list its models", url)
            return
        except TimeoutError:
            logger.warning(
                "the model endpoint %s did not list its models within %g s; offering the "
                "configured models",
                url,
                self._timeout,
            )
            return
        except Exception as exc:
            logger.warning(
                "listing the models of %s failed (%s); offering the configured models",
                url,
                redacted(str(exc), self.config),  # an error body may quote the key
            )
            return
        unique: dict[str, ListedModel] = {}
        for model in listed:
            unique.setdefault(model.name, model)
        self._listed = tuple(unique.values())
        logger.info("the model endpoint %s lists %d models", url, len(self._listed))
