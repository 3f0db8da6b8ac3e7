"""The ical suite (evals/ical): unseen instructions near demos/ravens, with oracles that do them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lyra.backend import Backend
from lyra.demos.format import load_demo
from lyra.episode import run_episode
from lyra.evals.suite import load_suite

REPO = Path(__file__).resolve().parents[2]
SUITE = load_suite(REPO / "evals" / "ical")
TEMPLATES = [t.id for t in SUITE.spec.templates]


def test_it_asks_four_unseen_instructions_after_the_ravens_demonstrations() -> None:
    items = SUITE.items(["unseen_instructions"])
    assert len(items) >= 4
    assert all(template.held_out for template in SUITE.spec.templates)
    assert {path.resolve() for path in SUITE.demonstrations} == {
        path.resolve() for path in (REPO / "demos" / "ravens").glob("*.json")
    }
    demonstrated = {load_demo(path).instruction for path in SUITE.demonstrations}
    assert not demonstrated & {item.instruction for item in items}


@pytest.mark.slow
@pytest.mark.parametrize("template", TEMPLATES)
def test_the_oracle_does_what_each_instruction_asks(ravens: Backend, template: str) -> None:
    item = next(i for i in SUITE.items(["unseen_instructions"]) if i.template == template)
    task = item.task
    result = run_episode(
        ravens,
        task.scene,
        task.seeds[0],
        SUITE.oracle(item) or "",
        skills_root=None,
        success=task.success,
        hold_seconds=task.hold_seconds,
    )
    assert (result.result.ok, result.verdict.ok) == (True, True), (
        result.verdict.reason or result.result.feedback
    )
