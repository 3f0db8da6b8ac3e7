"""A progress bar for work done in parts (seeds, tasks): parts done, successes, time left.

On a terminal it redraws one line; anywhere else (a log, a pipe, CI) it writes a line per part,
so that a long run is never silent. It writes to stderr: stdout keeps only the results.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 20


class Bar:
    """Progress through ``total`` parts of one piece of work."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.done = 0
        self.successes = 0
        self.started = time.monotonic()
        self._redraw = self.stream.isatty()

    def step(self, ok: bool, what: str = "") -> None:
        """Count one part as done (``ok``: it succeeded) and show the bar."""
        self.done += 1
        self.successes += ok
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        filled = "#" * (WIDTH * self.done // self.total)
        line = (
            f"[{filled:<{WIDTH}}] {self.done}/{self.total} {self.label}: {self.successes} ok"
            + (f", {what}" if what else "")
            + (f", about {_duration(left)} left" if self.done < self.total else "")
        )
        if self._redraw:
            end = "\n" if self.done >= self.total else ""
            self.stream.write(f"\r\x1b[2K{line}{end}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"
