"""The handler table: one handler per client → agent method, typed as the method table says."""

import inspect
import typing

import pytest

from acp_sidecar.protocol import methods, to_wire
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.connection import Connection, notification_params
from acp_sidecar.server.handlers import HANDLERS
from tests.protocol.samples import SESSION_UPDATES, Sample, sample_id

CLIENT_TO_AGENT = {
    methods.INITIALIZE,
    methods.AUTHENTICATE,
    methods.LOGOUT,
    methods.SESSION_NEW,
    methods.SESSION_LOAD,
    methods.SESSION_LIST,
    methods.SESSION_RESUME,
    methods.SESSION_CLOSE,
    methods.SESSION_DELETE,
    methods.SESSION_FORK,
    methods.SESSION_PROMPT,
    methods.SESSION_SET_MODE,
    methods.SESSION_SET_CONFIG_OPTION,
    methods.SESSION_CANCEL,
}


def test_every_client_method_has_one_handler() -> None:
    assert set(HANDLERS) == CLIENT_TO_AGENT


def test_each_handler_takes_the_connection_and_the_method_types() -> None:
    for method, handler in HANDLERS.items():
        types = methods.METHOD_TO_TYPES[method]
        hints = typing.get_type_hints(handler, localns={"Connection": Connection})
        assert list(inspect.signature(handler).parameters) == ["server", "params"], method
        assert hints["server"] is Connection, method
        assert hints["params"] is types.params, method
        # A request's handler is a coroutine returning the result; a notification's returns
        # nothing and runs synchronously.
        if types.result is None:
            assert not inspect.iscoroutinefunction(handler), method
            assert hints["return"] is type(None), method
        else:
            assert inspect.iscoroutinefunction(handler), method
            assert hints["return"] is types.result, method


@pytest.mark.parametrize(
    "sample", [s for s in SESSION_UPDATES if s.value.meta is None], ids=sample_id
)
def test_notification_params_are_the_session_notification_on_the_wire(sample: Sample) -> None:
    # The server builds a session/update's params directly (it is sent once per chunk, and
    # never with a _meta of its own); they must stay what SessionNotification puts on the wire.
    notification = sample.value
    assert notification_params(notification.session_id, notification.update) == to_wire(
        notification
    )


def test_a_handler_cannot_be_registered_around_the_table() -> None:
    with pytest.raises(TypeError):
        AcpServer.feature(object.__new__(AcpServer), methods.SESSION_PROMPT)
