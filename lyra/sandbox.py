"""Run generated plan code against an embodiment, and turn every way it can fail into feedback.

Code an LLM wrote, and the skill modules it imports (also LLM-written), are untrusted. Before
anything runs, each module is parsed, checked against :mod:`lyra.policy` and a few sandbox rules,
and every ``skills.*`` import is resolved to an existing module; while it runs, it sees builtins
without I/O or reflection, an import function that admits only the allow-listed modules (as
read-only views of their public names), a wall-clock limit and a primitive-call budget.

Why a worker thread and instrumented code, not a subprocess: the embodiment (a pybullet client,
a MuJoCo model, a franky connection) lives in this process and must be driven from here. So the
code runs in a worker thread, and every loop body, function body, comprehension and ``except`` or
``finally`` block of the generated code first calls a tick that raises :class:`_Timeout` past the
deadline. The tick also runs at the top of each handler, so even a bare ``except:`` cannot keep
the code alive. What no in-process mechanism can stop is a single C call that never returns (for
example ``sum(itertools.count())``) or a primitive that hangs: the caller still gets its result
after the limit plus a grace period, marked ``abandoned``, and must discard that embodiment.

This guards against a model's mistakes and the known ways out of a Python namespace; it is not
a boundary against a determined adversary. Teach untrusted models inside a container.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import io
import threading
import time
import traceback
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lyra.embodiment import use
from lyra.library.errors import UnknownSkillError
from lyra.library.parse import skill_paths
from lyra.policy import ALLOWED_MODULES, FORBIDDEN_NAMES, Violation, check_tree

ErrorKind = Literal["policy", "syntax", "timeout", "budget", "exception"]

MAX_SOURCE_BYTES = 100_000
MAX_OUTPUT_CHARS = 20_000
# How long past the deadline the caller waits for a worker stuck outside the generated code.
GRACE_S = 2.0

_TICK = "__lyra_tick__"
# Feedback quotes a source line under the message that points at it.
_INDENT = "\n    "

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
            primitive calls) or ``exception``.
        output: what the code printed, cut at MAX_OUTPUT_CHARS.
        abandoned: the worker could not be stopped (stuck in a primitive or a C call) and may
            still be driving the embodiment; do not use that embodiment again.
    """

    ok: bool
    feedback: str
    primitive_calls: int
    wall_s: float
    error: ErrorKind | None = None
    output: str = ""
    abandoned: bool = False


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


def run_code(
    source: str,
    embodiment: object,
    *,
    filename: str = "<task>",
    skills_root: Path | None = None,
    timeout_s: float = 300.0,
    max_primitive_calls: int = 1000,
    extra_globals: Mapping[str, Any] | None = None,
) -> RunResult:
    """Check generated code and run it with an embodiment active; never raises for bad code.

    Args:
        source: the code, as the LLM answered it.
        embodiment: an embodiment, or a backend env carrying one (as ``lyra.use`` accepts).
        filename: how feedback names the code.
        skills_root: the folder of skill modules that ``from skills.<name> import <name>``
            reads (a workspace's ``skills/``); None: no skills exist.
        timeout_s: wall-clock limit for the run, in seconds.
        max_primitive_calls: how many lyra.api primitives the code may call.
        extra_globals: names the caller puts in the code's namespace (trusted values).

    Returns:
        The outcome, with feedback text the LLM can act on when it is not ok.
    """
    start = time.monotonic()
    run = _Run(filename, skills_root, start + timeout_s, max_primitive_calls)
    try:
        code = run.prepare(source)
    except _Refused as refusal:
        return RunResult(False, refusal.feedback, 0, time.monotonic() - start, refusal.kind)
    namespace: dict[str, Any] = {"__name__": "__lyra_task__", **(extra_globals or {})}
    namespace["__builtins__"] = run.builtins
    worker = threading.Thread(
        target=run.execute, args=(code, namespace, embodiment), name="lyra-sandbox", daemon=True
    )
    worker.start()
    worker.join(timeout_s + GRACE_S)
    wall = time.monotonic() - start
    output = run.output.getvalue()[:MAX_OUTPUT_CHARS]
    if worker.is_alive():
        feedback = (
            f"the code did not stop within {timeout_s:g} s: it is stuck inside a primitive "
            "or a library call; make the plan shorter and avoid endless iterators"
        )
        return RunResult(False, feedback, run.calls, wall, "timeout", output, abandoned=True)
    kind, feedback = run.outcome(timeout_s)
    return RunResult(kind is None, feedback, run.calls, wall, kind, output)


class _Run:
    """The state of one run: loaded skills, module views, the counters and the outcome."""

    def __init__(
        self, filename: str, skills_root: Path | None, deadline: float, budget: int
    ) -> None:
        self.filename = filename
        self.skills_root = skills_root
        self.deadline = deadline
        self.budget = budget
        self.calls = 0
        self.timed_out = False
        self.over_budget = False
        self.error: BaseException | None = None
        self.output = io.StringIO()
        self.sources: dict[str, list[str]] = {}
        self.skill_code: dict[str, types.CodeType] = {}
        self.skill_modules: dict[str, types.ModuleType] = {}
        self.views: dict[str, types.ModuleType] = {}
        self.builtins = {
            name: value for name, value in vars(builtins).items() if name not in _REFUSED_BUILTINS
        }
        self.builtins.update({"__import__": self.import_, "print": self.print_, _TICK: self.tick})

    # -- before running --------------------------------------------------------------------

    def prepare(self, source: str) -> types.CodeType:
        """Check the code and every skill it reaches; return the task's compiled code."""
        size = len(source.encode("utf-8"))
        if size > MAX_SOURCE_BYTES:
            raise _Refused(
                "policy",
                f"the answer is {size} bytes, over the {MAX_SOURCE_BYTES}-byte limit: "
                "answer with the plan code only, without data or repeated text",
            )
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
        return self._compile(tree, self.filename)

    def _parse(self, source: str, filename: str) -> ast.Module:
        self.sources[filename] = source.splitlines()
        try:
            return ast.parse(source, filename=filename)
        except SyntaxError as error:
            raise self._syntax_refusal(error, filename) from None

    def _syntax_refusal(self, error: SyntaxError, filename: str) -> _Refused:
        line = error.lineno or 1
        where = (
            f"{filename}:{line}: syntax error: {error.msg}{self._quote(filename, line, _INDENT)}"
        )
        return _Refused("syntax", f"the code does not compile:\n{where}")

    def _compile(self, tree: ast.Module, filename: str) -> types.CodeType:
        tree = ast.fix_missing_locations(_Ticker().visit(tree))
        try:
            return compile(tree, filename, "exec", dont_inherit=True)
        except SyntaxError as error:
            # The compiler catches what the parser lets through ('return' outside a function).
            raise self._syntax_refusal(error, filename) from None

    def _check(self, tree: ast.Module, filename: str) -> list[Violation]:
        """Violations of a module and of every skill module it imports, transitively."""
        violations = check_tree(tree, filename)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in _REFUSED_ATTRIBUTES:
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
        root = self.skills_root
        known = [path.stem for path in skill_paths(root)] if root else []
        if root is None or name not in known:
            return [Violation(importer, line, str(UnknownSkillError(name, known)))]
        tree = self._parse((root / f"{name}.py").read_text("utf-8"), filename)
        violations = self._check(tree, filename)
        if not violations:
            self.skill_code[name] = self._compile(tree, filename)
        return violations

    # -- while running ---------------------------------------------------------------------

    def execute(self, code: types.CodeType, namespace: dict[str, Any], embodiment: object) -> None:
        """Run the task code with the embodiment active (in the worker thread)."""
        try:
            # The active embodiment is a context variable, so it is set in this thread.
            with use(embodiment, on_call=self.count):
                exec(code, namespace)
        except BaseException as error:  # everything the code raises becomes feedback
            self.error = error

    def count(self, primitive: str) -> None:
        """Count a primitive call; stop the code past the budget or the deadline."""
        self.tick()
        if self.calls >= self.budget:
            self.over_budget = True
            raise _BudgetExceeded(primitive)
        self.calls += 1

    def tick(self) -> bool:
        """Stop the code once past the deadline; true otherwise (it also sits in `if`s)."""
        if time.monotonic() > self.deadline:
            self.timed_out = True
            raise _Timeout()
        return True

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
        """``__import__`` for generated code: checked skills and views of allowed modules."""
        root = name.partition(".")[0]
        if level == 0 and root == "skills" and fromlist:
            skill = name.partition(".")[2]
            if skill in self.skill_modules:
                return self.skill_modules[skill]
            if skill in self.skill_code:
                return self._run_skill(skill)
        elif (
            level == 0
            and (name == "lyra.api" or root in ALLOWED_MODULES)
            and not _hidden_module(name)
        ):
            module = importlib.import_module(name)
            return self._view(module if fromlist else importlib.import_module(root))
        raise ImportError(f"importing '{name}' is not allowed here")

    def _run_skill(self, name: str) -> types.ModuleType:
        module = types.ModuleType(f"skills.{name}")
        module.__dict__["__builtins__"] = self.builtins
        # Registered before it runs, as Python does, so that import cycles end.
        self.skill_modules[name] = module
        exec(self.skill_code[name], module.__dict__)
        return module

    def _view(self, module: types.ModuleType) -> types.ModuleType:
        """The module as generated code sees it: public names, other modules only as views.

        A fresh copy per run, so an assignment such as ``math.pi = 3`` stays in the run.
        """
        name = module.__name__
        if name in self.views:
            return self.views[name]
        view = types.ModuleType(name, module.__doc__)
        self.views[name] = view
        hidden = _HIDDEN_NAMES.get(name, frozenset())
        for attr in getattr(module, "__all__", None) or dir(module):
            if attr.startswith("_") or attr in hidden:
                continue
            value = getattr(module, attr)
            if isinstance(value, types.ModuleType):
                # dataclasses.sys, typing.sys and the like lead to every other module.
                if value.__name__.partition(".")[0] not in ALLOWED_MODULES:
                    continue
                value = self._view(value)
            setattr(view, attr, value)
        return view

    # -- after running ---------------------------------------------------------------------

    def outcome(self, timeout_s: float) -> tuple[ErrorKind | None, str]:
        """The error kind and feedback for a finished run (the code may have caught a stop)."""
        where = self._trace(self.error)
        if self.timed_out:
            # No location: where the deadline catches a loop depends on timing, and feedback
            # must be the same on every run for a recorded session to replay.
            return "timeout", (
                f"the code ran longer than the {timeout_s:g} s limit and was stopped; "
                "look for a loop that never ends"
            )
        if self.over_budget:
            return "budget", (
                f"the code called more than {self.budget} primitives (the limit) and was "
                f"stopped; look for a loop that repeats primitive calls{where}"
            )
        if self.error is not None:
            error = self.error
            message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            return "exception", message + where
        return None, ""

    def _trace(self, error: BaseException | None) -> str:
        """The generated-code frames an exception passed through, outermost first."""
        if error is None:
            return ""
        lines = []
        for frame in traceback.extract_tb(error.__traceback__):
            if frame.filename not in self.sources or frame.lineno is None:
                continue
            function = "" if frame.name == "<module>" else f" in {frame.name}"
            quote = self._quote(frame.filename, frame.lineno, ": ")
            lines.append(f"\n  at {frame.filename}:{frame.lineno}{function}{quote}")
        return "".join(lines)

    def _quote(self, filename: str, line: int, separator: str) -> str:
        """The source line at ``filename:line``, stripped, after ``separator``; "" if none."""
        source = self.sources.get(filename, [])
        text = source[line - 1].strip() if 0 < line <= len(source) else ""
        return f"{separator}{text}" if text else ""


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
            node.ifs.insert(0, _tick_call(node.iter))
        return node


def _tick_call(anchor: ast.AST) -> ast.Call:
    return ast.copy_location(ast.Call(ast.Name(_TICK, ast.Load()), [], []), anchor)
