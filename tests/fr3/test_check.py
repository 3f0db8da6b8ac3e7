"""``lyra check --backend fr3``: the tabletop's accepted examples re-checked in franky-sim."""

from __future__ import annotations

import pytest

pytest.importorskip("franky", reason="the fr3 tests need franky: pip install '.[fr3]'")
pytest.importorskip("franky_sim", reason="the fr3 tests need franky-sim: pip install '.[fr3]'")

from envs.fr3.backend import FR3Backend
from lyra.check import check_example
from lyra.cli import main
from lyra.examples import load_example
from tests.fr3.conftest import REPO

RED_ON_BLUE = REPO / "examples" / "ravens_basics_red_on_blue.yaml"


def test_check_on_another_backend_refuses_to_write_its_snapshots(
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = ["--backend", "fr3", "--update-snapshots"]
    assert main(["check", "curricula/ravens/basics.yaml", *options]) == 1
    assert capsys.readouterr().err == (
        "lyra: --update-snapshots writes how each task ends on the backend it was learnt on; "
        "run it without --backend\n"
    )
    assert main(["check", "curricula/ravens/basics.yaml", "--backend", "nowhere"]) == 1
    assert "nowhere" in capsys.readouterr().err


@pytest.mark.slow
def test_a_tabletop_example_passes_its_check_in_franky_sim_and_says_it_cannot_nudge(
    fr3: FR3Backend,
) -> None:
    example = load_example(RED_ON_BLUE)
    assert example.backend == "ravens"
    # Laid out as the tabletop lays it out on the example's seed, run and compared with the
    # tabletop's snapshot within the fr3's 1 cm.
    assert check_example(fr3, example, REPO / "skills") == ""
    # A snapshot the run cannot match: nudged runs would measure the spread, but franky-sim
    # cannot nudge, and the check says so instead of skipping them silently.
    moved = {
        **example.snapshot,
        "red_block": [v + 0.05 * (i == 0) for i, v in enumerate(example.snapshot["red_block"])],
    }
    why = check_example(fr3, example.model_copy(update={"snapshot": moved}), REPO / "skills")
    assert why.endswith(
        " (no nudged runs measured the spread: franky-sim cannot nudge a run's start, so the "
        "10 mm tolerance stands alone)"
    ), why
    assert "red_block" in why
