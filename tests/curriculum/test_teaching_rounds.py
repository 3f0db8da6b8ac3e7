"""The teaching cost that docs/backends.md quotes, counted from the shipped sessions."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
METAWORLD = REPO / "curricula" / "metaworld"
PLANS = ["mt50_objects.yaml", "mt50_articulated.yaml", "mt50_tools.yaml"]


def test_the_thirty_mt50_tasks_cost_what_the_docs_say() -> None:
    script = REPO / "benchmarks" / "teaching_rounds.py"
    sessions = [*PLANS, "mt50_skills.yaml", "layouts_mt50.yaml"]
    command = [sys.executable, str(script), "--tasks-of", *PLANS, "--sessions", *sessions]
    out = subprocess.run(command, cwd=METAWORLD, capture_output=True, text=True, check=True)
    rows = {line.split()[0]: line.split()[1:3] for line in out.stdout.splitlines()[1:31]}
    assert len(rows) == 30
    # The handle: a plan and a skill not kept, a plan from above not kept, then from below (3
    # rounds), then its revision (2 rounds, counted after it was reached).
    assert rows["handle-pull"] == ["15", "2"]
    assert rows["handle-pull-side"] == ["20", "0"]
    assert rows["soccer"] == ["not", "(12)"]
    assert out.stdout.splitlines()[-3:] == [
        "29 of 30 reached in 101 rounds: 72 corrections, 2.48 a task",
        "12 rounds spent on the 1 not reached: over all 30, 2.77 corrections a task",
        "rounds after a task was reached (revisions for other layouts): 32",
    ]
