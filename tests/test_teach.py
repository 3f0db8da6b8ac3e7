"""The learning loop with a scripted LLM (answers written into the test, not a model's).

Every test runs the real loop: real physics, real libcst edits, a real LanceDB memory on disk.
"""

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lyra.cli import main
from lyra.curriculum import Progress, load_curriculum
from lyra.episode import Budget
from lyra.examples import load_example
from lyra.llm import Completion
from lyra.memory.store import open_memory
from lyra.progress import Bar
from lyra.teach import Learner
from lyra.teachers import CODE_MISTAKE, ScriptedTeacher
from lyra.workspace import Workspace

HEADER = '''```python
def put_on(obj: str, target: str) -> None:
    """Put one object on top of another.

    Args:
        obj: the object to move.
        target: the object to put it on.
    """
    ...
```'''

GOOD_MODULE = '''# skills/put_on.py
from lyra.api import put_first_on_second


def put_on(obj: str, target: str) -> None:
    """Put one object on top of another.

    Args:
        obj: the object to move.
        target: the object to put it on.
    """
    put_first_on_second(obj, target)
'''

GOOD_TASK = """# task
from skills.put_on import put_on

put_on("red_block", "blue_block")
"""


def answer(module: str, task: str) -> str:
    return f"Here it is.\n\n```python\n{module}```\n\n```python\n{task}```\n"


GOOD = answer(GOOD_MODULE, GOOD_TASK)

CURRICULUM = """
name: test-loop
backend: ravens
description: one task, or two with the extension
tasks:
  - id: red-on-blue
    instruction: Put the red block on the blue block.
    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.45, y: -0.1}]}
        - {type: block, color: blue, poses: [{x: 0.55, y: 0.12}]}
    skill: {name: put_on, new: true}
    success:
      - on_top: {upper: red_block, lower: blue_block}
"""

BESIDE = """
  - id: red-beside-blue
    instruction: Put the red block beside the blue block, touching it.
    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.45, y: -0.1}]}
        - {type: block, color: blue, poses: [{x: 0.55, y: 0.12}]}
    skill: {name: put_on, extend: true}
    success:
      - next_to: {a: red_block, b: blue_block, gap: 0.0}
"""
# put_on extended to set the block beside its target, and the task that asks for it.
BESIDE_MODULE = (
    GOOD_MODULE.replace(
        "def put_on(obj: str, target: str) -> None:",
        "def put_on(obj: str, target: str, *, beside: bool = False) -> None:",
    )
    .replace(
        "    put_first_on_second(obj, target)",
        "    if beside:\n        put_first_on_second(obj, relative_point(target, 0.04, 90.0))\n"
        "    else:\n        put_first_on_second(obj, target)",
    )
    .replace("import put_first_on_second", "import put_first_on_second, relative_point")
)
BESIDE_TASK = (
    "# task\nfrom skills.put_on import put_on\n\nput_on('red_block', 'blue_block', beside=True)\n"
)


class ScriptedLLM:
    """Answers by purpose from queues the test wrote; keeps every prompt it was sent."""

    def __init__(self, **answers: list[str]) -> None:
        self.answers = {purpose: list(texts) for purpose, texts in answers.items()}
        self.prompts: list[tuple[str, str]] = []

    def complete(self, messages, *, purpose: str, task: str | None = None) -> Completion:
        self.prompts.append((purpose, messages[-1].content))
        queue = self.answers.get(purpose) or self.answers["skill_learning"]
        text = queue.pop(0) if len(queue) > 1 else queue[0]
        return Completion(text, "scripted", 100, 50, 0.0, "scripted", "the test")


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "__init__.py").write_text("")
    return Workspace(tmp_path)


def learner(workspace: Workspace, llm, said: list[str] | None = None) -> Learner:
    log = said if said is not None else []
    return Learner(
        workspace,
        llm,
        ScriptedTeacher(),
        open_memory(workspace),
        budget=Budget(code_seconds=3.0),
        say=log.append,
    )


def curriculum(workspace: Workspace, extra: str = ""):
    path = workspace.root / "curriculum.yaml"
    path.write_text(CURRICULUM + extra)
    return load_curriculum(path)


def skill_files(workspace: Workspace) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(workspace.skills_dir.glob("*.py"))}


def test_first_answer_is_accepted_and_everything_is_kept(workspace: Workspace) -> None:
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    outcomes = learner(workspace, llm).learn(curriculum(workspace))
    assert [(o.task, o.accepted, o.rounds, o.llm_calls) for o in outcomes] == [
        ("red-on-blue", True, 1, 2)
    ]
    assert skill_files(workspace)["put_on.py"] == GOOD_MODULE.removeprefix("# skills/put_on.py\n")
    assert Progress.load(workspace, "test-loop").accepted == {
        "red-on-blue": "test_loop_red_on_blue"
    }
    example = (workspace.examples_dir / "test_loop_red_on_blue.yaml").read_text()
    assert "skills:\n- put_on\n" in example and "on_top:" in example
    # Learning again finds nothing left to do.
    assert learner(workspace, llm).learn(curriculum(workspace)) == []


BAD_ANSWERS = {
    "no code": (
        "I would pick the red block and put it on the blue one.",
        "the answer must hold two Python code blocks: the module skills/put_on.py (defining `def put_on(...)`) and the task code (beginning with `# task`); it held 0 code block(s)",
    ),
    "syntax error": (
        answer(
            GOOD_MODULE,
            "# task\nfrom skills.put_on import put_on\nput_on('red_block', 'blue_block'\n",
        ),
        "task.py:3: syntax error: '(' was never closed",
    ),
    "infinite loop": (
        answer(
            GOOD_MODULE,
            "# task\nfrom skills.put_on import put_on\nwhile True:\n    pass\nput_on('red_block', 'blue_block')\n",
        ),
        "the code ran longer than the 3 s limit and was stopped; look for a loop that never ends",
    ),
    "forbidden import": (
        answer(
            GOOD_MODULE,
            "# task\nimport os\nfrom skills.put_on import put_on\nput_on('red_block', 'blue_block')\n",
        ),
        "task.py:2: module 'os' is not allowed in skills: use lyra.api for the robot",
    ),
    "os.system": (
        answer(
            GOOD_MODULE.replace(
                "from lyra.api import put_first_on_second",
                "import os\nfrom lyra.api import put_first_on_second",
            ).replace(
                "    put_first_on_second(obj, target)",
                "    os.system('true')\n    put_first_on_second(obj, target)",
            ),
            GOOD_TASK,
        ),
        "skills/put_on.py was not changed: fix these problems and answer again\n  line 1: module 'os' is not allowed in skills",
    ),
    "1 MB answer": (
        answer(GOOD_MODULE, GOOD_TASK + "x = 1\n" * 200_000),
        "the answer is 1200075 bytes, over the 100000-byte limit",
    ),
    "never lets go": (
        answer(
            GOOD_MODULE,
            "# task\nfrom lyra.api import pick\nfrom skills.put_on import put_on\nput_on('red_block', 'blue_block')\npick('red_block')\n",
        ),
        "the plan ended still holding 'red_block': place it",
    ),
    "missing skill": (
        answer(
            GOOD_MODULE,
            "# task\nfrom skills.put_on import put_on\nfrom skills.stack_tower import stack_tower\nput_on('red_block', 'blue_block')\nstack_tower(['red_block'])\n",
        ),
        "task.py:3: no skill named 'stack_tower'. Known skills: put_on",
    ),
}


@pytest.mark.parametrize("case", list(BAD_ANSWERS))
def test_bad_answer_becomes_feedback_then_the_retry_is_kept(
    workspace: Workspace, case: str
) -> None:
    bad, feedback = BAD_ANSWERS[case]
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[bad, GOOD], refinement=[GOOD])
    (outcome,) = learner(workspace, llm).learn(curriculum(workspace))
    assert (outcome.accepted, outcome.rounds) == (True, 2)
    second_prompt = [p for purpose, p in llm.prompts if purpose != "skill_parser"][1]
    assert feedback in second_prompt
    assert skill_files(workspace)["put_on.py"] == GOOD_MODULE.removeprefix("# skills/put_on.py\n")


def test_learning_shows_each_rounds_seeds_on_a_progress_bar(workspace: Workspace) -> None:
    shown = io.StringIO()
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[BAD_ANSWERS["never lets go"][0], GOOD])
    loop = Learner(
        workspace,
        llm,
        ScriptedTeacher(),
        open_memory(workspace),
        say=lambda _: None,
        progress=lambda seeds, label: Bar(seeds, label, stream=shown),
    )
    try:
        (outcome,) = loop.learn(curriculum(workspace))
    finally:
        loop.close()
    assert (outcome.accepted, outcome.rounds) == (True, 2)
    lines = shown.getvalue().splitlines()
    assert [line.split(", about")[0] for line in lines] == [
        "[##########          ] 1/2 memory indexed: 1 ok, 0 of 0 skills",
        "[####################] 2/2 memory indexed: 2 ok, 0 of 0 examples",
        "[####################] 1/1 red-on-blue round 1: 0 ok",
        "[####################] 1/1 red-on-blue round 2: 1 ok",
    ]


# put_on changed so that it sets the block beside its target: every earlier task breaks.
BREAKING_MODULE = GOOD_MODULE.replace(
    "    put_first_on_second(obj, target)",
    "    put_first_on_second(obj, relative_point(target, 0.04, 90.0))",
).replace("import put_first_on_second", "import put_first_on_second, relative_point")


def test_an_edit_that_breaks_an_earlier_task_is_caught_shown_and_not_kept(
    workspace: Workspace,
) -> None:
    fixed, beside_task = BESIDE_MODULE, BESIDE_TASK
    llm = ScriptedLLM(
        skill_parser=[HEADER],
        skill_learning=[GOOD, answer(BREAKING_MODULE, GOOD_TASK)],
        refinement=[answer(fixed, beside_task)],
    )
    said: list[str] = []
    loop = learner(workspace, llm, said)
    seen_on_disk: list[str] = []
    loop.say = lambda line: (
        said.append(line),
        seen_on_disk.append(skill_files(workspace)["put_on.py"])
        if "breaks earlier" in line
        else None,
    )
    outcomes = loop.learn(curriculum(workspace, BESIDE))
    assert [(o.task, o.accepted) for o in outcomes] == [
        ("red-on-blue", True),
        ("red-beside-blue", True),
    ]
    assert outcomes[1].rounds == 2 and outcomes[1].regression_checks == 2
    shown = next(line for line in said if "breaks earlier" in line)
    assert shown.startswith(
        "the edit breaks earlier tasks and is not kept:\n- test-loop/red-on-blue: Put the red block on the blue block.\n"
    )
    # While the breaking edit was being refused, the library still held the accepted module.
    assert seen_on_disk == [GOOD_MODULE.removeprefix("# skills/put_on.py\n")]
    refinement = next(p for purpose, p in llm.prompts if purpose == "refinement")
    assert "# Earlier tasks that must stay solvable" in refinement
    assert (
        "def put_on(obj: str, target: str, *, beside: bool = False) -> None:"
        in skill_files(workspace)["put_on.py"]
    )


SECOND = """
  - id: blue-on-red
    instruction: Put the blue block on the red block.
    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.45, y: -0.1}]}
        - {type: block, color: blue, poses: [{x: 0.55, y: 0.12}]}
    success:
      - on_top: {upper: blue_block, lower: red_block}
"""
# A plan that runs and leaves the blocks where they are.
IDLE = "# task\nfrom lyra.api import object_names\n\nobject_names()\n"


@pytest.mark.parametrize("independent", [False, True])
def test_a_task_not_accepted_stops_a_curriculum_unless_its_tasks_are_independent(
    workspace: Workspace, independent: bool
) -> None:
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[answer(GOOD_MODULE, IDLE)])
    text = CURRICULUM + SECOND + ("independent: true\n" if independent else "")
    path = workspace.root / "curriculum.yaml"
    path.write_text(text)
    loop = learner(workspace, llm)
    loop.max_rounds = 2
    outcomes = loop.learn(load_curriculum(path))
    expected = [("red-on-blue", False, 2), ("blue-on-red", False, 2)]
    assert [(o.task, o.accepted, o.rounds) for o in outcomes] == expected[: 1 + independent]


# A skill that cannot put anything on the blue block: a plan that needs it fails inside it.
NOT_ON_BLUE = GOOD_MODULE.removeprefix("# skills/put_on.py\n").replace(
    "    put_first_on_second(obj, target)",
    "    if target == 'blue_block':\n"
    "        raise ValueError(f'cannot reach {target} from here')\n"
    "    put_first_on_second(obj, target)",
)
PLAN_ON_BLUE = """
name: test-loop
backend: ravens
description: a plan that needs put_on
tasks:
  - id: plan-red-on-blue
    instruction: Put the red block on the blue block.
    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.45, y: -0.1}]}
        - {type: block, color: blue, poses: [{x: 0.55, y: 0.12}]}
    success:
      - on_top: {upper: red_block, lower: blue_block}
"""


class Extends(ScriptedTeacher):
    """Agrees to every skill the loop asks to teach, with the plan's own task."""

    def __init__(self) -> None:
        super().__init__()
        self.proposals: list[str] = []

    def teach_missing(self, task, proposal):
        from lyra.teachers import SkillRequest

        self.proposals.append(proposal)
        name = proposal.partition(":")[0]
        return SkillRequest(
            name, task.instruction, [{"on_top": {"upper": "red_block", "lower": "blue_block"}}]
        )


@pytest.mark.parametrize("teach", [True, False])
def test_a_plan_stuck_inside_a_skill_is_offered_its_extension(
    workspace: Workspace, teach: bool
) -> None:
    (workspace.skills_dir / "put_on.py").write_text(NOT_ON_BLUE)
    llm = ScriptedLLM(plan=[f"```python\n{GOOD_TASK}```\n"], skill_learning=[GOOD])
    said: list[str] = []
    loop = learner(workspace, llm, said)
    loop.teacher = teacher = Extends()
    loop.teach_missing = teach
    loop.max_rounds = 3
    path = workspace.root / "curriculum.yaml"
    path.write_text(PLAN_ON_BLUE)
    (outcome,) = loop.learn(load_curriculum(path))
    stuck = (
        "The plan fails inside put_on (skills/put_on.py:12) the same way as the round before: "
        "ValueError: cannot reach blue_block from here"
    )
    assert said.count(stuck) == (1 if teach else 2)
    if teach:
        # Extended on the plan's own layout, then the same plan passes in the next round.
        assert teacher.proposals == [
            "put_on: extended to this case, where it fails: ValueError: cannot reach "
            "blue_block from here"
        ]
        assert (outcome.accepted, outcome.rounds, outcome.taught) == (True, 3, ["put_on", "put_on"])
        assert skill_files(workspace)["put_on.py"] == GOOD_MODULE.removeprefix(
            "# skills/put_on.py\n"
        )
    else:
        assert teacher.proposals == []
        assert (outcome.accepted, outcome.rounds) == (False, 3)
        assert skill_files(workspace)["put_on.py"] == NOT_ON_BLUE


def test_a_failure_during_commit_keeps_nothing(workspace: Workspace, monkeypatch) -> None:
    import lyra.journal

    def crash(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(lyra.journal, "save_example", crash)
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    loop = learner(workspace, llm)
    with pytest.raises(RuntimeError, match="disk full"):
        loop.learn(curriculum(workspace))
    # Undone at once: no module, no example, no progress, no history, no journal, no memory row.
    assert skill_files(workspace) == {"__init__.py": ""}
    assert not (workspace.examples_dir / "test_loop_red_on_blue.yaml").exists()
    assert Progress.load(workspace, "test-loop").accepted == {}
    assert not (workspace.state_dir / "history" / "put_on").exists()
    assert not (workspace.state_dir / "journal.json").exists()
    assert [
        s.name for s in loop.memory.retrieve("Put the red block on the blue block.").skills
    ] == []


def test_a_step_cut_short_by_a_kill_is_undone_at_the_next_start(
    workspace: Workspace, monkeypatch
) -> None:
    import lyra.journal

    def killed(*args, **kwargs):
        raise SystemExit("killed")  # what a kill leaves: the journal, and no undo run

    monkeypatch.setattr(lyra.journal, "commit_step", killed)
    monkeypatch.setattr(lyra.journal, "_undo", lambda *args: None)
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    with pytest.raises(SystemExit):
        learner(workspace, llm).learn(curriculum(workspace))
    assert "put_on.py" in skill_files(workspace)  # written before the kill...
    monkeypatch.undo()
    said: list[str] = []
    learner(workspace, llm, said)
    assert said[0] == (
        "Undid an interrupted commit: restored put_on.py, log.jsonl, 0001.py, "
        "test_loop_red_on_blue.yaml, test-loop.json"
    )
    assert skill_files(workspace) == {"__init__.py": ""}  # ...and undone at the next start
    assert not (workspace.examples_dir / "test_loop_red_on_blue.yaml").exists()
    assert Progress.load(workspace, "test-loop").accepted == {}
    # The killed step may have written memory rows: the index is rebuilt from the files.
    assert said[1].startswith("Memory: indexed 0 skills and 0 examples in ")
    assert said[1].endswith("(there was no index yet; embedder: minilm-l6-v2/384)")
    # Not a git repository: the loop says so once per start, rather than skip commits silently.
    warning = (
        f"Warning: {workspace.root} is not a git repository, so accepted steps are not "
        "committed; run `git init` there (or start a workspace with `lyra init`)"
    )
    assert said[2:] == [warning]
    assert loop_memory_skills(learner(workspace, llm, said)) == []
    assert said[3:] == [warning]  # current now: not rebuilt at the start after that


def loop_memory_skills(loop: Learner) -> list[str]:
    try:
        return [s.name for s in loop.memory.retrieve("Put the red block on the blue block.").skills]
    finally:
        loop.close()


def test_a_git_failure_keeps_nothing_and_says_what_to_fix(workspace: Workspace) -> None:
    import subprocess as sp

    from lyra.library.errors import HistoryError

    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        sp.run(["git", "-C", str(workspace.root), *args], check=True)
    hook = workspace.root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'commits are frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    loop = learner(workspace, llm)
    with pytest.raises(HistoryError) as caught:
        loop.learn(curriculum(workspace))
    assert str(caught.value) == (
        f"git commit failed in {workspace.root}: commits are frozen; fix the repository (for "
        "example set user.name and user.email) and commit by hand"
    )
    assert skill_files(workspace) == {"__init__.py": ""}
    assert not workspace.examples_dir.joinpath("test_loop_red_on_blue.yaml").exists()
    assert not (workspace.state_dir / "history" / "put_on").exists()
    staged = sp.run(
        ["git", "-C", str(workspace.root), "diff", "--cached", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert staged.stdout == ""
    assert loop.memory.retrieve("Put the red block on the blue block.").examples == ()
    # Once git takes commits again, learning resumes and keeps the step.
    hook.unlink()
    (outcome,) = learner(workspace, llm).learn(curriculum(workspace))
    assert outcome.accepted and "put_on.py" in skill_files(workspace)


@pytest.mark.slow
def test_a_killed_process_resumes_with_the_library_unchanged(workspace: Workspace) -> None:
    answers = workspace.root / "answers"
    curriculum(workspace)
    env = {**os.environ, "LYRA_WORKSPACE": str(workspace.root)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lyra.cli",
            "learn",
            "curriculum.yaml",
            "--llm",
            f"manual:{answers}",
        ],
        cwd=workspace.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not (answers / "0001-skill_parser.prompt.md").exists():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.2)
        (answers / "0001-skill_parser.answer.md").write_text(HEADER)
        while not (answers / "0002-skill_learning.prompt.md").exists():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert skill_files(workspace) == {"__init__.py": ""}
    assert not workspace.examples_dir.exists()
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    (outcome,) = learner(workspace, llm).learn(curriculum(workspace))
    assert outcome.accepted and "put_on.py" in skill_files(workspace)


@pytest.mark.slow
def test_lyra_check_reruns_the_accepted_tasks(workspace: Workspace, monkeypatch, capsys) -> None:
    from lyra.cli import main

    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    learner(workspace, llm).learn(curriculum(workspace))
    monkeypatch.setenv("LYRA_WORKSPACE", str(workspace.root))
    assert main(["check", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "test-loop/red-on-blue                    pass" in out
    assert out.rstrip().splitlines()[-1].startswith("1 passed, 0 failed in ")
    # A folder selects the tasks of every curriculum in it, and only those.
    folder = workspace.root / "curricula"
    (folder / "more").mkdir(parents=True)
    (folder / "more" / "loop.yaml").write_text(CURRICULUM)
    assert main(["check", str(folder), "--workers", "1"]) == 0
    assert "1 passed, 0 failed in " in capsys.readouterr().out
    (folder / "more" / "loop.yaml").write_text(CURRICULUM.replace("name: test-loop", "name: other"))
    assert main(["check", str(folder), "--workers", "1"]) == 0
    assert capsys.readouterr().out == "no accepted tasks to check\n"
    empty = workspace.root / "empty"
    empty.mkdir()
    assert main(["check", str(empty)]) == 1
    assert capsys.readouterr().err == f"lyra: no curriculum (*.yaml) under {empty}\n"


def test_human_teacher_reads_numbered_choices() -> None:
    from lyra.terminal import HumanTeacher

    answers = iter(["7", "2", "Put it on the other side.", ""])
    shown: list[str] = []
    teacher = HumanTeacher(ask=lambda _: next(answers), say=shown.append)
    task = load_curriculum_text(CURRICULUM).tasks[0]
    verdict = teacher.judge(attempt_of(task))
    assert (verdict.action, verdict.text) == ("feedback", "Put it on the other side.")
    assert shown[0].startswith("\nRound 1 of 'red-on-blue':\nseed 0: done")
    assert shown[1] == "Answer 1, 2, 3 or 4."
    header = teacher.review_header(
        task, 'def put_on(a: str, b: str) -> None:\n    """Doc."""\n    ...'
    )
    assert (
        header == 'def put_on(a: str, b: str) -> None:\n    """Doc."""\n    ...'
    )  # Enter keeps it


def test_llm_critic_turns_its_answer_into_a_verdict() -> None:
    from lyra.teachers import LLMCritic

    task = load_curriculum_text(CURRICULUM).tasks[0]
    critic = LLMCritic(
        ScriptedLLM(critic=["FEEDBACK: the red block is not centred."]), lambda task: "objects"
    )
    verdict = critic.judge(attempt_of(task))
    assert (verdict.action, verdict.text) == ("feedback", "the red block is not centred.")
    assert (
        LLMCritic(ScriptedLLM(critic=["ACCEPT"]), lambda task: "").judge(attempt_of(task)).action
        == "accept"
    )


class HintOnce:
    wants_pictures = False

    def __init__(self) -> None:
        self.hinted = False

    def review_header(self, task, header: str) -> str:
        return header

    def judge(self, attempt):
        from lyra.teachers import TeacherVerdict

        if not self.hinted:
            self.hinted = True
            return TeacherVerdict("hint", "think of how you stacked blocks before")
        return TeacherVerdict("accept")


def test_a_hint_is_parsed_into_task_descriptions_that_steer_retrieval(workspace: Workspace) -> None:
    llm = ScriptedLLM(
        skill_parser=[HEADER],
        skill_learning=[GOOD],
        refinement=[GOOD],
        hint_parsing=["- stack one block on another\n- build a tower of blocks"],
    )
    loop = Learner(
        workspace,
        llm,
        HintOnce(),
        open_memory(workspace),
        budget=Budget(code_seconds=3.0),
        say=lambda _: None,
    )
    asked: list[tuple] = []
    retrieve = loop.memory.retrieve
    loop.memory.retrieve = lambda *a, **k: (
        asked.append(tuple(k.get("hints", ()))),
        retrieve(*a, **k),
    )[1]
    (outcome,) = loop.learn(curriculum(workspace))
    assert outcome.accepted and outcome.rounds == 2
    assert [p for p, _ in llm.prompts] == [
        "skill_parser",
        "skill_learning",
        "hint_parsing",
        "refinement",
        "improvement",
    ]
    assert asked[-1] == ("stack one block on another", "build a tower of blocks")


def test_a_scene_given_in_words_goes_through_the_task_setup_prompt(workspace: Workspace) -> None:
    setup_curriculum = CURRICULUM.replace(
        """    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.45, y: -0.1}]}
        - {type: block, color: blue, poses: [{x: 0.55, y: 0.12}]}
""",
        "    setup: a red block and a blue block on the table\n",
    )
    (workspace.root / "curriculum.yaml").write_text(setup_curriculum)
    scene_yaml = (
        "```yaml\nobjects:\n  - {type: block, color: red}\n  - {type: block, color: blue}\n```"
    )
    llm = ScriptedLLM(task_setup=[scene_yaml], skill_parser=[HEADER], skill_learning=[GOOD])
    (outcome,) = learner(workspace, llm).learn(load_curriculum(workspace.root / "curriculum.yaml"))
    assert outcome.accepted
    assert llm.prompts[0][0] == "task_setup"
    assert (
        "Scene the person described: a red block and a blue block on the table" in llm.prompts[0][1]
    )


def load_curriculum_text(text: str):
    import tempfile

    path = Path(tempfile.mkdtemp()) / "c.yaml"
    path.write_text(text)
    return load_curriculum(path)


def attempt_of(task):
    from lyra.episode import EpisodeResult
    from lyra.predicates import Verdict
    from lyra.sandbox import RunResult
    from lyra.teachers import Attempt

    run = EpisodeResult(0, RunResult(True, "", 2, 0.1), Verdict(True), {})
    return Attempt(task, 1, "put_on", GOOD_MODULE, GOOD_TASK, (run,))


REUSE = """
  - id: red-on-blue-again
    instruction: Put the red block on the blue block once more.
    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.5, y: 0.2}]}
        - {type: block, color: blue, poses: [{x: 0.4, y: -0.2}]}
    skill: {name: put_on}
    success:
      - on_top: {upper: red_block, lower: blue_block}
"""


def test_a_task_that_reuses_a_skill_unchanged_commits_only_its_example(
    workspace: Workspace,
) -> None:
    import subprocess as sp

    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        sp.run(["git", "-C", str(workspace.root), *args], check=True)
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    outcomes = learner(workspace, llm).learn(curriculum(workspace, REUSE))
    assert [(o.task, o.accepted, o.regression_checks) for o in outcomes] == [
        ("red-on-blue", True, 0),
        ("red-on-blue-again", True, 0),
    ]
    log = sp.run(
        ["git", "-C", str(workspace.root), "log", "--format=%s", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert [line for line in log.splitlines() if line][:2] == [
        "lyra: test-loop/red-on-blue-again: put_on: unchanged",
        "examples/test_loop_red_on_blue_again.yaml",
    ]


class AcceptEverything(ScriptedTeacher):
    def judge(self, attempt):
        from lyra.teachers import TeacherVerdict

        return TeacherVerdict("accept")


def test_accepting_a_failed_run_is_refused_until_it_passes(workspace: Workspace) -> None:
    failing = answer(
        GOOD_MODULE, "# task\nfrom skills.put_on import put_on\nput_on('red_block', 'red_block')\n"
    )
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[failing], refinement=[GOOD])
    said: list[str] = []
    loop = Learner(
        workspace,
        llm,
        AcceptEverything(),
        open_memory(workspace),
        budget=Budget(code_seconds=3.0),
        say=said.append,
    )
    (outcome,) = loop.learn(curriculum(workspace))
    assert (outcome.accepted, outcome.rounds) == (True, 2)
    assert any(line.startswith("It cannot be kept yet: seed 0: the code failed:") for line in said)


def test_a_bad_header_proposal_is_sent_back(workspace: Workspace) -> None:
    no_docstring = "```python\ndef put_on(obj: str, target: str) -> None:\n    ...\n```"
    llm = ScriptedLLM(skill_parser=[no_docstring, HEADER], skill_learning=[GOOD])
    (outcome,) = learner(workspace, llm).learn(curriculum(workspace))
    assert outcome.accepted and outcome.llm_calls == 3
    assert "Your last header could not be used: " in llm.prompts[1][1]


def test_a_fresh_clone_without_progress_resumes_from_the_example_files(
    workspace: Workspace,
) -> None:
    import shutil

    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    learner(workspace, llm).learn(curriculum(workspace))
    shutil.rmtree(workspace.state_dir)  # what a fresh clone of the workspace looks like
    assert learner(workspace, llm).learn(curriculum(workspace)) == []


def test_two_tasks_whose_example_slugs_collide_keep_two_examples(workspace: Workspace) -> None:
    long_a = "put-the-red-block-on-the-blue-block-carefully-first-time"
    long_b = "put-the-red-block-on-the-blue-block-carefully-second-time"
    text = CURRICULUM.replace("id: red-on-blue", f"id: {long_a}") + REUSE.replace(
        "id: red-on-blue-again", f"id: {long_b}"
    )
    (workspace.root / "curriculum.yaml").write_text(text)
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD])
    outcomes = learner(workspace, llm).learn(load_curriculum(workspace.root / "curriculum.yaml"))
    first, second = (o.example for o in outcomes)
    assert first.id == "test_loop_put_the_red_block_on_the_blue_block_ca"
    assert (
        second.id.startswith("test_loop_put_the_red_block_on_the_blue_") and second.id != first.id
    )
    assert len(second.id) == 48 and second.id[-9] == "_"
    # Both regression checks are on disk, each naming its own task.
    tasks = {p.stem: load_example(p).task for p in workspace.examples_dir.glob("*.yaml")}
    assert tasks == {first.id: f"test-loop/{long_a}", second.id: f"test-loop/{long_b}"}


def test_an_unusable_scene_answer_is_sent_back(workspace: Workspace) -> None:
    text = CURRICULUM.replace(
        """    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.45, y: -0.1}]}
        - {type: block, color: blue, poses: [{x: 0.55, y: 0.12}]}
""",
        "    setup: a red block and a blue block on the table\n",
    )
    (workspace.root / "curriculum.yaml").write_text(text)
    bomb = "```yaml\na: &a [x, x]\nb: [*a, *a]\nobjects: []\n```"
    no_blue = "```yaml\nobjects:\n  - {type: block, color: red}\n```"
    good = "```yaml\nobjects:\n  - {type: block, color: red}\n  - {type: block, color: blue}\n```"
    llm = ScriptedLLM(
        task_setup=[bomb, no_blue, good], skill_parser=[HEADER], skill_learning=[GOOD]
    )
    (outcome,) = learner(workspace, llm).learn(load_curriculum(workspace.root / "curriculum.yaml"))
    assert outcome.accepted
    setups = [p for purpose, p in llm.prompts if purpose == "task_setup"]
    assert len(setups) == 3
    assert setups[1].endswith(
        "Your last scene could not be used: the answer:1: YAML anchors and aliases (&name, "
        "*name) are not allowed: write each value out"
    )
    assert setups[2].endswith(
        "Your last scene could not be used: success: the predicate names 'blue_block', which "
        "the scene does not have (on seed 0 it has red_block)"
    )


REVISED = """
  - id: red-on-blue-revised
    instruction: Put the red block on the blue block.
    scene:
      objects:
        - {type: block, color: red, poses: [{x: 0.5, y: 0.2}]}
        - {type: block, color: blue, poses: [{x: 0.4, y: -0.2}]}
        - {type: block, color: green, poses: [{x: 0.6, y: 0.0}]}
    revises: test-loop/red-on-blue
    success:
      - on_top: {upper: red_block, lower: blue_block}
"""
# Works where there is a green block, and nowhere else.
GREEN_PLAN = (
    "```python\n# task\nfrom lyra.api import object_pose\nfrom skills.put_on import put_on\n\n"
    "object_pose('green_block')\nput_on('red_block', 'blue_block')\n```"
)
PLAIN_PLAN = (
    "```python\n# task\nfrom skills.put_on import put_on\n\nput_on('red_block', 'blue_block')\n```"
)


# Revises the revision: its plan must do both earlier layouts.
REVISED_AGAIN = (
    REVISED.replace("id: red-on-blue-revised", "id: red-on-blue-third")
    .replace("{x: 0.6, y: 0.0}", "{x: 0.62, y: 0.05}")
    .replace("revises: test-loop/red-on-blue", "revises: test-loop/red-on-blue-revised")
)


@pytest.mark.slow
def test_a_revising_plan_must_also_do_the_tasks_it_revises(
    workspace: Workspace, monkeypatch, capsys
) -> None:
    llm = ScriptedLLM(
        skill_parser=[HEADER], skill_learning=[GOOD], plan=[GREEN_PLAN, PLAIN_PLAN, PLAIN_PLAN]
    )
    said: list[str] = []
    text = REVISED + REVISED_AGAIN
    outcomes = learner(workspace, llm, said).learn(curriculum(workspace, text))
    assert [(o.task, o.accepted, o.rounds, o.regression_checks) for o in outcomes] == [
        ("red-on-blue", True, 1, 0),
        ("red-on-blue-revised", True, 2, 2),
        ("red-on-blue-third", True, 1, 2),  # on the revision's layout and the first task's
    ]
    refused = (
        "the edit breaks earlier tasks and is not kept:\n"
        "- test-loop/red-on-blue: Put the red block on the blue block.\n"
        "  this plan, run on its layout: seed 0: the code failed:\n"
        "UnknownObjectError: unknown object 'green_block'"
    )
    assert any(line.startswith(refused) for line in said)
    assert said.count("ran this plan on test_loop_red_on_blue, which it revises: ok") == 2
    assert "ran this plan on test_loop_red_on_blue_revised, which it revises: ok" in said
    # The second plan prompt says which task the first plan failed, and how.
    second = [p for purpose, p in llm.prompts if purpose == "plan"][1]
    assert (
        "# Correction\nYour plan fails on the task it revises; it must do that one too:\n"
        "- test-loop/red-on-blue: Put the red block on the blue block.\n"
        "  this plan, run on its layout: seed 0: the code failed:\n" in second
    )
    kept = load_example(workspace.examples_dir / "test_loop_red_on_blue_revised.yaml")
    assert kept.revises == "test-loop/red-on-blue" and kept.code == PLAIN_PLAN[10:-3]
    # The example it revises is still there, unchanged: the regression suite keeps checking it.
    assert load_example(workspace.examples_dir / "test_loop_red_on_blue.yaml").revises is None
    # lyra check runs each example, and each revision on every layout it revises.
    monkeypatch.setenv("LYRA_WORKSPACE", str(workspace.root))
    assert main(["check", "--workers", "1"]) == 0
    # Under the header, above the count: each row's task and result, without its seconds.
    rows = [line.split()[:-1] for line in capsys.readouterr().out.splitlines()[2:-1]]
    assert rows == [
        ["test-loop/red-on-blue", "pass"],
        ["test-loop/red-on-blue-revised", "pass"],
        ["test-loop/red-on-blue-revised", "on", "test-loop/red-on-blue", "pass"],
        ["test-loop/red-on-blue-third", "pass"],
        ["test-loop/red-on-blue-third", "on", "test-loop/red-on-blue", "pass"],
        ["test-loop/red-on-blue-third", "on", "test-loop/red-on-blue-revised", "pass"],
    ]


def test_a_second_revision_of_one_task_is_sent_to_its_newest_revision(
    workspace: Workspace,
) -> None:
    from lyra.errors import LyraError

    fork = REVISED_AGAIN.replace("id: red-on-blue-third", "id: red-on-blue-fork").replace(
        "revises: test-loop/red-on-blue-revised", "revises: test-loop/red-on-blue"
    )
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD], plan=[PLAIN_PLAN])
    with pytest.raises(LyraError) as error:
        learner(workspace, llm).learn(curriculum(workspace, REVISED + REVISED_AGAIN + fork))
    assert str(error.value) == (
        "task 'red-on-blue-fork' revises 'test-loop/red-on-blue', which "
        "'test-loop/red-on-blue-revised' already revises: revise 'test-loop/red-on-blue-third', "
        "its newest revision, so that one plan does every layout taught"
    )


def test_revising_a_task_not_learnt_here_says_what_to_do(workspace: Workspace) -> None:
    from lyra.errors import LyraError

    text = REVISED.replace("test-loop/red-on-blue", "elsewhere/red-on-blue")
    llm = ScriptedLLM(skill_parser=[HEADER], skill_learning=[GOOD], plan=[PLAIN_PLAN])
    with pytest.raises(LyraError) as error:
        learner(workspace, llm).learn(curriculum(workspace, text))
    assert str(error.value) == (
        "task 'red-on-blue-revised' revises 'elsewhere/red-on-blue', which has not been learnt "
        "here: learn that task first, or remove `revises`"
    )
    assert [purpose for purpose, _ in llm.prompts].count("plan") == 0


@pytest.mark.slow
def test_a_skill_edit_reruns_each_revision_on_the_layouts_it_revises(
    workspace: Workspace,
) -> None:
    llm = ScriptedLLM(
        skill_parser=[HEADER],
        skill_learning=[GOOD, answer(BREAKING_MODULE, GOOD_TASK)],
        refinement=[answer(BESIDE_MODULE, BESIDE_TASK)],
        plan=[PLAIN_PLAN],
    )
    said: list[str] = []
    outcomes = learner(workspace, llm, said).learn(curriculum(workspace, REVISED + BESIDE))
    # Each round re-checks both examples on their own layouts, and the revision on the first's.
    assert [(o.task, o.accepted, o.rounds, o.regression_checks) for o in outcomes] == [
        ("red-on-blue", True, 1, 0),
        ("red-on-blue-revised", True, 1, 1),
        ("red-beside-blue", True, 2, 6),
    ]
    shown = next(line for line in said if "breaks earlier" in line)
    assert (
        "- test-loop/red-on-blue: Put the red block on the blue block.\n"
        "  the plan of test-loop/red-on-blue-revised, run on its layout: seed 0: the code ran, "
        "but the task is not done" in shown
    )


def test_a_python_mistake_gets_its_own_word_and_the_persons_waits_for_a_failure_it_fits(
    workspace: Workspace,
) -> None:
    """Round 1 forgets to import the skill (NameError), round 2 ends holding the block, round 3
    works: the scripted person's line is said after round 2, not after the NameError, and the
    improvement prompt quotes the first attempt and what it did."""
    said = "It must let go of the red block once it is on the blue one."
    path = workspace.root / "curriculum.yaml"
    path.write_text(CURRICULUM + f"    feedback: [{said!r}]\n")
    forgot_import = answer(GOOD_MODULE, '# task\nput_on("red_block", "blue_block")\n')
    llm = ScriptedLLM(
        skill_parser=[HEADER],
        skill_learning=[forgot_import],
        refinement=[BAD_ANSWERS["never lets go"][0], GOOD],
        improvement=["Problem: no import.\nLesson: import the skill."],
    )
    (outcome,) = learner(workspace, llm).learn(load_curriculum(path))
    assert (outcome.accepted, outcome.rounds) == (True, 3)
    assert outcome.corrections == [CODE_MISTAKE, said]
    improvement = next(p for purpose, p in llm.prompts if purpose == "improvement")
    assert (
        '# The first attempt\n```python\n# task\nput_on("red_block", "blue_block")\n```\n'
        "What happened:\nseed 0: the code failed:\nNameError: name 'put_on' is not defined\n"
    ) in improvement
    assert f"# The corrections, in order\n1. {CODE_MISTAKE}\n2. {said}\n" in improvement
