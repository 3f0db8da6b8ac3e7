"""The ``replay`` provider: answers from a recorded session log, request by request.

Tests and offline demos run the real learning loop against it. A recorded answer is found by
what was asked, not by the prompt's bytes: by its order, its purpose and the task that asked
it. So a better sentence in a prompt, retrieval in another order, or a simulation that ends a
millimetre elsewhere on another CPU still replays; each request asked otherwise than recorded
is kept as a :class:`PromptDifference`, summed up in one line by :meth:`ReplayProvider.summary`
and shown whole by :meth:`ReplayProvider.differences_text`. What the run cannot go on from is
a request of another kind than the recording has next for its task, or none left for it: the
loop took another path than the recorded one, and the session must be recorded again.

A run that resumes after a crash or a kill starts at the first task not yet accepted, so its
first request is found further on in the recording; a task accepted in fewer rounds than
recorded leaves its last recorded requests unasked. Both skip records, and the summary says so.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lyra.llm.base import Completion, Message, render_prompt
from lyra.llm.errors import ReplayExhaustedError, ReplayMismatchError
from lyra.llm.session import LogRecord, read_log

# Enough diff to see what changed without burying the message.
MAX_DIFF_LINES = 40


@dataclass(frozen=True)
class PromptDifference:
    """A request asked otherwise than the recorded one that answered it.

    Attributes:
        index: the recorded request's number in the session, from 1.
        purpose: the request's purpose.
        task: the task that asked it (None in logs written before records named it).
        diff: the unified diff from the prompt the model was shown to today's.
    """

    index: int
    purpose: str
    task: str | None
    diff: str


class ReplayProvider:
    """Gives the recorded answers to the requests of the same purpose and task, in order."""

    def __init__(self, recording: Path) -> None:
        """Read the session log ``recording``.

        Raises:
            SessionLogError: the file is not a session log.
        """
        self.recording = recording
        self.records = read_log(recording)
        self.position = 0
        self.answered = 0
        self.differences: list[PromptDifference] = []
        self.skipped: list[int] = []

    def complete(
        self, messages: Sequence[Message], *, purpose: str, task: str | None = None
    ) -> Completion:
        """Return the answer recorded next for ``task``.

        Records of other tasks before it are skipped (a resumed run, or a task accepted in
        fewer rounds than recorded); a prompt that differs from the recorded one is noted in
        :attr:`differences`, and the answer is given all the same.

        Raises:
            ReplayMismatchError: the recording's next request for the task has another purpose.
            ReplayExhaustedError: the recording holds no further request for the task.
        """
        started = time.perf_counter()
        found = next(
            (
                at
                for at in range(self.position, len(self.records))
                if task is None or self.records[at].task in (None, task)
            ),
            None,
        )
        if found is None:
            raise ReplayExhaustedError(self.recording, len(self.records), purpose, task)
        record = self.records[found]
        if record.purpose != purpose:
            raise ReplayMismatchError(
                self.recording, record.index, purpose, _diff(record, purpose, messages)
            )
        self.skipped += [r.index for r in self.records[self.position : found]]
        self.position = found + 1
        self.answered += 1
        if record.messages != tuple(m.text_only() for m in messages):
            self.differences.append(
                PromptDifference(
                    record.index, purpose, task, _diff(record, purpose, messages, limit=None)
                )
            )
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

    def summary(self) -> str:
        """One line: how many requests were answered, and which were asked otherwise."""
        line = f"replay of {self.recording}: {_count(self.answered)} answered"
        if self.differences:
            numbers = _numbers([d.index for d in self.differences])
            line += f", {len(self.differences)} asked otherwise than recorded ({numbers})"
        else:
            line += ", each asked as recorded"
        if self.skipped:
            line += f"; not asked: {_numbers(self.skipped)}"
        return line

    def differences_text(self) -> str:
        """Every difference in full, one diff after another ('' when there are none)."""
        return "".join(
            f"=== recorded request {d.index} ({d.purpose}, task {d.task or '?'})\n{d.diff}\n"
            for d in self.differences
        )


def _numbers(indices: list[int]) -> str:
    listed = ", ".join(map(str, indices))
    return f"recorded request {listed}" if len(indices) == 1 else f"recorded requests {listed}"


def _count(requests: int) -> str:
    return f"{requests} request" if requests == 1 else f"{requests} requests"


def _diff(
    record: LogRecord,
    purpose: str,
    messages: Sequence[Message],
    limit: int | None = MAX_DIFF_LINES,
) -> str:
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
    if limit is not None and len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)
