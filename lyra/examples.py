"""Accepted instruction -> plan examples, each kept as one reviewable YAML file in ``examples/``.

The files are the source of truth; the memory's examples table is an index rebuilt from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, overload

import yaml
from pydantic import BaseModel, ConfigDict, Field

from lyra.backend import DEFAULT_BACKEND
from lyra.errors import LyraError
from lyra.files import write_atomic


class ExampleFileError(LyraError, ValueError):
    """An example file is not valid YAML or does not match the Example schema."""


class Example(BaseModel):
    """One accepted task: what the person asked, the plan code that did it and what it left."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    instruction: str
    code: str
    skills: list[str] = Field(default_factory=list, description="skills the plan calls")
    backend: str = Field(
        default=DEFAULT_BACKEND,
        description="the backend it ran on (a file naming none: the default)",
    )
    task: str | None = Field(default=None, description="curriculum task it came from")
    revises: str | None = Field(
        default=None, description="the task whose plan this one replaces (`curriculum/task-id`)"
    )
    seed: int | None = None
    scene: dict[str, Any] | None = None
    snapshot: dict[str, list[float]] = Field(
        default_factory=dict,
        description="final object poses (x, y, z, qx, qy, qz, qw), for the regression re-check",
    )
    success: list[dict[str, Any]] = Field(
        default_factory=list, description="the task's predicate, re-checked after skill edits"
    )
    hold_seconds: float = 0.0
    notes: str = Field(default="", description="what the corrections taught, for later tasks")
    created: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


def revision_chain(example: Example, by_task: Mapping[str, Example]) -> list[Example]:
    """The examples whose tasks ``example``'s plan now does too, nearest first.

    The one it revises, the one that one revises, and so on; a task not learnt, or a loop, ends
    the chain.
    """
    return _follow(example, lambda e: by_task.get(e.revises or ""))


def revisions(examples: Iterable[Example]) -> dict[str, Example]:
    """Each revised task's revision, by the revised task's key (the newest, should two be)."""
    return {
        e.revises: e for e in sorted(examples, key=lambda e: e.created) if e.revises is not None
    }


def latest_revision(example: Example, revised_by: Mapping[str, Example]) -> Example:
    """The plan that now does an example's task: its newest revision's, else its own."""
    later = _follow(example, lambda e: revised_by.get(e.task or ""))
    return later[-1] if later else example


def _follow(example: Example, step: Callable[[Example], Example | None]) -> list[Example]:
    """The examples reached from ``example`` by ``step``, in order, until none or a loop."""
    reached: list[Example] = []
    seen = {example.task}
    while (following := step(example)) is not None and following.task not in seen:
        reached.append(following)
        seen.add(following.task)
        example = following
    return reached


def slugify(text: str, limit: int = 48) -> str:
    """Return a file-name-safe id made from free text."""
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return slug[:limit].rstrip("_") or "example"


def _literal_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Multi-line code reads best as a YAML block scalar.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(str, _literal_str)


def save_example(example: Example, folder: Path) -> Path:
    """Write an example atomically to ``folder/<id>.yaml`` and return the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{example.id}.yaml"
    # Most plans revise none: their files keep the fields they always had.
    data = example.model_dump(exclude={"revises"} if example.revises is None else None)
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    write_atomic(path, text)
    return path


E = TypeVar("E", bound=Example)


@overload
def load_example(path: Path) -> Example: ...
@overload
def load_example(path: Path, model: type[E]) -> E: ...
def load_example(path: Path, model: type[Example] = Example) -> Example:
    """Read one example file; a malformed file raises ExampleFileError naming the file.

    Args:
        path: the YAML file.
        model: the example's type: a method that keeps more about an example reads its own.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return model.model_validate(data)
    except (yaml.YAMLError, ValueError) as error:
        raise ExampleFileError(
            f"{path}: not a valid example file ({error}); fix it or delete it, then run "
            "`lyra memory rebuild`"
        ) from error


def example_paths(folder: Path) -> list[Path]:
    """The example files of a folder, sorted by file name (none if there is no folder)."""
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def iter_examples(folder: Path) -> Iterator[tuple[Path, Example]]:
    """Yield (path, example) for every example file in a folder, sorted by file name."""
    for path in example_paths(folder):
        yield path, load_example(path)
