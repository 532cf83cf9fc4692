"""The handler table: one handler per client → agent method, typed as the method table says."""

import inspect
import typing

from acp_sidecar.protocol import methods
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.handlers import HANDLERS

CLIENT_TO_AGENT = {
    methods.INITIALIZE,
    methods.AUTHENTICATE,
    methods.SESSION_NEW,
    methods.SESSION_LOAD,
    methods.SESSION_LIST,
    methods.SESSION_PROMPT,
    methods.SESSION_SET_MODE,
    methods.SESSION_CANCEL,
}


def test_every_client_method_has_one_handler() -> None:
    assert set(HANDLERS) == CLIENT_TO_AGENT


def test_each_handler_takes_the_server_and_the_method_types() -> None:
    for method, handler in HANDLERS.items():
        types = methods.METHOD_TO_TYPES[method]
        hints = typing.get_type_hints(handler, localns={"AcpServer": AcpServer})
        assert list(inspect.signature(handler).parameters) == ["server", "params"], method
        assert hints["server"] is AcpServer, method
        assert hints["params"] is types.params, method
        # A request's handler is a coroutine returning the result; a notification's returns
        # nothing and runs synchronously.
        if types.result is None:
            assert not inspect.iscoroutinefunction(handler), method
            assert hints["return"] is type(None), method
        else:
            assert inspect.iscoroutinefunction(handler), method
            assert hints["return"] is types.result, method
