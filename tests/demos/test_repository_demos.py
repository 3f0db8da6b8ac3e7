"""The demonstrations kept in demos/: they load, and are what issue 27 asks for.

At least four on the Ravens tabletop and two on MetaWorld or the Kitchen, each with a check,
at least 8 primitive calls and at least 2 mistakes: injected ones are marked in the file
(``injected``); a person's are listed here (and in demos/README.md) by step. A plan's injected
mistakes are never corrected, so its check must fail where it ends; a person corrected theirs,
so the check must hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lyra.backend import Backend, make
from lyra.demos.format import end_verdict, load_demo

DEMOS = Path(__file__).resolve().parents[2] / "demos"

# The steps of a person's demonstration that were mistakes (demos/README.md says what each was).
PERSON_MISTAKES: dict[str, list[int]] = {
    "ravens/sort_by_colour.json": [1, 2, 3, 7],
    "ravens/line_up_front.json": [1, 6, 7],
    "metaworld/close_drawer.json": [2, 5, 6],
}


def demo_files() -> list[Path]:
    return sorted(DEMOS.rglob("*.json"))


@pytest.fixture(scope="module")
def backends() -> Iterator[dict[str, Backend]]:
    made: dict[str, Backend] = {}
    yield made
    for backend in made.values():
        backend.close()


def test_the_repository_holds_what_the_issue_asks_for() -> None:
    demos = {path.relative_to(DEMOS).as_posix(): load_demo(path) for path in demo_files()}
    ravens = [demo for demo in demos.values() if demo.backend == "ravens"]
    others = [demo for demo in demos.values() if demo.backend in ("metaworld", "kitchen")]
    assert len(ravens) >= 4
    assert len(others) >= 2
    kinds = {demo.source.kind for demo in ravens}
    assert kinds == {"person", "plan"}
    for name, demo in demos.items():
        assert demo.check, name
        assert len(demo.steps) >= 8, name
        if demo.source.kind == "plan":
            assert len(demo.mistakes) >= 2, name
        else:
            listed = PERSON_MISTAKES[name]
            assert len(listed) >= 2, name
            assert max(listed) < len(demo.steps), name


@pytest.mark.parametrize("path", demo_files(), ids=lambda path: path.stem)
def test_the_mistakes_matter(path: Path, backends: dict[str, Backend]) -> None:
    demo = load_demo(path)
    if demo.backend not in backends:
        backends[demo.backend] = make(demo.backend)
    verdict = end_verdict(demo, backends[demo.backend])
    # A person put their mistakes right; a plan's injected ones were left as they were.
    assert verdict.ok == (demo.source.kind == "person"), verdict.reason
