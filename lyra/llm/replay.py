"""The ``replay`` provider: answers from a recorded session log, request by request.

Tests and offline demos run the real learning loop against it; any change in what lyra asks
shows up as a typed error with a diff instead of as a silently different answer. A run that
resumes after a crash or a kill starts at the first task not yet accepted, so its first request
is found further on in the recording: the replay starts there, and is strict from then on.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Sequence
from pathlib import Path

from lyra.llm.base import Completion, Message, render_prompt
from lyra.llm.errors import ReplayExhaustedError, ReplayMismatchError
from lyra.llm.session import LogRecord, read_log

# Enough diff to see what changed without burying the message.
MAX_DIFF_LINES = 40


class ReplayProvider:
    """Gives the recorded answers, in order, to requests that match the recording."""

    def __init__(self, recording: Path) -> None:
        """Read the session log ``recording``.

        Raises:
            SessionLogError: the file is not a session log.
        """
        self.recording = recording
        self.records = read_log(recording)
        self.position = 0

    def complete(self, messages: Sequence[Message], *, purpose: str) -> Completion:
        """Return the next recorded answer, if this request is the one recorded next.

        Raises:
            ReplayMismatchError: the purpose or the messages differ from the recording.
            ReplayExhaustedError: every recorded request has been answered.
        """
        started = time.perf_counter()
        if self.position == 0:
            self.position = self._resume_point(messages, purpose)
        if self.position == len(self.records):
            raise ReplayExhaustedError(self.recording, len(self.records), purpose)
        record = self.records[self.position]
        index = self.position + 1
        if record.purpose != purpose or record.messages != tuple(messages):
            raise ReplayMismatchError(
                self.recording, index, purpose, _diff(record, purpose, messages)
            )
        self.position = index
        return Completion(
            text=record.answer,
            model=record.model,
            prompt_tokens=record.prompt_tokens,
            completion_tokens=record.completion_tokens,
            latency_s=time.perf_counter() - started,
            provider="replay",
            answered_by=record.answered_by,
            tokens_estimated=record.tokens_estimated,
        )

    def _resume_point(self, messages: Sequence[Message], purpose: str) -> int:
        """Where the first request of a run is recorded: 0, or further on for a resumed run."""
        request = (purpose, tuple(messages))
        for position, record in enumerate(self.records):
            if (record.purpose, record.messages) == request:
                return position
        return 0  # not recorded at all: the mismatch with the first record says so


def _diff(record: LogRecord, purpose: str, messages: Sequence[Message]) -> str:
    expected = f"purpose: {record.purpose}\n\n{render_prompt(record.messages)}"
    actual = f"purpose: {purpose}\n\n{render_prompt(messages)}"
    lines = list(
        difflib.unified_diff(
            expected.splitlines(),
            actual.splitlines(),
            fromfile="recorded",
            tofile="requested",
            n=2,
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(lines)
