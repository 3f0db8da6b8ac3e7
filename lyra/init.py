"""``lyra init DIR``: start a workspace of one's own, empty or from the shipped reference library.

A workspace is a folder with ``skills/`` (one public skill per module), ``curricula/`` (the
tasks a person teaches), ``examples/`` (the accepted instruction -> plan examples), ``lyra.toml``
(its settings) and ``.lyra/`` (what lyra rebuilds from those files: the memory, logs, history).
It is a git repository, so that every accepted step is a commit that can be read and reverted.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path
from typing import Any

from lyra.errors import LyraError

# The folders a reference copy takes from the source tree lyra runs from.
REFERENCE_FOLDERS = ("skills", "curricula", "examples")

LYRA_TOML = """\
# lyra's settings for this workspace. --llm and the LYRA_LLM* variables override them.
[llm]
# provider = "openai"            # openai (any OpenAI-compatible endpoint), manual or replay
# model = "gpt-4o"
# base_url = "http://localhost:11434/v1"
# api_key_env = "OPENAI_API_KEY"
"""

GITIGNORE = """\
# Rebuilt by lyra from the files above it; never committed.
.lyra/
__pycache__/
out/
"""

# The empty workspace's first curriculum: one task, one new skill (docs/first-skill.md).
FIRST_CURRICULUM = """\
# A first curriculum: teach one skill on the tabletop. Add tasks below it as you go; each accepted
# task becomes a regression check that later edits must keep passing.
name: first
backend: ravens
description: >
  A first skill: put one block on another.
tasks:
  - id: red-on-blue
    instruction: Put the red block on the blue block.
    scene:
      objects:
        - {type: block, color: red}
        - {type: block, color: blue}
    skill: {name: put_on, new: true}
    seeds: [0, 1, 2]
    success:
      - on_top: {upper: red_block, lower: blue_block}
      - on_table: blue_block
    feedback:
      - The red block must end up resting on top of the blue block, centred on it.
"""

SKILLS_INIT = (
    '"""The skill library: one public skill per module, grown by lyra\'s learning loop."""\n'
)


def reference_root() -> Path:
    """The source tree lyra runs from, which holds the reference skills, curricula, examples."""
    return Path(__file__).resolve().parents[1]


def init_workspace(root: Path, from_reference: bool = False) -> list[str]:
    """Make a workspace in ``root`` (made if missing, else empty); return what to tell the user.

    Raises:
        LyraError: ``root`` already holds files, or the reference library is not installed.
    """
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise LyraError(
            f"{root} is not an empty folder: give a new or empty one (nothing was changed)"
        )
    source = reference_root()
    if from_reference:
        lacking = [name for name in REFERENCE_FOLDERS if not (source / name).is_dir()]
        if lacking:
            raise LyraError(
                f"the reference library is not here ({', '.join(lacking)} missing in {source}): "
                "it ships with lyra's source tree; install lyra from a clone to copy it"
            )
    root.mkdir(parents=True, exist_ok=True)
    for name in REFERENCE_FOLDERS:
        if from_reference:
            shutil.copytree(
                source / name, root / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            (root / name).mkdir()
    if not from_reference:
        (root / "skills" / "__init__.py").write_text(SKILLS_INIT, encoding="utf-8")
        (root / "curricula" / "first.yaml").write_text(FIRST_CURRICULUM, encoding="utf-8")
    (root / "lyra.toml").write_text(LYRA_TOML, encoding="utf-8")
    (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    what = "the reference library" if from_reference else "an empty workspace"
    lines = [f"made {what} in {root}"]
    lines += _git_init(root, f"lyra init: {what}")
    return lines


def _git_init(root: Path, message: str) -> list[str]:
    """Make the workspace a git repository with a first commit; say what to fix if it cannot."""
    steps = (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", message])
    for args in steps:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
            )
        except FileNotFoundError:
            return ["warning: git is not installed: accepted steps will not be committed"]
        if done.returncode != 0:
            why = (done.stderr or done.stdout).strip().splitlines()
            return [
                f"warning: git {args[0]} failed ({why[-1] if why else 'no message'}); fix it "
                "(for example `git config --global user.name NAME` and user.email) so that "
                "accepted steps can be committed"
            ]
    return ["a git repository with a first commit: every accepted step will be one more"]


def register(subparsers: Any) -> None:
    """Add the ``init`` command."""
    init = subparsers.add_parser("init", help="start a workspace (skills, curricula, examples)")
    init.add_argument("dir", help="a new or empty folder")
    init.add_argument(
        "--from-reference",
        action="store_true",
        help="copy the shipped Ravens skills, curricula and examples instead of starting empty",
    )
    init.set_defaults(func=_init)


def _init(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    for line in init_workspace(root, args.from_reference):
        print(line)
    print(
        f"next: cd {root} && lyra learn curricula/first.yaml --llm openai:MODEL (or manual:DIR); "
        "the walkthrough is docs/first-skill.md"
    )
    return 0
