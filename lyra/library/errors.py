"""The typed errors of the skill library; each message says what to do next."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from lyra.errors import LyraError, unknown_name


class LibraryError(LyraError):
    """Base of every error the skill library raises or reports."""


class SkillModuleError(LibraryError):
    """A module in ``skills/`` that cannot be read as a skill; parsing reports it and goes on.

    Attributes:
        path: the module file.
        line: the 1-based line of the problem (1 when it concerns the whole module).
        problem: the problem and its fix, without the location.
    """

    def __init__(self, path: Path, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        super().__init__(f"{path}:{line}: {problem}")


class SkillSyntaxError(SkillModuleError):
    """A skill module that does not parse."""


class SkillShapeError(SkillModuleError):
    """A skill module that breaks the one-public-skill-per-module rule."""


class UnknownSkillError(LibraryError):
    """A skill name that is not in the library."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = sorted(known)
        super().__init__(unknown_name("no skill named", "skills", name, self.known))


class EditError(LibraryError):
    """An edit that was refused; nothing was written.

    Attributes:
        problems: one line per problem, each naming where it is and what to do.
    """

    def __init__(self, summary: str, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n  ".join([summary, *self.problems]))


class ValidationError(EditError):
    """The edited module would not parse, compile, pass the allow-list or resolve its names."""


class SignatureError(EditError):
    """A changed signature that would not keep earlier calls of the skill working."""


class HistoryError(LibraryError):
    """A skill version that does not exist, or a git commit that failed."""
