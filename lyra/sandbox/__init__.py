"""Run generated code in a process of its own, serving it the primitives, and judge nothing of it.

The backend (a simulator, a robot) stays in this, the trusted, process and in the thread that
calls :func:`run_code`. The code runs in a code worker (:mod:`lyra.sandbox.worker`), forked from
a clean zygote, that reaches the backend only through primitive calls sent over a pipe as values;
each call runs here, in this thread, under the budgets, and its result goes back as values. So:

* the code's own running time has a limit, and the time a primitive takes does not count
  against it: a slow machine makes motions slower, not plans "stuck";
* the primitive calls and the simulated time are counted here, so those budgets do not depend
  on the machine at all;
* a worker that stops answering (a C loop, a crash) is killed; since only this thread drives the
  backend, nothing keeps moving it after a run is given up.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lyra import api
from lyra.embodiment import use
from lyra.policy import MAX_SOURCE_BYTES
from lyra.sandbox import wire
from lyra.sandbox.confine import LAYERS, Limits
from lyra.sandbox.worker import MAX_FEEDBACK_CHARS, MAX_OUTPUT_CHARS, ErrorKind
from lyra.sandbox.zygote import fork_worker

__all__ = [
    "LAYERS",
    "MAX_OUTPUT_CHARS",
    "MAX_SOURCE_BYTES",
    "ErrorKind",
    "Limits",
    "RunResult",
    "run_code",
]

# How long past the code's own time limit a silent worker is waited for before it is killed:
# its deadline check stops Python loops itself; only a call that never returns needs the kill.
GRACE_S = 2.0
_KINDS = ("policy", "syntax", "timeout", "budget", "exception")


@dataclass(frozen=True)
class RunResult:
    """What running generated code did.

    Attributes:
        ok: the code ran to its end within the limits without raising.
        feedback: for the LLM and the person: what went wrong, where (file, line and the source
            line quoted) and what to do; empty when ok.
        primitive_calls: how many lyra.api primitives the code called.
        wall_s: seconds from the start of the checks to the end of the run.
        error: which kind of failure, None when ok: ``policy`` (refused before running: a
            forbidden construct, a skill that does not exist, an oversized answer), ``syntax``
            (no code, or code that does not compile), ``timeout``, ``budget`` (too many
            primitive calls, or too much simulated time) or ``exception``.
        output: what the code printed, cut at MAX_OUTPUT_CHARS.
        code_s: seconds the code itself ran, between and around its primitive calls.
        confined: the OS confinement layers the worker ran under (see lyra.sandbox.confine).
    """

    ok: bool
    feedback: str
    primitive_calls: int
    wall_s: float
    error: ErrorKind | None = None
    output: str = ""
    code_s: float = 0.0
    confined: tuple[str, ...] = ()


def skill_sources(skills_root: Path | None) -> dict[str, str]:
    """The skill modules a run may import, by name, read from a skills folder."""
    if skills_root is None:
        return {}
    from lyra.library.parse import skill_paths

    return {path.stem: path.read_text(encoding="utf-8") for path in skill_paths(skills_root)}


def run_code(
    source: str,
    target: object,
    *,
    filename: str = "<task>",
    skills_root: Path | None = None,
    timeout_s: float = 30.0,
    max_primitive_calls: int = 1000,
    max_sim_seconds: float | None = None,
    extra_globals: Mapping[str, Any] | None = None,
    on_primitive: Callable[[str], None] | None = None,
    limits: Limits | None = None,
    require: Collection[str] = (),
) -> RunResult:
    """Check generated code and run it, serving its primitive calls; never raises for bad code.

    Args:
        source: the code, as the LLM answered it.
        target: a backend (its primitives are checked against what it provides, its simulated
            time against ``max_sim_seconds``), or an embodiment, or a Gymnasium env carrying
            one (as ``lyra.use`` accepts).
        filename: how feedback names the code.
        skills_root: the folder of skill modules that ``from skills.<name> import <name>``
            reads (a workspace's ``skills/``); None: no skills exist.
        timeout_s: the limit on the code's own running time, in seconds; time spent inside
            primitives does not count.
        max_primitive_calls: how many lyra.api primitives the code may call.
        max_sim_seconds: how many simulated seconds the backend may advance; None: no limit.
        extra_globals: values the caller puts in the code's namespace (sent as values).
        on_primitive: called here, with the primitive's name, after each call has run.
        limits: the worker's resource limits (default: :class:`Limits`, with a CPU-time
            backstop of twice the time limit).
        require: confinement layers the run must have (``LAYERS``); without one of them the
            code is refused. A real robot requires them all.

    Returns:
        The outcome, with feedback text the LLM can act on when it is not ok.
    """
    start = time.monotonic()
    limits = limits or Limits(cpu_seconds=max(10, round(2 * timeout_s) + 5))
    server = _Server(target, max_primitive_calls, max_sim_seconds, on_primitive)
    with tempfile.TemporaryDirectory(prefix="lyra-code-") as scratch:
        worker = fork_worker()
        try:
            wire.send(
                worker.sock,
                {
                    "code": source,
                    "filename": filename,
                    "skills": skill_sources(skills_root),
                    "code_seconds": timeout_s,
                    "globals": wire.encode(dict(extra_globals or {})),
                    "scratch": scratch,
                    "limits": dataclasses.asdict(limits),
                    "require": list(require),
                },
            )
            done, code_s = server.serve(worker.sock, timeout_s + GRACE_S)
        finally:
            # Gone before its scratch folder is: it cannot write there while it is removed.
            worker.kill()
    return _result(done, server, time.monotonic() - start, code_s, require)


def _result(
    done: dict[str, Any] | None,
    server: _Server,
    wall: float,
    code_s: float,
    require: Collection[str],
) -> RunResult:
    """The outcome from the worker's report, trusting none of it that can be checked here."""
    if done is None:
        return RunResult(False, server.lost, server.calls, wall, "timeout", code_s=code_s)
    reported = done.get("kind")
    # An unknown kind is a failure: the worker's word is not taken for success.
    kind: ErrorKind | None = (
        reported if reported in _KINDS else None if reported is None else "exception"
    )
    feedback = str(done.get("feedback", ""))[:MAX_FEEDBACK_CHARS]
    if kind == "exception" and reported not in _KINDS:
        feedback = f"the code's process reported an unknown outcome {str(reported)[:80]!r}"
    if server.stopped and kind != "budget":
        # The code caught the stop and ended as if nothing happened: it still ran out.
        kind, feedback = "budget", server.stopped
    listed = done.get("confined")
    confined = tuple(layer for layer in LAYERS if isinstance(listed, list) and layer in listed)
    lacking = [layer for layer in require if layer not in confined]
    if lacking and kind != "policy":
        kind = "policy"
        feedback = f"the code ran without the confinement it requires ({', '.join(lacking)})"
    output = str(done.get("output", ""))[:MAX_OUTPUT_CHARS]
    return RunResult(kind is None, feedback, server.calls, wall, kind, output, code_s, confined)


class _Server:
    """The trusted end of one run: answers the worker's primitive calls against the target."""

    def __init__(
        self,
        target: object,
        budget: int,
        max_sim_seconds: float | None,
        on_primitive: Callable[[str], None] | None,
    ) -> None:
        self.target = target
        self.budget = budget
        self.max_sim_seconds = max_sim_seconds
        self.on_primitive = on_primitive
        self.calls = 0
        # Why the code was stopped ("" while it was not), as the worker reports it.
        self.stopped = ""
        # Why no result came back, when none did.
        self.lost = ""

    def serve(self, sock: Any, limit_s: float) -> tuple[dict[str, Any] | None, float]:
        """Answer calls until the worker reports the end; (its report or None, its own time).

        The worker's own time runs while this side waits for its next message, whole: a worker
        that sends a byte at a time is on the clock all the same.
        """
        code_s = 0.0
        with use(self.target):
            while True:
                waited = time.monotonic()
                try:
                    message = wire.receive(sock, deadline=waited + max(limit_s - code_s, 0.001))
                    code_s += time.monotonic() - waited
                    if "done" in message and isinstance(message["done"], dict):
                        return message["done"], code_s
                    wire.send(sock, self._answer(message))
                except TimeoutError:
                    self.lost = (
                        f"the code was stopped after {limit_s - GRACE_S:g} s of its own time (the "
                        "limit): it was stuck inside a call that never returns, such as summing "
                        "an endless iterator; make every loop end"
                    )
                    return None, code_s + time.monotonic() - waited
                except (OSError, wire.WireError) as error:
                    self.lost = (
                        "the code's process ended without a result (it crashed, or ran out of "
                        f"memory): {error}; make the plan smaller"
                    )
                    return None, code_s + time.monotonic() - waited
                except BaseException:
                    # Interrupted here (Ctrl-C) while the backend may be moving: stop it.
                    stop = getattr(self.target, "stop", None)
                    if callable(stop):
                        stop()
                    raise

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        name = message.get("call")
        if not isinstance(name, str) or name not in api.PRIMITIVES:
            return {"error": {"type": "AttributeError", "message": f"no primitive {name!r}"}}
        if self.calls >= self.budget:
            self.stopped = (
                f"the code called more than {self.budget} primitives (the limit) and was "
                "stopped; look for a loop that repeats primitive calls"
            )
            return {"stop": self.stopped}
        sim_time = getattr(self.target, "sim_time", None)
        if (
            self.max_sim_seconds is not None
            and sim_time is not None
            and (sim_time > self.max_sim_seconds)
        ):
            self.stopped = (
                f"the plan used more than {self.max_sim_seconds:g} s of simulated time (the "
                "limit) and was stopped; look for motions repeated in a loop"
            )
            return {"stop": self.stopped}
        self.calls += 1
        try:
            args = wire.decode(message.get("args", []))
            kwargs = wire.decode(message.get("kwargs", {}))
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise wire.WireError("a call's arguments must be a list and a dict")
            value = getattr(api, name)(*args, **kwargs)
            reply: dict[str, Any] = {"value": wire.encode(value)}
        except Exception as error:  # the primitive's error is the code's to handle
            text = _text(error)[:MAX_FEEDBACK_CHARS]
            reply = {"error": {"type": type(error).__name__, "message": text}}
        if self.on_primitive is not None:
            self.on_primitive(name)
        return reply


def _text(error: BaseException) -> str:
    with contextlib.suppress(Exception):
        return str(error)
    return type(error).__name__
