"""Every prompt as each backend renders it, pinned by golden files under tests/prompts/.

A change to a template, a backend's prompt pack or a primitive's docstring shows here as a
reviewed diff of the golden files, not as a re-recording of the sessions (their replays go on
and report the prompts that now differ). After a change made on purpose, refresh them with

    pytest tests/test_prompts.py --refresh-prompts

and commit the files with the change.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from lyra import prompts
from lyra.backend import registered
from lyra.memory.retrieval import ExampleHit, Match, Method, SkillHit
from lyra.prompts import HERE, render, system_prompt

GOLDEN = Path(__file__).parent / "prompts"
BACKENDS = ("ravens", "metaworld", "kitchen")


def rendered(backend: str) -> dict[str, str]:
    """Each template the backend's prompts use, with its pack's frame and scene legend and a
    marker naming each other placeholder, and its system prompt; by file name."""
    spec = registered()[backend]
    pack = spec.prompt_pack()
    systems = ("system", "cap_system", "console_system")
    names = sorted({p.stem for p in HERE.glob("*.md")} - set(systems) | set(pack.templates))
    files = {f"{name}.md": system_prompt(pack, spec.capabilities, name) for name in systems}
    for name in names:
        text = pack.templates.get(name) or prompts.template(name).template
        fields = set(string.Template(text).get_identifiers()) - {"frame", "scene_legend"}
        files[f"{name}.md"] = render(name, pack, **{f: f"<<{f}>>" for f in fields})
    return files


@pytest.mark.parametrize("backend", BACKENDS)
def test_prompts_render_as_pinned(backend: str, request: pytest.FixtureRequest) -> None:
    folder = GOLDEN / backend
    files = rendered(backend)
    if request.config.getoption("--refresh-prompts"):
        folder.mkdir(parents=True, exist_ok=True)
        for stale in set(p.name for p in folder.glob("*.md")) - set(files):
            (folder / stale).unlink()
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    assert pinned(backend) == files, (
        f"the {backend} prompts differ from tests/prompts/{backend}/: if the change is meant, "
        "run `pytest tests/test_prompts.py --refresh-prompts` and commit the files"
    )


def pinned(backend: str) -> dict[str, str]:
    """The golden files of a backend, by name."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((GOLDEN / backend).glob("*.md"))}


def hit(id_: str, code: str, skills: tuple[str, ...] = ()) -> ExampleHit:
    return ExampleHit(id_, f"do {id_}", code, skills, "ravens", None, 0.0, ())


def test_examples_past_the_budget_are_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    # The budget counts the whole block, instruction and code: "a" is 48 characters, "b" 39.
    monkeypatch.setattr(prompts, "EXAMPLE_BUDGET", 60)
    hits = [
        hit("a", "# task\nput_on('r', 'b')\n", ("put_on",)),
        hit("b", "# task\nstack()", ("stack_tower",)),
        hit("c", "", ()),  # "c" alone would fit, but comes after one that did not
    ]
    text, in_full = prompts.examples_section(hits)
    assert in_full == {"a"}
    assert text == (
        "Task: do a\n```python\n# task\nput_on('r', 'b')\n```\n\n"
        "Task: do b (task code calls `stack_tower`)\n\n"
        "Task: do c (task code calls primitives only)"
    )


def test_the_most_similar_example_is_whole_even_over_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prompts, "EXAMPLE_BUDGET", 5)
    text, in_full = prompts.examples_section([hit("a", "# task\nbuild_house()")])
    assert (text, in_full) == ("Task: do a\n```python\n# task\nbuild_house()\n```", {"a"})
    assert prompts.examples_section([]) == ("(none yet)", set())


def test_a_skill_only_a_one_line_example_calls_is_not_brought() -> None:
    def skill(*via: str) -> SkillHit:
        return SkillHit("s", "", "", 0.0, via=via)

    assert skill("called by example a").brought_by({"a"})
    assert not skill("called by example b", "called by example c").brought_by({"a"})
    assert skill("similar", "called by example b").brought_by(set())
    assert skill("named by hint 1").brought_by(set())


def test_a_skill_similar_by_one_search_only_is_not_brought_where_both_ran() -> None:
    def similar(*methods: Method) -> SkillHit:
        found = tuple(Match("instruction", m, 1, 0.5) for m in methods)
        return SkillHit("s", "", "", 0.0, matches=found, via=("similar",))

    both: tuple[Method, ...] = ("text", "vector")
    assert similar("text", "vector").brought_by(set(), both)
    assert not similar("vector").brought_by(set(), both)
    assert not similar("text").brought_by(set(), both)
    assert similar("text").brought_by(set())  # full-text search alone: its list is all there is
    hinted = SkillHit("s", "", "", 0.0, via=("named by hint 1", "similar"))
    assert hinted.brought_by(set(), both)
