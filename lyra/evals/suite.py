"""An evaluation suite: instruction templates, attribute values seen and held out, and the items.

A template (``pick up the <block> and place it on the <location>``) names attributes in angle
brackets; each attribute lists values (the words an instruction uses, and what the success
predicate needs: an object name, a point or a word) as seen in learning or held out. Filling a
template's placeholders gives an item: an instruction, a plan task that judges it, and the
scripted teacher's corrections. The splits follow Code as Policies and the incremental-learning
paper: seen templates with seen values (``seen``), seen templates with at least one held-out
value (``unseen_attributes``), held-out templates with at least one held-out value
(``unseen_instructions``). Which values fill a template, and on which layout seed, is drawn from
a seeded generator, so a suite always gives the same items. Errors name the file, the line and
the field, as the curriculum loader's do.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lyra.backend import backend_spec
from lyra.curriculum import (
    MAX_HOLD_SECONDS,
    MAX_SEED,
    BackendName,
    CurriculumError,
    Loc,
    Slug,
    Task,
    located,
    read_yaml,
    schema_message,
    task_problems,
)
from lyra.errors import LyraError, unknown_name

SPLITS = ("seen", "unseen_attributes", "unseen_instructions")
SUITE_FILE = "suite.yaml"
# <block>, or <block2>, <block3> ... for more values of one attribute in one template.
PLACEHOLDER = re.compile(r"<([a-z][a-z_]*?)([2-9]?)>")
ATTRIBUTE_NAME = r"^[a-z][a-z_]*$"
# Layout seeds are four-digit, apart from the small seeds curricula teach and check on.
LAYOUT_SEEDS = (1_000, 10_000)
# A layout where the instruction is already done is drawn again; a predicate that holds on this
# many layouts in a row holds whatever the plan does.
START_DRAWS = 20
PRAISE = "Well done, learn that for next time."


class SuiteError(CurriculumError):
    """A suite file that cannot be used; each problem reads ``file:line: field: message``."""


class Value(BaseModel):
    """One value of an attribute: how a person says it, and what the success predicate takes."""

    model_config = ConfigDict(extra="forbid")

    words: str = Field(min_length=1, description="in instructions and corrections")
    value: str | list[float] = Field(
        description="in the success predicate and the oracle: an object name, a point [x, y, z] "
        "or a word the predicate takes"
    )


class Attribute(BaseModel):
    """The values a placeholder may take: those seen in learning and those held out."""

    model_config = ConfigDict(extra="forbid")

    seen: list[Value] = Field(min_length=1)
    held_out: list[Value] = Field(default_factory=list)

    def values(self, held_out: bool) -> list[tuple[Value, bool]]:
        """Each value with whether it is held out: the seen ones, and with ``held_out`` the rest."""
        return [(v, False) for v in self.seen] + [(v, True) for v in self.held_out if held_out]


class Template(BaseModel):
    """An instruction with placeholders, how it is judged, and what the teacher says."""

    model_config = ConfigDict(extra="forbid")

    id: Slug
    instruction: str = Field(description="with placeholders such as <block>, <block2>")
    held_out: bool = Field(default=False, description="never taught: the unseen_instructions")
    success: list[dict[str, Any]] = Field(
        min_length=1, description="the predicate, a placeholder standing for a value's `value`"
    )
    hold_seconds: Annotated[float, Field(ge=0, le=MAX_HOLD_SECONDS)] = 0.0
    corrections: list[str] = Field(
        default_factory=list, description="what the person says, in order, when a run fails"
    )
    oracle: str | None = Field(
        default=None,
        description="task code that does it, a placeholder standing for its value as a Python "
        "literal: for checking the suite only, never shown to a method",
    )


class SuiteSpec(BaseModel):
    """A suite file as written."""

    model_config = ConfigDict(extra="forbid")

    name: Slug
    backend: BackendName
    description: str
    runs: Annotated[int, Field(ge=1)] = Field(
        default=3, description="runs of one instruction, memory kept and the scene reset"
    )
    instructions_per_split: Annotated[int, Field(ge=1)] = Field(
        default=1, description="instructions drawn per template and split"
    )
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] = Field(
        default=0, description="seeds the draw of values and layout seeds"
    )
    praise: str = Field(default=PRAISE, description="what the person says when a run succeeds")
    oracle_helpers: str = Field(
        default="",
        description="task code put before every oracle (imports, helpers they share): for "
        "checking the suite only, never shown to a method",
    )
    scene: Any = Field(description="the scene spec, in the backend's scene format")
    attributes: dict[Annotated[str, Field(pattern=ATTRIBUTE_NAME)], Attribute] = Field(
        default_factory=dict
    )
    templates: list[Template] = Field(min_length=1)
    demonstrations: list[str] = Field(
        default_factory=list,
        description="demonstration files (lyra-demo/1, each with its check), relative to the "
        "suite's folder: the ical methods learn from them before a sequence's first run",
    )


@dataclass(frozen=True)
class EvalItem:
    """One instruction of a suite, ready to run.

    Attributes:
        template: the template's id.
        split: one of :data:`SPLITS`.
        instruction: the template with its placeholders filled with the values' words.
        task: a plan task (no skill) on the suite's backend and scene, on one layout seed, whose
            success and feedback (the template's corrections) are filled in.
        praise: what the person says when a run succeeds.
        values: the value that fills each placeholder (``block``, ``block2`` ...).
    """

    template: str
    split: str
    instruction: str
    task: Task
    praise: str
    values: Mapping[str, Value]


@dataclass(frozen=True)
class Suite:
    """A loaded suite: what :func:`load_suite` read and checked.

    Attributes:
        name: the suite's name.
        backend: the backend its tasks run on.
        path: the suite file.
        runs: how many runs of each instruction a method gets by default.
        spec: the file's contents, its scene typed as the backend's scene spec.
    """

    name: str
    backend: str
    path: Path
    runs: int
    spec: SuiteSpec = field(repr=False)

    def items(self, splits: Sequence[str] = SPLITS) -> list[EvalItem]:
        """The suite's items in these splits: template by template, split by split.

        The same suite gives the same items, and an item does not depend on which other splits
        were asked for.

        Raises:
            SuiteError: a split that is not one of :data:`SPLITS`.
        """
        for split in splits:
            if split not in SPLITS:
                raise SuiteError([unknown_name("no split named", "splits", split, SPLITS)])
        return [
            item
            for template in self.spec.templates
            for item, _ in _items(self.spec, template, splits)
        ]

    @property
    def demonstrations(self) -> tuple[Path, ...]:
        """The demonstration files the ``ical`` methods learn from first, as paths."""
        return tuple(self.path.parent / name for name in self.spec.demonstrations)

    def oracle(self, item: EvalItem) -> str | None:
        """The item's template's oracle, its values in, after the suite's oracle helpers.

        For checking that the suite's predicates judge truly; never show it to a method.
        Returns None when the template has no oracle.
        """
        template = next(t for t in self.spec.templates if t.id == item.template)
        if template.oracle is None:
            return None
        code = PLACEHOLDER.sub(lambda m: repr(item.values[_key(m)].value), template.oracle)
        return f"{self.spec.oracle_helpers}\n{code}" if self.spec.oracle_helpers else code


def load_suite(path: Path) -> Suite:
    """Read and check a suite: a folder holding ``suite.yaml``, or the file itself.

    Besides the schema: duplicate keys, anchors and text that is not UTF-8 (as in a
    curriculum), template ids given twice, a word given to two values of one attribute,
    placeholders naming no attribute or (outside the instruction) none of the instruction's,
    templates that cannot be filled for their splits, items whose task would not load (a scene
    that cannot be laid out on the item's seed, a predicate naming an object the scene lacks),
    and predicates that hold as the scene is laid out on every layout drawn.

    Raises:
        SuiteError: one line per problem, naming the file, the line and the field.
    """
    if path.is_dir():
        path = path / SUITE_FILE
    try:
        data, lines = read_yaml(path)
    except CurriculumError as error:
        raise SuiteError(error.problems) from None
    if not isinstance(data, dict):
        raise SuiteError(
            [
                f"{path}:1: a suite is a mapping with name, backend, description, scene, "
                "attributes and templates"
            ]
        )
    try:
        spec = SuiteSpec.model_validate(data)
    except ValidationError as error:
        raise SuiteError(
            [
                located(path, item["loc"], lines, schema_message(item, SuiteSpec))
                for item in error.errors()
            ]
        ) from None
    problems = _problems(spec) + _demo_problems(spec, path.parent)
    if problems:
        raise SuiteError([located(path, loc, lines, message) for loc, message in problems])
    return Suite(spec.name, spec.backend, path, spec.runs, spec)


def _demo_problems(spec: SuiteSpec, folder: Path) -> list[tuple[Loc, str]]:
    """Demonstrations that do not load, or that have no check to verify a plan by."""
    from lyra.demos.format import DemoError, load_demo

    problems: list[tuple[Loc, str]] = []
    for index, name in enumerate(spec.demonstrations):
        loc: Loc = ("demonstrations", index)
        try:
            demo = load_demo(folder / name)
        except DemoError as error:
            problems.append((loc, str(error)))
            continue
        if not demo.check:
            problems.append((loc, f"{name} has no `check`: give it the predicate it does"))
    return problems


def _problems(spec: SuiteSpec) -> list[tuple[Loc, str]]:
    """What the schema cannot see; types the scene as the backend's scene spec."""
    backend = backend_spec(spec.backend)
    try:
        spec.scene = backend.load_scene(spec.scene)
    except ValidationError as error:
        return [
            (("scene", *item["loc"]), schema_message(item, backend.scene_type()))
            for item in error.errors()
        ]
    problems = _duplicates(spec)
    for index, template in enumerate(spec.templates):
        loc: Loc = ("templates", index)
        found = _placeholder_problems(template, spec.attributes)
        problems += [((*loc, *where), message) for where, message in found]
        if not found:
            problems += [
                ((*loc, *where), message)
                for where, message in _split_problems(template, spec.attributes)
            ]
    if problems:
        return problems
    for index, template in enumerate(spec.templates):
        items = list(_items(spec, template, SPLITS))
        done = next((item for item, undone in items if not undone), None)
        if done is not None:
            problems.append(
                (
                    ("templates", index, "success"),
                    f"'{done.instruction}' is done as laid out, before anything moves, on each "
                    f"of the {START_DRAWS} layouts drawn for it: the predicate cannot tell doing "
                    "it from doing nothing",
                )
            )
        for item, _ in items:
            for where, message in task_problems(item.task):
                # The task's scene is the suite's; its success, the template's.
                at = where if where[0] == "scene" else ("templates", index, *where)
                if (at, message) not in problems:
                    problems.append((at, message))
    return problems


def _duplicates(spec: SuiteSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    first: dict[str, int] = {}
    for index, template in enumerate(spec.templates):
        if template.id in first:
            problems.append(
                (
                    ("templates", index, "id"),
                    f"template id '{template.id}' is already used by "
                    f"templates.{first[template.id]}",
                )
            )
        first.setdefault(template.id, index)
    for name, attribute in spec.attributes.items():
        said: dict[str, str] = {}
        for kind in ("seen", "held_out"):
            for index, value in enumerate(getattr(attribute, kind)):
                where = f"attributes.{name}.{kind}.{index}"
                if value.words in said:
                    problems.append(
                        (
                            ("attributes", name, kind, index, "words"),
                            f"'{value.words}' is also the words of {said[value.words]}: an "
                            "instruction could not tell them apart",
                        )
                    )
                said.setdefault(value.words, where)
    return problems


def _texts(template: Template) -> Iterator[tuple[Loc, str]]:
    """Every text of a template that may hold placeholders, with its location in the template."""
    yield ("instruction",), template.instruction
    yield from _strings(template.success, ("success",))
    for index, text in enumerate(template.corrections):
        yield ("corrections", index), text
    if template.oracle is not None:
        yield ("oracle",), template.oracle


def _strings(node: Any, loc: Loc) -> Iterator[tuple[Loc, str]]:
    if isinstance(node, str):
        yield loc, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, (*loc, str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _strings(value, (*loc, index))


def _placeholders(text: str) -> list[str]:
    """The placeholders of a text, without brackets, in order of first appearance."""
    return list(dict.fromkeys(map(_key, PLACEHOLDER.finditer(text))))


def _key(match: re.Match[str]) -> str:
    """A placeholder as the values are keyed: ``block2`` for ``<block2>``."""
    return match.group(1) + match.group(2)


def _attribute_of(placeholder: str) -> str:
    return placeholder.rstrip("23456789")


def _placeholder_problems(
    template: Template, attributes: Mapping[str, Attribute]
) -> list[tuple[Loc, str]]:
    own = _placeholders(template.instruction)
    problems: list[tuple[Loc, str]] = []
    for loc, text in _texts(template):
        for name in _placeholders(text):
            attribute = _attribute_of(name)
            if attribute not in attributes:
                message = unknown_name("no attribute named", "attributes", attribute, attributes)
                problems.append((loc, f"<{name}>: {message}"))
            elif name not in own:
                listed = ", ".join(f"<{n}>" for n in own) or "none"
                problems.append(
                    (
                        loc,
                        f"<{name}> is not in the instruction, so no value fills it (it has "
                        f"{listed})",
                    )
                )
        if loc[0] == "success" and PLACEHOLDER.search(text) and not PLACEHOLDER.fullmatch(text):
            problems.append(
                (
                    loc,
                    f"'{text}': a placeholder in `success` is a whole value (an object name, a "
                    "point), not part of one",
                )
            )
    return problems


def _split_problems(
    template: Template, attributes: Mapping[str, Attribute]
) -> list[tuple[Loc, str]]:
    """Why a template yields no instruction for the split it belongs to, if it yields none."""
    names = _placeholders(template.instruction)
    for attribute in dict.fromkeys(map(_attribute_of, names)):
        wanted = sum(_attribute_of(n) == attribute for n in names)
        have = len(attributes[attribute].values(template.held_out))
        if wanted > have:
            kind = "values" if template.held_out else "seen values"
            return [
                (
                    ("instruction",),
                    f"it needs {wanted} different {attribute} values and the suite has {have} "
                    f"{kind}",
                )
            ]
    if template.held_out and not any(attributes[_attribute_of(n)].held_out for n in names):
        return [
            (
                ("held_out",),
                "a held-out template needs a placeholder whose attribute has held-out values: "
                "otherwise none of its instructions is unseen",
            )
        ]
    return []


def _splits(template: Template) -> tuple[str, ...]:
    return ("unseen_instructions",) if template.held_out else ("seen", "unseen_attributes")


def _combinations(
    names: list[str], attributes: Mapping[str, Attribute], split: str
) -> Iterator[dict[str, Value]]:
    """Every filling of the placeholders that belongs to a split, in the file's order.

    Placeholders of one attribute take different values; outside ``seen`` at least one value
    is held out.
    """
    pools = [attributes[_attribute_of(n)].values(split != "seen") for n in names]
    for combination in itertools.product(*pools):
        chosen = [(_attribute_of(n), id(v)) for n, (v, _) in zip(names, combination, strict=True)]
        if len(set(chosen)) < len(chosen):
            continue
        if split != "seen" and not any(held for _, held in combination):
            continue
        yield {n: v for n, (v, _) in zip(names, combination, strict=True)}


def _items(
    spec: SuiteSpec, template: Template, splits: Sequence[str]
) -> Iterator[tuple[EvalItem, bool]]:
    """A template's items in these splits, each with whether its task is undone as laid out."""
    names = _placeholders(template.instruction)
    for split in (s for s in SPLITS if s in splits and s in _splits(template)):
        # One generator per template and split: asking for fewer splits changes no item.
        rng = random.Random(f"{spec.seed}:{template.id}:{split}")
        every = list(_combinations(names, spec.attributes, split))
        chosen = rng.sample(every, min(spec.instructions_per_split, len(every)))
        for index, values in enumerate(chosen):
            yield _item(spec, template, split, index, values, rng)


def _item(
    spec: SuiteSpec,
    template: Template,
    split: str,
    index: int,
    values: dict[str, Value],
    rng: random.Random,
) -> tuple[EvalItem, bool]:
    """One item, and whether its layout leaves its task undone (the first drawn that does)."""

    def words(text: str) -> str:
        return PLACEHOLDER.sub(lambda m: values[_key(m)].words, text)

    instruction = words(template.instruction)
    task = Task(
        id=f"{template.id}-{split.replace('_', '-')}-{index}",
        backend=spec.backend,
        instruction=instruction,
        scene=spec.scene.model_copy(deep=True),
        seeds=[rng.randrange(*LAYOUT_SEEDS)],
        success=_filled(template.success, values),
        hold_seconds=template.hold_seconds,
        feedback=[words(text) for text in template.corrections],
    )
    for _ in range(START_DRAWS - 1):
        if not done_at_start(task, task.seeds[0]):
            break
        task.seeds = [rng.randrange(*LAYOUT_SEEDS)]
    item = EvalItem(template.id, split, instruction, task, spec.praise, values)
    return item, not done_at_start(task, task.seeds[0])


def done_at_start(task: Task, seed: int) -> bool:
    """Whether a task's success already holds as its scene is laid out on a seed.

    Such a layout says nothing of a plan: doing nothing passes there. False where the backend
    cannot lay a scene out without its simulator.
    """
    backend = task.spec()
    try:
        state = backend.start_state(task.scene, seed)
        return state is not None and task.predicate()(state).ok
    except LyraError:
        # A scene that cannot be laid out, a predicate that cannot judge: the task's own check
        # reports them.
        return False


def _filled(node: Any, values: Mapping[str, Value]) -> Any:
    """A success spec with each placeholder replaced by its value's ``value``."""
    if isinstance(node, str):
        match = PLACEHOLDER.fullmatch(node)
        if match is None:
            return node
        value = values[match.group(1) + match.group(2)].value
        return list(value) if isinstance(value, list) else value
    if isinstance(node, dict):
        return {key: _filled(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [_filled(value, values) for value in node]
    return node
