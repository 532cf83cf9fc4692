"""The pygls members the server relies on keep their shape: a pygls release that moves one
fails here by the member's name, not somewhere down the wire."""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Any

import pytest
from pygls.feature_manager import FeatureManager
from pygls.protocol.json_rpc import JsonRPCProtocol
from pygls.server import JsonRPCServer

from acp_sidecar.protocol.converter import converter
from acp_sidecar.server.pygls_adapter import (
    OVERRIDDEN,
    PYGLS_MEMBERS,
    TESTED_WITH,
    Member,
    PyglsProtocol,
)
from acp_sidecar.server.transport import AcpJsonRpcProtocol


def _instance_of(owner: type[Any]) -> object:
    """A real instance to look attributes up on (pygls sets some in ``__init__``)."""
    server = JsonRPCServer(PyglsProtocol, lambda: converter)
    if owner is JsonRPCServer:
        return server
    if issubclass(PyglsProtocol, owner):
        return server.protocol
    if isinstance(server.protocol.fm, owner):
        return server.protocol.fm
    return owner


def check(member: Member) -> None:
    """Fail, naming ``member``, unless pygls has it in the shape the server relies on."""
    where = f"pygls {version('pygls')}: {member.qualname}"
    instance = _instance_of(member.owner)
    found = inspect.getattr_static(instance, member.name, None)
    assert found is not None, f"{where} is gone"
    if member.params is None:
        return
    assert callable(getattr(instance, member.name)), f"{where} is not callable"
    signature = inspect.signature(getattr(member.owner, member.name))
    params = tuple(signature.parameters)
    assert params[: len(member.params)] == member.params, (
        f"{where} takes {params}, not {member.params}"
    )
    required = [
        name
        for name, param in signature.parameters.items()
        if name not in member.params
        and param.default is inspect.Parameter.empty
        and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    ]
    assert not required, f"{where} now also requires {required}"


@pytest.mark.parametrize("member", PYGLS_MEMBERS, ids=lambda m: m.qualname)
def test_a_pygls_member_the_server_relies_on_keeps_its_shape(member: Member) -> None:
    check(member)


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        (Member(JsonRPCProtocol, "notify", ("self", "method", "payload")), "takes"),
        (Member(JsonRPCProtocol, "notify_all", ("self",)), "is gone"),
        (Member(FeatureManager, "features", ("self",)), "is not callable"),
        (Member(JsonRPCServer, "__init__", ("self", "protocol_cls")), "now also requires"),
    ],
)
def test_a_changed_member_fails_by_its_name(changed: Member, said: str) -> None:
    with pytest.raises(AssertionError, match=f"{changed.qualname} {said}"):
        check(changed)


@pytest.mark.parametrize("ours", [PyglsProtocol, AcpJsonRpcProtocol], ids=lambda c: c.__name__)
def test_the_transport_replaces_no_pygls_member_but_the_declared_ones(ours: type[Any]) -> None:
    """A name of ours that pygls also uses would change what pygls's own code calls."""
    pygls_names = {name for cls in JsonRPCProtocol.__mro__[:-1] for name in vars(cls)}
    shadowed = {
        name
        for cls in ours.__mro__
        if issubclass(cls, JsonRPCProtocol) and cls.__module__.startswith("acp_sidecar")
        for name in vars(cls)
        if name in pygls_names and (not name.startswith("__") or name == "__init__")
    }
    assert shadowed <= OVERRIDDEN, f"overrides pygls's {sorted(shadowed - OVERRIDDEN)}"


def test_the_installed_pygls_is_a_tested_minor_version() -> None:
    minor = ".".join(version("pygls").split(".")[:2])
    assert minor in TESTED_WITH, f"pygls {version('pygls')} is not among {TESTED_WITH}"
