"""A lyra workspace: a folder holding ``skills/``, ``curricula/``, ``examples/`` and ``.lyra/``.

The reviewable files (skill modules, curricula, example files) are the source of truth; ``.lyra/``
holds what can be rebuilt from them (the LanceDB index, logs, history) and is never committed.
"""

from __future__ import annotations

import os
import sys
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
    def curricula_dir(self) -> Path:
        """YAML curricula, one folder per backend."""
        return self.root / "curricula"

    @property
    def examples_dir(self) -> Path:
        """Accepted instruction -> plan examples, one reviewable file each."""
        return self.root / "examples"

    @property
    def state_dir(self) -> Path:
        """Rebuildable state: the memory index, session logs, edit history."""
        return self.root / ".lyra"

    def activate(self) -> None:
        """Put the workspace root first on the import path so ``skills`` is this workspace's."""
        root = str(self.root)
        if root in sys.path:
            sys.path.remove(root)
        sys.path.insert(0, root)
        loaded = sys.modules.get("skills")
        if (
            loaded is not None
            and Path(getattr(loaded, "__file__", "") or "").parent != self.skills_dir
        ):
            # Another workspace's skills were imported earlier in this process: forget them.
            for name in [m for m in sys.modules if m == "skills" or m.startswith("skills.")]:
                del sys.modules[name]


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
