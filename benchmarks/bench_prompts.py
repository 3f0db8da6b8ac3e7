"""Prompt sizes per purpose: each recorded request as the model saw it, and as lyra asks it today.

Run: ``python benchmarks/bench_prompts.py``  (about 10 minutes on two cores)

The recorded sessions are replayed through the real loop in the order they were taught, each on
the library it was recorded on (the replay tests of tests/test_replay.py), and each request's
prompt is taken twice: the recorded one (``before``) and the one lyra renders today with the
same library, examples and memory (``after``). Tokens are estimated as characters / 4, the
same estimate the session logs carry for manual answers.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from lyra.llm.base import estimate_tokens, render_prompt
from lyra.llm.replay import ReplayProvider

REPO = Path(__file__).resolve().parents[1]
LEARNING = ("skill_learning", "refinement", "plan")


class Sizes:
    """A pytest plugin that notes both prompts of each answered request."""

    def __init__(self) -> None:
        self.before: dict[str, list[int]] = defaultdict(list)
        self.after: dict[str, list[int]] = defaultdict(list)

    def pytest_configure(self, config: pytest.Config) -> None:
        original = ReplayProvider.complete
        sizes = self

        def complete(replay, messages, *, purpose, task=None):  # type: ignore[no-untyped-def]
            answer = original(replay, messages, purpose=purpose, task=task)
            record = replay.records[replay.position - 1]
            sizes.before[purpose].append(estimate_tokens(render_prompt(record.messages)))
            sizes.after[purpose].append(estimate_tokens(render_prompt(messages)))
            return answer

        ReplayProvider.complete = complete  # type: ignore[method-assign]


def main() -> int:
    sizes = Sizes()
    code = pytest.main(
        ["-q", "-p", "no:cacheprovider", str(REPO / "tests" / "test_replay.py"), "-k", "regrows"],
        plugins=[sizes],
    )
    if code != 0:
        print("the replays failed: the sizes below are of the requests answered before that")
    print(
        f"\n{'purpose':<16} {'requests':>8}   {'median before':>13} {'after':>6}   "
        f"{'largest before':>14} {'after':>6}"
    )
    rows = [*sizes.before, "learning calls"]
    for purpose in rows:
        if purpose == "learning calls":
            before = [n for p in LEARNING for n in sizes.before.get(p, [])]
            after = [n for p in LEARNING for n in sizes.after.get(p, [])]
        else:
            before, after = sizes.before[purpose], sizes.after[purpose]
        if not before:
            continue
        print(
            f"{purpose:<16} {len(before):>8}   {statistics.median(before):>13.0f} "
            f"{statistics.median(after):>6.0f}   {max(before):>14} {max(after):>6}"
        )
    print("tokens estimated as characters / 4; learning calls: " + ", ".join(LEARNING))
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
