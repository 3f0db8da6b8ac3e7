"""The ``manual`` provider: a person, or an agent acting as the model, answers each prompt.

On the terminal the prompt is printed and the answer read back until a line holding only ``.``;
with a folder, each prompt becomes ``NNNN-purpose.prompt.md`` and the answer is awaited in
``NNNN-purpose.answer.md``, so a chat window or another program can sit in between.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from lyra.llm.base import Completion, Message, estimate_tokens, render_prompt
from lyra.llm.errors import AnswerFileError, EmptyAnswerError, ManualAnswerTimeoutError

END_OF_ANSWER = "."


class ManualProvider:
    """Shows each prompt and waits for someone to answer it."""

    def __init__(
        self,
        *,
        answers: Path | None = None,
        answered_by: str = "person",
        timeout: float = 3600.0,
        poll: float = 0.5,
    ) -> None:
        """Answer on the terminal, or through files in ``answers``.

        Args:
            answers: the folder for prompt and answer files; None means the terminal.
            answered_by: who answers, as written to the session log (a person, or the model
                behind the chat window or agent).
            timeout: seconds to wait for an answer file.
            poll: seconds between looks for the answer file.
        """
        self.answers = answers
        self.answered_by = answered_by
        self.timeout = timeout
        self.poll = poll
        self._asked = 0

    def complete(
        self, messages: Sequence[Message], *, purpose: str, task: str | None = None
    ) -> Completion:
        """Show ``messages`` and return the answer someone gives.

        Raises:
            ManualAnswerTimeoutError: no answer file appeared within the timeout.
            EmptyAnswerError: the answer holds no text.
        """
        started = time.perf_counter()
        self._asked += 1
        prompt = render_prompt(messages)
        if self.answers is None:
            text = self._ask_terminal(prompt + _named(messages, None), purpose)
        else:
            text = self._ask_files(prompt, purpose, self.answers, messages)
        if not text:
            raise EmptyAnswerError(f"{self.answered_by} (manual)", purpose)
        return Completion(
            text=text,
            model=self.answered_by,
            prompt_tokens=estimate_tokens(prompt),
            completion_tokens=estimate_tokens(text),
            latency_s=time.perf_counter() - started,
            provider="manual",
            answered_by=self.answered_by,
            tokens_estimated=True,
        )

    def _ask_terminal(self, prompt: str, purpose: str) -> str:
        # sys.stdin/stdout are looked up on each call so redirection (and tests) take effect.
        print(f"----- lyra request {self._asked} ({purpose}): give this to the model -----")
        print(prompt)
        print(f"----- write the answer, then a line holding only '{END_OF_ANSWER}' -----")
        sys.stdout.flush()
        lines: list[str] = []
        while (line := sys.stdin.readline()) and line.rstrip("\r\n") != END_OF_ANSWER:
            lines.append(line)
        return "".join(lines).strip()

    def _ask_files(
        self, prompt: str, purpose: str, folder: Path, messages: Sequence[Message]
    ) -> str:
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{_next_number(folder):04d}-{_slug(purpose)}"
        prompt_file = folder / f"{stem}.prompt.md"
        answer_file = folder / f"{stem}.answer.md"
        images = [image for message in messages for image in message.images]
        for number, image in enumerate(images, 1):
            (folder / f"{stem}.image-{number}.png").write_bytes(image.png)
        prompt += _named(messages, stem)
        # Write then rename, so whoever watches the folder never reads half a prompt.
        partial = prompt_file.with_suffix(".partial")
        partial.write_text(prompt, encoding="utf-8")
        partial.replace(prompt_file)
        print(
            f"lyra: the prompt is in {prompt_file}; write the answer to {answer_file} "
            f"(waiting up to {self.timeout:g} s)",
            file=sys.stderr,
        )
        return self._await(answer_file, prompt_file)

    def _await(self, answer_file: Path, prompt_file: Path) -> str:
        deadline = time.monotonic() + self.timeout
        seen, seen_bytes = "", b""
        while time.monotonic() < deadline:
            data = answer_file.read_bytes() if answer_file.is_file() else b""
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as error:
                if data == seen_bytes:  # finished writing, and still not text
                    raise AnswerFileError(answer_file, error) from None
                seen_bytes = data
                time.sleep(self.poll)
                continue
            # The same non-empty text on two looks in a row: the writer has finished.
            if text.strip() and text == seen:
                return text.strip()
            seen = text
            time.sleep(self.poll)
        raise ManualAnswerTimeoutError(answer_file, prompt_file, self.timeout)


def _named(messages: Sequence[Message], stem: str | None) -> str:
    """The prompt's closing lines naming its pictures: the files beside it, or just their names."""
    images = [image for message in messages for image in message.images]
    if not images:
        return ""
    if stem is None:
        head = f"The {len(images)} pictures of this prompt (not shown on a terminal):"
        lines = [f"- {image.name}" for image in images]
    else:
        head = f"The {len(images)} pictures of this prompt, beside this file, in order:"
        lines = [
            f"- {stem}.image-{number}.png ({image.name})" for number, image in enumerate(images, 1)
        ]
    return "\n".join(["", "## images", "", head, *lines, ""])


def _slug(purpose: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", purpose).strip("-") or "request"


def _next_number(folder: Path) -> int:
    # Continue after the highest existing prompt, so stale answers of an earlier run never
    # answer a new prompt.
    numbers = [int(p.name[:4]) for p in folder.glob("[0-9][0-9][0-9][0-9]-*.prompt.md")]
    return max(numbers, default=0) + 1
