"""What confining generated code costs: the same plans run in this process and confined, alternated.

Run: python benchmarks/bench_confinement.py [--seeds 4] [--rounds 2] [--no-house]
Target: the confined runner within 10 % of running the same code in this process.

Each pair runs one plan on one seed twice on the same backend, once as plain ``exec`` in this
process (the floor: no worker, no pipe, no checks) and once through the episode runner (a worker
forked from the zygote, confined, every primitive a call over the pipe), in alternating order,
and times the code's run only (the reset before it and the judging after it are the same for
both). Alternating pair by pair cancels most of what a busy machine does to either side; the
ratio per pair is what is reported, as a median with its range.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lyra.backend import Backend, backend_spec
from lyra.curriculum import load_curriculum
from lyra.embodiment import use
from lyra.episode import run_episode
from lyra.examples import iter_examples

ROOT = Path(__file__).resolve().parents[1]


def in_process(backend: Backend, scene: Any, seed: int, code: str) -> float:
    """Seconds the code takes run by ``exec`` in this process, against the backend."""
    backend.reset(scene, seed)
    compiled = compile(code, "task.py", "exec")
    start = time.perf_counter()
    with use(backend):
        exec(compiled, {"__name__": "__bench__"})
    return time.perf_counter() - start


def confined(
    backend: Backend, scene: Any, seed: int, code: str, skills: Path | None, success: Any
) -> float:
    """Seconds the episode runner's run of the code takes (worker, confinement, pipe)."""
    run = run_episode(backend, scene, seed, code, skills_root=skills, success=success)
    if not run.ok:
        raise SystemExit(f"the confined run failed: {run.describe()}")
    return run.result.wall_s


def plans() -> list[tuple[str, Any, str, Path | None, Any]]:
    """(name, scene, code, skills folder, success) for the bench tasks and the house."""
    spec = backend_spec("ravens")
    found = [
        (task.name, task.scene, task.code, None, task.success)
        for task in spec.bench_tasks().values()
    ]
    curriculum = load_curriculum(ROOT / "curricula/ravens/house.yaml")
    house = next(t for t in curriculum.tasks if t.id == "house")
    example = next(e for _, e in iter_examples(ROOT / "examples") if e.task == "ravens-house/house")
    found.append(("house", house.scene, example.code, ROOT / "skills", house.success))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2, help="pairs per seed")
    parser.add_argument("--no-house", action="store_true", help="only the bench tasks")
    args = parser.parse_args()
    # In this process, `from skills.x import x` finds the reference library.
    sys.path.insert(0, str(ROOT))
    backend = backend_spec("ravens").make()
    print(f"{'plan':<10} {'pairs':>5} {'in-process s':>13} {'confined s':>11} {'ratio':>7}  range")
    try:
        for name, scene, code, skills, success in plans():
            if args.no_house and name == "house":
                continue
            base, ours, ratios = [], [], []
            for pair in range(args.seeds * args.rounds):
                seed = pair % args.seeds
                # Which side runs first alternates, so that neither always gets a warm cache.
                if pair % 2:
                    b = in_process(backend, scene, seed, code)
                    c = confined(backend, scene, seed, code, skills, success)
                else:
                    c = confined(backend, scene, seed, code, skills, success)
                    b = in_process(backend, scene, seed, code)
                base.append(b)
                ours.append(c)
                ratios.append(c / b)
            print(
                f"{name:<10} {len(ratios):>5} {statistics.median(base):>13.3f} "
                f"{statistics.median(ours):>11.3f} {statistics.median(ratios):>7.3f}  "
                f"{min(ratios):.3f}-{max(ratios):.3f}",
                flush=True,
            )
    finally:
        backend.close()


if __name__ == "__main__":
    main()
