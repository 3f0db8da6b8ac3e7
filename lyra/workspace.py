"""A lyra workspace: a folder holding ``skills/``, ``curricula/``, ``examples/`` and ``.lyra/``.

The reviewable files (skill modules, curricula, example files) are the source of truth; ``.lyra/``
holds what can be rebuilt from them (the LanceDB index, logs, history) and is never committed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Workspace:
    """Paths of one workspace folder."""

    root: Path

    @property
    def skills_dir(self) -> Path:
        """The ``skills`` package: one public skill per module."""
        return self.root / "skills"

    @property
    def examples_dir(self) -> Path:
        """Accepted instruction -> plan examples, one reviewable file each."""
        return self.root / "examples"

    @property
    def state_dir(self) -> Path:
        """Rebuildable state: the memory index, session logs, edit history."""
        return self.root / ".lyra"


def find_workspace(start: Path | None = None) -> Workspace:
    """Return the workspace that holds ``start`` (default: $LYRA_WORKSPACE, else the cwd).

    The nearest ancestor with a ``skills/`` folder wins; with none, the starting folder itself.
    """
    env = os.environ.get("LYRA_WORKSPACE")
    here = (start or (Path(env) if env else Path.cwd())).resolve()
    for folder in (here, *here.parents):
        if (folder / "skills").is_dir():
            return Workspace(folder)
    return Workspace(here)
