"""The store's clock and how it writes times: aware UTC, ISO 8601 with microseconds and ``Z``.

:func:`timestamp_now` must give the text :func:`format_timestamp` gives for :func:`utc_now`.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


_second: list[tuple[int, str]] = [(-1, "")]
"""The last second :func:`timestamp_now` formatted, and its text up to the seconds."""


def timestamp_now() -> str:
    """``format_timestamp(utc_now())``, the text alike to the microsecond, for a fraction of
    its cost: the date and time of day are formatted once a second, the microseconds each call.
    """
    second, micro = divmod(time.time_ns() // 1000, 1_000_000)  # floored, as datetime.now
    formatted, head = _second[0]
    if second != formatted:
        head = datetime.fromtimestamp(second, UTC).replace(tzinfo=None).isoformat()
        _second[0] = (second, head)
    return f"{head}.{micro:06d}Z"


def format_timestamp(moment: datetime) -> str:
    """``moment`` as ISO 8601 in UTC with microseconds and ``Z`` (``2025-01-02T03:04:05.678901Z``).

    This is how the store writes times, and the form ACP's ``updatedAt`` takes.
    """
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    text = moment.astimezone(UTC).isoformat(timespec="microseconds")
    return text.removesuffix("+00:00") + "Z"


def parse_timestamp(text: str) -> datetime:
    """The aware UTC datetime of an ISO 8601 string; ``ValueError`` if it is not one."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no time zone")
    return moment.astimezone(UTC)
