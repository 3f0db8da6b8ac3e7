"""Curricula: a person's ordered tasks that grow the skill tree, read from ``curricula/**.yaml``.

Each task names its backend, its instruction, its scene, the skill it teaches (or none: a plan
composed of the skills already learnt), the seeds it runs on and the predicate that says it
succeeded. A task's scene and predicate are checked against its backend's scene type and
predicates, found in the backend registry. Errors name the file, the line and the field, because
a person edits these files by hand. Progress through a curriculum lives in the workspace, so a
restarted session resumes at the first task not yet accepted. The schema is documented in
``docs/curricula.md``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from lyra.backend import BackendSpec, backend_spec, did_you_mean, registered
from lyra.errors import LyraError
from lyra.files import write_atomic
from lyra.names import SKILL_NAME
from lyra.predicates import Check, PredicateError, Verdict, from_spec
from lyra.workspace import Workspace

if TYPE_CHECKING:
    from lyra.prompts import PromptPack

SLUG = r"[a-z0-9][a-z0-9_\-]*"
Slug = Annotated[str, Field(pattern=f"^{SLUG}$")]
Loc = tuple[str | int, ...]
# A seed is a numpy seed; a hold is simulated, but a long one is a slip (a million seconds).
MAX_SEED = 2**32 - 1
MAX_HOLD_SECONDS = 60.0


class CurriculumError(LyraError):
    """A curriculum file that cannot be used; each problem reads ``file:line: field: message``.

    Attributes:
        problems: one line per problem.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def _problem(message: str, loc: Loc | None = None) -> PydanticCustomError:
    """A validation error whose message reads as written.

    ``loc`` points a whole-model check at the field it concerns; pydantic would report it at
    the model.
    """
    # A custom error type keeps pydantic from prefixing the message with "Value error, ".
    ctx: dict[str, Any] = {"message": message}
    if loc is not None:
        ctx["loc"] = loc
    return PydanticCustomError("curriculum", "{message}", ctx)


class SkillTarget(BaseModel):
    """The skill a task teaches: a new one, an extension of an existing one, or a refinement."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(pattern=f"^{SKILL_NAME.pattern}$")]
    new: bool = Field(default=False, description="the task creates the skill")
    extend: bool = Field(default=False, description="the task extends it to new cases")

    @model_validator(mode="after")
    def _one_intent(self) -> SkillTarget:
        if self.new and self.extend:
            raise _problem("a skill is either `new: true` or `extend: true`, not both")
        return self


def _registered_backend(name: str) -> str:
    known = registered()
    if name not in known:
        raise _problem(f"no backend named '{name}'; registered backends: {', '.join(known)}")
    return name


BackendName = Annotated[str, AfterValidator(_registered_backend)]


def _task_key(key: str) -> str:
    if not re.fullmatch(f"{SLUG}/{SLUG}", key):
        raise _problem(
            f"'{key}' is not a task: name it as `curriculum/task-id`, its curriculum's `name` "
            "and the task's `id` (e.g. metaworld-doors/door-open)"
        )
    return key


TaskKey = Annotated[str, AfterValidator(_task_key)]


class Task(BaseModel):
    """One task: what the person asks, on which backend, in which scene, how success is judged.

    A task with a ``skill`` teaches that skill; one without is a plan composed of the skills
    already learnt (what LYRA calls an unseen long-horizon task).
    """

    model_config = ConfigDict(extra="forbid")

    id: Slug
    backend: BackendName = Field(description="where the task runs (default: the curriculum's)")
    instruction: str
    scene: Any = Field(
        default=None, description="the scene spec inline, in the backend's scene format"
    )
    setup: str | None = Field(
        default=None, description="the scene in words, for the task-setup prompt"
    )
    skill: SkillTarget | None = Field(
        default=None, description="the skill it teaches; none: a plan of learnt skills"
    )
    seeds: list[Annotated[int, Field(ge=0, le=MAX_SEED)]] = Field(
        default_factory=lambda: [0], min_length=1
    )
    success: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the predicate that says it worked; a plan without one is judged by its "
        "teacher alone",
    )
    hold_seconds: Annotated[float, Field(ge=0, le=MAX_HOLD_SECONDS)] = Field(
        default=0.0, description="how long the predicate must still hold after the plan ends"
    )
    feedback: list[str] = Field(
        default_factory=list,
        description="scripted feedback, in order, for the scripted teacher when the check fails",
    )
    review: list[str] = Field(
        default_factory=list,
        description="corrections the scripted teacher gives, in order, even when the check "
        "passes: what a person asks for after watching (a parameter, a variation)",
    )
    hints: list[str] = Field(default_factory=list, description="skills or ideas to retrieve")
    revises: TaskKey | None = Field(
        default=None,
        description="an earlier task (`curriculum/task-id`) taught again here on layouts where "
        "its plan failed: this plan must also pass that task's example, and `lyra run` runs it "
        "for that task too",
    )

    @model_validator(mode="after")
    def _scene_or_setup(self) -> Task:
        if (self.scene is None) == (self.setup is None):
            raise _problem("give the scene either inline (`scene`) or in words (`setup`), not both")
        return self

    def spec(self) -> BackendSpec:
        """The registered spec of the task's backend."""
        return backend_spec(self.backend)

    def prompt_pack(self) -> PromptPack:
        """What the prompts say about the task's backend."""
        return self.spec().prompt_pack()

    def predicate_functions(self) -> Mapping[str, Callable[..., Verdict]]:
        """The predicates a success spec of this task may name, beside the core ones."""
        return self.spec().predicate_functions()

    def predicate(self) -> Check:
        """The success check, true when every listed predicate holds (one per run)."""
        return from_spec(self.success, self.predicate_functions())


def task_problems(task: Task) -> list[tuple[Loc, str]]:
    """Check a task's scene and predicate against its backend; type the scene as its spec.

    Returns:
        (location within the task, message) for each problem.
    """
    spec = backend_spec(task.backend)
    problems: list[tuple[Loc, str]] = []
    if task.skill is not None and not task.success:
        problems.append(
            (
                ("success",),
                "a task that teaches a skill needs a success predicate: the "
                "regression check re-runs it after every later edit",
            )
        )
    if task.scene is not None:
        try:
            task.scene = spec.load_scene(task.scene)
        except ValidationError as error:
            problems += [
                (("scene", *item["loc"]), schema_message(item, spec.scene_type()))
                for item in error.errors()
            ]
    try:
        check = from_spec(task.success, spec.predicate_functions())
    except PredicateError as error:
        problems.append((("success",), str(error)))
        return problems
    if task.scene is None or problems:
        return problems
    for seed in task.seeds:
        try:
            names = spec.scene_objects(task.scene, seed)
        except LyraError as error:
            return [*problems, (("scene",), f"on seed {seed}: {error}")]
        if names is None:
            break
        missing = sorted(check.objects - set(names))
        if missing:
            problems.append(
                (
                    ("success",),
                    f"the predicate names {', '.join(map(repr, missing))}, which the scene "
                    f"does not have (on seed {seed} it has {', '.join(sorted(names))})",
                )
            )
            break
    return problems


def resolve_task(task: Task) -> Task:
    """Check a task made outside a curriculum file, as the loader checks one it reads.

    Raises:
        CurriculumError: one line per problem, naming the field.
    """
    problems = task_problems(task)
    if problems:
        raise CurriculumError([f"{'.'.join(map(str, loc))}: {msg}" for loc, msg in problems])
    return task


class Curriculum(BaseModel):
    """An ordered list of tasks on one backend.

    Attributes:
        independent: its tasks do not build on one another (plans asked of one library, such
            as MetaWorld's fifty tasks), so one that is not accepted does not stop those after
            it; by default teaching stops there, since later tasks use what earlier ones teach.
    """

    model_config = ConfigDict(extra="forbid")

    name: Slug
    backend: BackendName
    description: str
    tasks: list[Task] = Field(min_length=1)
    independent: bool = False

    @model_validator(mode="before")
    @classmethod
    def _tasks_inherit_the_backend(cls, data: Any) -> Any:
        # A task names its own backend only when it differs from the curriculum's.
        if isinstance(data, dict) and isinstance(data.get("tasks"), list):
            tasks = [
                {"backend": data.get("backend"), **task} if isinstance(task, dict) else task
                for task in data["tasks"]
            ]
            data = {**data, "tasks": tasks}
        return data

    @model_validator(mode="after")
    def _unique_ids(self) -> Curriculum:
        first: dict[str, int] = {}
        for index, task in enumerate(self.tasks):
            if task.id in first:
                raise _problem(
                    f"task id '{task.id}' is already used by tasks.{first[task.id]}",
                    ("tasks", index, "id"),
                )
            first[task.id] = index
        return self

    @model_validator(mode="after")
    def _revisions_look_back(self) -> Curriculum:
        for index, task in enumerate(self.tasks):
            mine, _, revised = (task.revises or "").partition("/")
            if mine == self.name and revised not in {t.id for t in self.tasks[:index]}:
                raise _problem(
                    f"'{task.revises}' is not an earlier task of this curriculum: a task revises "
                    "one taught before it",
                    ("tasks", index, "revises"),
                )
        return self

    def task(self, task_id: str) -> Task:
        """Return the task with this id."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(f"curriculum '{self.name}' has no task '{task_id}'")


def load_curriculum(path: Path, skills: Collection[str] | None = None) -> Curriculum:
    """Read and validate one curriculum file, refusing anything a person did not mean.

    Besides the schema: duplicate keys, YAML anchors and aliases, text that is not UTF-8,
    scenes that cannot be laid out on a seed, predicates naming objects the scene lacks, and
    (given the workspace's ``skills``) extensions of skills that neither exist nor are created
    by an earlier task.

    Raises:
        CurriculumError: naming the file, the line (and column, for malformed YAML) and field.
    """
    data, lines = read_yaml(path)
    if not isinstance(data, dict):
        raise CurriculumError(
            [f"{path}:1: a curriculum is a mapping with name, backend, description and tasks"]
        )
    try:
        curriculum = Curriculum.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            loc: Loc = item.get("ctx", {}).get("loc", item["loc"])
            if loc[-1:] == ("backend",) and len(loc) > 1 and loc not in lines:
                continue  # inherited from the curriculum, whose own line reports it
            problems.append(located(path, loc, lines, schema_message(item, Curriculum)))
        raise CurriculumError(problems) from None
    problems = [
        located(path, ("tasks", index, *loc), lines, message)
        for index, task in enumerate(curriculum.tasks)
        for loc, message in task_problems(task)
    ]
    if skills is not None:
        problems += [
            located(path, ("tasks", index, "skill", "extend"), lines, message)
            for index, message in _extension_problems(curriculum, skills)
        ]
    if problems:
        raise CurriculumError(problems)
    return curriculum


def read_yaml(path: Path) -> tuple[Any, dict[Loc, int]]:
    """Read a YAML file a person edits by hand: its data, and the line of each field and item.

    Refuses duplicate keys, YAML anchors and aliases, and text that is not UTF-8.

    Raises:
        CurriculumError: naming the file, the line (and column, for malformed YAML).
    """
    text = _text_of(path)
    try:
        refuse_anchors(path, text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise CurriculumError([f"{where}: {error.problem or error.context}"]) from None
    lines: dict[Loc, int] = {}
    if root is not None:
        duplicates = _index_lines(root, (), lines)
        if duplicates:
            raise CurriculumError([f"{path}:{line}: {message}" for line, message in duplicates])
    return yaml.safe_load(text), lines


def _text_of(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise CurriculumError([f"{path}: cannot be read: {error.strerror}"]) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise CurriculumError(
            [
                f"{path}:{line}: the file is not UTF-8 text (byte {raw[error.start]:#04x}): "
                "save it as UTF-8"
            ]
        ) from None


def refuse_anchors(where: str | Path, text: str) -> None:
    """Refuse YAML anchors and aliases: a few lines of them expand to billions of nodes.

    Raises:
        CurriculumError: naming ``where`` and the line.
        yaml.YAMLError: the text is not YAML at all.
    """
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise CurriculumError(
                [
                    f"{where}:{event.start_mark.line + 1}: YAML anchors and aliases (&name, "
                    "*name) are not allowed: write each value out"
                ]
            )


def _extension_problems(curriculum: Curriculum, skills: Collection[str]) -> list[tuple[int, str]]:
    known = set(skills)
    problems = []
    for index, task in enumerate(curriculum.tasks):
        if task.skill is None:
            continue
        if task.skill.extend and task.skill.name not in known:
            problems.append(
                (
                    index,
                    f"'{task.skill.name}' is not a skill of this workspace and no earlier task "
                    f"creates it: extend an existing skill ({', '.join(sorted(known)) or 'none'}) "
                    "or make it `new: true`",
                )
            )
        known.add(task.skill.name)
    return problems


def schema_message(item: ErrorDetails, model: type[BaseModel]) -> str:
    """Pydantic's message for one error; a misspelt key also gets the field it was meant as."""
    message = item["msg"].removeprefix("Value error, ")
    if item["type"] == "extra_forbidden":
        message += did_you_mean(model, item["loc"])
    return message


def located(path: Path, loc: Loc, lines: dict[Loc, int], message: str) -> str:
    """One problem as ``file:line: field: message``, at the field's line (see :func:`read_yaml`)."""
    field = ".".join(str(part) for part in loc) or "(top level)"
    return f"{path}:{_line_of(loc, lines)}: {field}: {message}"


def load_curricula(folder: Path) -> list[Curriculum]:
    """Read every ``*.yaml`` curriculum under a folder, recursively, sorted by path.

    Raises:
        CurriculumError: for the first bad file, or when two files use the same name (progress
            is stored by name).
    """
    curricula: list[Curriculum] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.rglob("*.yaml")):
        curriculum = load_curriculum(path)
        if curriculum.name in seen:
            other = seen[curriculum.name]
            raise CurriculumError(
                [f"{path}:1: name: '{curriculum.name}' is also the name of {other}"]
            )
        seen[curriculum.name] = path
        curricula.append(curriculum)
    return curricula


def _index_lines(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> list[tuple[int, str]]:
    """Record the 1-based line of every field and list item under a composed YAML node.

    Returns:
        (line, message) for every key given twice in one mapping (YAML would keep the last).
    """
    duplicates: list[tuple[int, str]] = []
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*loc, str(key.value))
            line = key.start_mark.line + 1
            if child in lines:
                field = ".".join(map(str, child))
                duplicates.append(
                    (
                        line,
                        f"{field}: the key '{key.value}' is given twice (also on line "
                        f"{lines[child]}); keep one, or the first would be silently dropped",
                    )
                )
                continue
            duplicates += _index_lines(value, child, lines)
            # A field's line is its key's, where a person looks for it.
            lines[child] = line
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            duplicates += _index_lines(item, (*loc, index), lines)
    return duplicates


def _line_of(loc: Loc, lines: dict[Loc, int]) -> int:
    """The line of a field, or of its nearest written parent when the field is missing."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


class Progress(BaseModel):
    """Which tasks of a curriculum were accepted, and the example each produced."""

    model_config = ConfigDict(extra="forbid")

    curriculum: str
    accepted: dict[str, str] = Field(
        default_factory=dict, description="task id -> example id, in acceptance order"
    )

    @staticmethod
    def path(workspace: Workspace, curriculum: str) -> Path:
        """Where a curriculum's progress is stored: ``.lyra/progress/<name>.json``."""
        return workspace.state_dir / "progress" / f"{curriculum}.json"

    @classmethod
    def load(cls, workspace: Workspace, curriculum: str) -> Progress:
        """Read a curriculum's progress; none stored yet means nothing accepted."""
        path = cls.path(workspace, curriculum)
        if not path.is_file():
            return cls(curriculum=curriculum)
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def accept(self, task_id: str, example_id: str) -> None:
        """Record a task as accepted, with the example it produced."""
        self.accepted[task_id] = example_id

    def save(self, workspace: Workspace) -> Path:
        """Write the progress atomically, so a crash keeps the previous state; return the path."""
        path = self.path(workspace, self.curriculum)
        write_atomic(path, self.model_dump_json(indent=2) + "\n")
        return path


# Plans and skills taught outside any curriculum are kept under these names.
PLANNED = "planned"
TAUGHT = "taught"


def progress_on_file(workspace: Workspace, curriculum: str) -> Progress:
    """A curriculum's progress, with every task whose example is on file counted as accepted.

    Progress lives in .lyra, which a fresh clone lacks; the example files are the record of
    what was accepted, so a task with one is done.
    """
    from lyra.examples import iter_examples

    progress = Progress.load(workspace, curriculum)
    for _, example in iter_examples(workspace.examples_dir):
        name, _, task_id = (example.task or "").partition("/")
        if name == curriculum:
            progress.accepted.setdefault(task_id, example.id)
    return progress


def pending_tasks(curriculum: Curriculum, progress: Progress) -> list[Task]:
    """The tasks not yet accepted, in the curriculum's order; none when it is done."""
    return [task for task in curriculum.tasks if task.id not in progress.accepted]


def one_off_task(
    instruction: str,
    backend: str,
    scene: Any,
    seeds: list[int],
    success: Any,
    *,
    skill: str | None = None,
    task_id: str | None = None,
    feedback: Sequence[str] = (),
    review: Sequence[str] = (),
    hints: Sequence[str] = (),
) -> Task:
    """A task outside any curriculum: a skill to teach (``skill``), or else a plan.

    Raises:
        pydantic.ValidationError: when the skill name or another field is unusable.
    """
    return Task(
        id=task_id or short_id(instruction),
        backend=backend,
        instruction=instruction,
        scene=scene,
        skill=SkillTarget(name=skill, new=True) if skill is not None else None,
        seeds=seeds,
        success=success or [],
        feedback=list(feedback),
        review=list(review),
        hints=list(hints),
    )


def short_id(instruction: str) -> str:
    """A task id that reads in a table: the instruction's first words and a digest of all of it.

    ``build a temple centred at (0.58, 0), four pillars...`` becomes ``build_a_temple-34aa60``;
    the digest keeps two instructions that begin alike apart.
    """
    words = re.findall(r"[a-z0-9]+", instruction.lower())
    head = "_".join(words[:3])[:24].rstrip("_") or "task"
    return f"{head}-{hashlib.sha1(instruction.encode()).hexdigest()[:6]}"
