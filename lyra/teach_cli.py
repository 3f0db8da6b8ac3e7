"""``lyra learn``, ``lyra teach``, ``lyra run`` and ``lyra check``: the loop's terminal front end.

This module parses options, builds the learner and its method and prints what they return;
the methods live in :mod:`lyra.methods`, the teacher that asks a person at the terminal in
:mod:`lyra.terminal`. Heavy modules (pybullet, lancedb, libcst) are imported inside the handlers.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import time
from concurrent.futures import as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lyra.curriculum import Curriculum

TEACHERS = ("scripted", "human", "llm")


def register(subparsers: Any) -> None:
    """Add the ``learn``, ``teach``, ``run`` and ``check`` commands."""
    from lyra.llm.cli import add_llm_option

    learn = subparsers.add_parser(
        "learn", help="run a curriculum through the learning loop (resumes where it stopped)"
    )
    learn.add_argument("curriculum", help="a curriculum YAML file")
    common_options(learn, add_llm_option)
    learn.set_defaults(func=_learn)

    teach = subparsers.add_parser("teach", help="teach one task through the learning loop")
    teach.add_argument("instruction", help="what the robot should do")
    teach.add_argument("--skill", required=True, help="the skill to create or extend")
    teach.add_argument("--scene", required=True, help="a scene YAML file")
    teach.add_argument("--seed", type=int, action="append", help="layout seed (repeatable)")
    teach.add_argument(
        "--success",
        required=True,
        help='the success predicate as YAML, e.g. "[{on_top: {upper: a, lower: b}}]"',
    )
    _backend_option(teach)
    _id_option(teach)
    common_options(teach, add_llm_option, default_teacher="human")
    teach.set_defaults(func=_teach)

    run = subparsers.add_parser(
        "run", help="run a curriculum's learnt plans over many seeds, or plan a new instruction"
    )
    run.add_argument("target", help="a curriculum YAML file, or an instruction in quotes")
    run.add_argument(
        "--seeds",
        type=seed_range,
        default=range(20),
        help="curriculum: N (seeds 0 to N-1, default 20) or A:B (seeds A to B-1, e.g. 100:120 "
        "for seeds no task was taught on)",
    )
    run.add_argument("--gif", help="curriculum: a folder for one GIF per task; else a GIF file")
    run.add_argument(
        "--workers", type=_positive, default=2, help="curriculum: worker processes (default 2)"
    )
    add_ray_option(run)
    _backend_option(run)
    _id_option(run)
    run.add_argument("--scene", help="instruction: the scene YAML file")
    run.add_argument("--seed", type=int, default=0, help="instruction: layout seed (default 0)")
    run.add_argument(
        "--hint", action="append", default=[], help="instruction: a hint that steers retrieval"
    )
    run.add_argument(
        "--success", help="instruction: the success predicate as YAML; the plan must pass it"
    )
    run.add_argument(
        "--feedback",
        action="append",
        default=[],
        help="instruction, scripted teacher: what to say when a plan fails (repeatable, in order)",
    )
    run.add_argument(
        "--review",
        action="append",
        default=[],
        help="instruction, scripted teacher: what to ask for after a plan that works "
        "(repeatable, in order)",
    )
    run.add_argument(
        "--teach",
        action="store_true",
        help="instruction: when the plan needs a skill the library lacks, pause, teach that "
        "skill here through the learning loop, then resume the plan with it",
    )
    robot_option(run)
    common_options(run, add_llm_option, default_teacher="human")
    run.set_defaults(func=_run)

    check = subparsers.add_parser(
        "check", help="re-run every accepted task (the regression suite) in simulation"
    )
    check.add_argument(
        "curriculum",
        nargs="?",
        help="only this curriculum's tasks, or those of every one in a folder",
    )
    check.add_argument("--workers", type=_positive, default=2, help="worker processes (default 2)")
    check.add_argument(
        "--update-snapshots",
        action="store_true",
        help="write back how each passing task ends today (after a simulator upgrade, or on "
        "another machine) and say which moved and by how much; a failing task is left as it is",
    )
    check.add_argument(
        "--seeds",
        type=seed_range,
        help="run each accepted task's plan on these seeds instead of its own layout, judged by "
        "its success predicate alone: N (seeds 0 to N-1) or A:B (seeds A to B-1, e.g. 100:120)",
    )
    check.add_argument(
        "--backend",
        help="run the examples on this backend instead of the one each was learnt on, one that "
        "lays out their scenes (fr3: the tabletop's examples in franky-sim)",
    )
    add_ray_option(check)
    robot_option(check)
    check.set_defaults(func=_check)


def robot_option(parser: argparse.ArgumentParser) -> None:
    """``--robot HOST``: a real robot's address (this command refuses it, naming its simulator)."""
    parser.add_argument(
        "--robot",
        metavar="HOST",
        help="a real robot's address: refused, since this runs seeds in a simulator of the "
        "robot (the message gives the command); `lyra deploy` runs a plan on the robot",
    )


def add_ray_option(parser: argparse.ArgumentParser) -> None:
    """``--ray [ADDRESS]``: episodes or sequences on a Ray cluster instead of local processes."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run on Ray instead of local worker processes: a cluster's address (ray://host:10001, "
        "auto), or none to start a local Ray (needs lyra-robot[ray])",
    )


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def seed_range(text: str) -> range:
    """``N`` as seeds 0 to N-1, ``A:B`` as seeds A to B-1."""
    first, colon, end = text.partition(":")
    try:
        seeds = range(int(first), int(end)) if colon else range(int(first))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a number of seeds (20) or a range of them (100:120)"
        ) from None
    if not seeds or seeds.start < 0:
        raise argparse.ArgumentTypeError(
            f"'{text}' holds no seeds: give N >= 1, or A:B with 0 <= A < B"
        )
    return seeds


def _backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        help="where the task runs: a registered backend (default: the scene file's, else ravens; "
        "for a curriculum, its own)",
    )


def _id_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--id",
        dest="task_id",
        help="the task's id in tables, logs and its example's name (lower case, digits, _ and "
        "-; default: the instruction's first words and a short digest)",
    )


def common_options(
    parser: argparse.ArgumentParser,
    add_llm_option: Any,
    default_teacher: str = "scripted",
    default_method: str = "lyra",
) -> None:
    """``--llm``, ``--teacher``, ``--max-rounds`` and ``--method``: what builds a learner."""
    add_llm_option(parser)
    parser.add_argument(
        "--teacher",
        choices=TEACHERS,
        default=default_teacher,
        help=f"who judges each attempt (default {default_teacher})",
    )
    parser.add_argument("--max-rounds", type=int, default=6, help="rounds per task (default 6)")
    add_method_option(parser, default_method)


def add_method_option(parser: argparse.ArgumentParser, default: str = "lyra") -> None:
    """``--method NAME``: how each task is taught; checked against the registry when it runs."""
    parser.add_argument(
        "--method",
        default=default,
        help=f"the learning method, a registered name (default {default}; `lyra eval --help` "
        "lists those installed)",
    )


def make_learner(
    args: argparse.Namespace, backend: str, teach_missing: bool = False
) -> tuple[Any, Any]:
    """A learner with the method and teacher asked for, on a new session log naming the backend.

    Raises:
        LyraError: the method is unknown, or the human teacher has no terminal to ask at;
            either before the first prompt.
    """
    from lyra.llm import open_session
    from lyra.memory.store import open_memory
    from lyra.methods import find_method
    from lyra.progress import Bar
    from lyra.teach import Learner
    from lyra.teachers import ScriptedTeacher, critic
    from lyra.terminal import HumanTeacher, require_terminal
    from lyra.workspace import find_workspace

    chosen = find_method(args.method)
    if args.teacher == "human":
        require_terminal()
    workspace = find_workspace()
    provider = open_session(workspace, args.llm, backend=backend)
    learner = Learner(
        workspace,
        provider,
        HumanTeacher() if args.teacher == "human" else ScriptedTeacher(),
        open_memory(workspace),
        method=chosen,
        max_rounds=args.max_rounds,
        teach_missing=teach_missing,
        progress=Bar,
    )
    if args.teacher == "llm":
        learner.teacher = critic(learner)
    return learner, provider


def report(outcomes: list[Any], provider: Any) -> int:
    """Print a table of the tasks' outcomes and the session log; 0 when all were accepted."""
    width = max(28, *(len(o.task) + 1 for o in outcomes)) if outcomes else 28
    print(
        f"\n{'task':<{width}} {'result':<9} {'rounds':>6} {'LLM calls':>9} {'tokens':>8} re-checks"
    )
    for o in outcomes:
        result = "accepted" if o.accepted else "not kept"
        counts = f"{o.rounds:>6} {o.llm_calls:>9} {o.tokens:>8} {o.regression_checks:>9}"
        print(f"{o.task:<{width}} {result:<9} {counts}")
    print(f"session log: {provider.log}")
    _say_replayed(provider)
    return 0 if outcomes and all(o.accepted for o in outcomes) else 1


def _say_replayed(provider: Any) -> None:
    """For a replay: one line on how today's prompts compare, the diffs in a file beside the log."""
    from lyra.llm import ReplayProvider

    replay = provider.provider
    if not isinstance(replay, ReplayProvider):
        return
    print(replay.summary())
    if replay.differences:
        diffs = provider.log.with_suffix(".prompt-diff")
        diffs.parent.mkdir(parents=True, exist_ok=True)
        diffs.write_text(replay.differences_text(), encoding="utf-8")
        print(f"how each differs: {diffs}")


def _learn(args: argparse.Namespace) -> int:
    from lyra.curriculum import load_curriculum
    from lyra.library.parse import skill_paths
    from lyra.workspace import find_workspace

    skills = [path.stem for path in skill_paths(find_workspace().skills_dir)]
    curriculum = load_curriculum(Path(args.curriculum), skills=skills)
    learner, provider = make_learner(args, curriculum.backend)
    try:
        outcomes = learner.learn(curriculum)
    finally:
        learner.close()
    if not outcomes:
        print(f"every task of {curriculum.name} is already accepted")
        return 0
    return report(outcomes, provider)


def _one_off(args: argparse.Namespace, instruction: str, **fields: Any) -> Any:
    """A task outside any curriculum from the command line's scene and predicate, checked."""
    import yaml
    from pydantic import ValidationError

    from lyra.backend import load_scene_file
    from lyra.curriculum import one_off_task, resolve_task
    from lyra.errors import LyraError

    if not args.scene:
        raise LyraError("planning an instruction needs its scene: add --scene SCENE.yaml")
    backend, scene = load_scene_file(args.scene, args.backend)
    try:
        success = yaml.safe_load(args.success) if args.success else []
    except yaml.YAMLError as error:
        raise LyraError(f"--success is not valid YAML: {error}") from None
    try:
        task = one_off_task(instruction, backend, scene, success=success, **fields)
    except ValidationError as error:
        # The options a person typed, by the names they typed them with.
        options = {"id": "--id", "skill": "--skill", "name": "--skill", "seeds": "--seed"}
        problems = [
            f"{options.get(str(item['loc'][0]), item['loc'][0])}: {item['msg']}"
            for item in error.errors()
        ]
        raise LyraError("; ".join(problems)) from None
    return resolve_task(task)


def _teach(args: argparse.Namespace) -> int:
    from lyra.curriculum import TAUGHT, Progress

    task = _one_off(
        args, args.instruction, seeds=args.seed or [0], skill=args.skill, task_id=args.task_id
    )
    learner, provider = make_learner(args, task.backend)
    try:
        outcome = learner.teach(task, TAUGHT, Progress.load(learner.ws, TAUGHT))
    finally:
        learner.close()
    return report([outcome], provider)


def _check(args: argparse.Namespace) -> int:
    from lyra.check import check_file
    from lyra.examples import iter_examples, revision_chain
    from lyra.lock import locked
    from lyra.progress import Bar
    from lyra.workers import worker_pool
    from lyra.workspace import find_workspace

    if args.robot is not None:
        from lyra.backend import robot_spec

        command = "lyra check" + (f" {shlex.quote(args.curriculum)}" if args.curriculum else "")
        raise robot_spec().refuse_robot("lyra check", command)
    if args.backend is not None:
        from lyra.backend import backend_spec
        from lyra.errors import LyraError

        backend_spec(args.backend)  # an unknown name is refused before any worker starts
        if args.update_snapshots:
            raise LyraError(
                "--update-snapshots writes how each task ends on the backend it was learnt on; "
                "run it without --backend"
            )
    workspace = find_workspace()
    wanted: set[str] | None = None
    if args.curriculum:
        from lyra.curriculum import load_curricula, load_curriculum

        where = Path(args.curriculum)
        found = load_curricula(where) if where.is_dir() else [load_curriculum(where)]
        if not found:
            from lyra.errors import LyraError

            raise LyraError(f"no curriculum (*.yaml) under {where}")
        wanted = {curriculum.name for curriculum in found}
    found_examples = list(iter_examples(workspace.examples_dir))
    if args.seeds is not None:
        return _check_seeds(workspace, [example for _, example in found_examples], wanted, args)
    by_task = {example.task: example for _, example in found_examples if example.task}
    path_of = {example.task: str(path) for path, example in found_examples}
    # Each example on its own layout; a revision's plan on each layout it revises too.
    jobs = [
        (str(path), on)
        for path, example in found_examples
        if wanted is None or (example.task or "").split("/")[0] in wanted
        for on in (None, *(path_of[e.task] for e in revision_chain(example, by_task)))
    ]
    if not jobs:
        print("no accepted tasks to check")
        return 0
    start = time.perf_counter()
    rows = []
    updated: list[tuple[str, str]] = []
    bar = Bar(len(jobs), "checked")
    with contextlib.ExitStack() as stack:
        if args.update_snapshots:
            # It writes example files: one writer per workspace.
            stack.enter_context(locked(workspace))
        pool = stack.enter_context(worker_pool(args.workers, args.ray))
        futures = [
            pool.submit(
                check_file, str(workspace.root), path, args.update_snapshots, on, args.backend
            )
            for path, on in jobs
        ]
        for future in as_completed(futures):
            task, why, seconds, changed = future.result()
            rows.append((task, why, seconds))
            if changed:
                updated.append((task, changed))
            bar.step(not why, f"{task} {'passes' if not why else 'FAILS'}")
    width = max(40, *(len(task) for task, _, _ in rows))
    print(f"\n{'task':<{width}} {'result':<6} {'seconds':>8}")
    for task, why, seconds in sorted(rows):
        print(f"{task:<{width}} {'pass' if not why else 'FAIL':<6} {seconds:>8.1f}")
        if why:
            print(f"  {why}")
    failed = sum(1 for _, why, _ in rows if why)
    print(f"{len(rows) - failed} passed, {failed} failed in {time.perf_counter() - start:.1f} s")
    if args.update_snapshots:
        for task, changed in sorted(updated):
            print(f"snapshot updated: {task}: {changed}")
        print(
            f"{len(updated)} snapshots updated (review with `git diff examples/`, then commit)"
            if updated
            else "every snapshot was already how the tasks end today"
        )
    return 1 if failed else 0


def _check_seeds(
    workspace: Any, examples: list[Any], wanted: set[str] | None, args: argparse.Namespace
) -> int:
    """Each accepted task's plan (its newest revision's) on seeds it was not taught on."""
    from lyra.backend import backend_spec
    from lyra.errors import LyraError
    from lyra.examples import latest_revision, revisions
    from lyra.run import Episode, seed_runs
    from lyra.workers import worker_pool

    if args.update_snapshots:
        raise LyraError(
            "--update-snapshots rewrites how each task ends on its own layout; run it without "
            "--seeds"
        )
    revised_by = revisions(examples)
    chosen = [
        example
        for example in sorted(examples, key=lambda e: e.task or e.id)
        if example.scene is not None
        and (wanted is None or (example.task or "").split("/")[0] in wanted)
    ]
    if not chosen:
        print("no accepted tasks to check")
        return 0
    with worker_pool(args.workers, args.ray) as pool:
        rows = [
            seed_runs(
                pool,
                example.task or example.id,
                Episode(
                    args.backend or example.backend,
                    workspace.skills_dir,
                    backend_spec(example.backend).load_scene(example.scene),
                    latest_revision(example, revised_by).code,
                    example.success,
                    example.hold_seconds,
                ),
                args.seeds,
            )
            for example in chosen
        ]
    print()
    for line in _runs_table(rows):
        print(line)
    seeds = args.seeds
    passed = sum(row.successes == row.runs for row in rows)
    print(
        f"seeds {seeds.start} to {seeds.stop - 1} ({len(seeds)} per task): {passed} of "
        f"{len(rows)} tasks pass on every seed"
    )
    return 0 if passed == len(rows) else 1


def _run(args: argparse.Namespace) -> int:
    from lyra.curriculum import load_curricula, load_curriculum
    from lyra.errors import LyraError

    if args.robot is not None:
        from lyra.backend import robot_spec

        spec = robot_spec(args.backend)
        refusal = spec.refuse_robot(
            "lyra run", f"lyra run {shlex.quote(args.target)} --backend {spec.name}"
        )
        raise LyraError(
            f"{refusal}\nThen run an accepted plan on the robot, after a dry run in "
            f"{spec.simulator or spec.name}:\n  lyra deploy PLAN.py --scene SCENE.yaml --robot "
            f"{shlex.quote(args.robot)}"
        )
    target = Path(args.target)
    if target.is_dir():
        curricula = load_curricula(target)
        if not curricula:
            raise LyraError(f"{target} holds no curriculum (*.yaml)")
        return _run_curricula(curricula, args)
    if target.suffix in (".yaml", ".yml"):
        if not target.exists():
            raise LyraError(f"no such curriculum file: {target}")
        return _run_curricula([load_curriculum(target)], args)
    return _run_instruction(args)


def _run_curricula(curricula: list[Curriculum], args: argparse.Namespace) -> int:
    from lyra.run import run_curriculum
    from lyra.workspace import find_workspace

    gif_dir = Path(args.gif) if args.gif else None
    workspace = find_workspace()
    rows = [
        row
        for curriculum in curricula
        for row in run_curriculum(
            workspace,
            curriculum,
            args.seeds,
            gif_dir,
            workers=args.workers,
            ray=args.ray,
            backend=args.backend,
        )
    ]
    print()
    for line in _runs_table(rows):
        print(line)
    seeds = args.seeds
    print(f"seeds {seeds.start} to {seeds.stop - 1} ({len(seeds)} per task)")
    learnt = [r for r in rows if r.learnt]
    return 0 if learnt and all(r.successes == r.runs for r in learnt) else 1


def _runs_table(rows: list[Any]) -> list[str]:
    """The success table: a column for success at any step, and the peer's, where there are."""
    width = max(24, *(len(row.task) for row in rows))
    anywhen = any(row.successes_any is not None for row in rows)
    peer = next((row.peer.name for row in rows if row.peer is not None), "")
    head = f"{'task':<{width}} {'success':>9}"
    head += f" {'any step':>9}" if anywhen else ""
    head += f" {'mean primitives':>16} {'s per run':>10}"
    head += f"   {'peer: success':>13} {'any step':>9} {'s per run':>10}" if peer else ""
    lines = [head]
    for row in rows:
        if not row.learnt:
            lines.append(f"{row.task:<{width}} {'not learnt yet':>9}")
            continue
        line = f"{row.task:<{width}} {row.successes:>4}/{row.runs:<4}"
        if anywhen:
            got = "" if row.successes_any is None else f"{row.successes_any}/{row.runs}"
            line += f" {got:>9}"
        line += f" {row.mean_primitives:>16.1f} {row.median_seconds:>10.2f}"
        if row.peer is not None:
            line += (
                f"   {f'{row.peer.held}/{row.runs}':>13} {f'{row.peer.any_step}/{row.runs}':>9}"
                f" {row.peer.median_seconds:>10.2f}"
            )
        lines.append(line)
        if row.plan:
            lines.append(f"  ran the plan of {row.plan}, the newest revision of this task's")
        lines += [f"  {failure}" for failure in row.failures[:3]]
    if peer:
        lines.append(f"peer: {peer}, on the same seeds in the same run")
    return lines


def _run_instruction(args: argparse.Namespace) -> int:
    """Plan an instruction from learnt skills in rounds with the teacher; keep what is accepted."""
    from lyra.curriculum import PLANNED, Progress
    from lyra.run import record_gif

    task = _one_off(
        args,
        args.target,
        seeds=[args.seed],
        feedback=args.feedback,
        review=args.review,
        hints=args.hint,
        task_id=args.task_id,
    )
    learner, provider = make_learner(args, task.backend, teach_missing=args.teach)
    try:
        outcome = learner.teach(task, PLANNED, Progress.load(learner.ws, PLANNED))
        _say_replayed(provider)
        last = outcome.last
        if last is None:
            return 1
        print(f"task code (round {outcome.rounds}):\n{last.code}")
        run = last.runs[0]
        print(f"ran with {run.result.primitive_calls} primitive calls")
        if not outcome.accepted:
            print(f"not accepted:\n{last.outcome()}")
            return 1
        if task.success:
            print("success: the predicate holds")
        if outcome.example is not None:
            print(f"kept as example {outcome.example.id} (lyra check re-runs it)")
        if args.gif:
            backend = learner.backend(task.backend)
            print(f"GIF: {record_gif(backend, task.scene, last.code, learner.ws, Path(args.gif))}")
        return 0
    finally:
        learner.close()
