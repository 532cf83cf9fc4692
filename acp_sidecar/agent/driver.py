"""The driver contract: what answers a prompt turn, everything the server asks of it, and
the helpers the drivers share.

Invariants:
- A driver reaches the editor only through its :class:`Turn` (``send``, ``client``).
- Cancellation arrives as ``turn.signal``; the server answers ``cancelled`` whenever it fired.
- What the sidecar tells the user goes through :func:`send_notice`: shown as agent text,
  logged as a notice, never sent to a model as something it said.
- Every member the server uses is on :class:`Driver`; nothing is probed.
"""

from __future__ import annotations

import importlib
import operator
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, Protocol, TypeAlias

import attrs

from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.initialize import ClientCapabilities, PromptCapabilities
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.protocol.updates import (
    AgentMessageChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    SessionUpdate,
)
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.slots import field_setters
from acp_sidecar.values import Value

if TYPE_CHECKING:
    from acp_sidecar.agent.delegation import Delegate
    from acp_sidecar.agent.model.budget import BudgetGate
    from acp_sidecar.agent.model.catalog import ModelCatalog
    from acp_sidecar.bridge.policy import CallScope
    from acp_sidecar.bridge.runner import EventSink
    from acp_sidecar.protocol.client import (
        ReadTextFileRequest,
        ReadTextFileResponse,
        RequestPermissionRequest,
        RequestPermissionResponse,
        WriteTextFileRequest,
        WriteTextFileResponse,
    )
    from acp_sidecar.store import CompactionRecord, HistoryItem, UsageRecord
    from acp_sidecar.tools.registry import ToolRegistry


class ClientCapabilityError(RuntimeError):
    """The client did not advertise the capability an agent→client request needs."""


class ClientRequests(Protocol):
    """Agent → client requests, each awaiting the editor's answer.

    ``signal`` (or cancelling the awaiting task) abandons the wait: the client is sent
    ``$/cancel_request`` and the call raises ``ToolCancelledError`` (``CancelledError`` for a
    cancelled task). A JSON-RPC error from the client raises ``AcpError``.
    """

    @property
    def capabilities(self) -> ClientCapabilities:
        """What the client advertised in ``initialize``."""
        ...

    async def request_permission(
        self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
    ) -> RequestPermissionResponse:
        """``session/request_permission``: ask the user about a tool call."""
        ...

    async def read_text_file(
        self, request: ReadTextFileRequest, *, signal: CancelSignal | None = None
    ) -> ReadTextFileResponse:
        """``fs/read_text_file`` (needs ``fs.readTextFile``)."""
        ...

    async def write_text_file(
        self, request: WriteTextFileRequest, *, signal: CancelSignal | None = None
    ) -> WriteTextFileResponse:
        """``fs/write_text_file`` (needs ``fs.writeTextFile``)."""
        ...


class Notice(Protocol):
    """Tells the user ``text`` in the agent's voice, followed in the same message by
    ``blocks`` (a ``resource_link`` to a file written for them); logged as a notice."""

    def __call__(self, text: str, blocks: Sequence[ContentBlock] = ()) -> Awaitable[None]: ...


@attrs.frozen(repr=False, eq=False)
class Turn(Value):
    """One prompt turn, as a driver sees it."""

    session_id: str
    """The session the prompt belongs to."""
    cwd: str
    """The session's absolute working directory."""
    prompt: tuple[ContentBlock, ...]
    """The user's message, as sent in ``session/prompt``."""
    signal: CancelSignal
    """Cancelled on ``session/cancel``, ``$/cancel_request`` of the prompt, or shutdown."""
    send: Callable[[SessionUpdate], Awaitable[None]]
    """Emit one ``session/update`` for this session; waits while the client reads behind."""
    client: ClientRequests
    """Requests to the editor (permission, file system)."""
    _scope: CallScope | Callable[[], CallScope] = attrs.field(alias="scope")
    """:attr:`scope`, or what makes it at first use; called again, that must return the same
    scope (the server's is made at the turn's first tool call, so a turn that calls none
    never pays for it)."""
    record: EventSink | None = None
    """Hears each tool call and result of the turn (the session log), if any."""
    history: tuple[HistoryItem, ...] = ()
    """The session's conversation before this turn, from its log (user messages, agent
    messages, tool calls and their results, in order); the current prompt is not in it."""
    notice: Notice | None = None
    """Shows the user a notice as an agent message and logs it as a notice (see
    :func:`send_notice`); ``None``: the notice is sent with ``send`` as agent text."""
    tools: ToolRegistry | None = None
    """The session's own registry (a session with MCP servers has one: the server's tools
    and theirs), fixed for the turn; ``None``: the driver uses the server's registry."""
    model: str | None = None
    """The model the session chose (its ``model`` config option), fixed for the turn;
    ``None``: the driver's default."""
    reasoning_effort: str | None = None
    """The reasoning effort the session chose (its ``thought_level`` option); ``None``: the
    endpoint's default (the field is not sent)."""
    inform: Callable[[str], None] | None = None
    """Tells the user something live that is neither the conversation nor logged (a model
    request being retried): a ``notice`` where the client shows them, else an agent message.
    It never blocks the turn. ``None``: nobody is told."""
    waiting: Callable[[str, bool], None] | None = None
    """Tells the user, every few seconds, how long the model has not answered (``text``;
    ``True`` for the first tell of a wait): a notice each time where the client shows them,
    else an agent message for the first only. Live only, like ``inform``; ``None``: nobody
    is told."""
    keep: Callable[[UsageRecord | CompactionRecord], None] | None = None
    """Appends to the session's log what a driver learned about its context (a response's
    usage and the cost so far, a compaction's summary), for later turns and reloads to read
    back in ``history``; ``None``: it is not kept."""
    commands: tuple[AvailableCommand, ...] = ()
    """The session's own commands (run by the server before any driver sees a prompt), for
    a driver's help to list beside its own."""
    steered: Callable[[bool], Awaitable[tuple[tuple[ContentBlock, ...], ...]]] | None = None
    """Takes the prompts the user steered into the turn since the last call, in order, each
    echoed and logged as it is taken; a driver calls it at each step boundary (after a model
    response or a tool batch, never inside one) and adds them to its context as user
    messages. ``True``: the driver would end the turn, and with nothing taken no prompt joins
    it after (a later one starts a turn of its own). ``None``: the driver's turns take no
    steering (see :attr:`Driver.steers`)."""
    delegate: Delegate | None = None
    """Runs a job in a child conversation (a subagent) and returns how it ended; a driver
    with tools offers it as the ``task`` tool. ``None``: the turn cannot delegate (no server
    to run a child, or the child would be deeper than the depth limit)."""
    budget: BudgetGate | None = None
    """The session's budget, which a model driver counts its work against and ends the turn
    on at a step boundary once reached; ``None``: no budget applies."""

    @property
    def scope(self) -> CallScope:
        """What tool calls of this turn carry: the session's cards, mode policy and workspace."""
        return self._scope() if callable(self._scope) else self._scope


_TURN_FIELDS: Final = tuple(field.name for field in attrs.fields(Turn))
_turn_values: Final = operator.attrgetter(*_TURN_FIELDS)
_TURN_SETTERS: Final = field_setters(Turn)
_DELEGATE: Final = _TURN_FIELDS.index("delegate")
_new_turn: Final = Turn.__new__


def with_delegate(turn: Turn, delegate: Delegate | None) -> Turn:
    """``attrs.evolve(turn, delegate=delegate)``, built slot by slot (a copy costs half an
    evolve, which reads each field by name and calls the keyword constructor): no field of
    :class:`Turn` may have a converter or validator, which this would skip."""
    values = list(_turn_values(turn))
    values[_DELEGATE] = delegate
    copy = _new_turn(Turn)
    for set_field, value in zip(_TURN_SETTERS, values, strict=True):
        set_field(copy, value)
    return copy


async def send_notice(turn: Turn, text: str) -> None:
    """Tell the user something about the turn in the agent's voice that is not part of the
    conversation (why a request failed): shown like agent text, never replayed to a model."""
    if turn.notice is not None:
        await turn.notice(text)
    else:
        await turn.send(AgentMessageChunk(content=TextContentBlock(text=text)))


def new_call_id() -> str:
    """A call id unique within a session (and across its reloads)."""
    return f"call_{uuid.uuid4().hex[:16]}"


class TurnDriver(Protocol):
    """What a driver must have: the prompt content it accepts and a turn's run (the whole
    contract of a ``--driver`` plugin, which :class:`PlainDriver` completes)."""

    @property
    def prompt_capabilities(self) -> PromptCapabilities:
        """The prompt content this driver accepts (advertised in ``initialize``)."""
        ...

    async def run_turn(self, turn: Turn) -> StopReason:
        """Run one turn to its end and say why it ended."""
        ...


class Driver(TurnDriver, Protocol):
    """Every member of a driver the server uses (:class:`DriverBase` has their defaults)."""

    @property
    def wants_history(self) -> bool:
        """Whether each turn is given the session's history read back from its log."""
        ...

    @property
    def steers(self) -> bool:
        """Whether its turns take prompts steered in while they run (``Turn.steered``);
        ``False``: such a prompt runs as a turn of its own once the running one ends."""
        ...

    @property
    def catalog(self) -> ModelCatalog | None:
        """The models a session may choose from (``None``: the driver offers no choice)."""
        ...

    def commands_update(self, tools: ToolRegistry | None = None) -> AvailableCommandsUpdate | None:
        """The slash commands of a session whose registry is ``tools`` (``None``: the
        server's); ``None``: the driver has no commands."""
        ...

    async def aclose(self) -> None:
        """Close what the driver holds open (it is replaced, or the server stops)."""
        ...


class DriverBase:
    """The defaults of :class:`Driver`'s members beyond :class:`TurnDriver`: no history,
    no model choice, no commands, nothing to close."""

    wants_history: bool = False
    steers: bool = False
    catalog: ModelCatalog | None = None

    def commands_update(self, tools: ToolRegistry | None = None) -> AvailableCommandsUpdate | None:
        return None

    async def aclose(self) -> None:
        return None


class PlainDriver(DriverBase):
    """A :class:`TurnDriver` served as a :class:`Driver`, with :class:`DriverBase`'s defaults."""

    def __init__(self, inner: TurnDriver) -> None:
        self.inner = inner

    @property
    def prompt_capabilities(self) -> PromptCapabilities:
        return self.inner.prompt_capabilities

    async def run_turn(self, turn: Turn) -> StopReason:
        return await self.inner.run_turn(turn)


DriverFactory: TypeAlias = Callable[[], Driver]
"""Makes the driver of one server (called once, at ``initialize``)."""


def load_driver_factory(spec: str) -> DriverFactory:
    """Resolve ``"package.module:attribute"`` to a factory of :class:`TurnDriver` (or such a
    class). A plugin's contract is :class:`TurnDriver`, served as :class:`PlainDriver`; one
    that subclasses :class:`DriverBase` has declared the whole :class:`Driver` and is served
    as it is (its history, catalog, commands and ``aclose`` kept).

    Raises ``ValueError`` for a malformed spec and ``ImportError``/``AttributeError`` when
    the module or attribute does not exist.
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"expected MODULE:ATTRIBUTE, got {spec!r}")
    target: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"{spec} is not callable")
    make: Callable[[], TurnDriver] = target

    def factory() -> Driver:
        driver = make()
        return driver if isinstance(driver, DriverBase) else PlainDriver(driver)

    return factory


class MessageDriver(DriverBase):
    """Answers every prompt with one fixed message (e.g. why the configured model cannot run)."""

    prompt_capabilities = PromptCapabilities()

    def __init__(self, message: str) -> None:
        self.message = message

    async def run_turn(self, turn: Turn) -> StopReason:
        await send_notice(turn, self.message)
        return "end_turn"
