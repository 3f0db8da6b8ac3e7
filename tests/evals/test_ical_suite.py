"""The ical suite (evals/ical): unseen instructions near demos/ravens, with oracles that do them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lyra.backend import Backend
from lyra.cli import main
from lyra.demos.format import load_demo
from lyra.episode import run_episode
from lyra.evals.suite import load_suite

REPO = Path(__file__).resolve().parents[2]
SUITE = load_suite(REPO / "evals" / "ical")
TEMPLATES = [t.id for t in SUITE.spec.templates]
COMPARISON = REPO / "evals" / "ical" / "comparison"
# The command docs/results.md gives for the recorded comparison, less --llm and --out.
COMPARED = [
    *("eval", str(REPO / "evals" / "ical"), "--split", "unseen_instructions"),
    *("--method", "ical", "--method", "ical-no-abstraction", "--method", "lyra"),
    *("--runs", "3", "--max-rounds", "3"),
]


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


@pytest.mark.slow
def test_the_recorded_comparison_replays_to_its_table(tmp_path: Path, monkeypatch) -> None:
    """ICAL, its ablation and LYRA, answered by a model, replay through real physics.

    The ical methods learn the four demonstrations again in every sequence, from the
    recording, before the runs: the same examples must come out for the same table.
    """
    monkeypatch.setenv("LYRA_WORKSPACE", str(REPO))
    out = tmp_path / "again"
    replay = f"replay:{COMPARISON / 'sessions'}"
    assert main([*COMPARED, "--llm", replay, "--workers", "2", "--out", str(out)]) == 0
    assert (out / "results.md").read_text() == (COMPARISON / "results.md").read_text()
