"""The terminal front end's teacher: a person answering the loop's questions by number."""

from __future__ import annotations

import sys
from collections.abc import Callable

import yaml

from lyra.curriculum import Task
from lyra.errors import LyraError
from lyra.names import SKILL_NAME
from lyra.predicates import PredicateError, from_spec
from lyra.teachers import Attempt, SkillRequest, TeacherVerdict


def require_terminal(stdin: object = None) -> None:
    """Refuse the human teacher before the first prompt when nobody can answer it.

    Raises:
        LyraError: standard input is not a terminal; the message names the teachers that
            need none.
    """
    stream = sys.stdin if stdin is None else stdin
    isatty = getattr(stream, "isatty", None)
    if stream is None or isatty is None or not isatty():
        raise LyraError(
            "the human teacher asks its questions at the terminal, and standard input is not "
            "one: run this in a terminal, or use --teacher scripted (the task's own feedback "
            "lines and success check) or --teacher llm (an LLM critic)"
        )


class HumanTeacher:
    """A person at the terminal, answering with numbered choices."""

    wants_pictures = True

    def __init__(
        self, ask: Callable[[str], str] = input, say: Callable[[str], None] = print
    ) -> None:
        self.ask = ask
        self.say = say

    def review_header(self, task: Task, header: str) -> str:
        """Show the proposed header; the person may paste a corrected one."""
        self.say(f"Proposed header for the new skill:\n\n{header}\n")
        answer = self.ask("Press Enter to accept, or paste a corrected `def` line: ").strip()
        if not answer:
            return header
        docstring = header[header.index(":\n") + 2 :] if ":\n" in header else ""
        return f"{answer.rstrip(':')}:\n{docstring}"

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Show what happened and ask for a verdict."""
        self.say(f"\nRound {attempt.round} of '{attempt.task.id}':\n{attempt.outcome()}")
        if attempt.picture is not None:
            self.say(f"Picture of the final scene: {attempt.picture}")
        choices = {"1": "accept", "2": "feedback", "3": "hint", "4": "reject"}
        while True:
            choice = self.ask("1 accept   2 give feedback   3 give a hint   4 reject > ").strip()
            if choice in choices:
                break
            self.say("Answer 1, 2, 3 or 4.")
        action = choices[choice]
        text = self.ask("Your words: ").strip() if action in ("feedback", "hint") else ""
        return TeacherVerdict(action, text)  # type: ignore[arg-type]

    def teach_missing(self, task: Task, proposal: str) -> SkillRequest | None:
        """Ask for the skill's name (default the LLM's), the task that shows it, its predicate."""
        proposed, _, what = (part.strip() for part in proposal.partition(":"))
        while True:
            answer = self.ask(f"Teach it now? The skill's name [{proposed}] ('no' to stop): ")
            if answer.strip().lower() == "no":
                return None
            name = answer.strip() or proposed
            if SKILL_NAME.fullmatch(name):
                break
            self.say(f"'{name}' is not a skill name: use lower case letters, digits and _")
        instruction = ""
        while not instruction:
            instruction = self.ask(f"The task that shows it, in this scene [{what}]: ").strip()
            instruction = instruction or what
        while True:
            text = self.ask(
                "Its success predicate as YAML, e.g. [{on_top: {upper: a, lower: b}}]: "
            )
            try:
                success = yaml.safe_load(text)
                from_spec(success, task.predicate_functions())
                return SkillRequest(name, instruction, success)
            except (PredicateError, yaml.YAMLError, TypeError, AttributeError) as error:
                self.say(f"That cannot be used: {error}")

    def tell(self, message: str) -> None:
        """Print it."""
        self.say(message)
