"""``lyra demo record`` and ``lyra demo from-plan``: write demonstrations to teach from.

The simulators and the recorders are imported inside the handlers, so ``lyra --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

PROMPT = "demo> "


def register(subparsers: Any) -> None:
    """Add the ``demo`` command group."""
    demo = subparsers.add_parser("demo", help="record demonstrations: by hand, or from a plan")
    actions = demo.add_subparsers(dest="demo_command", metavar="ACTION", required=True)
    record = actions.add_parser(
        "record", help="drive the primitives at a console on the simulator; write the steps"
    )
    _scene_options(record)
    record.set_defaults(func=_record)

    plan = actions.add_parser(
        "from-plan", help="run a plan confined, with mistakes put in, and write its steps"
    )
    plan.add_argument("plan", type=Path, help="the plan: task code against lyra.api")
    _scene_options(plan)
    plan.add_argument(
        "--noise",
        type=_kinds,
        default=(),
        help="the mistakes that may be made, comma-separated: wrong-object (another object "
        "named), offset (a target moved 3 cm), missing-step (a call skipped)",
    )
    plan.add_argument("--noise-seed", type=int, default=0, help="draws the mistakes (default 0)")
    plan.add_argument(
        "--mistakes", type=int, help="how many to make (default 1 with --noise, else 0)"
    )
    plan.set_defaults(func=_from_plan)
    _learn_parser(actions)


def _learn_parser(actions: Any) -> None:
    from lyra.llm.cli import add_llm_option
    from lyra.teach_cli import common_options

    learn = actions.add_parser(
        "learn",
        help="learn from demonstrations (ICAL): abstract each into a corrected plan, verify it "
        "with the teacher on the demonstration's scene, keep it in the method's memory",
    )
    learn.add_argument("demos", nargs="+", type=Path, help="demonstration files (.json)")
    learn.add_argument(
        "--success",
        help='the check that judges the plans, as YAML (e.g. "[{on_top: {upper: a, lower: b}}]"); '
        "default: the demonstration's own `check`",
    )
    learn.add_argument(
        "--feedback",
        action="append",
        default=[],
        help="scripted teacher: what to say when a plan fails (repeatable, in order)",
    )
    common_options(learn, add_llm_option, default_method="ical")
    learn.set_defaults(func=_learn)


def _scene_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scene", required=True, help="a scene YAML file")
    parser.add_argument("--backend", help="the backend (default: the scene file's, else ravens)")
    parser.add_argument("--seed", type=int, default=0, help="layout seed (default 0)")
    parser.add_argument("--instruction", help="what the demonstration does, in words")
    parser.add_argument(
        "--out", "-o", type=Path, required=True, help="the demonstration file to write (.json)"
    )
    parser.add_argument(
        "--frames",
        action="store_true",
        help="a PNG after each motion, in a folder beside the file (OUT-frames/)",
    )
    parser.add_argument(
        "--check",
        help='the success predicate of the demonstrated task, as YAML (e.g. "[{on_top: {upper: '
        'a, lower: b}}]"): written into the file, and judged on the world the last motion left',
    )


def _kinds(text: str) -> tuple[str, ...]:
    from lyra.demos.plan import KINDS

    kinds = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"no kind of mistake {', '.join(unknown)}: use {', '.join(KINDS)}"
        )
    return kinds


def _frames(args: argparse.Namespace) -> Path | None:
    out: Path = args.out
    return out.with_name(f"{out.stem}-frames") if args.frames else None


def _record(args: argparse.Namespace) -> int:
    from lyra.backend import load_scene_file, make
    from lyra.demos.format import save
    from lyra.demos.record import Recording
    from lyra.demos.steps import StepLog
    from lyra.embodiment import use

    # A scene that does not load, or a check that does not fit it, is said before anything is
    # asked.
    name, scene = load_scene_file(args.scene, args.backend)
    check = _check(args.check, name, "--check")
    ask = _reader()
    instruction = args.instruction or (ask("Instruction: ") or "").strip()
    if not instruction:
        print("lyra: no instruction: give --instruction, or type it first", file=sys.stderr)
        return 1
    backend = make(name)
    try:
        with use(backend):
            recording = Recording(
                backend, name, scene, args.seed, StepLog(backend, _frames(args)), print
            )
            print(f"{backend.describe()}\n`help` lists the primitives; `done` writes {args.out}")
            while (line := ask(PROMPT)) is not None and recording.handle(line):
                pass
        if not recording.log.steps:
            print("lyra: nothing was demonstrated; nothing written", file=sys.stderr)
            return 1
        demo = recording.demonstration(instruction).model_copy(update={"check": check})
        path = save(demo, args.out)
        ending = _ending(demo, backend)
    except KeyboardInterrupt:
        print(
            f"\nlyra: interrupted; nothing written (`done` or Ctrl-D writes {args.out})",
            file=sys.stderr,
        )
        return 130
    finally:
        backend.close()
    print(f"wrote {path} ({len(recording.log.steps)} steps){ending}")
    return 0


def _reader() -> Callable[[str], str | None]:
    """Ask for a line at the terminal, or read the next from a pipe; None at the end.

    Piped lines are echoed after the prompt, so the output reads as the session would.
    """
    stdin = sys.stdin
    interactive = stdin.isatty()

    def ask(prompt: str) -> str | None:
        if interactive:
            try:
                return input(prompt)
            except EOFError:
                print()
                return None
        line = stdin.readline()
        if not line:
            return None
        print(f"{prompt}{line.rstrip()}")
        return line

    return ask


def _from_plan(args: argparse.Namespace) -> int:
    from lyra.backend import load_scene_file, make
    from lyra.demos.format import save
    from lyra.demos.plan import Noise, record_plan
    from lyra.errors import LyraError
    from lyra.workspace import find_workspace

    mistakes = (1 if args.noise else 0) if args.mistakes is None else args.mistakes
    if mistakes < 0 or (mistakes and not args.noise):
        raise LyraError(
            f"--mistakes {mistakes}: give 0 or more, and with it the kinds to make "
            "(--noise wrong-object,offset,missing-step)"
        )
    if not args.plan.is_file():
        raise LyraError(f"{args.plan}: no such plan file")
    name, scene = load_scene_file(args.scene, args.backend)
    check = _check(args.check, name, "--check")
    backend = make(name)
    noise = Noise(args.noise, args.noise_seed, mistakes)
    skills = find_workspace().skills_dir
    try:
        demo, result = record_plan(
            backend,
            name,
            scene,
            args.seed,
            args.plan,
            instruction=args.instruction or f"run {args.plan.name}",
            noise=noise,
            skills_root=skills if skills.is_dir() else None,
            frames=_frames(args),
        )
        demo = demo.model_copy(update={"check": check})
        ending = _ending(demo, backend)
    finally:
        backend.close()
    path = save(demo, args.out)
    for step in demo.steps:
        if step.injected is not None:
            mistake = step.injected
            print(f"step {step.index} ({step.primitive}): {mistake.kind}: {mistake.detail}")
    ran = "ran to its end" if result.ok else f"failed:\n{result.feedback}"
    print(f"the plan {ran}")
    print(
        f"wrote {path} ({len(demo.steps)} steps, {len(demo.mistakes)} of {noise.count} "
        f"mistakes){ending}"
    )
    return 0


def _check(text: str | None, backend: str, option: str) -> list[dict[str, Any]]:
    """A success predicate given as YAML, checked to be one the backend can judge.

    Raises:
        LyraError: it is not YAML, or not predicates the backend has; the message says which.
    """
    import yaml

    from lyra.backend import backend_spec
    from lyra.errors import LyraError
    from lyra.predicates import PredicateError, from_spec

    if not text:
        return []
    try:
        check = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise LyraError(f"{option} is not valid YAML: {error}") from None
    check = [check] if isinstance(check, dict) else check
    if not isinstance(check, list):
        raise LyraError(f'{option}: give a list of predicates, e.g. "[{{done: {{}}}}]"')
    try:
        from_spec(check, backend_spec(backend).predicate_functions())
    except PredicateError as error:
        raise LyraError(f"{option}: {error}") from None
    return check


def _ending(demo: Any, backend: Any) -> str:
    """What the check says of the world the demonstration's last motion left, as printed."""
    from lyra.demos.format import end_verdict

    if not demo.check:
        return ""
    verdict = end_verdict(demo, backend)
    return (
        "; its check holds at the end"
        if verdict.ok
        else f"; its check fails at the end: {verdict.reason}"
    )


def _learn(args: argparse.Namespace) -> int:
    from lyra.demos.format import load_demo
    from lyra.errors import LyraError
    from lyra.methods import find_method
    from lyra.methods.ical import Ical, demo_task
    from lyra.teach_cli import make_learner, report

    method = find_method(args.method)
    if not isinstance(method, Ical):
        raise LyraError(
            f"--method {method.name} does not learn from demonstrations: use ical, "
            "ical-no-abstraction or ical-no-verification"
        )
    demos = [(path, load_demo(path)) for path in args.demos]
    success = _check(args.success, demos[0][1].backend, "--success") or None
    tasks = [demo_task(demo, path, success, args.feedback) for path, demo in demos]
    for (path, _), task in zip(demos, tasks, strict=True):
        # Said before the first prompt: verification judges every plan by the check.
        if method.verify and method.abstract and not task.success:
            raise LyraError(
                f"{path}: no check to verify its plans by: give --success, or a `check` in the "
                "demonstration (docs/demonstrations.md)"
            )
    learner, provider = make_learner(args, demos[0][1].backend)
    try:
        outcomes = [
            learner.counted(partial(method.learn, learner, demo, path, task))
            for (path, demo), task in zip(demos, tasks, strict=True)
        ]
    finally:
        learner.close()
    return report(outcomes, provider)
