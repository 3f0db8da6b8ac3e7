"""``lyra demo from-plan``: a weak policy, recorded: a plan run confined, with mistakes put in.

The plan is untrusted code: it runs through the episode runner in a confined worker, and each
primitive call it makes arrives here, in the trusted process, where it is recorded and, for the
calls the noise seed chose, changed before it runs: another object named, a target moved, or
the call skipped.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from lyra.api import ACTIONS
from lyra.backend import Backend
from lyra.demos.format import (
    Demonstration,
    Injected,
    Source,
    encode_values,
    observe,
    scene_data,
)
from lyra.demos.steps import StepLog
from lyra.episode import run_episode
from lyra.geometry import Point, Pose
from lyra.sandbox import RunResult, call_primitive

Kind = Literal["wrong-object", "offset", "missing-step"]
KINDS: tuple[Kind, ...] = get_args(Kind)
# How far an offset moves a target, in the horizontal plane: a near miss, not a wild one.
OFFSET_M = 0.03


@dataclass(frozen=True)
class Noise:
    """The mistakes to put into a plan's run.

    Attributes:
        kinds: which kinds may be made.
        seed: draws which calls get one, which kind, which object and which direction.
        count: how many to make.
    """

    kinds: tuple[Kind, ...] = ()
    seed: int = 0
    count: int = 0


class Injector:
    """The sandbox's dispatch for a plan: every call recorded, the chosen ones changed first.

    A call can take a mistake when it moves the robot and a kind asked for applies to it; such
    calls are numbered from 0 as they arrive, and those whose number was chosen get one.
    """

    def __init__(
        self, log: StepLog | None, noise: Noise, chosen: set[int], objects: list[str]
    ) -> None:
        """Record into ``log`` (None: only count), changing the calls numbered in ``chosen``."""
        self.log = log
        self.noise = noise
        self.chosen = chosen
        self.objects = objects
        self.rng = random.Random(noise.seed)
        self.eligible = 0

    def __call__(self, primitive: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Run one call of the plan, as asked or with its mistake."""
        kinds = self.kinds(primitive, args, kwargs)
        number = self.eligible
        self.eligible += bool(kinds)
        if self.log is None:
            return call_primitive(primitive, args, kwargs)
        if not kinds or number not in self.chosen:
            return self.log.run(primitive, args, kwargs)
        kind = self.rng.choice(kinds)
        asked = {"args": encode_values(args), "kwargs": encode_values(kwargs)}
        if kind == "missing-step":
            detail = f"{primitive} was not run; the plan went on as if it had"
            return self.log.skip(
                primitive, args, kwargs, Injected(kind=kind, detail=detail, **asked)
            )
        args, kwargs, detail = (
            self._wrong_object(args, kwargs)
            if kind == "wrong-object"
            else self._offset(args, kwargs)
        )
        return self.log.run(primitive, args, kwargs, Injected(kind=kind, detail=detail, **asked))

    def kinds(self, primitive: str, args: list[Any], kwargs: dict[str, Any]) -> list[Kind]:
        """The kinds asked for that apply to a call: only motions take a mistake."""
        if primitive not in ACTIONS:
            return []
        values = [*args, *kwargs.values()]
        named = {value for value in values if isinstance(value, str) and value in self.objects}
        applies = {
            "wrong-object": bool(named) and len(self.objects) > len(named),
            "offset": any(isinstance(value, Point | Pose) for value in values),
            "missing-step": True,
        }
        return [kind for kind in self.noise.kinds if applies[kind]]

    def _wrong_object(
        self, args: list[Any], kwargs: dict[str, Any]
    ) -> tuple[list[Any], dict[str, Any], str]:
        values = [*args, *kwargs.values()]
        named = [value for value in values if isinstance(value, str) and value in self.objects]
        wrong = self.rng.choice(named)
        other = self.rng.choice([name for name in self.objects if name not in named])

        def swap(value: Any) -> Any:
            return other if value == wrong else value

        detail = f"'{wrong}' replaced by '{other}'"
        return [swap(v) for v in args], {k: swap(v) for k, v in kwargs.items()}, detail

    def _offset(
        self, args: list[Any], kwargs: dict[str, Any]
    ) -> tuple[list[Any], dict[str, Any], str]:
        angle = self.rng.uniform(0.0, 2.0 * math.pi)
        dx, dy = OFFSET_M * math.cos(angle), OFFSET_M * math.sin(angle)
        done = False

        def move(value: Any) -> Any:
            # Only the first target moves: one mistake, one change.
            nonlocal done
            if done or not isinstance(value, Point | Pose):
                return value
            done = True
            if isinstance(value, Pose):
                return Pose(value.position + Point(dx, dy, 0.0), value.orientation)
            return value + Point(dx, dy, 0.0)

        detail = (
            f"target moved {OFFSET_M * 100:.0f} cm: {dx * 100:+.1f} cm in x, "
            f"{dy * 100:+.1f} cm in y"
        )
        return [move(v) for v in args], {k: move(v) for k, v in kwargs.items()}, detail


def record_plan(
    backend: Backend,
    backend_name: str,
    scene: Any,
    seed: int,
    plan: Path,
    *,
    instruction: str,
    noise: Noise,
    skills_root: Path | None = None,
    frames: Path | None = None,
) -> tuple[Demonstration, RunResult]:
    """Run a plan confined on a scene and seed, with mistakes put in, and record every call.

    The plan runs twice: once as written, to count the calls that can take a mistake (the
    simulator is deterministic, so the second run makes the same calls up to the first
    mistake), then with the chosen calls changed. After a mistake the plan may make other
    calls, or fewer: the demonstration then holds fewer mistakes than asked for.

    Args:
        backend: where it runs.
        backend_name: its registered name.
        scene: its scene spec.
        seed: the layout seed.
        plan: the plan file (task code against :mod:`lyra.api`).
        instruction: what the plan is meant to do, in words.
        noise: the mistakes to make.
        skills_root: the skills folder the plan may import from.
        frames: a folder for a picture after each motion; None takes none.

    Returns:
        The demonstration, and how the run with the mistakes ended.
    """
    code = plan.read_text(encoding="utf-8")
    backend.reset(scene, seed)
    start, objects = observe(backend), sorted(backend.world_state())
    counter = Injector(None, noise, set(), objects)
    run_episode(backend, scene, seed, code, skills_root=skills_root, dispatch=counter)
    rng = random.Random(noise.seed)
    chosen = set(rng.sample(range(counter.eligible), min(noise.count, counter.eligible)))
    log = StepLog(backend, frames)
    injector = Injector(log, Noise(noise.kinds, rng.randrange(2**32), noise.count), chosen, objects)
    run = run_episode(backend, scene, seed, code, skills_root=skills_root, dispatch=injector)
    source = Source(
        kind="plan",
        plan=str(plan),
        code=code,
        noise=list(noise.kinds),
        noise_seed=noise.seed,
        mistakes=noise.count,
        confined=list(run.result.confined),
        ok=run.result.ok,
        feedback=run.result.feedback,
    )
    demo = Demonstration(
        instruction=instruction,
        backend=backend_name,
        scene=scene_data(scene),
        seed=seed,
        source=source,
        start=start,
        steps=log.steps,
    )
    return demo, run.result
