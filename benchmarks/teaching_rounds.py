"""Rounds and corrections per task, from the recorded sessions: what teaching a set of tasks cost.

Run (MetaWorld's thirty tasks no earlier curriculum taught, from the MetaWorld folder)::

    cd curricula/metaworld && python ../../benchmarks/teaching_rounds.py \
        --tasks-of mt50_objects.yaml mt50_articulated.yaml mt50_tools.yaml \
        --sessions mt50_objects.yaml mt50_articulated.yaml mt50_tools.yaml mt50_skills.yaml \
        layouts_mt50.yaml

The tasks counted are the scene tasks (MetaWorld's task names) of ``--tasks-of``. Every
curriculum of ``--sessions``, in the order given, holds tasks that taught them, some more than
once (a skill after a plan failed, a plan taught again, a revision); its recorded session is
``sessions/NAME.jsonl`` beside it. A round is one ``plan``, ``skill_learning`` or
``refinement`` request; a curriculum task was kept when an example of it is in the repository's
``examples/``. A task is reached at the first curriculum task kept for it, in that order; its
corrections are the rounds until then less one (every round after its first answered a person's
line or a failed run), and a task never reached counts all its rounds less one the same way.
Rounds after a task was reached (revisions for layouts its plan failed) are counted apart. A
curriculum task with no recorded rounds is said so, not counted.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from lyra.curriculum import Task, load_curriculum
from lyra.examples import iter_examples
from lyra.llm.session import read_log

REPO = Path(__file__).resolve().parents[1]
ROUNDS = ("plan", "skill_learning", "refinement")


def scene_task(task: Task) -> str:
    """The backend's name for what a curriculum task asks (MetaWorld's task name)."""
    return str(task.scene.task)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks-of", nargs="+", type=Path, required=True)
    parser.add_argument("--sessions", nargs="+", type=Path, required=True)
    args = parser.parse_args()
    counted = {scene_task(t) for path in args.tasks_of for t in load_curriculum(path).tasks}
    kept = {e.task for _, e in iter_examples(REPO / "examples")}
    # Per counted task: (curriculum task, its rounds, kept), in teaching order.
    taught: dict[str, list[tuple[str, int, bool]]] = defaultdict(list)
    for path in args.sessions:
        curriculum = load_curriculum(path)
        rounds: dict[str | None, int] = defaultdict(int)
        for record in read_log(path.parent / "sessions" / f"{path.stem}.jsonl"):
            if record.purpose in ROUNDS:
                rounds[record.task] += 1
        for task in curriculum.tasks:
            name = scene_task(task)
            key = f"{curriculum.name}/{task.id}"
            if name in counted and not rounds[task.id]:
                print(f"{key}: no rounds recorded in {path.stem}.jsonl, not counted")
            elif name in counted:
                taught[name].append((key, rounds[task.id], key in kept))

    reached, to_reach, unreached, revisions = 0, 0, 0, 0
    print(f"{'task':<28} {'rounds to reach':>15} {'after':>6}  taught by (x: not kept)")
    for name in sorted(counted):
        steps = taught[name]
        first = next((i for i, (_, _, ok) in enumerate(steps) if ok), None)
        cut = len(steps) if first is None else first + 1
        until = sum(n for _, n, _ in steps[:cut])
        after = sum(n for _, n, _ in steps[cut:])
        if first is None:
            unreached += until
        else:
            reached, to_reach = reached + 1, to_reach + until
        revisions += after
        shown = f"not ({until})" if first is None else until
        path = ", ".join(f"{key} {n}{'' if ok else ' x'}" for key, n, ok in steps)
        print(f"{name:<28} {shown!s:>15} {after:>6}  {path}")
    total = len(counted)
    per_reached = (to_reach - reached) / reached if reached else float("nan")
    print(
        f"\n{reached} of {total} reached in {to_reach} rounds: "
        f"{to_reach - reached} corrections, {per_reached:.2f} a task"
    )
    print(
        f"{unreached} rounds spent on the {total - reached} not reached: over all {total}, "
        f"{(to_reach + unreached - total) / total:.2f} corrections a task"
    )
    print(f"rounds after a task was reached (revisions for other layouts): {revisions}")


if __name__ == "__main__":
    main()
