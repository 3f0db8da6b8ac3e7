"""Read every module of a skills folder with libcst into :class:`SkillRecord` values.

A module that does not parse, or that breaks the one-public-skill-per-module rule, is reported as
a typed problem and the rest of the library is still read.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from lyra.library import SkillRecord
from lyra.library.errors import (
    SkillModuleError,
    SkillShapeError,
    SkillSyntaxError,
    UnknownSkillError,
)

PRIMITIVES_MODULE = "lyra.api"


def syntax_problem(text: str, error: cst.ParserSyntaxError) -> tuple[int, str]:
    """Return the line and message of a syntax error, in Python's own words where it has any.

    CPython's messages ("'(' was never closed") read better than the parser's token lists.
    """
    try:
        ast.parse(text)
    except SyntaxError as python_error:
        return python_error.lineno or 1, python_error.msg
    return error.raw_line, error.message


def source_hash(text: str) -> str:
    """Return the sha256 hex digest of a module's text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def skill_paths(skills_dir: Path) -> list[Path]:
    """Return the skill modules of a folder, sorted; files starting with '_' are not skills."""
    return sorted(p for p in skills_dir.glob("*.py") if not p.name.startswith("_"))


def dotted_name(node: cst.BaseExpression) -> str:
    """Return the dotted text of a Name/Attribute chain such as ``lyra.api``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    raise TypeError(f"not a dotted name: {type(node).__name__}")


def _import_froms(module: cst.Module) -> Iterator[tuple[str, cst.ImportFrom]]:
    """Yield (module name, statement) for each absolute top-level ``from X import a, b``."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.ImportFrom)
                and small.module is not None
                and not small.relative
            ):
                yield dotted_name(small.module), small


def imported_names(module: cst.Module, source: str) -> list[str]:
    """Return the names that ``from <source> import ...`` statements bring in, in order."""
    return [
        dotted_name(alias.name)
        for name, statement in _import_froms(module)
        if name == source and not isinstance(statement.names, cst.ImportStar)
        for alias in statement.names
    ]


def imported_skills(module: cst.Module) -> list[str]:
    """Return the skills a module imports with ``from skills.<name> import <name>``."""
    found: list[str] = []
    for name, _ in _import_froms(module):
        parts = name.split(".")
        if len(parts) == 2 and parts[0] == "skills":
            found.append(parts[1])
    return found


def find_function(module: cst.Module, name: str) -> cst.FunctionDef | None:
    """Return the top-level function called ``name``, if the module defines one."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            return statement
    return None


def signature_text(module: cst.Module, function: cst.FunctionDef) -> str:
    """Return a function's ``def`` line(s) as written, up to and including the colon."""
    stub = function.with_changes(
        body=cst.SimpleStatementSuite([cst.Expr(cst.Ellipsis())]),
        leading_lines=(),
        decorators=(),
    )
    return module.code_for_node(stub).removesuffix(" ...\n")


def header_text(signature: str, docstring: str) -> str:
    """Return what a prompt shows of a skill: its signature and its docstring, indented."""
    if not docstring:
        return signature
    lines = docstring.splitlines()
    body = "\n".join(f"    {line}" if line else "" for line in lines)
    closing = '\n    """' if len(lines) > 1 else '"""'
    return f'{signature}\n    """{body.removeprefix("    ")}{closing}'


def brief_header(signature: str, docstring: str) -> str:
    """Return what a prompt that only calls a skill shows of it: the short form of its header.

    The signature (each parameter's name and type) and the docstring's first paragraph (what
    the behaviour is). What each parameter means stays in the module, which the prompt for
    extending the skill shows whole; a call in an example's task code shows how it is used.
    """
    summary = re.split(r"\n[ \t]*\n", docstring.strip(), maxsplit=1)[0]
    return header_text(signature, summary)


def shape_problems(module: cst.Module, name: str) -> list[tuple[cst.CSTNode | None, str]]:
    """Return where and how a module breaks the one-public-skill-per-module rule.

    Each problem is (the offending node, or None for the whole module; what to do).

    Args:
        module: the parsed module.
        name: the skill's name, which is the module's file name.
    """
    problems: list[tuple[cst.CSTNode | None, str]] = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef | cst.ClassDef):
            other = statement.name.value
            if other != name and not other.startswith("_"):
                kind = "class" if isinstance(statement, cst.ClassDef) else "function"
                problems.append(
                    (
                        statement,
                        f"public {kind} '{other}' beside the skill '{name}': make it a private "
                        f"helper ('_{other}') or move it to skills/{other}.py",
                    )
                )
    function = find_function(module, name)
    if function is None:
        problems.insert(
            0,
            (
                None,
                f"no function named '{name}': a skill module defines one public function named "
                "like its file; rename the function or the file",
            ),
        )
        return problems
    docstring = function.get_docstring(clean=True)
    if not docstring:
        problems.append(
            (
                function,
                f"skill '{name}' has no docstring: start its body with a docstring whose first "
                "line says what the skill does, then an Args: section",
            )
        )
    elif _has_parameters(function) and "Args:" not in docstring.splitlines():
        problems.append(
            (
                function,
                f"the docstring of '{name}' has no Args: section: describe each parameter "
                "under 'Args:'",
            )
        )
    return problems


def _has_parameters(function: cst.FunctionDef) -> bool:
    params = function.params
    return bool(
        params.params
        or params.posonly_params
        or params.kwonly_params
        or isinstance(params.star_arg, cst.Param)
        or params.star_kwarg
    )


def node_lines(module: cst.Module, nodes: list[cst.CSTNode | None]) -> list[int]:
    """Return the 1-based first line of each node (1 for None).

    Positions cost a metadata pass, so callers ask only when they have a problem to report.
    """
    if not nodes:
        return []
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    return [1 if node is None else positions[node].start.line for node in nodes]


def parse_module(path: Path, text: str) -> SkillRecord:
    """Read one skill module's text into a record.

    Raises:
        SkillSyntaxError: the module does not parse.
        SkillShapeError: the module breaks the one-public-skill-per-module rule.
    """
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        line, message = syntax_problem(text, error)
        raise SkillSyntaxError(path, line, f"syntax error: {message}") from error
    name = path.stem
    problems = shape_problems(module, name)
    function = find_function(module, name)
    if problems or function is None:
        line = node_lines(module, [problems[0][0]])[0]
        raise SkillShapeError(path, line, problems[0][1])
    signature = signature_text(module, function)
    docstring = function.get_docstring(clean=True) or ""
    return SkillRecord(
        name=name,
        path=path,
        signature=signature,
        docstring=docstring,
        header=header_text(signature, docstring),
        source_hash=source_hash(text),
        calls_skills=tuple(sorted(set(imported_skills(module)) - {name})),
        calls_primitives=tuple(sorted(set(imported_names(module, PRIMITIVES_MODULE)))),
    )


@dataclass(frozen=True)
class Library:
    """The skills of one folder, and the modules that could not be read as skills.

    Attributes:
        skills_dir: the folder that was read.
        records: every readable skill, by name, sorted.
        problems: one typed error per unreadable module, in file order.
    """

    skills_dir: Path
    records: Mapping[str, SkillRecord]
    problems: tuple[SkillModuleError, ...] = ()

    def __iter__(self) -> Iterator[SkillRecord]:
        return iter(self.records.values())

    def __len__(self) -> int:
        return len(self.records)

    def __contains__(self, name: object) -> bool:
        return name in self.records

    def get(self, name: str) -> SkillRecord:
        """Return a skill's record.

        Raises:
            UnknownSkillError: no readable skill has that name.
        """
        try:
            return self.records[name]
        except KeyError:
            raise UnknownSkillError(name, self.records) from None


@dataclass
class ParseCache:
    """Outcomes of earlier parses, keyed by module path and source hash.

    Reusing one cache across :func:`parse_library` calls re-parses only modules whose text
    changed, so hand edits are picked up and untouched modules cost one hash each.
    """

    outcomes: dict[tuple[Path, str], SkillRecord | SkillModuleError] = field(default_factory=dict)

    def outcome(self, key: tuple[Path, str], text: str) -> SkillRecord | SkillModuleError:
        """Return the record or the problem of one module, parsing it only if it is new."""
        if key not in self.outcomes:
            try:
                self.outcomes[key] = parse_module(key[0], text)
            except SkillModuleError as problem:
                self.outcomes[key] = problem
        return self.outcomes[key]

    def keep_only(self, keys: set[tuple[Path, str]]) -> None:
        """Forget outcomes of module versions that are no longer on disk."""
        for key in set(self.outcomes) - keys:
            del self.outcomes[key]


def parse_library(skills_dir: Path, cache: ParseCache | None = None) -> Library:
    """Read every skill module in a folder.

    Args:
        skills_dir: the ``skills`` folder; a missing folder is an empty library.
        cache: outcomes of earlier calls to reuse; unchanged modules are not parsed again.
    """
    cache = cache if cache is not None else ParseCache()
    records: dict[str, SkillRecord] = {}
    problems: list[SkillModuleError] = []
    seen: set[tuple[Path, str]] = set()
    for path in skill_paths(skills_dir) if skills_dir.is_dir() else []:
        text = path.read_text(encoding="utf-8")
        key = (path, source_hash(text))
        seen.add(key)
        outcome = cache.outcome(key, text)
        if isinstance(outcome, SkillRecord):
            records[outcome.name] = outcome
        else:
            problems.append(outcome)
    cache.keep_only(seen)
    return Library(skills_dir, records, tuple(problems))
