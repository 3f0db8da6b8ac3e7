"""Skills as code: parse the skill modules, patch them with libcst, draw the skill tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SkillRecord:
    """What lyra knows about one skill module, read from its source with libcst.

    Attributes:
        name: the public function's name, equal to the module name.
        path: the module file.
        signature: the ``def`` line as source text, e.g. ``def stack(blocks: list[str]) -> None:``.
        docstring: the function's docstring, dedented.
        header: signature plus docstring: what a prompt shows of the skill.
        source_hash: sha256 of the module's text, to notice hand edits.
        calls_skills: other skills the module imports from ``skills.*``.
        calls_primitives: ``lyra.api`` names the module imports.
    """

    name: str
    path: Path
    signature: str
    docstring: str
    header: str
    source_hash: str
    calls_skills: tuple[str, ...] = field(default=())
    calls_primitives: tuple[str, ...] = field(default=())

    @property
    def summary(self) -> str:
        """First line of the docstring: what the behaviour is (the memory indexes it)."""
        return self.docstring.strip().splitlines()[0] if self.docstring.strip() else ""
