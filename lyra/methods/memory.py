"""Where a method keeps what it learns, apart from the skill library's memory.

Each method that remembers (``dynamic-cap``, ``console``, ``ical``) has a folder of its own,
``.lyra/methods/NAME``, so that methods compared in one workspace never read each other's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lyra.memory.store import Memory
from lyra.workspace import Workspace

if TYPE_CHECKING:
    from lyra.teach import Learner


def method_dir(workspace: Workspace, name: str) -> Path:
    """The folder a method keeps its memory in: ``.lyra/methods/NAME``."""
    return workspace.state_dir / "methods" / name


def method_memory(learner: Learner, name: str) -> Memory:
    """A method's own LanceDB memory, embedded as the workspace's is."""
    return Memory(method_dir(learner.ws, name), learner.memory.embedder)
