"""Run generated code in a process of its own, serving it the primitives, and judge nothing of it.

The backend (a simulator, a robot) stays in this, the trusted, process and in the thread that
calls :func:`run_code`. The code runs in a code worker (:mod:`lyra.sandbox.worker`), forked from
a clean zygote, that reaches the backend only through primitive calls sent over a pipe as values;
each call runs here, in this thread, under the budgets, and its result goes back as values. A
console (:func:`open_console`) keeps one worker and its namespace for many blocks of code, under
the same confinement, with the budgets counted over all of them. So:

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
import os
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lyra import api
from lyra.embodiment import use
from lyra.errors import LyraError
from lyra.policy import MAX_SOURCE_BYTES
from lyra.sandbox import wire
from lyra.sandbox.confine import OS_LAYERS, Limits
from lyra.sandbox.worker import MAX_FEEDBACK_CHARS, MAX_OUTPUT_CHARS, ErrorKind
from lyra.sandbox.zygote import Worker, fork_worker

__all__ = [
    "LAYERS",
    "MAX_OUTPUT_CHARS",
    "MAX_SOURCE_BYTES",
    "Console",
    "ConsoleResult",
    "Dispatch",
    "EndConsole",
    "ErrorKind",
    "Limits",
    "RunResult",
    "open_console",
    "run_code",
]

# How long past the code's own time limit a silent worker is waited for before it is killed:
# its deadline check stops Python loops itself; only a call that never returns needs the kill.
GRACE_S = 2.0
_KINDS = ("policy", "syntax", "timeout", "budget", "exception")
# Every layer a run may have: the Python-level rules, then the operating system's.
LAYERS = ("rules", *OS_LAYERS)

# What runs a primitive call that arrived from the worker: (name, args, kwargs) -> its value,
# called with the target active. Raising is the call's error, sent back to the code.
Dispatch = Callable[[str, list[Any], dict[str, Any]], Any]


def call_primitive(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Run a primitive of :mod:`lyra.api` as it was asked for: the default :data:`Dispatch`."""
    return getattr(api, name)(*args, **kwargs)


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


@dataclass(frozen=True)
class ConsoleResult:
    """What one block of code typed into a console did.

    Attributes:
        ok: the block ran to its end within the limits without raising, or a trusted function
            ended the session in it.
        text: what the console prints after the block: what it printed and the reprs of its
            expression statements' values (None prints nothing), then the traceback of the
            exception it raised or the feedback on why it did not run or was stopped; "" when
            there is nothing to print.
        error: which kind of failure, as :attr:`RunResult.error`; None when ok. A block sent
            after the session ended repeats the kind that ended it (None: a trusted function
            or close ended it).
        primitive_calls: the session's primitive calls so far, this block's included.
        ended: why the session is over, on the block that ended it and every block after;
            "" while it goes on.
    """

    ok: bool
    text: str
    error: ErrorKind | None = None
    primitive_calls: int = 0
    ended: str = ""


class EndConsole(Exception):
    """Raised by a console's trusted function to end the session at that call.

    The block that called the function stops there, the worker is killed, and the block's
    result carries the exception's message in ``ended``; nothing more runs in the console.
    """


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
    dispatch: Dispatch = call_primitive,
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
        dispatch: runs each primitive call here, in place of calling it as asked: a recorder
            of demonstrations sees every call's arguments and may change them.

    Returns:
        The outcome, with feedback text the LLM can act on when it is not ok.
    """
    start = time.monotonic()
    server = _Server(
        target, timeout_s, max_primitive_calls, max_sim_seconds, on_primitive, {}, dispatch
    )
    setup = _setup(skills_root, timeout_s, limits, require, extra_globals or {}, {}, False)
    with _worker(setup) as worker:
        done = server.serve(worker.sock, source, filename)
    return _result(done, server, time.monotonic() - start, require)


@contextlib.contextmanager
def open_console(
    target: object,
    *,
    skills_root: Path | None = None,
    timeout_s: float = 30.0,
    max_primitive_calls: int = 1000,
    max_sim_seconds: float | None = None,
    on_primitive: Callable[[str], None] | None = None,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    limits: Limits | None = None,
    require: Collection[str] = (),
) -> Iterator[Console]:
    """Open a console: one confined worker whose namespace lives across blocks of code.

    Each block is checked as :func:`run_code` checks code, and runs as the Python console runs
    its input. The budgets are totals over the session; the worker is killed when one runs out,
    when a trusted function raises :class:`EndConsole`, and when the console closes.

    Args:
        target: as :func:`run_code`'s.
        skills_root: as :func:`run_code`'s.
        timeout_s: the limit on the code's own running time over every block, in seconds; time
            inside primitives and trusted functions, and between blocks, does not count.
        max_primitive_calls: how many lyra.api primitives the blocks may call in all.
        max_sim_seconds: as :func:`run_code`'s: the backend's simulated time the session may
            reach.
        on_primitive: as :func:`run_code`'s.
        functions: names the code's namespace gets, served here as primitives are (values in,
            values out) but not counted as primitive calls; each runs in this process and may
            raise EndConsole.
        limits: as :func:`run_code`'s (the CPU-time backstop covers the whole session).
        require: as :func:`run_code`'s.

    Yields:
        The console; it is closed when the ``with`` statement ends.

    Raises:
        ValueError: a function's name is not a public identifier or is one of lyra.api's.
    """
    functions = dict(functions or {})
    for name in functions:
        if not name.isidentifier() or name.startswith("_") or name in api.__all__:
            raise ValueError(
                f"a console function needs a public name that lyra.api does not use: {name!r}"
            )
    server = _Server(
        target, timeout_s, max_primitive_calls, max_sim_seconds, on_primitive, functions
    )
    setup = _setup(skills_root, timeout_s, limits, require, {}, functions, True)
    with _worker(setup) as worker:
        console = Console(worker, server, require)
        try:
            yield console
        finally:
            console.close()


class Console:
    """A Python console on a confined worker, made by :func:`open_console`.

    Attributes:
        ended: why the session is over ("" while it goes on).
    """

    def __init__(self, worker: Worker, server: _Server, require: Collection[str]) -> None:
        self._worker = worker
        self._server = server
        self._require = require
        self._blocks = 0
        # The kind of failure that ended the session (None: a trusted function or close did).
        self._end_kind: ErrorKind | None = None
        self.ended = ""

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self._worker.pid

    def run(self, code: str) -> ConsoleResult:
        """Check one block of code and run it in the namespace the earlier blocks left.

        Never raises for bad code: a refused block, an exception and an exhausted budget all
        become the result's text; the last ends the session.
        """
        calls = self._server.calls
        if self.ended:
            text = f"nothing was run: the console has ended ({self.ended})\n"
            return ConsoleResult(False, text, self._end_kind, calls, self.ended)
        # Named as Python 3.13's console names its inputs, so tracebacks into earlier blocks
        # quote the right lines.
        filename = f"<python-input-{self._blocks}>"
        self._blocks += 1
        started = time.monotonic()
        try:
            done = self._server.serve(self._worker.sock, code, filename)
        except BaseException:
            # Interrupted (Ctrl-C) mid-block: the worker may be waiting for a reply.
            self._end(None, "it was interrupted")
            raise
        result = _result(done, self._server, time.monotonic() - started, self._require)
        calls = self._server.calls
        if self._server.ended:
            self._end(None, self._server.ended)
            return ConsoleResult(True, _console_text(result.output, ""), None, calls, self.ended)
        if result.error in ("budget", "timeout") or self._server.lost:
            self._end(result.error, self._server.stopped or result.feedback)
        text = _console_text(result.output, result.feedback)
        return ConsoleResult(result.ok, text, result.error, calls, self.ended)

    def close(self) -> None:
        """End the session and kill the worker (nothing of it outlives the console)."""
        self._end(None, "it was closed")

    def _end(self, kind: ErrorKind | None, why: str) -> None:
        if not self.ended:
            self.ended, self._end_kind = why, kind
        self._worker.kill()


def _console_text(output: str, feedback: str) -> str:
    """What the console prints for a block: its output, then the error, each ending a line."""
    if output and feedback and not output.endswith("\n"):
        output += "\n"
    return output + (f"{feedback}\n" if feedback else "")


def _setup(
    skills_root: Path | None,
    timeout_s: float,
    limits: Limits | None,
    require: Collection[str],
    extra_globals: Mapping[str, Any],
    functions: Mapping[str, Callable[..., Any]],
    interactive: bool,
) -> dict[str, Any]:
    """The worker's setup message (see :func:`lyra.sandbox.worker.serve`), less its scratch."""
    # The CPU-time backstop: twice the time limit, plus the start.
    limits = limits or Limits(cpu_seconds=max(10, round(2 * timeout_s) + 5))
    return {
        "skills": skill_sources(skills_root),
        "code_seconds": timeout_s,
        "globals": wire.encode(dict(extra_globals)),
        "functions": list(functions),
        "interactive": interactive,
        "limits": dataclasses.asdict(limits),
        "require": list(require),
        "rules": rules_on(),
    }


def rules_on() -> bool:
    """Whether generated code is held to the Python-level rules, the ``rules`` layer.

    On unless ``LYRA_SANDBOX_RULES=off``, which runs the suite's hostile code against the OS
    layers alone; a run that requires the layer (a real robot) then refuses.
    """
    value = os.environ.get("LYRA_SANDBOX_RULES", "on")
    if value not in ("on", "off"):
        raise LyraError(f"LYRA_SANDBOX_RULES is {value!r}: set it to 'on' or 'off'")
    return value == "on"


@contextlib.contextmanager
def _worker(setup: dict[str, Any]) -> Iterator[Worker]:
    """A fresh worker with a scratch folder of its own, set up; killed, then the folder gone."""
    scratch = tempfile.mkdtemp(prefix="lyra-code-")
    try:
        worker = fork_worker()
        try:
            wire.send(worker.sock, {**setup, "scratch": scratch})
            yield worker
        finally:
            # Gone before its scratch folder is: it cannot write there while it is removed.
            worker.kill()
    finally:
        _remove_folder(scratch)


# A folder opened to be emptied: never a link's target.
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _remove_folder(top: str) -> None:
    """Remove a folder and all it holds, walking down and up again without recursion.

    The code may leave a chain of folders thousands deep: shutil.rmtree recurses on Python 3.11
    (and os.fwalk too) and fails with RecursionError there, and a descriptor per level would
    run out of descriptors. So one folder is open at a time, and each step back up is checked
    to land in the folder it came down from.
    """
    fd = _open_folder(top, None)
    try:
        # Per level below top: its name and its parent's identity; per level: the folders
        # still to remove in it.
        down: list[tuple[str, os.stat_result]] = []
        pending = [_empty_but_folders(fd)]
        while pending[-1] or down:
            if pending[-1]:
                name = pending[-1].pop()
                child = _open_folder(name, fd)
                down.append((name, os.fstat(fd)))
                os.close(fd)
                fd = child
                pending.append(_empty_but_folders(fd))
                continue
            name, parent = down.pop()
            pending.pop()
            up = os.open("..", _FOLDER, dir_fd=fd)
            os.close(fd)
            fd = up
            if not os.path.samestat(os.fstat(fd), parent):
                raise OSError(f"{top} was moved while it was removed")
            os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(top)


def _open_folder(name: str, dir_fd: int | None) -> int:
    try:
        return os.open(name, _FOLDER, dir_fd=dir_fd)
    except PermissionError:
        # The code took away the right to list it (its worker is gone by now: nothing puts a
        # link in the folder's place between the two calls).
        os.chmod(name, 0o700, dir_fd=dir_fd)
        return os.open(name, _FOLDER, dir_fd=dir_fd)


def _empty_but_folders(fd: int) -> list[str]:
    """Remove all an open folder holds but folders; return the folders' names."""
    if os.fstat(fd).st_mode & 0o700 != 0o700:
        # The code took away the right to remove what it holds.
        os.fchmod(fd, 0o700)
    with os.scandir(fd) as listing:
        entries = list(listing)
    folders = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            folders.append(entry.name)
        else:
            os.unlink(entry.name, dir_fd=fd)
    return folders


def _result(
    done: dict[str, Any] | None, server: _Server, wall: float, require: Collection[str]
) -> RunResult:
    """The outcome from the worker's report, trusting none of it that can be checked here."""
    code_s = server.code_s
    if done is None:
        return RunResult(False, server.lost, server.calls, wall, server.lost_kind, code_s=code_s)
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
    """The trusted end of a session: answers the worker's calls against the target.

    Its counts (primitive calls, the code's own time) run over every block of the session.
    """

    def __init__(
        self,
        target: object,
        timeout_s: float,
        budget: int,
        max_sim_seconds: float | None,
        on_primitive: Callable[[str], None] | None,
        functions: Mapping[str, Callable[..., Any]],
        dispatch: Dispatch = call_primitive,
    ) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self.budget = budget
        self.max_sim_seconds = max_sim_seconds
        self.on_primitive = on_primitive
        self.functions = functions
        self.dispatch = dispatch
        self.calls = 0
        # The code's own time so far: this side's wait for the worker's messages.
        self.code_s = 0.0
        # Why the code was stopped ("" while it was not), as the worker reports it.
        self.stopped = ""
        # Why a trusted function ended the session ("" while none did).
        self.ended = ""
        # Why no result came back, when none did, and the kind of failure that makes it.
        self.lost = ""
        self.lost_kind: ErrorKind = "timeout"
        # The worker's report without the exception's text, sent before the code's own
        # __str__ runs to write it ("" until then).
        self.reporting = ""

    def serve(self, sock: Any, code: str, filename: str) -> dict[str, Any] | None:
        """Send a block, answer its calls until the worker reports its end; the report, or None.

        The worker's own time runs while this side waits for its next message, whole: a worker
        that sends a byte at a time is on the clock all the same.
        """
        limit_s = self.timeout_s + GRACE_S
        reply: dict[str, Any] = {"code": code, "filename": filename}
        self.reporting = ""
        with use(self.target):
            while True:
                waited = time.monotonic()
                try:
                    wire.send(sock, reply)
                    message = wire.receive(
                        sock, deadline=waited + max(limit_s - self.code_s, 0.001)
                    )
                    self.code_s += time.monotonic() - waited
                    if "done" in message and isinstance(message["done"], dict):
                        return message["done"]
                    if "reporting" in message:
                        self.reporting = str(message["reporting"])[:MAX_FEEDBACK_CHARS]
                        reply = {}
                    else:
                        reply = self._answer(message)
                except TimeoutError:
                    self.code_s += time.monotonic() - waited
                    self._give_up(
                        f"the code was stopped after {self.timeout_s:g} s of its own time (the "
                        "limit): it was stuck inside a call that never returns, such as summing "
                        "an endless iterator; make every loop end",
                        f"ran past the {self.timeout_s:g} s limit",
                    )
                    return None
                except (OSError, wire.WireError) as error:
                    self.code_s += time.monotonic() - waited
                    self._give_up(
                        "the code's process ended without a result (it crashed, or ran out of "
                        f"memory): {error}; make the plan smaller",
                        "ended the code's process",
                    )
                    return None
                except BaseException:
                    # Interrupted here (Ctrl-C) while the backend may be moving: stop it.
                    stop = getattr(self.target, "stop", None)
                    if callable(stop):
                        stop()
                    raise

    def _give_up(self, why: str, how_it_broke: str) -> None:
        """Set why no result came back: ``why``, unless the code itself accounts for it."""
        if self.stopped:
            # The code caught a budget's stop and went on until this: the budget stopped it.
            self.lost_kind, self.lost = "budget", self.stopped
        elif self.reporting:
            # The code had raised, and its exception's own text is what broke the report.
            self.lost_kind = "exception"
            self.lost = (
                f"{self.reporting}\nthe code's own exception broke this report: writing its "
                f"text {how_it_broke}"
            )
        else:
            self.lost_kind, self.lost = "timeout", why

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        name = message.get("call")
        function = self.functions.get(name) if isinstance(name, str) else None
        if function is None and (not isinstance(name, str) or name not in api.PRIMITIVES):
            return {"error": {"type": "AttributeError", "message": f"no primitive {name!r}"}}
        if function is None:
            self.stopped = self.stopped or self._over_budget()
        if self.stopped or self.ended:
            # Nothing more is served once the code is stopped, however it goes on.
            return {"stop": self.stopped or self.ended}
        if function is None:
            self.calls += 1
        try:
            args = wire.decode(message.get("args", []))
            kwargs = wire.decode(message.get("kwargs", {}))
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise wire.WireError("a call's arguments must be a list and a dict")
            value = (
                function(*args, **kwargs)
                if function is not None
                else self.dispatch(str(name), args, kwargs)
            )
            reply: dict[str, Any] = {"value": wire.encode(value)}
        except EndConsole as end:
            self.ended = _text(end)[:MAX_FEEDBACK_CHARS] or "a console function ended it"
            return {"stop": self.ended}
        except Exception as error:  # the call's error is the code's to handle
            text = _text(error)[:MAX_FEEDBACK_CHARS]
            reply = {"error": {"type": type(error).__name__, "message": text}}
        if function is None and self.on_primitive is not None:
            self.on_primitive(str(name))
        return reply

    def _over_budget(self) -> str:
        """Why one more primitive call is over a budget; "" when it is not."""
        if self.calls >= self.budget:
            return (
                f"the code called more than {self.budget} primitives (the limit) and was "
                "stopped; look for a loop that repeats primitive calls"
            )
        sim_time = getattr(self.target, "sim_time", None)
        if (
            self.max_sim_seconds is not None
            and sim_time is not None
            and (sim_time > self.max_sim_seconds)
        ):
            spec = getattr(self.target, "spec", None)
            # A robot's clock is real time (BackendSpec.robot).
            clock = "the robot's time" if getattr(spec, "robot", False) else "simulated time"
            return (
                f"the plan used more than {self.max_sim_seconds:g} s of {clock} (the limit) "
                "and was stopped; look for motions repeated in a loop"
            )
        return ""


def _text(error: BaseException) -> str:
    with contextlib.suppress(Exception):
        return str(error)
    return type(error).__name__
