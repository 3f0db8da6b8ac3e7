"""Merge LLM-written code into skill modules with libcst, validate it, and stage it as a patch.

Every edit keeps the comments, helpers, imports and formatting that the new code does not touch
byte for byte. Nothing is written until :meth:`Patch.apply`, and each file is replaced atomically.
``merge_and_validate`` takes and returns module source; the ``stage_*`` functions work on a
workspace and return a validated :class:`Patch`.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import inspect
import symtable
import sys
import textwrap
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
import yaml

from lyra import policy
from lyra.examples import iter_examples
from lyra.files import write_atomic
from lyra.library.errors import SignatureError, ValidationError
from lyra.library.parse import (
    PRIMITIVES_MODULE,
    dotted_name,
    node_lines,
    shape_problems,
    skill_paths,
    syntax_problem,
)
from lyra.workspace import Workspace

_BUILTINS = frozenset(dir(builtins))
_TWO_BLANK_LINES = (cst.EmptyLine(), cst.EmptyLine())
_Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement


# --- imports -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportSpec:
    """One imported name: ``from module import name as asname``, or ``import name as asname``.

    Attributes:
        module: the module of a from-import; None for a plain ``import name``.
        name: the imported name (a dotted module for a plain import).
        asname: the alias, if any.
    """

    module: str | None
    name: str
    asname: str | None = None

    @property
    def bound(self) -> str:
        """The name the import binds in the module."""
        return self.asname or (self.name if self.module else self.name.split(".")[0])

    def statement(self) -> cst.SimpleStatementLine:
        """Return the import as a statement of its own."""
        alias = f" as {self.asname}" if self.asname else ""
        text = (
            f"from {self.module} import {self.name}{alias}\n"
            if self.module
            else f"import {self.name}{alias}\n"
        )
        statement = cst.parse_statement(text)
        assert isinstance(statement, cst.SimpleStatementLine)
        return statement


def _import_specs(statement: cst.CSTNode) -> list[ImportSpec]:
    if not isinstance(statement, cst.SimpleStatementLine):
        return []
    specs: list[ImportSpec] = []
    for small in statement.body:
        if isinstance(small, cst.Import):
            specs.extend(
                ImportSpec(None, dotted_name(a.name), _asname(a.asname)) for a in small.names
            )
        elif (
            isinstance(small, cst.ImportFrom)
            and small.module is not None
            and not small.relative
            and not isinstance(small.names, cst.ImportStar)
        ):
            module = dotted_name(small.module)
            specs.extend(
                ImportSpec(module, dotted_name(a.name), _asname(a.asname)) for a in small.names
            )
    return specs


def _asname(node: cst.AsName | None) -> str | None:
    return node.name.value if node is not None and isinstance(node.name, cst.Name) else None


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Import | cst.ImportFrom) for small in statement.body
    )


def _section(spec: ImportSpec) -> int:
    # isort's sections: __future__, standard library, third party, first party (lyra, skills).
    root = (spec.module or spec.name).split(".")[0]
    if root == "__future__":
        return 0
    if root in sys.stdlib_module_names:
        return 1
    return 3 if root in ("lyra", "skills") else 2


def _merge_into_from(
    statement: cst.SimpleStatementLine, spec: ImportSpec
) -> cst.SimpleStatementLine:
    small = statement.body[0]
    assert isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar)
    names = list(small.names)
    template = names[0].comma if len(names) > 1 else cst.MaybeSentinel.DEFAULT
    separator = (
        template
        if isinstance(template, cst.Comma)
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    last_comma = names[-1].comma
    position = next((i for i, a in enumerate(names) if dotted_name(a.name) > spec.name), len(names))
    new = cst.ImportAlias(
        name=cst.Name(spec.name),
        asname=cst.AsName(name=cst.Name(spec.asname)) if spec.asname else None,
    )
    names.insert(position, new)
    names = [a.with_changes(comma=separator) for a in names[:-1]] + [
        names[-1].with_changes(comma=last_comma)
    ]
    return statement.with_changes(body=[small.with_changes(names=names)])


def _from_statement_for(body: list[_Statement], module: str) -> int | None:
    for index, statement in enumerate(body):
        if (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.ImportFrom)
            and statement.body[0].module is not None
            and not statement.body[0].relative
            and not isinstance(statement.body[0].names, cst.ImportStar)
            and dotted_name(statement.body[0].module) == module
        ):
            return index
    return None


def _insert_statement(body: list[_Statement], spec: ImportSpec, docstring: bool) -> None:
    imports = [i for i, s in enumerate(body) if _is_import(s)]
    before = [i for i in imports if min(map(_section, _import_specs(body[i]))) <= _section(spec)]
    statement = spec.statement()
    if before:
        anchor = before[-1]
        if max(map(_section, _import_specs(body[anchor]))) < _section(spec):
            statement = statement.with_changes(leading_lines=[cst.EmptyLine()])
        body.insert(anchor + 1, statement)
        return
    position = imports[0] if imports else int(docstring)
    if position < len(body):
        # The statement that now follows the import block is separated as PEP 8 asks.
        following = body[position]
        gap = [cst.EmptyLine()] if imports else list(_TWO_BLANK_LINES)
        if not following.leading_lines:
            body[position] = following.with_changes(leading_lines=gap)
    if position:
        statement = statement.with_changes(leading_lines=[cst.EmptyLine()])
    body.insert(position, statement)


def _has_module_docstring(module: cst.Module) -> bool:
    return module.get_docstring(clean=False) is not None


def _sort_key(spec: ImportSpec) -> tuple[int, str, str, str]:
    return (_section(spec), spec.module or "", spec.name, spec.asname or "")


def add_import_specs(module: cst.Module, specs: Iterable[ImportSpec]) -> cst.Module:
    """Return the module with each import added once, from-imports of one module merged."""
    body = list(module.body)
    present = {spec for statement in body for spec in _import_specs(statement)}
    for spec in sorted(set(specs) - present, key=_sort_key):
        index = _from_statement_for(body, spec.module) if spec.module else None
        if index is not None:
            statement = body[index]
            assert isinstance(statement, cst.SimpleStatementLine)
            body[index] = _merge_into_from(statement, spec)
        else:
            _insert_statement(body, spec, _has_module_docstring(module))
        present.add(spec)
    return module.with_changes(body=body)


# --- names -------------------------------------------------------------------------------


def _global_references(table: symtable.SymbolTable) -> Iterator[str]:
    for symbol in table.get_symbols():
        if symbol.is_referenced() and (
            symbol.is_global() if table.get_type() != "module" else True
        ):
            yield symbol.get_name()
    for child in table.get_children():
        yield from _global_references(child)


def unresolved_names(
    source: str, filename: str = "<skill>", tree: ast.Module | None = None
) -> list[tuple[int, str]]:
    """Return (first line, name) of every name the module uses but never binds, by line.

    A name resolves if it is imported, defined or assigned at module level, local to the scope
    that uses it, or a builtin.

    Args:
        source: the module's text.
        filename: how errors name the module.
        tree: the module's ast, when the caller has parsed it already.
    """
    table = symtable.symtable(source, filename, "exec")
    bound = {
        s.get_name()
        for s in table.get_symbols()
        if s.is_assigned() or s.is_imported() or s.is_namespace()
    }
    missing = set(_global_references(table)) - bound - _BUILTINS
    first: dict[str, int] = {}
    for node in ast.walk(tree or ast.parse(source)):
        if isinstance(node, ast.Name) and node.id in missing:
            first[node.id] = min(first.get(node.id, node.lineno), node.lineno)
    return sorted((line, name) for name, line in first.items())


def _providers(
    answer_imports: Iterable[ImportSpec], skills: Collection[str]
) -> dict[str, ImportSpec]:
    import lyra.api  # the facade's export list says which names are primitives

    providers = {name: ImportSpec(PRIMITIVES_MODULE, name) for name in lyra.api.__all__}
    providers.update({name: ImportSpec(f"skills.{name}", name) for name in skills})
    providers.update({spec.bound: spec for spec in answer_imports})
    return providers


def add_needed_imports(
    module: cst.Module, answer_imports: Iterable[ImportSpec] = (), skills: Collection[str] = ()
) -> tuple[cst.Module, str]:
    """Import each unbound name the module uses that an answer import, lyra.api or a skill has.

    Imports the code does not use are not added, so an answer's stray imports do not pile up.

    Args:
        module: the merged module.
        answer_imports: the imports the LLM's answer wrote.
        skills: the names of the skills in the library.

    Returns:
        The module and its source text (rendering a module costs as much as parsing one).
    """
    text = module.code
    try:
        missing = [name for _, name in unresolved_names(text)]
    except SyntaxError:
        return module, text  # validation reports it with its line
    providers = _providers(answer_imports, skills)
    specs = [providers[n] for n in missing if n in providers]
    if not specs:
        return module, text
    module = add_import_specs(module, specs)
    return module, module.code


def drop_unused_skill_imports(module: cst.Module, text: str) -> tuple[cst.Module, str]:
    """Remove the ``from skills.X import X`` imports the module's code no longer uses.

    The skill tree and the regression reach are read from these imports, so one left behind
    by an edit that stopped calling the skill would be a false edge. A removed line's blank
    lines and comments above it stay, on the statement that follows.

    Returns:
        The module and its source text.
    """
    try:
        used = {node.id for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Name)}
    except SyntaxError:
        return module, text  # validation reports it with its line
    body: list[cst.BaseStatement] = []
    carried: list[cst.EmptyLine] = []
    changed = False
    for statement in module.body:
        if carried:
            statement = statement.with_changes(leading_lines=(*carried, *statement.leading_lines))
            carried = []
        kept = _without_unused_skill_names(statement, used)
        if kept is statement:
            body.append(statement)
            continue
        changed = True
        if kept is None:
            carried = list(statement.leading_lines)
        else:
            body.append(kept)
    if not changed:
        return module, text
    module = module.with_changes(body=body)
    return module, module.code


def _without_unused_skill_names(
    statement: cst.BaseStatement, used: set[str]
) -> cst.BaseStatement | None:
    """The statement without the skill names it imports and nobody uses; None if none is left."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return statement
    small = statement.body[0]
    if not (
        isinstance(small, cst.ImportFrom)
        and small.module is not None
        and not small.relative
        and dotted_name(small.module).startswith("skills.")
        and not isinstance(small.names, cst.ImportStar)
    ):
        return statement
    names = [
        alias for alias in small.names if (_asname(alias.asname) or dotted_name(alias.name)) in used
    ]
    if len(names) == len(small.names):
        return statement
    if not names:
        return None
    names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=[small.with_changes(names=names)])


# --- definitions ---------------------------------------------------------------------------


def _parse(source: str, what: str) -> cst.Module:
    # Refuse what is too large or too deep before libcst, which would take minutes on it.
    try:
        policy.parse_generated(source, f"the {what}")
    except policy.OversizedCodeError as error:
        raise ValidationError(
            f"the {what} cannot be used; nothing was changed", [str(error)]
        ) from None
    except SyntaxError:
        pass  # libcst reports it below, with its line
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        line, message = syntax_problem(source, error)
        raise ValidationError(
            f"the {what} does not parse; nothing was changed", [f"line {line}: {message}"]
        ) from error


def _definition_name(statement: cst.CSTNode) -> str | None:
    if isinstance(statement, cst.FunctionDef | cst.ClassDef):
        return statement.name.value
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        targets = (
            [t.target for t in small.targets]
            if isinstance(small, cst.Assign)
            else [small.target]
            if isinstance(small, cst.AnnAssign)
            else []
        )
        if len(targets) == 1 and isinstance(targets[0], cst.Name):
            return f"{targets[0].value} ="
    return None


def _docstring_of(node: cst.CSTNode) -> cst.BaseStatement | None:
    if isinstance(node, cst.FunctionDef | cst.ClassDef) and node.get_docstring() is not None:
        body = node.body
        assert isinstance(body, cst.IndentedBlock)
        return body.body[0]
    return None


def _keep_docstring(old: cst.CSTNode, new: _Statement) -> _Statement:
    # An answer that rewrites a function without its docstring keeps the one it had.
    docstring = _docstring_of(old)
    if (
        docstring is None
        or not isinstance(new, cst.FunctionDef | cst.ClassDef)
        or new.get_docstring() is not None
        or not isinstance(new.body, cst.IndentedBlock)
    ):
        return new
    return new.with_changes(body=new.body.with_changes(body=[docstring, *new.body.body]))


def upsert_definition(module: cst.Module, definition: _Statement) -> cst.Module:
    """Return the module with a top-level function, class or constant replaced or added.

    A replaced definition keeps the comments and blank lines above it; a new function or class
    goes at the end, a new constant after the imports.
    """
    name = _definition_name(definition)
    body = list(module.body)
    for index, statement in enumerate(body):
        if _definition_name(statement) == name:
            new = _keep_docstring(statement, definition)
            body[index] = new.with_changes(leading_lines=statement.leading_lines)
            return module.with_changes(body=body)
    if isinstance(definition, cst.SimpleStatementLine):
        position = next(
            (i for i, s in enumerate(body) if isinstance(s, cst.FunctionDef | cst.ClassDef)),
            len(body),
        )
        gap = [cst.EmptyLine()] if position else []
        body.insert(position, definition.with_changes(leading_lines=gap))
    else:
        gap = list(_TWO_BLANK_LINES) if body else []
        body.append(definition.with_changes(leading_lines=gap))
    return module.with_changes(body=body)


def _split_answer(answer: cst.Module) -> tuple[list[_Statement], list[ImportSpec]]:
    definitions: list[_Statement] = []
    imports: list[ImportSpec] = []
    misplaced: list[cst.CSTNode | None] = []
    for index, statement in enumerate(answer.body):
        if _is_import(statement):
            imports.extend(_import_specs(statement))
        elif _definition_name(statement) is not None:
            definitions.append(statement)
        elif not (index == 0 and _has_module_docstring(answer)):
            misplaced.append(statement)
    if misplaced:
        raise ValidationError(
            "the answer has statements outside any function; nothing was changed",
            [
                f"line {line}: only imports, constants and function definitions belong at the "
                "top level of a skill module: move this statement into the skill function"
                for line in node_lines(answer, misplaced)
            ],
        )
    return definitions, imports


def _merge(existing: str | None, answer: str, skills: Collection[str]) -> tuple[cst.Module, str]:
    # libcst reads "" as a module without a final newline; a new module file should end in one.
    module = _parse(existing or "", "module").with_changes(has_trailing_newline=True)
    definitions, imports = _split_answer(_parse(answer, "answer"))
    for definition in definitions:
        module = upsert_definition(module, definition)
    return drop_unused_skill_imports(*add_needed_imports(module, imports, skills))


def merge_and_validate(
    existing: str | None, answer: str, name: str, skills: Collection[str] = ()
) -> str:
    """Merge an answer into the skill module ``name`` and validate the result.

    Args:
        existing: the module's current text; None for a new module.
        answer: module text from the LLM.
        name: the skill, which is also the module's name.
        skills: the other skills of the library.

    Raises:
        ValidationError: the answer or the merged module is invalid (see :func:`validate_module`).
    """
    module, text = _merge(existing, answer, skills)
    _validate(text, module, name, f"skills/{name}.py")
    return text


def _body_of(function: cst.FunctionDef) -> cst.IndentedBlock:
    if not isinstance(function.body, cst.IndentedBlock):
        raise ValidationError(
            f"'{function.name.value}' is written on one line; nothing was changed",
            ["put the body of the function on its own indented lines"],
        )
    return function.body


# --- skill headers and stubs -----------------------------------------------------------------


def new_module(header: str, skills: Collection[str] = ()) -> tuple[str, str]:
    """Return (name, module text) for a skill written from its header, its body still to write.

    Args:
        header: the ``def`` line and the docstring, e.g. as a planner proposed a new skill.
        skills: the library's skills its annotations may name.

    Raises:
        ValidationError: the header is not one function definition.
    """
    parsed = _parse(textwrap.dedent(header).strip() + "\n", "header")
    functions = [s for s in parsed.body if isinstance(s, cst.FunctionDef)]
    if len(functions) != 1 or len(parsed.body) != 1:
        raise ValidationError(
            "the header is not one function; nothing was created",
            ['write one `def name(...) -> ...:` line followed by its """docstring"""'],
        )
    function = functions[0]
    name = function.name.value
    stub = cst.parse_statement(
        f'raise NotImplementedError("{name} is not written yet: teach it a task first")\n'
    )
    block = _body_of(function)
    function = function.with_changes(body=block.with_changes(body=[*block.body, stub]))
    return name, add_needed_imports(cst.Module(body=[function]), (), skills)[1]


def is_stub(function: ast.FunctionDef) -> bool:
    """Tell whether a skill's body is still the ``raise NotImplementedError`` of its header."""
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    return (
        len(body) == 1
        and isinstance(body[0], ast.Raise)
        and isinstance(body[0].exc, ast.Call)
        and isinstance(body[0].exc.func, ast.Name)
        and body[0].exc.func.id == "NotImplementedError"
    )


# --- validation ------------------------------------------------------------------------------


def validate_module(source: str, name: str, filename: str) -> None:
    """Check a skill module before it is written.

    It must compile, pass :func:`lyra.policy.check_source`, keep one public skill named like the
    module, and bind every name it uses.

    Raises:
        ValidationError: listing every problem as ``line N: what to do``.
    """
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        line, message = syntax_problem(source, error)
        raise ValidationError(_not_changed(filename), [f"line {line}: {message}"]) from error
    _validate(source, module, name, filename)


def _not_changed(filename: str) -> str:
    return f"{filename} was not changed: fix these problems and answer again"


def _validate(source: str, module: cst.Module, name: str, filename: str) -> None:
    try:
        tree = ast.parse(source, filename)
        compile(tree, filename, "exec", dont_inherit=True)
    except SyntaxError as error:
        raise ValidationError(
            _not_changed(filename), [f"line {error.lineno}: {error.msg}"]
        ) from error
    problems = [(v.line, v.message) for v in policy.check_tree(tree, filename)]
    shape = shape_problems(module, name)
    lines = node_lines(module, [node for node, _ in shape])
    problems += [(line, message) for line, (_, message) in zip(lines, shape, strict=True)]
    problems += [
        (
            line,
            f"name '{missing}' is not defined: import it from skills.<module> or lyra.api, "
            "or define it",
        )
        for line, missing in unresolved_names(source, filename, tree)
    ]
    if problems:
        raise ValidationError(
            _not_changed(filename), [f"line {line}: {text}" for line, text in sorted(problems)]
        )


# --- signatures and call sites ---------------------------------------------------------------

_DEFAULT = object()


def signature_of(function: ast.FunctionDef) -> inspect.Signature:
    """Build an :class:`inspect.Signature` from a function's syntax; defaults are placeholders."""
    args = function.args
    kind = inspect.Parameter
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = [
        kind(
            arg.arg,
            kind.POSITIONAL_ONLY if i < len(args.posonlyargs) else kind.POSITIONAL_OR_KEYWORD,
            default=_DEFAULT if i >= first_default else kind.empty,
        )
        for i, arg in enumerate(positional)
    ]
    if args.vararg:
        params.append(kind(args.vararg.arg, kind.VAR_POSITIONAL))
    params += [
        kind(arg.arg, kind.KEYWORD_ONLY, default=kind.empty if default is None else _DEFAULT)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        params.append(kind(args.kwarg.arg, kind.VAR_KEYWORD))
    return inspect.Signature(params)


def _skill_function(source: str, name: str) -> ast.FunctionDef | None:
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


@dataclass(frozen=True)
class CallSite:
    """One call of a skill in a skill module or in a stored example's plan code."""

    location: str
    call: ast.Call


def _calls_of(tree: ast.Module, name: str, bare: bool) -> Iterator[ast.Call]:
    local = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == f"skills.{name}"
        for alias in node.names
        if alias.name == name
    }
    if bare:
        local.add(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in local:
            yield node


def _code_first_line(path: Path) -> int:
    # The line of the example file where the plan's first line is, so messages point into it.
    document = yaml.compose(path.read_text(encoding="utf-8"))
    assert isinstance(document, yaml.MappingNode)
    for key, value in document.value:
        if key.value == "code":
            block = value.style in ("|", ">")
            return value.start_mark.line + (2 if block else 1)
    return 1


def call_sites(workspace: Workspace, name: str) -> list[CallSite]:
    """Return every call of a skill in the other skill modules and in the stored examples.

    Example plans that list the skill in their ``skills`` field count bare calls of it too.
    """
    sites: list[CallSite] = []
    for path in skill_paths(workspace.skills_dir):
        text = path.read_text(encoding="utf-8")
        if path.stem == name or f"skills.{name}" not in text:
            continue
        with_lines = _try_parse(text)
        for call in _calls_of(with_lines, name, bare=False) if with_lines else ():
            sites.append(CallSite(f"{_relative(workspace, path)}:{call.lineno}", call))
    for path, example in iter_examples(workspace.examples_dir):
        tree = _try_parse(example.code)
        if tree is None:
            continue
        offset = _code_first_line(path) - 1
        for call in _calls_of(tree, name, bare=name in example.skills):
            sites.append(CallSite(f"{_relative(workspace, path)}:{offset + call.lineno}", call))
    return sites


def _try_parse(text: str) -> ast.Module | None:
    # A module that does not parse is the library's problem report, not this edit's.
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _relative(workspace: Workspace, path: Path) -> str:
    return (
        str(path.relative_to(workspace.root)) if path.is_relative_to(workspace.root) else str(path)
    )


def binding_problem(signature: inspect.Signature, call: ast.Call) -> str | None:
    """Return why a call would not bind to a signature, or None if it binds (or cannot tell)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    try:
        signature.bind(*call.args, **{k.arg: k.value for k in call.keywords if k.arg})
    except TypeError as error:
        return str(error)
    return None


def extension_problems(name: str, old: inspect.Signature, new: inspect.Signature) -> list[str]:
    """Return why a new signature does not extend the old one without changing old behaviour.

    Every parameter the old signature lacked must be keyword-only with a default, so each
    earlier call keeps its meaning.
    """
    problems = []
    for param in new.parameters.values():
        if param.name in old.parameters or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is not param.KEYWORD_ONLY or param.default is param.empty:
            problems.append(
                f"new parameter '{param.name}' must be keyword-only with a default that "
                f"reproduces the old behaviour: `def {name}(..., *, {param.name}=<old value>)`"
            )
    return problems


def check_signature_change(
    workspace: Workspace, name: str, old_source: str, new_source: str
) -> None:
    """Refuse a changed skill signature that would break an earlier use of the skill.

    Raises:
        SignatureError: a new parameter is not keyword-only with a default, or an existing
            call site (``file:line``) would no longer bind.
    """
    old_function = _skill_function(old_source, name)
    new_function = _skill_function(new_source, name)
    if old_function is None or new_function is None or is_stub(old_function):
        return
    old, new = signature_of(old_function), signature_of(new_function)
    if old == new:
        return
    problems = extension_problems(name, old, new)
    for site in call_sites(workspace, name):
        reason = binding_problem(new, site.call)
        if reason is not None:
            problems.append(f"{site.location}: `{ast.unparse(site.call)}` would fail: {reason}")
    if problems:
        raise SignatureError(
            f"the new signature of '{name}' would break earlier uses; skills/{name}.py was not "
            "changed: extend the skill so every earlier call still works",
            problems,
        )


# --- patches and atomic writes ---------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    """The old and new text of one file; None means absent."""

    path: Path
    before: str | None
    after: str | None


@dataclass(frozen=True)
class Patch:
    """Validated new texts for files, staged until :meth:`apply` writes them.

    Attributes:
        changes: one entry per file that changes.
        summary: what changed, in a few words, for the history and the commit message.
    """

    changes: tuple[FileChange, ...]
    summary: str

    def apply(self) -> None:
        """Write every change; new texts go first and deletions last, so no skill goes missing."""
        for change in self.changes:
            if change.after is not None:
                write_atomic(change.path, change.after)
        for change in self.changes:
            if change.after is None:
                change.path.unlink(missing_ok=True)

    def diff(self) -> str:
        """Return the patch as a unified diff, for a person to review."""
        return "".join(
            "".join(
                difflib.unified_diff(
                    (c.before or "").splitlines(keepends=True),
                    (c.after or "").splitlines(keepends=True),
                    fromfile=str(c.path) if c.before is not None else "/dev/null",
                    tofile=str(c.path) if c.after is not None else "/dev/null",
                )
            )
            for c in self.changes
        )


def _library_names(workspace: Workspace) -> set[str]:
    return {path.stem for path in skill_paths(workspace.skills_dir)}


def _changed_definitions(before: str, after: str) -> str:
    def definitions(text: str) -> dict[str, str]:
        return {
            name: ast.dump(node)
            for node in ast.parse(text).body
            if (name := getattr(node, "name", None)) is not None
        }

    old, new = definitions(before), definitions(after)
    added = sorted(set(new) - set(old))
    changed = sorted(n for n in set(new) & set(old) if new[n] != old[n])
    parts = ([f"changed {', '.join(changed)}"] if changed else []) + (
        [f"added {', '.join(added)}"] if added else []
    )
    return "; ".join(parts) or "imports only"


def stage_new_skill(workspace: Workspace, header: str) -> Patch:
    """Stage a new skill module written from its header, with a body still to write.

    Raises:
        ValidationError: the header is not one valid skill signature and docstring, or the
            skill already exists.
    """
    known = _library_names(workspace)
    name, text = new_module(header, known)
    path = workspace.skills_dir / f"{name}.py"
    if path.exists():
        raise ValidationError(
            f"skills/{name}.py already exists; nothing was created",
            [f"edit the skill '{name}' instead, or choose another name"],
        )
    validate_module(text, name, f"skills/{name}.py")
    return Patch((FileChange(path, None, text),), f"created {name} from its header")


def stage_answer(workspace: Workspace, name: str, answer: str) -> Patch:
    """Stage an LLM answer merged into ``skills/<name>.py`` (a new module if there is none).

    An existing skill that has a body already keeps every earlier call working: see
    :func:`check_signature_change`.

    Raises:
        ValidationError: the merged module would not be a valid skill module.
        SignatureError: the answer changes the signature in a way that breaks an earlier use.
    """
    path = workspace.skills_dir / f"{name}.py"
    before = path.read_text(encoding="utf-8") if path.exists() else None
    after = merge_and_validate(before, answer, name, _library_names(workspace) - {name})
    if before is not None:
        check_signature_change(workspace, name, before, after)
    summary = "unchanged" if before == after else _changed_definitions(before or "", after)
    return Patch((FileChange(path, before, after),), f"{name}: {summary}")
