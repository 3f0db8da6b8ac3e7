"""The episode runner: reset, run the code, judge, snapshot; one way for learn, check, run, bench.

Its budgets are deterministic: simulated seconds and primitive calls, counted in this process,
plus a limit on the code's own running time between primitive calls. A slow machine makes an
episode take longer, never end differently. On a robot (``backend.spec.robot``) the seconds are
real seconds of its clock, and the code runs only under every confinement layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lyra.backend import Backend, Snapshot
from lyra.pictures import Recorder
from lyra.predicates import Check, PredicateError, Verdict, from_spec
from lyra.sandbox import Dispatch, RunResult, call_primitive, run_code


@dataclass(frozen=True)
class Budget:
    """What one episode may use; the first two are the same on every machine.

    Attributes:
        sim_seconds: simulated seconds the plan may take (a house takes about 125); on a robot,
            real seconds of its clock.
        primitive_calls: lyra.api calls the plan may make.
        code_seconds: wall-clock seconds the code itself may run, time inside primitives not
            counted: a limit on endless loops, far above what any plan computes.
    """

    sim_seconds: float = 600.0
    primitive_calls: int = 1000
    code_seconds: float = 30.0


@dataclass(frozen=True)
class EpisodeResult:
    """The code run on one seed: the run's outcome, the verdict, how the world ended.

    Attributes:
        seed: the layout seed.
        result: what running the code did.
        verdict: the success check's verdict on the final state.
        snapshot: the backend's snapshot of the final state.
        sim_seconds: simulated seconds the episode took, the final hold included.
        calls: how many times each primitive was called.
        signals: the environment's own signals at the end (MetaWorld's ``success_any``).
    """

    seed: int
    result: RunResult
    verdict: Verdict
    snapshot: Snapshot
    sim_seconds: float = 0.0
    calls: Mapping[str, int] = field(default_factory=dict)
    signals: Mapping[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """The code ran and the task is done."""
        return self.result.ok and self.verdict.ok

    def describe(self) -> str:
        """One line (or a few) saying what happened on this seed."""
        if not self.result.ok:
            return f"seed {self.seed}: the code failed:\n{self.result.feedback}"
        if not self.verdict.ok:
            return (
                f"seed {self.seed}: the code ran, but the task is not done: {self.verdict.reason}"
            )
        return f"seed {self.seed}: done"


def run_episode(
    backend: Backend,
    scene: Any,
    seed: int,
    code: str,
    *,
    skills_root: Path | None,
    success: Sequence[Mapping[str, Any]] = (),
    hold_seconds: float = 0.0,
    budget: Budget | None = None,
    recorder: Recorder | None = None,
    perturb: int = 0,
    dispatch: Dispatch = call_primitive,
) -> EpisodeResult:
    """Lay the scene out, run the code, hold, and judge the final state from the backend.

    Success is read from the backend in this process after the code finished; nothing the code
    says about itself counts. A plan that ends holding an object has not put it anywhere.

    Args:
        backend: where it runs.
        scene: the backend's scene spec (or the mapping its YAML reads as).
        seed: the layout seed.
        code: the task code.
        skills_root: the skills folder the code imports from.
        success: the predicate spec; empty: any run that ends without error succeeds.
        hold_seconds: simulated seconds the result must stand before it is judged.
        budget: the episode's limits (default: :class:`Budget`).
        recorder: frames of the episode, for a GIF.
        perturb: nudge the start (see :meth:`lyra.backend.Backend.reset`); 0: as laid out.
        dispatch: runs each primitive call (see :func:`lyra.sandbox.run_code`).
    """
    budget = budget or Budget()
    backend.reset(scene, seed, perturb)
    calls: dict[str, int] = {}
    check: Check | str
    try:
        check = from_spec(success, backend.spec.predicate_functions())
    except PredicateError as error:
        check = str(error)  # a curriculum refuses such a spec; an example may still hold one
    if recorder is not None:
        recorder.capture()

    def after(primitive: str) -> None:
        calls[primitive] = calls.get(primitive, 0) + 1
        if isinstance(check, Check) and check.watches:
            check.observe(backend.world_state())
        if recorder is not None:
            recorder.after(primitive)

    result = run_code(
        code,
        backend,
        filename="task.py",
        skills_root=skills_root,
        timeout_s=budget.code_seconds,
        max_primitive_calls=budget.primitive_calls,
        max_sim_seconds=budget.sim_seconds,
        on_primitive=after,
        require=backend.spec.confinement,
        dispatch=dispatch,
    )
    verdict = _judge(backend, result, check, hold_seconds)
    snapshot, sim_seconds = backend.snapshot(), backend.sim_time
    signals = dict(backend.world_state().signals)
    if recorder is not None:
        backend.park()
        recorder.capture()
    return EpisodeResult(seed, result, verdict, snapshot, sim_seconds, calls, signals)


def _judge(backend: Backend, result: RunResult, check: Check | str, hold_seconds: float) -> Verdict:
    if not result.ok:
        return Verdict(False, "the code failed")
    return judge_state(backend, check, hold_seconds)


def judge_state(backend: Backend, check: Check | str, hold_seconds: float) -> Verdict:
    """Judge the world as it is now: let go first, stand for ``hold_seconds``, then the check.

    Args:
        backend: where it runs; read in this process, whatever the code said.
        check: the success check, or the reason its spec could not be read.
        hold_seconds: simulated seconds the result must stand before it is judged.
    """
    held = backend.embodiment.held_object()
    if held is not None and backend.spec.must_let_go:
        return Verdict(False, f"the plan ended still holding '{held}': place it")
    if hold_seconds > 0:
        # What stands only because the robot is leaning on it does not stand.
        backend.park()
        backend.hold(hold_seconds)
    if isinstance(check, str):
        return Verdict(False, check)
    try:
        return check(backend.world_state())
    except PredicateError as error:
        return Verdict(False, str(error))
