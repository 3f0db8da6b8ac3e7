"""The tabletop's speed against an earlier commit, in one run: `lyra bench tabletop` and the house.

Run: python benchmarks/bench_speed.py REV [--pairs 3] [--seeds 3] [--house-seeds 2] [--profile]
Targets: the house at most 5 s an episode, `lyra bench tabletop` at most 0.06 s a pick-and-place.

REV (a commit, such as HEAD~3) is checked out into a temporary worktree; then this checkout and
REV take turns, each run in a process of its own with its own code first on the path, so that a
busy machine weighs on both alike. Each pair prints the seconds per pick-and-place of the bench
tasks and the wall seconds of a house episode (the house's learnt plan, confined, reset and final
hold included); the summary gives medians and the per-pair ratios (this checkout over REV).
With --profile, each side also runs one house under cProfile and prints where the time goes
(the primitives run in the profiled process; the plan itself runs confined in a worker).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from checkouts import checkout

ROOT = Path(__file__).resolve().parents[1]
BENCH_ROW = re.compile(r"^(\S+)\s+\d+/\d+\s+([\d.]+)\s", re.M)

# Run inside each checkout, with its own code: the house task, its learnt plan and a backend.
SETUP = """
import json, sys, time
from pathlib import Path
from lyra.backend import backend_spec
from lyra.curriculum import load_curriculum
from lyra.episode import run_episode
from lyra.examples import iter_examples

tasks = load_curriculum(Path("curricula/ravens/house.yaml")).tasks
task = next(t for t in tasks if t.id == "house")
code = next(e.code for _, e in iter_examples(Path("examples")) if e.task == "ravens-house/house")
backend = backend_spec("ravens").make()
"""

# The house's wall seconds per seed, as JSON on the last line.
HOUSE = (
    SETUP
    + """
walls = []
for seed in range(int(sys.argv[1])):
    start = time.perf_counter()
    run = run_episode(backend, task.scene, seed, code, skills_root=Path("skills"),
                      success=task.success, hold_seconds=task.hold_seconds)
    walls.append(time.perf_counter() - start)
    if not run.ok:
        raise SystemExit(f"house seed {seed} failed: {run.describe()}")
print(json.dumps(walls))
"""
)

PROFILE = (
    SETUP
    + """
import cProfile, pstats
profile = cProfile.Profile()
profile.enable()
run = run_episode(backend, task.scene, 0, code, skills_root=Path("skills"),
                  success=task.success, hold_seconds=task.hold_seconds)
profile.disable()
print(f"house seed 0: {'built' if run.ok else 'failed'}, {run.sim_seconds:.1f} s simulated")
pstats.Stats(profile).sort_stats("tottime").print_stats(12)
"""
)


def run(tree: Path, *args: str) -> str:
    """Run ``python ARGS`` in a checkout, its own code first on the path; return stdout."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"{' '.join(args[:3])} failed in {tree}:\n{done.stderr[-2000:]}")
    return done.stdout


def measure(tree: Path, seeds: int, house_seeds: int) -> dict[str, float]:
    """Seconds per pick-and-place of each bench task, and the median house episode."""
    bench = run(tree, "-m", "lyra.cli", "bench", "tabletop", "--seeds", str(seeds))
    found = {name: float(value) for name, value in BENCH_ROW.findall(bench)}
    walls = json.loads(run(tree, "-c", HOUSE, str(house_seeds)).splitlines()[-1])
    found["house s"] = statistics.median(walls)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the commit to compare against")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3, help="seeds per bench task")
    parser.add_argument("--house-seeds", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    with checkout(args.rev) as old:
        sides = {args.rev: old, "this": ROOT}
        if args.profile:
            for name, tree in sides.items():
                print(f"== profile, {name}\n{run(tree, '-c', PROFILE)}", flush=True)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for pair in range(args.pairs):
            # Which side goes first alternates, so that neither always runs warm.
            order = list(sides) if pair % 2 == 0 else list(sides)[::-1]
            for name in order:
                results[name].append(measure(sides[name], args.seeds, args.house_seeds))
            print(f"pair {pair}: " + "; ".join(f"{n} {results[n][-1]}" for n in sides))
    keys = list(results["this"][0])
    print(f"\n{'measure':<12} {args.rev:>12} {'this':>10} {'ratio':>7}  per-pair range")
    for key in keys:
        before = [r[key] for r in results[args.rev]]
        after = [r[key] for r in results["this"]]
        ratios = [a / b for a, b in zip(after, before, strict=True)]
        print(
            f"{key:<12} {statistics.median(before):>12.3f} {statistics.median(after):>10.3f} "
            f"{statistics.median(ratios):>7.3f}  {min(ratios):.3f}-{max(ratios):.3f}"
        )


if __name__ == "__main__":
    main()
