"""A studio served for real: a workspace grown by a recorded session, and the server's process."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_replay import METAWORLD, ravens_workspace, replay

REPO = Path(__file__).resolve().parents[2]
SESSION = METAWORLD / "sessions" / "articulated.jsonl"
# The articulated curriculum's tasks before the faucet, replayed without a browser: the faucet
# extends open_articulated (drawer-open, window-open re-checked), and window-close has edited
# close_articulated once, with every call of it still fitting its first version.
BEFORE = ("drawer-open", "drawer-close", "window-open", "window-close")
GIT = {
    "GIT_AUTHOR_NAME": "a person",
    "GIT_AUTHOR_EMAIL": "person@example.com",
    "GIT_COMMITTER_NAME": "a person",
    "GIT_COMMITTER_EMAIL": "person@example.com",
}


def grown_workspace(root: Path) -> Path:
    """The Ravens library plus the articulated curriculum's first four tasks, in git."""
    from lyra.curriculum import load_curriculum

    workspace = ravens_workspace(root)
    curriculum = load_curriculum(METAWORLD / "articulated.yaml")
    first = curriculum.model_copy(update={"tasks": [t for t in curriculum.tasks if t.id in BEFORE]})
    outcomes = replay(workspace, SESSION, first)
    assert [(o.task, o.accepted) for o in outcomes] == [(t, True) for t in BEFORE]
    (root / "curricula").mkdir()
    shutil.copy(METAWORLD / "articulated.yaml", root / "curricula" / "articulated.yaml")
    comparison = REPO / "evals" / "tabletop" / "comparison"
    (root / "evals" / "tabletop").mkdir(parents=True)
    shutil.copytree(comparison, root / "evals" / "tabletop" / "comparison", ignore=_only_results)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "grown"]):
        subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT}, check=True)
    return root


def _only_results(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "sessions" or n.endswith(".png")]


@dataclass
class Served:
    """A running ``lyra studio``: its address and its process."""

    url: str
    process: subprocess.Popen[str]
    workspace: Path


def serve(workspace: Path, *options: str) -> Served:
    """Start ``lyra studio`` on a free port; return once it prints its address."""
    process = subprocess.Popen(
        [sys.executable, "-m", "lyra.cli", "studio", str(workspace), "--port", "0", *options],
        cwd=REPO,
        env={**os.environ, **GIT, "LYRA_WORKSPACE": ""},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"(http://\S+)", line)
    if found is None:
        process.kill()
        pytest.fail(f"lyra studio did not start: {line}{process.stdout.read()}")
    return Served(found.group(1), process, workspace)


def stop(served: Served) -> None:
    """Stop the server as Ctrl-C does."""
    served.process.terminate()
    served.process.wait(timeout=30)


@pytest.fixture
def studio(tmp_path: Path) -> Iterator[Served]:
    """A studio on an empty workspace, with no token (the default on 127.0.0.1)."""
    (tmp_path / "ws" / "skills").mkdir(parents=True)
    served = serve(tmp_path / "ws")
    yield served
    stop(served)
