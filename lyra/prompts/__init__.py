"""The prompt templates, as text files beside this module, and what fills them.

Templates use ``${name}`` placeholders (string.Template), so code in them needs no escaping.
What a prompt says about the robot and its world comes from the backend's :class:`PromptPack`:
its workspace frame, what a line of its scene listing holds, notes that replace a primitive's
generic docstring, and templates of its own (how to write one of its scenes).
"""

from __future__ import annotations

import inspect
import string
import textwrap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from lyra.policy import FORBIDDEN_NAMES

if TYPE_CHECKING:
    from lyra.memory.retrieval import ExampleHit

HERE = Path(__file__).parent
# Characters the retrieved examples shown whole may fill, instruction and task code (about 400
# tokens); the examples past it are one line each. The most similar example is always whole.
EXAMPLE_BUDGET = 1_600


@dataclass(frozen=True, eq=False)
class PromptPack:
    """What the prompts say about one backend.

    Attributes:
        frame: the workspace frame, as the system prompt's rules state it.
        scene_legend: what each line of the scene listing gives, in order.
        primitive_docs: docstrings that replace a primitive's own for this backend (its object
            kinds, how its gripper moves).
        templates: template texts that replace lyra's of the same name, or add one (the
            tabletop's ``task_setup``, which writes one of its scenes from words).
        cap_examples: Code as Policies' fixed prompt for this backend: (instruction, code)
            pairs that call primitives only; none: the ``cap`` methods cannot run here.
    """

    frame: str
    scene_legend: str
    primitive_docs: Mapping[str, str] = field(default_factory=dict)
    templates: Mapping[str, str] = field(default_factory=dict)
    cap_examples: tuple[tuple[str, str], ...] = ()


@cache
def template(name: str) -> string.Template:
    """Return the template ``NAME.md`` of this folder."""
    return string.Template((HERE / f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, pack: PromptPack, **values: str) -> str:
    """Fill a template, the backend's own where it has one; every placeholder must be given.

    The pack's ``frame`` and ``scene_legend`` fill the placeholders of those names.

    Raises:
        KeyError: a placeholder has no value, or neither lyra nor the pack has the template.
    """
    text = pack.templates.get(name)
    chosen = string.Template(text) if text is not None else template(name)
    return chosen.substitute({"frame": pack.frame, "scene_legend": pack.scene_legend, **values})


# An argument described only as one of these is left out of the reference: the signature and
# the summary already say whose name it is ("Return the pose of an object's centre").
NAME_ARGUMENTS = (
    "the object's name, as listed by object_names().",
    "the joint's name, as listed by joint_names().",
)


def primitives_reference(capabilities: Collection[str], docs: Mapping[str, str]) -> str:
    """The primitives a backend has: each signature and its docstring, which says what it does.

    The docstrings are shown compactly: each paragraph on one line, each argument as
    ``name: what it is`` without the ``Args:`` heading, and an argument that only says it is a
    name from object_names() or joint_names() left out.

    Args:
        capabilities: the primitives to list; the facade's others are left out.
        docs: the backend's docstrings that replace the facade's, by primitive.
    """
    from lyra import api

    entries = []
    for name in api.PRIMITIVES:
        if name not in capabilities:
            continue
        function = getattr(api, name)
        # Annotations are strings under `from __future__ import annotations`: drop the quotes.
        signature = str(inspect.signature(function)).replace("'", "")
        lines = _compact_doc(docs.get(name) or inspect.getdoc(function) or "")
        first = f": {lines[0]}" if lines else ""
        entries.append(f"- `{name}{signature}`{first}" + "".join(f"\n  {x}" for x in lines[1:]))
    entries.append(
        "- `Point(x, y, z)`, `Pose(position, orientation)` (with `Pose.from_yaw(point, "
        "yaw_radians)` and `pose.yaw` in radians) and `Size(x, y, z)` come from lyra.api too."
    )
    return "\n".join(entries)


def _compact_doc(doc: str) -> list[str]:
    """A Google-style docstring as lines: each paragraph, argument and return value on one."""
    lines: list[str] = []
    section = ""
    for block in textwrap.dedent(doc).strip().split("\n\n"):
        head, _, rest = block.partition("\n")
        if head.strip() in ("Args:", "Returns:"):
            section = head.strip()
            block = textwrap.dedent(rest)
        if section != "Args:":
            text = " ".join(block.split())
            lines.append(f"Returns {text[0].lower()}{text[1:]}" if section else text)
            continue
        # Each argument starts a line of its own; its continuation lines are indented deeper.
        lines += [e for e in _arguments(block) if e.partition(": ")[2] not in NAME_ARGUMENTS]
    return lines


def _arguments(block: str) -> list[str]:
    """The entries of an ``Args:`` section, dedented, each joined onto one line."""
    entries: list[str] = []
    for line in block.splitlines():
        if line.startswith((" ", "\t")) and entries:
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
    return [" ".join(entry.split()) for entry in entries]


@cache
def system_prompt(pack: PromptPack, capabilities: frozenset[str], name: str = "system") -> str:
    """The system message every prompt of a backend starts with.

    Args:
        pack: the backend's prompt pack.
        capabilities: the primitives it has.
        name: the template: LYRA's ``system``, or a method's own (``cap_system``).
    """
    return render(
        name,
        pack,
        primitives=primitives_reference(capabilities, pack.primitive_docs),
        # Named, so that the first answer does not learn them from a refusal.
        forbidden=", ".join(f"`{word}`" for word in FORBIDDEN_NAMES if not word.startswith("__")),
    )


def skills_section(headers: Sequence[str], empty: str = "(none yet)") -> str:
    """Skill headers as a prompt lists them; ``empty`` where there are none."""
    return "\n\n".join(f"```python\n{h}\n```" for h in headers) or empty


def example_block(instruction: str, code: str) -> str:
    """An example as a prompt shows it whole: its instruction, then its code."""
    return f"Task: {instruction}\n```python\n{code.rstrip()}\n```"


def examples_section(hits: Sequence[ExampleHit]) -> tuple[str, set[str]]:
    """Retrieved examples as a prompt lists them, and the ids of those shown with their code.

    The examples come most similar first: each with its instruction and its task code while
    they fit in :data:`EXAMPLE_BUDGET`, then each as one line naming the skills it calls.
    Planning copies from the nearest few; the rest only say which skills did what.
    """
    blocks: list[str] = []
    in_full: set[str] = set()
    spent = 0
    for hit in hits:
        whole = example_block(hit.instruction, hit.code)
        spent += len(whole)
        # Whole examples are a prefix of the list: a nearer one is never cut for a farther one.
        if len(in_full) == len(blocks) and (not in_full or spent <= EXAMPLE_BUDGET):
            blocks.append(whole)
            in_full.add(hit.id)
        else:
            calls = ", ".join(f"`{name}`" for name in hit.skills) or "primitives only"
            blocks.append(f"Task: {hit.instruction} (task code calls {calls})")
    return "\n\n".join(blocks) or "(none yet)", in_full
