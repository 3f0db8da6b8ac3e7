"""The session log: one JSON line per answered LLM call, and the usage it adds up to.

The ``replay`` provider answers from exactly these files, so any recorded session (from an
endpoint, a person or an agent) can be played back offline.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lyra.llm.base import ROLES, Completion, Message, Provider
from lyra.llm.errors import SessionLogError
from lyra.workspace import Workspace


@dataclass(frozen=True)
class LogRecord:
    """One answered call.

    Attributes:
        index: the call's position in the session, from 1.
        time: when the answer arrived, ISO 8601 in UTC.
        purpose: the caller's tag, e.g. ``skill_learning``.
        provider: ``openai``, ``manual`` or ``replay``.
        model: the model that answered.
        answered_by: who wrote the answer (see :class:`~lyra.llm.base.Completion`).
        messages: the request.
        answer: the answer text.
        prompt_tokens: tokens in the request.
        completion_tokens: tokens in the answer.
        tokens_estimated: the counts are estimates (characters / 4).
        latency_s: wall-clock seconds of the call.
        backend: the backend the session taught or planned on (None in older logs).
        task: the task that asked (None in older logs, and for calls outside any task); a
            replay finds each answer by its order, purpose and task.
    """

    index: int
    time: str
    purpose: str
    provider: str
    model: str
    answered_by: str
    messages: tuple[Message, ...]
    answer: str
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    latency_s: float
    backend: str | None = None
    task: str | None = None

    def to_json(self) -> str:
        """This record as one JSON line (without the newline)."""
        data = dataclasses.asdict(self)
        # Pictures are named, not kept: the log is text, and a replay matches the text.
        data["messages"] = [
            {
                "role": m.role,
                "content": m.content,
                **({"images": [i.name for i in m.images]} if m.images else {}),
            }
            for m in self.messages
        ]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> LogRecord:
        """Read a line written by :meth:`to_json`.

        Raises:
            ValueError: the line is not such a record (KeyError and TypeError included).
        """
        data: dict[str, Any] = json.loads(line)
        return cls(messages=_messages(data.pop("messages")), **data)


def _messages(items: list[dict[str, Any]]) -> tuple[Message, ...]:
    messages = tuple(Message(m["role"], m["content"]) for m in items)
    if any(m.role not in ROLES or not isinstance(m.content, str) for m in messages):
        raise ValueError("a message has an unknown role or no text")
    return messages


def read_log(path: Path) -> list[LogRecord]:
    """Return the records of the session log at ``path``, in order.

    Raises:
        SessionLogError: a line is not a session record, or the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SessionLogError(path, 0, getattr(error, "strerror", None) or str(error)) from None
    lines = text.splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(LogRecord.from_json(line))
        except (ValueError, KeyError, TypeError) as error:
            if number == len(lines) and not text.endswith("\n"):
                break  # the call in flight when the process was killed: not answered yet
            raise SessionLogError(path, number, f"{type(error).__name__}: {error}") from None
    return records


def session_log_path(workspace: Workspace, now: datetime | None = None) -> Path:
    """Where a session starting ``now`` is logged: ``.lyra/sessions/<UTC time>.jsonl``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return workspace.state_dir / "sessions" / f"{stamp}.jsonl"


class LoggedProvider:
    """Wraps any provider and appends each answered call to a session log."""

    def __init__(self, provider: Provider, log: Path, backend: str | None = None) -> None:
        """Log the calls of ``provider`` to ``log``; an existing log is continued.

        Args:
            provider: the provider that answers.
            log: the JSON-lines file; its folder is created when needed.
            backend: the backend the session works on, written into each record.
        """
        self.provider = provider
        self.log = log
        self.backend = backend
        self.calls = len(read_log(log)) if log.exists() else 0

    def complete(
        self, messages: Sequence[Message], *, purpose: str, task: str | None = None
    ) -> Completion:
        """Ask the wrapped provider, then log the call before returning the answer."""
        completion = self.provider.complete(messages, purpose=purpose, task=task)
        self.calls += 1
        record = LogRecord(
            index=self.calls,
            time=datetime.now(UTC).isoformat(timespec="seconds"),
            purpose=purpose,
            provider=completion.provider,
            model=completion.model,
            answered_by=completion.answered_by,
            messages=tuple(messages),
            answer=completion.text,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            tokens_estimated=completion.tokens_estimated,
            latency_s=round(completion.latency_s, 3),
            backend=self.backend,
            task=task,
        )
        self.log.parent.mkdir(parents=True, exist_ok=True)
        # One write per call, flushed on close: a crash loses at most the call in flight.
        with self.log.open("a", encoding="utf-8") as out:
            out.write(record.to_json() + "\n")
        return completion


@dataclass(frozen=True)
class Usage:
    """What a set of calls cost.

    Attributes:
        calls: how many calls.
        prompt_tokens: tokens sent.
        completion_tokens: tokens received.
        latency_s: wall-clock seconds spent waiting.
        estimated: some of the token counts are estimates.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.latency_s + other.latency_s,
            self.estimated or other.estimated,
        )

    @classmethod
    def of(cls, record: LogRecord) -> Usage:
        """The usage of one call."""
        return cls(
            1,
            record.prompt_tokens,
            record.completion_tokens,
            record.latency_s,
            record.tokens_estimated,
        )


def usage_summary(log: Path | Iterable[LogRecord]) -> dict[str, Usage]:
    """Total calls, tokens and latency per purpose, in the order purposes first appear.

    Args:
        log: a session log file, or records already read.
    """
    records = read_log(log) if isinstance(log, Path) else log
    summary: dict[str, Usage] = {}
    for record in records:
        summary[record.purpose] = summary.get(record.purpose, Usage()) + Usage.of(record)
    return summary


def format_usage(summary: dict[str, Usage]) -> str:
    """A table of ``summary`` with a total row; ``~`` marks estimated token counts."""
    rows = [*summary.items(), ("total", sum(summary.values(), Usage()))]
    width = max(len(purpose) for purpose in ("purpose", *summary, "total"))
    lines = [f"{'purpose':<{width}}  calls  prompt_tokens  completion_tokens  latency_s"]
    for purpose, usage in rows:
        mark = "~" if usage.estimated else " "
        lines.append(
            f"{purpose:<{width}}  {usage.calls:>5}  {mark}{usage.prompt_tokens:>12}  "
            f"{mark}{usage.completion_tokens:>16}  {usage.latency_s:>9.1f}"
        )
    return "\n".join(lines)
