"""The permission dialog's options: allow or reject once, and "always" per rule scope, each
scope its own option id and name, so an answer says where its rule goes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, get_args

from acp_sidecar.bridge.rules import RuleScope, Verdict
from acp_sidecar.protocol import PermissionOption
from acp_sidecar.store.records import PermissionAnswer

ANSWERS: Final[tuple[PermissionAnswer, ...]] = tuple(
    answer for answer in get_args(PermissionAnswer) if answer != "cancelled"
)
"""The options' ids as the answers they are."""

ALWAYS: Final[Mapping[PermissionAnswer, tuple[Verdict, RuleScope]]] = {
    "allow_always": ("allow", "session"),
    "allow_always_project": ("allow", "project"),
    "allow_always_user": ("allow", "user"),
    "reject_always": ("deny", "session"),
    "reject_always_project": ("deny", "project"),
    "reject_always_user": ("deny", "user"),
}
"""The "always" answers: the rule each writes and where."""
_WHERE: Final[Mapping[RuleScope, str]] = {
    "session": "in this session",
    "project": "in this project",
    "user": "everywhere",
}


def permission_options(tool: str, scopes: Sequence[RuleScope]) -> list[PermissionOption]:
    """The dialog's options about a call of ``tool``: once, and "always" per scope offered."""
    allow = [PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")]
    reject = [PermissionOption(option_id="reject_once", name="Reject", kind="reject_once")]
    for answer, (verdict, where) in ALWAYS.items():
        if where not in scopes:
            continue
        if verdict == "allow":
            name = f"Always allow {tool} {_WHERE[where]}"
            allow.append(PermissionOption(option_id=answer, name=name, kind="allow_always"))
        else:
            name = f"Always reject {tool} {_WHERE[where]}"
            reject.append(PermissionOption(option_id=answer, name=name, kind="reject_always"))
    return allow + reject
