"""``max_time`` of a classifier MCR call: a deadline from the start of the call, and what it cut short."""

from __future__ import annotations

import time

__all__ = ["Clock"]


class Clock:
    """The deadline ``max_time`` seconds after construction (None: no deadline).

    ``late(what)`` is True once the deadline has passed, and then records in ``notes`` (a list the caller
    reports) that ``what`` was cut short; every bound stays valid, only less tight.
    """

    def __init__(self, max_time: float | None):
        self.max_time = max_time
        self.deadline = None if max_time is None else time.monotonic() + float(max_time)
        self.notes: list[str] = []

    def late(self, what: str) -> bool:
        if self.deadline is None or time.monotonic() < self.deadline:
            return False
        self.notes.append(
            f"the time limit (max_time) ran out before {what}, which was skipped (max_time = {self.max_time:g} s; "
            "the bounds stay valid, less tight)"
        )
        return True
