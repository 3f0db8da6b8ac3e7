"""The code worker: the process that checks generated code and runs it, far from the backend.

It starts as a fork of the zygote (:mod:`lyra.sandbox.zygote`), receives a session's setup (the
skill modules it may import, its time limit) and runs each block of code it is then sent: one
for a plain run, one after another in one namespace for a console. The primitives it sees are
stand-ins: each call is sent to the trusted process as values, run there against the real
backend, and its result (or its error) comes back as values; nothing of the trusted side is
reachable from here. What this process enforces is the friendly layer that turns mistakes into
feedback the LLM can act on: each module is parsed, checked against :mod:`lyra.policy` and a
few rules of its own, and every ``skills.*`` import resolved to a module it was given; the code
sees builtins without I/O or reflection, an import function that admits only the allow-listed
modules (as read-only views of their public names), and a deadline on its own running time,
which the time the trusted side spends inside a primitive does not count against. The trusted
side counts the primitive calls and the simulated time, and kills this process if it stops
answering.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import io
import os
import socket
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from lyra import api, errors
from lyra.library.errors import UnknownSkillError
from lyra.policy import (
    ALLOWED_MODULES,
    FORBIDDEN_NAMES,
    OversizedCodeError,
    Violation,
    check_tree,
    parse_generated,
)
from lyra.sandbox import wire
from lyra.sandbox.confine import Confinement, Limits, confine, refused_call

ErrorKind = Literal["policy", "syntax", "timeout", "budget", "exception"]

MAX_OUTPUT_CHARS = 20_000
# How the Python-level rules (the AST policy, restricted builtins, allow-listed imports and
# module views: the ``rules`` layer) are turned off, to see what the OS layers hold alone.
RULES_OFF = "LYRA_SANDBOX_RULES=off"
MAX_FEEDBACK_CHARS = 20_000

_TICK = "__lyra_tick__"
# Feedback quotes a source line under the message that points at it.
_INDENT = "\n    "
# A deeper console traceback shows this many outermost and innermost frames, so that its last
# line, the exception, stays within MAX_FEEDBACK_CHARS.
_EDGE_FRAMES = 10
# An exception's name and text are cut here, so that the feedback keeps where it was raised.
_NAME_CHARS = 200
_MESSAGE_CHARS = MAX_FEEDBACK_CHARS // 2
# An exception's real class name and traceback: read through these, not as attributes, which
# the code's classes may define as properties (on a metaclass, for a class's __name__).
_CLASS_NAME = type.__dict__["__name__"]
_TRACEBACK = BaseException.__dict__["__traceback__"]

# Builtins generated code does not get, beyond the policy's: the interactive helpers, which
# print or leave the interpreter.
_REFUSED_BUILTINS = frozenset(FORBIDDEN_NAMES) | {
    "help",
    "exit",
    "quit",
    "copyright",
    "credits",
    "license",
}

# Attributes the policy lets through that lead out of the namespace: frames and code objects
# reach the sandbox's own globals (and so the real builtins); ndarray.tofile and .dump write
# files.
_REFUSED_ATTRIBUTES = frozenset(
    {
        "ag_code",
        "ag_frame",
        "co_code",
        "cr_code",
        "cr_frame",
        "dump",
        "f_back",
        "f_builtins",
        "f_code",
        "f_globals",
        "f_locals",
        "gi_code",
        "gi_frame",
        "tb_frame",
        "tb_next",
        "tofile",
    }
)

# Public names of allowed modules that generated code does not see.
_HIDDEN_NAMES: dict[str, frozenset[str]] = {
    # File I/O, memory maps and native code; a plan gets the scene from lyra.api only.
    "numpy": frozenset(
        {
            "core",
            "ctypeslib",
            "f2py",
            "fromfile",
            "fromregex",
            "genfromtxt",
            "lib",
            "load",
            "loadtxt",
            "ma",
            "memmap",
            "rec",
            "save",
            "savetxt",
            "savez",
            "savez_compressed",
            "testing",
        }
    ),
    # Both evaluate annotation strings, with the real builtins when handed fresh globals.
    "typing": frozenset({"ForwardRef", "get_type_hints"}),
}


class _Timeout(BaseException):
    """Raised into generated code past its deadline.

    Not an Exception, so an `except Exception:` in the code does not swallow it.
    """


class _BudgetExceeded(BaseException):
    """Raised before a primitive call past the budget; not an Exception, for the same reason."""


class _Refused(Exception):
    """The code or a skill it imports was refused before running."""

    def __init__(self, kind: ErrorKind, feedback: str) -> None:
        super().__init__(feedback)
        self.kind = kind
        self.feedback = feedback


def serve(sock: socket.socket) -> None:
    """Receive a session's setup from the trusted process, then run each block it sends.

    The setup is ``{"skills": {name: source}, "code_seconds", "globals", "functions",
    "interactive", "scratch", "limits", "require"}``; the worker confines itself
    (:mod:`lyra.sandbox.confine`) before it reads any code. Each block is ``{"code",
    "filename"}``, run in the namespace the earlier ones left, and answered ``{"done": {"kind",
    "feedback", "output", "confined"}}`` after any number of calls in between, and after
    ``{"reporting": feedback}`` where the code's own exception is about to write its text. The
    worker waits for blocks until the trusted process closes the connection or kills it.
    """
    # What generated code or numpy prints at the C level goes nowhere; print() is collected.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    setup = wire.receive(sock)
    rules = setup["rules"] is True
    confinement = confine(Path(setup["scratch"]), Limits(**setup["limits"]))
    if rules:
        confinement = Confinement(("rules", *confinement.applied), confinement.missing)
    else:
        missing = {"rules": f"turned off ({RULES_OFF})", **confinement.missing}
        confinement = Confinement(confinement.applied, missing)
    refusal = _unconfined(setup["require"], confinement)
    run = _Run(
        setup["skills"],
        float(setup["code_seconds"]),
        _Channel(sock),
        wire.decode(setup["globals"]),
        setup["functions"],
        interactive=bool(setup["interactive"]),
        rules=rules,
    )
    # Interactive blocks print their expression statements' values through this hook.
    sys.displayhook = run.display
    while True:
        try:
            block = wire.receive(sock)
        except wire.ClosedError:
            return
        kind: ErrorKind | None
        if refusal:
            kind, feedback = "policy", refusal
        else:
            kind, feedback = run.run(str(block["code"]), str(block["filename"]))
        done = {
            "kind": kind,
            "feedback": feedback[:MAX_FEEDBACK_CHARS],
            "output": run.output.getvalue()[:MAX_OUTPUT_CHARS],
            "confined": list(confinement.applied),
        }
        wire.send(sock, {"done": done})


def _unconfined(require: Iterable[str], confinement: Confinement) -> str:
    """Why no code may run, when a required layer is missing; "" when none is."""
    lacking = [layer for layer in require if layer not in confinement.applied]
    if not lacking:
        return ""
    reasons = "; ".join(
        f"{layer}: {confinement.missing.get(layer, 'not a layer lyra knows')}" for layer in lacking
    )
    return (
        f"the code was not run: this machine cannot confine it as required ({reasons}); "
        "run on a machine with these layers, or do not require them"
    )


class _Channel:
    """This side of the pipe: one primitive call at a time, answered by the trusted process."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Send a call and wait for its reply: ``value``, ``error`` or ``stop``."""
        wire.send(
            self.sock,
            {"call": name, "args": wire.encode(list(args)), "kwargs": wire.encode(kwargs)},
        )
        return wire.receive(self.sock)

    def report(self, fallback: str) -> None:
        """Tell the trusted process what to report should writing the outcome end this process."""
        wire.send(self.sock, {"reporting": fallback})
        wire.receive(self.sock)


def _exception(error: Mapping[str, Any]) -> Exception:
    """The exception a primitive raised on the trusted side, rebuilt with its type and message.

    lyra's typed errors and the builtin exceptions come back as themselves; any other type as
    an exception class of the same name, so feedback reads the same as if it were raised here.
    """
    name = str(error.get("type", "Error"))
    message = str(error.get("message", ""))
    found = getattr(errors, name, None) or getattr(builtins, name, None)
    cls: type[Exception] = (
        found
        if isinstance(found, type) and issubclass(found, Exception)
        else type(name if name.isidentifier() else "Error", (Exception,), {})
    )
    # Not cls(message): lyra's errors take their parts, not the finished message.
    exception = cls.__new__(cls)
    Exception.__init__(exception, message)
    return exception


class _Run:
    """The state of a session: loaded skills, module views, the namespace, the time left.

    A plain run is a session of one block; a console's blocks share the namespace, the skills
    and the time left, and each has its own output and outcome.
    """

    def __init__(
        self,
        skills: Mapping[str, str],
        code_seconds: float,
        channel: _Channel,
        extra_globals: Mapping[str, Any],
        functions: Iterable[str],
        *,
        interactive: bool,
        rules: bool = True,
    ) -> None:
        self.filename = ""
        self.rules = rules
        self.skills = skills
        self.code_seconds = code_seconds
        self.interactive = interactive
        # The code's own time left, over every block: the clock stops between blocks.
        self.left = code_seconds
        # Set as each block starts, and moved on by the time each call out takes: the limit
        # is on the code's own time.
        self.deadline = 0.0
        self.channel = channel
        self.timed_out = False
        # The trusted side's words when it stopped the code (a budget ran out).
        self.stop_feedback = ""
        self.error: BaseException | None = None
        self.output = io.StringIO()
        self.sources: dict[str, list[str]] = {}
        self.skill_code: dict[str, types.CodeType] = {}
        self.skill_modules: dict[str, types.ModuleType] = {}
        self.views: dict[str, types.ModuleType] = {}
        self.builtins = {
            name: value
            for name, value in vars(builtins).items()
            if name not in _REFUSED_BUILTINS or not rules
        }
        self.builtins.update({"__import__": self.import_, "print": self.print_, _TICK: self.tick})
        self.namespace: dict[str, Any] = {
            "__name__": "__lyra_task__",
            **extra_globals,
            **{name: self.stand_in(name) for name in functions},
            "__builtins__": self.builtins,
        }

    # -- before running --------------------------------------------------------------------

    def prepare(self, source: str) -> types.CodeType:
        """Check the code and every skill it reaches; return the task's compiled code."""
        tree = self._parse(source, self.filename)
        if not tree.body:
            raise _Refused(
                "syntax",
                "the answer holds no code: write Python statements that call primitives "
                "from lyra.api or skills from skills.<name>",
            )
        violations = self._check(tree, self.filename)
        if violations:
            lines = [f"{v}{self._quote(v.filename, v.line, _INDENT)}" for v in violations]
            raise _Refused(
                "policy",
                "the code was not run: it breaks the rules for generated code:\n"
                + "\n".join(lines),
            )
        return self._compile(tree, self.filename, interactive=self.interactive)

    def _parse(self, source: str, filename: str) -> ast.Module:
        self.sources[filename] = source.splitlines()
        try:
            return parse_generated(source, filename)
        except SyntaxError as error:
            raise self._syntax_refusal(error, filename) from None
        except OversizedCodeError as error:
            raise _Refused("policy", str(error)) from None

    def _syntax_refusal(self, error: SyntaxError, filename: str) -> _Refused:
        line = error.lineno or 1
        where = (
            f"{filename}:{line}: syntax error: {error.msg}{self._quote(filename, line, _INDENT)}"
        )
        return _Refused("syntax", f"the code does not compile:\n{where}")

    def _compile(
        self, tree: ast.Module, filename: str, *, interactive: bool = False
    ) -> types.CodeType:
        tree = ast.fix_missing_locations(_Ticker().visit(tree))
        try:
            if interactive:
                # As the console compiles its input: expression statements outside functions
                # and classes print their values (through sys.displayhook).
                return compile(ast.Interactive(tree.body), filename, "single", dont_inherit=True)
            return compile(tree, filename, "exec", dont_inherit=True)
        except SyntaxError as error:
            # The compiler catches what the parser lets through ('return' outside a function).
            raise self._syntax_refusal(error, filename) from None

    def _check(self, tree: ast.Module, filename: str) -> list[Violation]:
        """Violations of a module and of every skill module it imports, transitively."""
        violations = check_tree(tree, filename) if self.rules else []
        for node in ast.walk(tree):
            if self.rules and isinstance(node, ast.Attribute) and node.attr in _REFUSED_ATTRIBUTES:
                violations.append(
                    Violation(
                        filename,
                        node.lineno,
                        f"attribute '{node.attr}' is not allowed: it reaches files or the "
                        "interpreter's frames",
                    )
                )
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skills."):
                violations.extend(self._load_skill(node.module or "", filename, node.lineno))
        return sorted(violations, key=lambda v: (v.filename != filename, v.filename, v.line))

    def _load_skill(self, module: str, importer: str, line: int) -> list[Violation]:
        name = module.split(".")[1]
        filename = f"skills/{name}.py"
        if filename in self.sources:  # already checked, or being checked (an import cycle)
            return []
        if name not in self.skills:
            return [Violation(importer, line, str(UnknownSkillError(name, self.skills)))]
        tree = self._parse(self.skills[name], filename)
        violations = self._check(tree, filename)
        if not violations:
            self.skill_code[name] = self._compile(tree, filename)
        return violations

    # -- while running ---------------------------------------------------------------------

    def run(self, source: str, filename: str) -> tuple[ErrorKind | None, str]:
        """Check and run one block; return the error kind (None when it ran) and the feedback.

        The block runs in the namespace the earlier blocks left. A stop or a timeout ends the
        session: the trusted process sends no more blocks after one.
        """
        self.filename = filename
        self.output = io.StringIO()
        self.error = None
        self.deadline = time.monotonic() + self.left
        kind: ErrorKind | None
        try:
            code = self.prepare(source)
        except _Refused as refusal:
            kind, feedback = refusal.kind, refusal.feedback
        else:
            try:
                # Before the code starts: a block without loops or calls would never check.
                self.tick()
                exec(code, self.namespace)
            except BaseException as error:  # everything the code raises becomes feedback
                self.error = error
            # Counted too: a hostile __str__ runs while the outcome is written.
            kind, feedback = self.outcome()
        self.left = self.deadline - time.monotonic()
        return kind, feedback

    def stand_in(self, name: str) -> Callable[..., Any]:
        """A primitive's or a trusted function's stand-in: a call to the trusted process."""

        def call(*args: Any, **kwargs: Any) -> Any:
            self.tick()
            started = time.monotonic()
            reply = self.channel.call(name, args, kwargs)
            # Time inside the primitive is the backend's, not the code's.
            self.deadline += time.monotonic() - started
            if "stop" in reply:
                self.stop_feedback = str(reply["stop"])
                raise _BudgetExceeded(name)
            if "error" in reply:
                raise _exception(reply["error"])
            return wire.decode(reply["value"])

        call.__name__ = call.__qualname__ = name
        if name in api.PRIMITIVES:
            call.__doc__ = getattr(api, name).__doc__
        return call

    def tick(self) -> None:
        """Stop the code once past the deadline.

        It returns None, which a console prints nothing for where the check is a statement of
        its own.
        """
        if time.monotonic() > self.deadline:
            self.timed_out = True
            raise _Timeout()

    def display(self, value: object) -> None:
        """Print an expression statement's value as the console does (None prints nothing)."""
        if value is not None:
            self.print_(repr(value))

    def print_(self, *values: object, sep: str | None = " ", end: str | None = "\n") -> None:
        """Collect what the code prints instead of writing to the terminal."""
        if self.output.tell() < MAX_OUTPUT_CHARS:
            builtins.print(*values, sep=sep, end=end, file=self.output)

    def import_(
        self,
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Iterable[str] | None = (),
        level: int = 0,
    ) -> types.ModuleType:
        """``__import__`` for generated code: checked skills and views of allowed modules.

        With the rules off, any other module as it is.
        """
        root = name.partition(".")[0]
        if level == 0 and root == "skills" and fromlist:
            skill = name.partition(".")[2]
            if skill in self.skill_modules:
                return self.skill_modules[skill]
            if skill in self.skill_code:
                return self._run_skill(skill)
        elif level == 0 and name == "lyra.api":
            return self._primitives()
        elif not self.rules:
            return builtins.__import__(name, globals, locals, tuple(fromlist or ()), level)
        elif level == 0 and root in ALLOWED_MODULES and not _hidden_module(name):
            module = importlib.import_module(name)
            return _view(module if fromlist else importlib.import_module(root), self.views)
        elif level == 0 and root in ALLOWED_MODULES and not fromlist and name in sys.modules:
            # numpy's C code imports its private parts on first use (ndarray.sum imports
            # numpy._core._methods) through the __import__ of the frame that runs, for the
            # side effect only, then takes the module from sys.modules itself. The zygote
            # loaded them all; what `import a._b` binds is the view of `a`.
            return _view(importlib.import_module(root), self.views)
        raise ImportError(f"importing '{name}' is not allowed here")

    def _primitives(self) -> types.ModuleType:
        """``lyra.api`` as generated code sees it: the value types, and stand-ins that call out."""
        if "lyra.api" not in self.views:
            view = types.ModuleType("lyra.api", api.__doc__)
            for attr in api.__all__:
                setattr(
                    view,
                    attr,
                    self.stand_in(attr) if attr in api.PRIMITIVES else getattr(api, attr),
                )
            self.views["lyra.api"] = view
        return self.views["lyra.api"]

    def _run_skill(self, name: str) -> types.ModuleType:
        module = types.ModuleType(f"skills.{name}")
        module.__dict__["__builtins__"] = self.builtins
        # Registered before it runs, as Python does, so that import cycles end.
        self.skill_modules[name] = module
        exec(self.skill_code[name], module.__dict__)
        return module

    # -- after running ---------------------------------------------------------------------

    def outcome(self) -> tuple[ErrorKind | None, str]:
        """The error kind and feedback for a finished run (the code may have caught a stop)."""
        where = self._trace(self.error)
        if self.timed_out:
            # No location: where the deadline catches a loop depends on timing, and feedback
            # must be the same on every run for a recorded session to replay.
            return "timeout", (
                f"the code ran longer than the {self.code_seconds:g} s limit and was stopped; "
                "look for a loop that never ends"
            )
        if self.stop_feedback:
            return "budget", self.stop_feedback + where
        if self.error is not None:
            name = _plain(_CLASS_NAME.__get__(type(self.error)), _NAME_CHARS)
            before, after = (self._traceback(self.error), "") if self.interactive else ("", where)
            # The code's own __str__ runs next: it may end this process (os._exit) or never
            # return (a loop in C), and then the trusted process reports the rest.
            self.channel.report(f"{before}{name}{after}")
            text = _message(self.error)
            last = f"{name}: {text}" if text else name
            return "exception", before + last + after
        return None, ""

    def _frames(self, error: BaseException | None) -> list[tuple[str, int, str]]:
        """The generated-code frames an exception passed through: (file, line, function)."""
        if error is None:
            return []
        return [
            (frame.filename, frame.lineno, frame.name)
            for frame in traceback.extract_tb(_TRACEBACK.__get__(error))
            if frame.filename in self.sources and frame.lineno is not None
        ]

    def _trace(self, error: BaseException | None) -> str:
        """The generated-code frames an exception passed through, outermost first."""
        lines = []
        for filename, line, name in self._frames(error):
            function = "" if name == "<module>" else f" in {name}"
            quote = self._quote(filename, line, ": ")
            lines.append(f"\n  at {filename}:{line}{function}{quote}")
        return "".join(lines)

    def _traceback(self, error: BaseException) -> str:
        """The generated-code frames an exception passed through, as the console prints them."""
        summary = traceback.StackSummary.from_list(
            [
                traceback.FrameSummary(
                    filename, line, name, lookup_line=False, line=self._quote(filename, line, "")
                )
                for filename, line, name in self._frames(error)
            ]
        )
        rows = summary.format()  # Python's own rows: a run of one frame is cut to three
        if len(rows) > 2 * _EDGE_FRAMES:
            rows[_EDGE_FRAMES:-_EDGE_FRAMES] = [
                f"  [... {len(rows) - 2 * _EDGE_FRAMES} more frames ...]\n"
            ]
        return "Traceback (most recent call last):\n" + "".join(rows)

    def _quote(self, filename: str, line: int, separator: str) -> str:
        """The source line at ``filename:line``, stripped, after ``separator``; "" if none."""
        source = self.sources.get(filename, [])
        text = source[line - 1].strip() if 0 < line <= len(source) else ""
        return f"{separator}{text}" if text else ""


def _message(error: BaseException) -> str:
    """An exception's text, cut, or "" when its ``__str__`` fails, loops or returns no string.

    A looping ``__str__`` written by the code stops at the deadline's tick.
    """
    try:
        text = str(error)
    except BaseException:  # a hostile __str__: raise, SystemExit, the deadline's stop
        return ""
    if issubclass(type(error), OSError):
        # Read from the slot, past any property a subclass defines.
        number = vars(OSError)["errno"].__get__(error)
        call = refused_call(number) if type(number) is int else None
        if call is not None:
            text = str.replace(text, f"Unknown error {number}", f"the sandbox refused {call}")
    return _plain(text, _MESSAGE_CHARS)


def _plain(text: object, limit: int) -> str:
    """A string's first ``limit`` characters; "" for anything else.

    A str subclass is copied as a plain str without calling any method it defines
    (``__format__``, ``__len__``, ``__getitem__``).
    """
    return str.__str__(text)[:limit] if issubclass(type(text), str) else ""


def _view(module: types.ModuleType, views: dict[str, types.ModuleType]) -> types.ModuleType:
    """The module as generated code sees it: public names, other modules only as views.

    A fresh copy per run (``views`` holds a run's), so an assignment such as ``math.pi = 3``
    stays in the run.
    """
    name = module.__name__
    if name in views:
        return views[name]
    view = types.ModuleType(name, module.__doc__)
    views[name] = view
    hidden = _HIDDEN_NAMES.get(name, frozenset())
    for attr in getattr(module, "__all__", None) or dir(module):
        if attr.startswith("_") or attr in hidden:
            continue
        value = getattr(module, attr)
        if isinstance(value, types.ModuleType):
            # dataclasses.sys, typing.sys and the like lead to every other module.
            if value.__name__.partition(".")[0] not in ALLOWED_MODULES:
                continue
            value = _view(value, views)
        setattr(view, attr, value)
    return view


def preload() -> None:
    """Import now all that generated code can reach of the allowed modules, in the zygote.

    Some import parts of themselves on first use (numpy its submodules), and a worker, as a
    uid of its own, may not be able to read Python's files (a Python installed in root's home).
    """
    for name in ALLOWED_MODULES:
        _view(importlib.import_module(name), {})


def _hidden_module(name: str) -> bool:
    """A submodule generated code may not import: private, or hidden in its parent."""
    parts = name.split(".")
    return any(
        part.startswith("_") or part in _HIDDEN_NAMES.get(".".join(parts[:i]), ())
        for i, part in enumerate(parts[1:], start=1)
    )


class _Ticker(ast.NodeTransformer):
    """Put a deadline check at the top of every block that can run again or catch a stop."""

    def _prepend(self, body: list[ast.stmt]) -> None:
        if not body:
            return
        # After a docstring, so that the function keeps it.
        first = body[0]
        at = int(
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        )
        anchor = body[min(at, len(body) - 1)]
        body.insert(at, ast.copy_location(ast.Expr(_tick_call(anchor)), anchor))

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        if isinstance(
            node,
            ast.While
            | ast.For
            | ast.AsyncFor
            | ast.FunctionDef
            | ast.AsyncFunctionDef
            | ast.ExceptHandler,
        ):
            self._prepend(node.body)
        elif isinstance(node, ast.Try | ast.TryStar):
            self._prepend(node.finalbody)
        elif isinstance(node, ast.comprehension):
            # `not None`: the filter keeps every item.
            check = ast.UnaryOp(ast.Not(), _tick_call(node.iter))
            node.ifs.insert(0, ast.copy_location(check, node.iter))
        return node


def _tick_call(anchor: ast.AST) -> ast.Call:
    return ast.copy_location(ast.Call(ast.Name(_TICK, ast.Load()), [], []), anchor)
