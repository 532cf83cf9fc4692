"""The v2 wire mapping: the methods a v2 connection serves, each with its v2 types and its
handler, and the v2 update encoder. A method absent here is ``-32601`` over v2.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from acp_sidecar.protocol.v2 import methods as m
from acp_sidecar.server.v2 import handlers as h
from acp_sidecar.server.v2.background import SessionStates
from acp_sidecar.server.v2.cancelling import CallControls, terminal_cancel, tool_call_cancel
from acp_sidecar.server.v2.closing import session_close, session_delete
from acp_sidecar.server.v2.forking import session_fork
from acp_sidecar.server.v2.prompting import Foreground, session_prompt
from acp_sidecar.server.v2.resuming import session_resume
from acp_sidecar.server.wire import WireMapping


def v2_mapping(v1: WireMapping) -> WireMapping:
    """The v2 mapping, its handlers running the core's (``v1``'s) for the same work."""
    core = v1.handlers
    # This connection's: the mapping is made once per connection.
    states, controls, foreground = SessionStates(), CallControls(), Foreground()
    handlers: dict[str, Callable[..., Any]] = {
        m.INITIALIZE: partial(h.initialize, states),
        m.AUTH_LOGIN: partial(h.login, core),
        m.AUTH_LOGOUT: partial(h.logout, core),
        m.SESSION_NEW: partial(h.session_new, core),
        m.SESSION_LIST: partial(h.session_list, core),
        # Same params and answers as v1's: the core's, then the session's v2 state dropped.
        m.SESSION_CLOSE: partial(session_close, states, controls, core),
        m.SESSION_DELETE: partial(session_delete, states, controls, core),
        m.SESSION_SET_CONFIG_OPTION: partial(h.session_set_config_option, core),
        m.SESSION_PROMPT: partial(session_prompt, states, controls, foreground),
        m.SESSION_CANCEL: core[m.SESSION_CANCEL],  # v1's params; idle ``cancelled`` confirms
        m.SESSION_RESUME: partial(session_resume, states, core),
        m.SESSION_FORK: partial(session_fork, core),  # unstable
        m.TOOL_CALL_CANCEL: tool_call_cancel,
        m.TERMINAL_CANCEL: partial(terminal_cancel, states),
    }
    return WireMapping(
        version=2, handlers=handlers, method_types=m.METHOD_TO_TYPES, encode_update=controls.encode
    )
