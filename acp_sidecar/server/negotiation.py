"""Where a connection's protocol version is decided (:func:`negotiate`) and its wire mapping
chosen (:func:`mapping_for`): the one place in the package that compares versions.

The v2 mapping is imported only once a connection negotiated 2, so a v1 start never loads it.
"""

from __future__ import annotations

from typing import assert_never

from acp_sidecar.server.wire import Version, WireMapping


def negotiate(requested: object, v2_enabled: bool) -> Version:
    """The version to speak to a client that asked for ``requested`` (``initialize``'s
    ``protocolVersion``, unchecked): 2 when v2 is enabled and it asked for 2 or later, else 1
    (as before v2: a client asking for 2 while v2 is off gets 1 and may disconnect)."""
    asks_v2 = isinstance(requested, int) and not isinstance(requested, bool) and requested >= 2
    return 2 if v2_enabled and asks_v2 else 1


def mapping_for(version: Version, v1: WireMapping) -> WireMapping:
    """The wire mapping of ``version``; v2's is built on v1's core handlers."""
    match version:
        case 1:
            return v1
        case 2:
            from acp_sidecar.server.v2.mapping import v2_mapping

            return v2_mapping(v1)
        case _:
            assert_never(version)
