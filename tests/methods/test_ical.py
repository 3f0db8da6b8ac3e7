"""ICAL on real physics: abstraction, verification with the teacher, the store, the ablations.

The LLM is a real OpenAI-compatible server on 127.0.0.1 answering from the test's script (the
answers below are test fixtures written by hand, not a model's).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from lyra.answers import AnswerError
from lyra.cli import main
from lyra.curriculum import PLANNED, Progress, one_off_task
from lyra.demos.format import load_demo
from lyra.demos.transcript import calls_plan
from lyra.methods.ical import ICAL, LABELS, Ical, demo_task, parse_answer
from lyra.methods.ical_store import IcalExample, IcalStore
from lyra.teach import Learner
from tests.chat_server import answer
from tests.methods.conftest import INSTRUCTION
from tests.test_methods import learner_for

ABSTRACTIONS = (
    "## Abstractions\n"
    "- Task: the red block ends resting on the blue block.\n"
    "- Causal: put_first_on_second lifts the first object and sets it down on the second.\n"
    "- State changes: the red block rises onto the blue block; nothing else moves.\n"
    "- Subgoals: one transfer of the red block.\n"
    "- Relevant state: where the blue block stands, read with the primitives.\n"
)
RIGHT = (
    ABSTRACTIONS + "\n```python\n# task\nfrom lyra.api import put_first_on_second\n\n"
    "# Subgoal: red onto blue (the demonstration first put it on green: a mistake)\n"
    "put_first_on_second('red_block', 'blue_block')\n```"
)
WRONG = RIGHT.replace("'blue_block'", "'green_block'")
NO_SECTION = "```python\n# task\nfrom lyra.api import put_first_on_second\n```"


def test_an_answer_is_read_into_abstractions_and_a_plan() -> None:
    read = parse_answer(RIGHT)
    assert (
        read.abstractions.splitlines()[0] == "- Task: the red block ends resting on the blue block."
    )
    assert len(read.abstractions.splitlines()) == len(LABELS)
    assert read.plan.startswith("# task\nfrom lyra.api import put_first_on_second\n")
    with pytest.raises(AnswerError, match="no `## Abstractions` section"):
        parse_answer(NO_SECTION)
    with pytest.raises(AnswerError, match="lack Causal, Subgoals: write one line"):
        parse_answer(RIGHT.replace("- Causal:", "- Cause:").replace("- Subgoals:", "Subgoals:"))
    with pytest.raises(AnswerError, match="no code block"):
        parse_answer(ABSTRACTIONS)
    with pytest.raises(AnswerError, match="does not parse"):
        parse_answer(ABSTRACTIONS + "```python\n# task\nput_first_on_second(\n```")


def learn(learner: Learner, demo_file: Path, method: Ical = ICAL):
    demo = load_demo(demo_file)
    task = demo_task(demo, demo_file, feedback=["The red block belongs on the blue one."])
    return learner.counted(lambda: method.learn(learner, demo, demo_file, task))


def user_prompt(request) -> str:
    content = request.body["messages"][1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


@pytest.mark.slow
def test_verification_keeps_one_example_found_by_its_abstractions(
    tmp_path: Path, demo_file: Path, chat_server, monkeypatch
) -> None:
    learner = learner_for(tmp_path / "ws", "ical", chat_server, monkeypatch, library=False)
    try:
        chat_server.replies = [answer(RIGHT)]
        outcome = learn(learner, demo_file)
        again = learn(learner, demo_file)  # resumable: a demonstration is learnt once
        store = ICAL.store(learner)
    finally:
        learner.close()
    assert (outcome.accepted, outcome.rounds, outcome.llm_calls) == (True, 1, 1)
    assert outcome.last.ok and (again.accepted, again.llm_calls) == (True, 0)
    (kept,) = store.examples()
    assert kept.abstractions == parse_answer(RIGHT).abstractions
    assert kept.verified and kept.source.startswith("stack.json#")
    assert "put_first_on_second('red_block', 'blue_block')" in kept.code
    # The prompt: the transcript as typed, the state changes, a picture per motion, as parts.
    (request,) = chat_server.requests
    prompt = user_prompt(request)
    assert (
        ">>> put_first_on_second('red_block', 'green_block')\n>>> object_pose('blue_block')\n"
        in prompt
    )
    assert (
        "after `put_first_on_second('red_block', 'blue_block')`: red_block moved from (" in prompt
    )
    assert "The 2 pictures attached show the scene after each motion" in prompt
    parts = request.body["messages"][1]["content"]
    assert [part["type"] for part in parts] == ["text", "image_url", "image_url"]
    png = (demo_file.parent / "stack-frames" / "000-put_first_on_second.png").read_bytes()
    assert parts[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()
    # Found by a query that matches the abstractions and shares no word with the instruction,
    # among another example that does not.
    other = IcalExample(
        id="drawer",
        instruction="open the drawer",
        code="# task\n",
        abstractions="- Task: pull the handle outward",
    )
    store.add(other)
    query = "lifts the first object and sets it down"
    assert not set(query.split()) & set(INSTRUCTION.split())
    assert [e.id for e in store.retrieve(query, "", 1, ["ravens"])] == [kept.id]


@pytest.mark.slow
def test_a_failed_round_and_a_bad_answer_become_the_next_prompts_feedback(
    tmp_path: Path, demo_file: Path, chat_server, monkeypatch
) -> None:
    learner = learner_for(tmp_path / "ws", "ical", chat_server, monkeypatch, library=False)
    try:
        chat_server.replies = [answer(NO_SECTION), answer(WRONG), answer(RIGHT)]
        outcome = learn(learner, demo_file)
    finally:
        learner.close()
    assert (outcome.accepted, outcome.rounds) == (True, 3)
    assert outcome.corrections == ["The red block belongs on the blue one."]
    _, second, third = (user_prompt(r) for r in chat_server.requests)
    assert (
        "# Feedback from the person\nYour answer could not be used: the answer held no `## Abstractions` section"
        in second
    )
    assert "It was not run." in second
    assert "# Feedback from the person\nThe red block belongs on the blue one." in third
    assert (
        "seed 0: the code ran, but the task is not done: 'red_block' is not over 'blue_block'"
        in third
    )
    assert "put_first_on_second('red_block', 'green_block')\n```" in third  # the last answer


@pytest.mark.slow
def test_the_ablations_keep_the_raw_demonstration_or_the_unrun_plan(
    tmp_path: Path, demo_file: Path, chat_server, monkeypatch
) -> None:
    from lyra.methods.ical import NO_ABSTRACTION, NO_VERIFICATION

    learner = learner_for(
        tmp_path / "ws", "ical-no-abstraction", chat_server, monkeypatch, library=False
    )
    try:
        raw = learn(learner, demo_file, NO_ABSTRACTION)
        chat_server.replies = [answer(WRONG)]
        unrun = learn(learner, demo_file, NO_VERIFICATION)
        (kept_raw,) = NO_ABSTRACTION.store(learner).examples()
        (kept_unrun,) = NO_VERIFICATION.store(learner).examples()
    finally:
        learner.close()
    assert (raw.accepted, raw.llm_calls, raw.rounds) == (True, 0, 0)
    assert (
        kept_raw.code
        == calls_plan(load_demo(demo_file))
        == (
            "# task\nfrom lyra.api import object_pose, put_first_on_second\n"
            "put_first_on_second('red_block', 'green_block')\nobject_pose('blue_block')\n"
            "put_first_on_second('red_block', 'blue_block')\n"
        )
    )
    assert (kept_raw.abstractions, kept_raw.verified) == ("", False)
    # Kept as answered: never run, so the wrong plan is not found out.
    assert (unrun.accepted, unrun.llm_calls, unrun.last) == (True, 1, None)
    assert "'green_block')" in kept_unrun.code and not kept_unrun.verified
    assert kept_unrun.abstractions == parse_answer(WRONG).abstractions


def test_a_failed_commit_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch) -> None:
    import lyra.methods.ical_store as ical_store

    store = IcalStore(tmp_path / "ical", None)
    example = IcalExample(
        id="stack", instruction=INSTRUCTION, code="# task\n", abstractions="- Task: a tower"
    )

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(ical_store, "save_example", crash)
    with pytest.raises(OSError):
        store.add(example)
    assert store.examples() == [] and store.retrieve("a tower", "", 5, ["ravens"]) == []
    # Killed after the rows were written and before the file (the rows stay where a kill
    # stops the clean-up): the next opening drops them.
    monkeypatch.setattr(store.memory, "remove_example", lambda example_id: None)
    with pytest.raises(OSError):
        store.add(example)
    assert store.retrieve("a tower", "", 5, ["ravens"]) == []  # the file is what is kept
    reopened = IcalStore(tmp_path / "ical", None)
    assert reopened.memory.retrieve(INSTRUCTION, k_skills=0).examples == ()
    monkeypatch.undo()
    reopened.add(example)
    found = IcalStore(tmp_path / "ical", None).retrieve("a tower", "", 5, ["ravens"])
    assert [e.id for e in found] == ["stack"]


def test_the_index_is_kept_while_the_files_are_unchanged(tmp_path: Path, monkeypatch) -> None:
    from lyra.memory.store import Memory

    folder = tmp_path / "ical"
    IcalStore(folder, None).add(
        IcalExample(id="stack", instruction=INSTRUCTION, code="# task\n", abstractions="- Task: x")
    )
    indexed: list[str] = []
    index_examples = Memory.index_examples
    monkeypatch.setattr(
        Memory,
        "index_examples",
        lambda self, rows: indexed.extend(r.id for r in rows) or index_examples(self, rows),
    )
    found = IcalStore(folder, None).retrieve(INSTRUCTION, "", 5, ["ravens"])
    assert ([e.id for e in found], indexed) == (["stack"], [])
    # Edited by hand: the next opening indexes the files again, and finds the new words.
    path = folder / "examples" / "stack.yaml"
    path.write_text(path.read_text().replace(INSTRUCTION, "line up the cubes"))
    found = IcalStore(folder, None).retrieve("line up the cubes", "", 5, ["ravens"])
    assert indexed == ["stack", "stack--abstractions"]
    assert [(e.id, e.instruction) for e in found] == [("stack", "line up the cubes")]


@pytest.mark.slow
def test_planning_shows_the_examples_with_their_abstractions_and_keeps_what_passes(
    tmp_path: Path, demo_file: Path, chat_server, monkeypatch
) -> None:
    learner = learner_for(tmp_path / "ws", "ical", chat_server, monkeypatch, library=False)
    demo = load_demo(demo_file)
    task = one_off_task(
        "put the red block onto the blue one",
        "ravens",
        demo_task(demo, demo_file).scene,
        [3],
        demo.check,
        feedback=["Red goes on blue."],
    )
    try:
        chat_server.replies = [answer(RIGHT), answer(WRONG), answer(RIGHT)]
        learn(learner, demo_file)
        outcome = learner.teach(task, PLANNED, Progress.load(learner.ws, PLANNED))
        kept = ICAL.store(learner).examples()
    finally:
        learner.close()
    assert (outcome.accepted, outcome.rounds, outcome.method) == (True, 2, "ical")
    first, second = (user_prompt(r) for r in chat_server.requests[1:])
    assert (
        f"Task: {INSTRUCTION}\n- Task: the red block ends resting on the blue block.\n"
        "- Causal: put_first_on_second lifts"
    ) in first
    assert "# Your last answer\n## Abstractions\n" in second
    assert "# Correction\nRed goes on blue." in second
    assert [r.body["messages"][0]["content"][:30] for r in chat_server.requests] == [
        "You write Python code that con"
    ] * 3
    assert sorted(e.instruction for e in kept) == [
        "put the red block onto the blue one",
        INSTRUCTION,
    ]


@pytest.mark.slow
def test_a_replayed_session_regrows_the_same_examples(
    tmp_path: Path, demo_file: Path, chat_server, monkeypatch
) -> None:
    monkeypatch.setenv("LYRA_LLM_BASE_URL", chat_server.url)
    chat_server.replies = [answer(WRONG), answer(RIGHT)]
    first, again = tmp_path / "first", tmp_path / "again"
    learn_args = ["demo", "learn", str(demo_file), "--feedback", "Red goes on blue."]
    monkeypatch.setenv("LYRA_WORKSPACE", str(first))
    assert main([*learn_args, "--llm", "openai:test-model"]) == 0
    (log,) = (first / ".lyra" / "sessions").glob("*.jsonl")
    monkeypatch.setenv("LYRA_WORKSPACE", str(again))
    assert main([*learn_args, "--llm", f"replay:{log}"]) == 0

    def kept(root: Path) -> list[dict]:
        examples = IcalStore(root / ".lyra" / "methods" / "ical", None).examples()
        return [e.model_dump(exclude={"created"}) for e in examples]

    assert len(kept(first)) == 1 and kept(first) == kept(again)


def test_learning_needs_a_check_to_verify_by(
    tmp_path: Path, demo_file: Path, capsys, monkeypatch
) -> None:
    import json

    data = json.loads(demo_file.read_text())
    del data["check"]
    bare = demo_file.with_name("bare.json")
    bare.write_text(json.dumps(data))
    monkeypatch.setenv("LYRA_WORKSPACE", str(tmp_path / "ws"))
    assert main(["demo", "learn", str(bare)]) == 1
    assert capsys.readouterr().err == (
        f"lyra: {bare}: no check to verify its plans by: give --success, or a `check` in the "
        "demonstration (docs/demonstrations.md)\n"
    )
    assert main(["demo", "learn", str(bare), "--method", "cap"]) == 1
    assert "--method cap does not learn from demonstrations" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_gives_the_ical_methods_the_suites_demonstrations_first(
    tmp_path: Path, demo_file: Path, chat_server, monkeypatch
) -> None:
    import yaml

    from lyra.evals.report import read_jsonl
    from lyra.evals.suite import load_suite
    from tests.evals.test_eval import SUITE, code_for

    suite_file = tmp_path / "suite" / "suite.yaml"
    suite_file.parent.mkdir()
    suite_file.write_text(yaml.safe_dump({**SUITE, "demonstrations": ["../stack.json"]}))
    (held,) = load_suite(suite_file).items(["unseen_instructions"])
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("LYRA_WORKSPACE", str(workspace))
    monkeypatch.setenv("LYRA_LLM_BASE_URL", chat_server.url)
    plan = answer(ABSTRACTIONS + "\n" + code_for(held))
    # ical: the demonstration abstracted and verified, then the run; the ablation: the run only.
    chat_server.replies = [answer(RIGHT), plan, plan]
    out = tmp_path / "out"
    args = ["eval", str(suite_file), "--split", "unseen_instructions", "--runs", "1"]
    args += ["--method", "ical", "--method", "ical-no-abstraction", "--workers", "1"]
    assert main([*args, "--llm", "openai:test-model", "--out", str(out)]) == 0
    records = read_jsonl(out / "results.jsonl")
    assert [(r.method, r.success, r.llm_calls) for r in records] == [
        ("ical", True, 1),
        ("ical-no-abstraction", True, 1),
    ]
    prompts = [user_prompt(r) for r in chat_server.requests]
    assert "# The demonstration, as it was typed at a console" in prompts[0]
    assert f"Task: {INSTRUCTION}\n- Task: the red block ends resting" in prompts[1]
    raw = f"Task: {INSTRUCTION}\n```python\n# task\nfrom lyra.api import object_pose"
    assert raw in prompts[2]
