"""``lyra deploy``: run one plan on a real robot, and only after it passed in its simulator.

The plan first runs on the same scene in the robot's simulator (franky-sim for the fr3), unless
a recent record says that a dry run of the same plan, scene and skill sources passed; then the
person sees what will run and says yes; then it runs on the robot through the episode runner,
under every confinement layer. Ctrl-C stops the arm.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from lyra.backend import Backend, BackendSpec, load_scene_file, robot_spec
from lyra.errors import LyraError
from lyra.workspace import Workspace

# How long a passing dry run stands for a deploy of the same plan, scene and skill sources.
RECORD_HOURS = 24.0


def register(subparsers: Any) -> None:
    """Add the ``deploy`` command."""
    deploy = subparsers.add_parser(
        "deploy", help="run a plan on a real robot, after it passed a dry run in its simulator"
    )
    deploy.add_argument("plan", help="a file of plan code (the task code `lyra run` prints)")
    deploy.add_argument(
        "--scene",
        required=True,
        help="the scene YAML file: the table as it is set up, where the robot takes the "
        "objects' poses from",
    )
    deploy.add_argument("--robot", required=True, metavar="HOST", help="the robot's address")
    deploy.add_argument("--backend", help="the robot's backend (default: the scene file's)")
    deploy.add_argument(
        "--success",
        help='the success predicate as YAML, e.g. "[{on_top: {upper: a, lower: b}}]": the dry '
        "run must pass it, and the run on the robot is judged by it",
    )
    deploy.add_argument(
        "--perception",
        metavar="FILE",
        help="where the robot takes the objects' poses from: a YAML file of poses a person "
        "measured, or a camera's markers calibration (a file with a camera section); default: "
        "the scene's poses",
    )
    deploy.add_argument(
        "--speed",
        type=float,
        metavar="FACTOR",
        help="the arm's speed, a fraction of its full speed (above 0, at most 1); the "
        "backend's cap still holds (0.3 on the FR3). A first run on a new table: 0.1",
    )
    deploy.add_argument(
        "--yes", action="store_true", help="run on the robot without asking (for scripts)"
    )
    deploy.set_defaults(func=_deploy)


def _deploy(args: argparse.Namespace) -> int:
    from lyra.workspace import find_workspace

    workspace = find_workspace()
    try:
        code = Path(args.plan).read_text(encoding="utf-8")
        success = yaml.safe_load(args.success) if args.success else []
    except (OSError, UnicodeDecodeError) as error:
        raise LyraError(f"{args.plan}: cannot be read as plan code: {error}") from None
    except yaml.YAMLError as error:
        raise LyraError(f"--success is not valid YAML: {error}") from None
    name, scene = load_scene_file(args.scene, args.backend)
    spec = robot_spec(name)
    # Made before the dry run, so that a perception file with a problem is refused first;
    # nothing connects to the robot until the run.
    options: dict[str, Any] = {} if args.perception is None else {"perception": args.perception}
    if args.speed is not None:
        if not 0 < args.speed <= 1:
            raise LyraError(
                f"--speed {args.speed:g}: give a fraction of the arm's full speed, above 0 and "
                "at most 1 (0.1 for a first run); nothing was run"
            )
        options["speed"] = args.speed
    robot = spec.connect_robot(args.robot, **options)
    try:
        skills = reached_skills(workspace, code)
        digest = fingerprint(spec.name, scene, code, success, workspace, skills)
        if not _dry_run(spec, scene, code, success, workspace, digest, args.robot):
            return 1
        print(_what_will_run(spec, args, scene, code, skills))
        if not args.yes and not _confirmed(f"Run it on the robot at {args.robot}? [y/N] "):
            print(f"not run: nothing was sent to the robot at {args.robot}")
            return 1
        print(f"running on the robot at {args.robot} (Ctrl-C stops the arm)")
        return _run_on_robot(robot, scene, code, success, workspace, args.robot)
    finally:
        robot.close()


def reached_skills(workspace: Workspace, code: str) -> list[str]:
    """The skills a plan calls, directly or through other skills, sorted."""
    from lyra.answers import skills_called
    from lyra.library.parse import parse_library
    from lyra.library.tree import SkillTree

    tree = SkillTree.of(parse_library(workspace.skills_dir))
    return sorted(tree.reach(skills_called(code)))


def fingerprint(
    backend: str,
    scene: BaseModel,
    code: str,
    success: Any,
    workspace: Workspace,
    skills: list[str],
) -> str:
    """A digest of what a dry run tried: the plan, the scene, the predicate and skill sources.

    A changed skill is a different plan: its earlier dry run no longer stands for it.
    """
    sources = {}
    for skill in skills:
        path = workspace.skills_dir / f"{skill}.py"
        sources[skill] = path.read_text(encoding="utf-8") if path.exists() else ""
    tried = {
        "backend": backend,
        "scene": scene.model_dump(mode="json"),
        "code": code,
        "success": success,
        "skills": sources,
    }
    return hashlib.sha256(json.dumps(tried, sort_keys=True).encode("utf-8")).hexdigest()


def _record_path(workspace: Workspace, digest: str) -> Path:
    return workspace.state_dir / "deploys" / f"{digest}.json"


def _dry_run(
    spec: BackendSpec,
    scene: BaseModel,
    code: str,
    success: Any,
    workspace: Workspace,
    digest: str,
    host: str,
) -> bool:
    """Run the plan in the simulator, or find a recent passing record; whether it passed."""
    from lyra.episode import run_episode

    simulator = spec.simulator or spec.name
    record = _record_path(workspace, digest)
    if record.exists():
        passed_at = float(json.loads(record.read_text(encoding="utf-8"))["passed_at"])
        if time.time() - passed_at < RECORD_HOURS * 3600:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(passed_at))
            print(
                f"a dry run of this plan, scene and skill versions passed in {simulator} at "
                f"{when}: it stands for this one"
            )
            return True
    print(f"dry run in {simulator} first, on the same scene")
    sim = spec.make()
    try:
        run = run_episode(sim, scene, 0, code, skills_root=workspace.skills_dir, success=success)
    except LyraError as error:
        why = str(error)
    else:
        why = "" if run.ok else run.describe()
    finally:
        sim.close()
    if why:
        print(
            f"lyra: refused: the dry run in {simulator} failed, so nothing was sent to the "
            f"robot at {host}:\n{why}",
            file=sys.stderr,
        )
        return False
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"passed_at": time.time()}), encoding="utf-8")
    print(f"dry run passed ({run.result.primitive_calls} primitive calls)")
    return True


def _what_will_run(
    spec: BackendSpec, args: argparse.Namespace, scene: BaseModel, code: str, skills: list[str]
) -> str:
    """What the person is asked to let run: the robot, the scene, the skills, the plan."""
    table = yaml.safe_dump(scene.model_dump(mode="json"), sort_keys=False).rstrip()
    lines = [
        f"This runs on the {spec.name} robot at {args.robot}.",
        f"The scene ({args.scene}); set the table up as it says:",
        *(f"  {line}" for line in table.splitlines()),
        *([f"Where the objects are: {args.perception}"] if args.perception else []),
        *(
            [f"At {args.speed:g} of the arm's full speed (never above the backend's cap)"]
            if args.speed
            else []
        ),
        f"The skills it calls: {', '.join(f'skills/{name}.py' for name in skills) or 'none'}",
        f"The plan ({args.plan}):",
        *(f"  {line}" for line in code.rstrip().splitlines()),
    ]
    return "\n".join(lines)


def _confirmed(question: str) -> bool:
    """Whether the person answers yes; an ended input is a no."""
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def _run_on_robot(
    robot: Backend,
    scene: BaseModel,
    code: str,
    success: Any,
    workspace: Workspace,
    host: str,
) -> int:
    """Run the plan on the robot through the episode runner, and say how it went."""
    from lyra.episode import run_episode

    interrupted = threading.Event()

    def interrupt(signum: int, frame: Any) -> None:
        # Noted before anything else: franky, waiting on a motion when Ctrl-C comes, may turn
        # the KeyboardInterrupt into the motion's own ControlException (preempted).
        interrupted.set()
        robot.stop()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        run = run_episode(robot, scene, 0, code, skills_root=workspace.skills_dir, success=success)
    except KeyboardInterrupt:
        interrupted.set()
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted.is_set():
        print(
            "\nlyra: stopped by Ctrl-C: the arm was told to stop and holds still, and nothing "
            "more is sent to it. Look at where the objects are, set the table up as the scene "
            "says, and run the same command again",
            file=sys.stderr,
        )
        return 130
    if not run.ok:
        print(f"lyra: the plan did not finish on the robot at {host}: {run.describe()}")
        return 1
    print(
        f"done on the robot at {host}: {run.result.primitive_calls} primitive calls, "
        f"{run.sim_seconds:.1f} s of the robot's clock"
    )
    return 0
