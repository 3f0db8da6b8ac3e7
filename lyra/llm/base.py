"""The provider interface: typed messages in, a typed completion out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

Role = Literal["system", "user", "assistant"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant")


@dataclass(frozen=True)
class Image:
    """A picture sent with a message.

    Attributes:
        name: its file name, as the prompt and the session log name it.
        png: the PNG file's bytes.
    """

    name: str
    png: bytes

    @classmethod
    def read(cls, path: Path) -> Image:
        """The PNG file at ``path``."""
        return cls(path.name, path.read_bytes())


@dataclass(frozen=True)
class Message:
    """One chat message.

    Attributes:
        role: ``system``, ``user`` or ``assistant``.
        content: the message text; it says in words what any picture shows.
        images: pictures that go with the text, for a model that takes them (the session
            log keeps their names; a replay matches the text).
    """

    role: Role
    content: str
    images: tuple[Image, ...] = ()

    def text_only(self) -> Message:
        """The message without its pictures, as a session log records and a replay compares."""
        return Message(self.role, self.content) if self.images else self


@dataclass(frozen=True)
class Completion:
    """One answer of a model, with what it cost.

    Attributes:
        text: the answer text.
        model: the model that answered, as the provider names it.
        prompt_tokens: tokens in the request.
        completion_tokens: tokens in the answer.
        latency_s: wall-clock seconds of the call, retries and waits included.
        provider: ``openai``, ``manual`` or ``replay``.
        answered_by: who wrote the answer: the model, or for manual answers the label set
            with ``answered_by`` (a person, or the model behind a chat window or agent).
        tokens_estimated: the token counts are estimates (characters / 4), not a tokenizer's.
    """

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    provider: str
    answered_by: str
    tokens_estimated: bool = False


class Provider(Protocol):
    """Anything that answers a chat request."""

    def complete(
        self, messages: Sequence[Message], *, purpose: str, task: str | None = None
    ) -> Completion:
        """Answer ``messages``.

        Args:
            messages: the conversation, oldest first.
            purpose: a short tag such as ``skill_learning``, written to the session log and
                compared when a recording is replayed.
            task: the id of the task that asks, if any; written to the session log, where a
                replay finds each answer by its order, purpose and task.

        Returns:
            The answer and its usage.
        """
        ...


def estimate_tokens(text: str) -> int:
    """Estimate the token count of ``text`` the usual way: one token per four characters."""
    return (len(text) + 3) // 4


def render_prompt(messages: Sequence[Message]) -> str:
    """Render a conversation as Markdown, one ``## role`` section per message.

    The same text is shown to a person answering by hand and diffed when a replay's prompt
    differs from the recorded one.
    """
    return "\n\n".join(f"## {m.role}\n\n{m.content.rstrip()}" for m in messages) + "\n"
