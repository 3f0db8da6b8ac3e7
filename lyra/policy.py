"""The allow-list all generated code must pass, shared by the skill library and the sandbox.

Skills and plans may import only primitives (``lyra.api``), other skills (``skills.<name>``) and a
few pure, deterministic standard modules. ``random`` is left out on purpose: a regression re-check
replays a seed and compares final poses, so a skill must not draw numbers of its own; the scene's
seed already varies what needs varying. Reflection and I/O builtins and dunder attributes are
refused because they reach past the facade into the interpreter or the file system.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from lyra.errors import LyraError

# Generated code beyond these is refused before any parser but the first has read it: a
# 30,000-term expression keeps libcst busy for minutes and overflows the compiler's stack.
MAX_SOURCE_BYTES = 100_000
MAX_NESTING = 100

# Standard and numeric modules a skill may import, by their top-level package.
ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "collections",
        "dataclasses",
        "functools",
        "itertools",
        "math",
        "numpy",
        "typing",
    }
)

# Each forbidden builtin, with what to do instead.
FORBIDDEN_NAMES: dict[str, str] = {
    "open": "skills cannot read or write files; get the scene from lyra.api (world_state, "
    "object_pose) and take other data as parameters",
    "exec": "write the code directly in the skill",
    "eval": "write the expression directly in the skill",
    "compile": "write the code directly in the skill",
    "__import__": "import at the top of the module: `from lyra.api import ...` or "
    "`from skills.<name> import <name>`",
    "globals": "pass values as parameters and return results",
    "locals": "pass values as parameters and return results",
    "vars": "read attributes by name (obj.x) or pass a dict",
    "getattr": "read the attribute by name (obj.x)",
    "setattr": "assign the attribute by name (obj.x = ...)",
    "delattr": "skills do not delete attributes; build a new value instead",
    "input": "skills cannot ask the person; take the value as a parameter",
    "breakpoint": "remove the debugging call",
}


# Names that turn strings into code (typing's forward references are evaluated as Python), each
# with what to do instead. A string built at run time gets past every rule on names here.
EVALUATORS: dict[str, str] = {
    "get_type_hints": "skills do not read type hints at run time",
    "ForwardRef": "write the type itself, not a string",
    "_evaluate": "write the type itself, not a string",
    "_eval_type": "write the type itself, not a string",
    "evaluate_forward_ref": "write the type itself, not a string",
    "singledispatch": "choose with isinstance() instead: dispatch evaluates annotations",
    "singledispatchmethod": "choose with isinstance() instead: dispatch evaluates annotations",
}
# Methods whose template can read attributes and items of their arguments ("{0.x[k]}").
TEMPLATE_METHODS = frozenset({"format", "format_map"})


@dataclass(frozen=True)
class Violation:
    """One place where code breaks the allow-list, with what to do instead."""

    filename: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}: {self.message}"


class OversizedCodeError(LyraError):
    """Generated code too large or too deeply nested to be read; the message says how to fix it."""


def parse_generated(source: str, filename: str = "<code>") -> ast.Module:
    """Parse generated code, refusing what is too large or nested too deep for the tools after.

    Raises:
        OversizedCodeError: over MAX_SOURCE_BYTES, or nested deeper than MAX_NESTING.
        SyntaxError: the code does not parse (null bytes included).
    """
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise OversizedCodeError(
            f"the answer is {size} bytes, over the {MAX_SOURCE_BYTES}-byte limit: answer with "
            "the code only, without data or repeated text"
        )
    too_deep = (
        f"{filename} nests deeper than {MAX_NESTING} levels: write flatter code (a loop over a "
        "list instead of one long expression, fewer nested blocks)"
    )
    try:
        tree = ast.parse(source, filename=filename)
    except (RecursionError, MemoryError):
        raise OversizedCodeError(too_deep) from None
    except ValueError as error:  # null bytes, on some Python versions
        raise SyntaxError(str(error)) from None
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            raise OversizedCodeError(too_deep)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def check_source(source: str, filename: str = "<skill>") -> list[Violation]:
    """Return every allow-list violation in a module's source, in line order.

    A module that does not parse yields one violation naming the syntax error.

    Args:
        source: the module's text.
        filename: how messages name the module.
    """
    try:
        tree = parse_generated(source, filename)
    except SyntaxError as error:
        return [Violation(filename, error.lineno or 1, f"syntax error: {error.msg}")]
    except OversizedCodeError as error:
        return [Violation(filename, 1, str(error))]
    return check_tree(tree, filename)


def check_tree(tree: ast.Module, filename: str = "<skill>") -> list[Violation]:
    """Return every allow-list violation in an already parsed module, in line order."""
    checker = _Checker(filename)
    checker.visit(tree)
    return sorted(checker.violations, key=lambda v: v.line)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _skill_import_problem(module: str, names: list[ast.alias]) -> str | None:
    parts = module.split(".")
    if len(parts) != 2:
        return (
            f"import a skill as `from skills.<name> import <name>`, not from '{module}': "
            "each skill is its own module"
        )
    skill = parts[1]
    wrong = [alias.name for alias in names if alias.name != skill]
    if wrong:
        return (
            f"skills.{skill} exports only the skill '{skill}', not '{wrong[0]}': "
            f"write `from skills.{skill} import {skill}`"
        )
    return None


class _Checker(ast.NodeVisitor):
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.violations: list[Violation] = []

    def _add(self, node: ast.stmt | ast.expr | ast.pattern, message: str) -> None:
        self.violations.append(Violation(self.filename, node.lineno, message))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root in ("lyra", "skills"):
                target = (
                    "from lyra.api import ..."
                    if root == "lyra"
                    else "from skills.<name> import <name>"
                )
                self._add(node, f"`import {alias.name}` is not allowed: write `{target}`")
            elif root not in ALLOWED_MODULES:
                self._add(node, _unknown_module(alias.name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self._add(
                node,
                "relative imports are not allowed: write `from skills.<name> import <name>` "
                "or `from lyra.api import ...`",
            )
        elif any(alias.name == "*" for alias in node.names):
            self._add(node, f"`from {module} import *` is not allowed: import the names you use")
        elif module == "skills" or module.startswith("skills."):
            problem = _skill_import_problem(module, node.names)
            if problem:
                self._add(node, problem)
        elif module.split(".")[0] == "lyra" and module != "lyra.api":
            self._add(node, f"'{module}' is not for skills: import primitives from lyra.api")
        elif module.split(".")[0] not in ALLOWED_MODULES | {"lyra"}:
            self._add(node, _unknown_module(module))
        for alias in node.names:
            if alias.name in EVALUATORS:
                self._add(node, _evaluator(alias.name))

    def visit_Name(self, node: ast.Name) -> None:
        advice = FORBIDDEN_NAMES.get(node.id)
        if advice is not None:
            self._add(node, f"'{node.id}' is not allowed in skills: {advice}")
        elif _is_dunder(node.id):
            self._add(node, f"'{node.id}' is not allowed: dunder names reach interpreter internals")
        elif node.id in EVALUATORS:
            self._add(node, _evaluator(node.id))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _is_dunder(node.attr):
            self._add(node, _dunder_attribute(node.attr))
        elif node.attr in EVALUATORS:
            self._add(node, _evaluator(node.attr))
        elif node.attr in TEMPLATE_METHODS:
            template = node.value
            text = template.value if isinstance(template, ast.Constant) else None
            if not isinstance(text, str):
                self._add(
                    node,
                    f"`.{node.attr}` is allowed only on a string written in the code: its "
                    "template can read any attribute of its arguments; use an f-string",
                )
            elif "__" in text:
                self._add(
                    node,
                    f"this `.{node.attr}` template names an interpreter internal (`__`): "
                    "use an f-string",
                )
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # `case object(__globals__=g)` reads the attribute as `.` would.
        for name in node.kwd_attrs:
            if _is_dunder(name):
                self._add(node, _dunder_attribute(name))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        # The way around the rule on dunder attributes: helpers that look names up by string.
        if isinstance(node.value, str) and _is_dunder(node.value) and node.value.isidentifier():
            self._add(
                node,
                f"the string '{node.value}' names an interpreter internal: skills do not look "
                "attributes up by name",
            )

    def visit_Global(self, node: ast.Global) -> None:
        self._add(node, "`global` is not allowed: skills keep no state; pass values as parameters")

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self._add(node, "`nonlocal` is not allowed: return the new value instead")


def _dunder_attribute(name: str) -> str:
    return (
        f"attribute '{name}' is not allowed: dunder attributes reach interpreter internals; "
        "use the value's public attributes"
    )


def _evaluator(name: str) -> str:
    return f"'{name}' is not allowed in skills: it runs strings as code; {EVALUATORS[name]}"


def _unknown_module(module: str) -> str:
    allowed = ", ".join(sorted(ALLOWED_MODULES - {"__future__"}))
    return (
        f"module '{module}' is not allowed in skills: use lyra.api for the robot, "
        f"skills.<name> for other skills, or one of {allowed}"
    )
