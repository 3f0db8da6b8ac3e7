"""``lyra learn``, ``lyra teach`` and ``lyra check``: the learning loop and the regression suite.

Heavy modules (pybullet, lancedb, libcst) are imported inside the handlers.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any, get_args

from lyra.names import SKILL_NAME, Backend

TEACHERS = ("scripted", "human", "llm")


def register(subparsers: Any) -> None:
    """Add the ``learn``, ``teach`` and ``check`` commands."""
    from lyra.llm.cli import add_llm_option

    learn = subparsers.add_parser(
        "learn", help="run a curriculum through the learning loop (resumes where it stopped)"
    )
    learn.add_argument("curriculum", help="a curriculum YAML file")
    _common(learn, add_llm_option)
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
    _common(teach, add_llm_option, default_teacher="human")
    teach.set_defaults(func=_teach)

    run = subparsers.add_parser(
        "run", help="run a curriculum's learnt plans over many seeds, or plan a new instruction"
    )
    run.add_argument("target", help="a curriculum YAML file, or an instruction in quotes")
    run.add_argument("--seeds", type=_positive, default=20, help="curriculum: seeds per task (20)")
    run.add_argument("--gif", help="curriculum: a folder for one GIF per task; else a GIF file")
    run.add_argument(
        "--workers", type=_positive, default=2, help="curriculum: worker processes (default 2)"
    )
    run.add_argument(
        "--backend",
        choices=get_args(Backend),
        default="ravens",
        help="instruction: where the plan runs (default ravens)",
    )
    run.add_argument("--scene", help="instruction: the scene YAML file")
    run.add_argument("--seed", type=int, default=0, help="instruction: layout seed (default 0)")
    run.add_argument("--hint", action="append", default=[], help="instruction: a hint")
    run.add_argument("--success", help="instruction: a success predicate as YAML, to check")
    run.add_argument(
        "--teach",
        action="store_true",
        help="instruction: when the plan needs a skill the library lacks, pause, teach that "
        "skill here through the learning loop, then resume the plan with it",
    )
    _common(run, add_llm_option, default_teacher="human")
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
    check.set_defaults(func=_check)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _common(
    parser: argparse.ArgumentParser, add_llm_option: Any, default_teacher: str = "scripted"
) -> None:
    add_llm_option(parser)
    parser.add_argument(
        "--teacher",
        choices=TEACHERS,
        default=default_teacher,
        help=f"who judges each attempt (default {default_teacher})",
    )
    parser.add_argument("--max-rounds", type=int, default=6, help="rounds per task (default 6)")


def _learner(args: argparse.Namespace, provider: Any = None) -> Any:
    """A learner with the teacher of ``--teacher``, on a new session unless one is given."""
    from lyra.llm import open_session
    from lyra.memory.store import open_memory
    from lyra.teach import HumanTeacher, Learner, LLMCritic, ScriptedTeacher, scene_text
    from lyra.workspace import find_workspace

    workspace = find_workspace()
    if provider is None:
        provider = open_session(workspace, args.llm)
    teacher: Any
    if args.teacher == "scripted":
        teacher = ScriptedTeacher()
    elif args.teacher == "human":
        teacher = HumanTeacher()
    else:
        holder: dict[str, Any] = {}
        teacher = LLMCritic(provider, lambda: scene_text(holder["learner"].table))
    learner = Learner(
        workspace, provider, teacher, open_memory(workspace), max_rounds=args.max_rounds
    )
    if args.teacher == "llm":
        holder["learner"] = learner
    return learner, provider


def _report(outcomes: list[Any], provider: Any) -> int:
    print(f"\n{'task':<28} {'result':<9} {'rounds':>6} {'LLM calls':>9} {'tokens':>8} re-checks")
    for o in outcomes:
        result = "accepted" if o.accepted else "not kept"
        counts = f"{o.rounds:>6} {o.llm_calls:>9} {o.tokens:>8} {o.regression_checks:>9}"
        print(f"{o.task:<28} {result:<9} {counts}")
    print(f"session log: {provider.log}")
    return 0 if outcomes and all(o.accepted for o in outcomes) else 1


def _learn(args: argparse.Namespace) -> int:
    from lyra.curriculum import load_curriculum

    curriculum = load_curriculum(Path(args.curriculum))
    learner, provider = _learner(args)
    try:
        outcomes = learner.learn(curriculum)
    finally:
        learner.close()
    if not outcomes:
        print(f"every task of {curriculum.name} is already accepted")
        return 0
    return _report(outcomes, provider)


def _teach(args: argparse.Namespace) -> int:
    import yaml

    from envs.ravens.scene import load_scene

    task = _one_off_task(
        args.instruction,
        args.skill,
        load_scene(args.scene),
        args.seed or [0],
        yaml.safe_load(args.success),
    )
    outcome, provider = _teach_one(args, task)
    return _report([outcome], provider)


def _teach_one(args: argparse.Namespace, task: Any, provider: Any = None) -> tuple[Any, Any]:
    """Teach one task outside any curriculum (stored as "taught"); the outcome and the session."""
    from lyra.curriculum import Progress

    learner, provider = _learner(args, provider)
    try:
        outcome = learner.teach(task, "taught", Progress.load(learner.ws, "taught"))
    finally:
        learner.close()
    return outcome, provider


def _one_off_task(instruction: str, skill: str, scene: Any, seeds: list[int], success: Any) -> Any:
    """A task outside any curriculum, stored under the "taught" curriculum.

    Raises:
        pydantic.ValidationError: when the skill name or the predicate is unusable.
    """
    from lyra.curriculum import SkillTarget, Task
    from lyra.examples import slugify

    # A digest of the whole instruction keeps two long instructions with one beginning apart.
    digest = hashlib.sha1(instruction.encode()).hexdigest()[:8]
    return Task(
        id=f"{slugify(instruction, 40)}-{digest}",
        instruction=instruction,
        scene=scene,
        skill=SkillTarget(name=skill, new=True),
        seeds=seeds,
        success=success,
    )


def _check_one(root: str, path: str) -> tuple[str, str, float]:
    from envs.ravens.tabletop import Tabletop
    from lyra.examples import load_example
    from lyra.teach import check_example
    from lyra.workspace import Workspace

    start = time.perf_counter()
    example = load_example(Path(path))
    table = Tabletop()
    try:
        why = check_example(table, example, Workspace(Path(root)).skills_dir)
    finally:
        table.close()
    return example.task or example.id, why, time.perf_counter() - start


def _check(args: argparse.Namespace) -> int:
    from lyra.examples import iter_examples
    from lyra.workspace import find_workspace

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
    paths = [
        str(path)
        for path, example in iter_examples(workspace.examples_dir)
        if wanted is None or (example.task or "").split("/")[0] in wanted
    ]
    if not paths:
        print("no accepted tasks to check")
        return 0
    start = time.perf_counter()
    rows = []
    from lyra.workers import worker_pool

    with worker_pool(args.workers) as pool:
        futures = [pool.submit(_check_one, str(workspace.root), p) for p in paths]
        for done, future in enumerate(as_completed(futures), 1):
            task, why, seconds = future.result()
            rows.append((task, why, seconds))
            bar = "#" * (20 * done // len(paths))
            print(
                f"[{bar:<20}] {done}/{len(paths)} {task}: {'pass' if not why else 'FAIL'}",
                flush=True,
            )
    width = max(40, *(len(task) for task, _, _ in rows))
    print(f"\n{'task':<{width}} {'result':<6} {'seconds':>8}")
    for task, why, seconds in sorted(rows):
        print(f"{task:<{width}} {'pass' if not why else 'FAIL':<6} {seconds:>8.1f}")
        if why:
            print(f"  {why}")
    failed = sum(1 for _, why, _ in rows if why)
    print(f"{len(rows) - failed} passed, {failed} failed in {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


def _run(args: argparse.Namespace) -> int:
    from lyra.workspace import find_workspace

    workspace = find_workspace()
    target = Path(args.target)
    if target.suffix in (".yaml", ".yml"):
        if not target.exists():
            from lyra.errors import LyraError

            raise LyraError(f"no such curriculum file: {target}")
        return _run_curriculum(workspace, target, args)
    return _run_instruction(workspace, args)


def _run_curriculum(workspace: Any, path: Path, args: argparse.Namespace) -> int:
    from lyra.curriculum import load_curriculum
    from lyra.run import run_curriculum

    curriculum = load_curriculum(path)
    gif_dir = Path(args.gif) if args.gif else None
    rows = run_curriculum(workspace, curriculum, args.seeds, gif_dir, workers=args.workers)
    width = max(24, *(len(row.task) for row in rows))
    print(f"\n{'task':<{width}} {'success':>9} {'mean primitives':>16} {'s per run':>10}")
    for row in rows:
        if not row.learnt:
            print(f"{row.task:<{width}} {'not learnt yet':>9}")
            continue
        print(
            f"{row.task:<{width}} {row.successes:>4}/{row.runs:<4} {row.mean_primitives:>16.1f} "
            f"{row.median_seconds:>10.2f}"
        )
        for failure in row.failures[:3]:
            print(f"  {failure}")
    learnt = [r for r in rows if r.learnt]
    return 0 if learnt and all(r.successes == r.runs for r in learnt) else 1


def _run_instruction(workspace: Any, args: argparse.Namespace) -> int:
    import yaml

    from envs.ravens.scene import load_scene
    from envs.ravens.tabletop import Tabletop
    from lyra.errors import LyraError
    from lyra.llm import open_session
    from lyra.memory.store import open_memory
    from lyra.predicates import from_spec
    from lyra.run import plan, record_gif

    if args.backend != "ravens":
        raise LyraError(
            f"planning on the {args.backend} backend is not built yet; "
            "use --backend ravens (the pybullet tabletop)"
        )
    if not args.scene:
        raise LyraError("planning an instruction needs its scene: add --scene SCENE.yaml")
    scene = load_scene(args.scene)
    provider = open_session(workspace, args.llm)
    table = Tabletop()
    try:

        def planned() -> Any:
            # Memory is opened afresh each time: a skill taught in the pause must be found.
            memory = open_memory(workspace)
            hints = tuple(args.hint)
            return plan(workspace, provider, memory, table, args.target, scene, args.seed, hints)

        outcome = planned()
        taught: set[str] = set()
        while outcome.missing_skill:
            print(f"The plan needs a skill the library lacks: {outcome.missing_skill}")
            name = outcome.missing_skill.partition(":")[0].strip()
            if name in taught:
                print(f"It asks for '{name}' again after it was taught; the plan stops here.")
                return 1
            taught.add(name)
            if not args.teach:
                print(
                    'Teach it first (lyra teach "..." --skill NAME --scene ... --success ...) '
                    "and run this instruction again, or add --teach to teach it here and resume."
                )
                return 1
            if not _teach_missing(provider, scene, args, outcome.missing_skill):
                print("The skill was not taught; the plan stays paused.")
                return 1
            print("Resuming the plan with the new skill.")
            outcome = planned()
        print(f"task code (attempt {outcome.attempts}):\n{outcome.code}")
        assert outcome.result is not None
        if not outcome.result.ok:
            print(f"it failed:\n{outcome.result.feedback}")
            return 1
        verdict = (
            from_spec(yaml.safe_load(args.success))(table.world_state()) if args.success else None
        )
        print(f"ran with {outcome.result.primitive_calls} primitive calls")
        if verdict is not None:
            print("success" if verdict else f"not done: {verdict.reason}")
        if args.gif:
            print(f"GIF: {record_gif(table, scene, outcome.code, workspace, Path(args.gif))}")
        return 0 if verdict is None or verdict else 1
    finally:
        table.close()


def _teach_missing(provider: Any, scene: Any, args: argparse.Namespace, missing: str) -> bool:
    """Pause planning: ask the person for a task that teaches the missing skill, and teach it.

    The task runs in the plan's scene and seed; the person names the skill (the LLM's name is
    the default), says what the task is and gives its success predicate. True when the skill
    was accepted.
    """
    import yaml
    from pydantic import ValidationError

    proposed, _, what = (part.strip() for part in missing.partition(":"))
    while True:
        answer = input(f"Teach it now? The skill's name [{proposed}] ('no' to stop): ").strip()
        if answer.lower() == "no":
            return False
        skill = answer or proposed
        if SKILL_NAME.fullmatch(skill):
            break
        print(f"'{skill}' is not a skill name: use lower case letters, digits and _")
    instruction = ""
    while not instruction:
        instruction = input(f"The task that shows it, in this scene [{what}]: ").strip() or what
    while True:
        text = input("Its success predicate as YAML, e.g. [{on_top: {upper: a, lower: b}}]: ")
        try:
            task = _one_off_task(instruction, skill, scene, [args.seed], yaml.safe_load(text))
            break
        except (ValidationError, yaml.YAMLError) as error:
            print(f"That cannot be used: {error}")
    outcome, _ = _teach_one(args, task, provider)
    return bool(outcome.accepted)
