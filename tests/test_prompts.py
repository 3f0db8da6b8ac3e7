"""Every prompt as each backend renders it, pinned by golden files under tests/prompts/.

A change to a template, a backend's prompt pack or a primitive's docstring shows here as a
reviewed diff of the golden files, not as a re-recording of the sessions (their replays go on
and report the prompts that now differ). After a change made on purpose, refresh them with

    pytest tests/test_prompts.py --refresh-prompts

and commit the files with the change.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from lyra import prompts
from lyra.backend import registered
from lyra.prompts import HERE, render, system_prompt

GOLDEN = Path(__file__).parent / "prompts"
BACKENDS = ("ravens", "metaworld", "kitchen")


def rendered(backend: str) -> dict[str, str]:
    """Each template the backend's prompts use, with its pack's frame and scene legend and a
    marker naming each other placeholder, and its system prompt; by file name."""
    spec = registered()[backend]
    pack = spec.prompt_pack()
    names = sorted({p.stem for p in HERE.glob("*.md")} - {"system"} | set(pack.templates))
    files = {"system.md": system_prompt(pack, spec.capabilities)}
    for name in names:
        text = pack.templates.get(name) or prompts.template(name).template
        fields = set(string.Template(text).get_identifiers()) - {"frame", "scene_legend"}
        files[f"{name}.md"] = render(name, pack, **{f: f"<<{f}>>" for f in fields})
    return files


@pytest.mark.parametrize("backend", BACKENDS)
def test_prompts_render_as_pinned(backend: str, request: pytest.FixtureRequest) -> None:
    folder = GOLDEN / backend
    files = rendered(backend)
    if request.config.getoption("--refresh-prompts"):
        folder.mkdir(parents=True, exist_ok=True)
        for stale in set(p.name for p in folder.glob("*.md")) - set(files):
            (folder / stale).unlink()
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    assert pinned(backend) == files, (
        f"the {backend} prompts differ from tests/prompts/{backend}/: if the change is meant, "
        "run `pytest tests/test_prompts.py --refresh-prompts` and commit the files"
    )


def pinned(backend: str) -> dict[str, str]:
    """The golden files of a backend, by name."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((GOLDEN / backend).glob("*.md"))}
