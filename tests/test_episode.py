"""The episode runner's budgets: simulated time and primitive calls, and the code's own time.

A slow machine makes an episode take longer, never end differently: the wall-clock limit is on
the generated code's own time only, and time spent inside primitives does not count.
"""

from __future__ import annotations

import time

from lyra.backend import Backend
from lyra.episode import Budget, run_episode
from lyra.geometry import Point, Pose, quat_from_yaw
from lyra.sandbox import run_code
from tests.sandbox.conftest import FakeTable

SCENE = {
    "objects": [
        {"type": "block", "color": "red", "poses": [{"x": 0.45, "y": -0.1}]},
        {"type": "block", "color": "blue", "poses": [{"x": 0.55, "y": 0.12}]},
    ]
}


class SlowTable(FakeTable):
    """A backend whose every pick takes half a second of wall-clock time, like a busy machine."""

    def pick(self, name: str) -> None:
        time.sleep(0.5)
        super().pick(name)


def test_the_code_time_limit_ignores_time_inside_primitives() -> None:
    code = (
        "from lyra.api import pick, place, Point\n"
        "for _ in range(3):\n"
        "    pick('red_block')\n"
        "    place(Point(0.4, 0.1, 0.02))\n"
    )
    result = run_code(code, SlowTable(), timeout_s=0.3)
    assert (result.ok, result.feedback, result.primitive_calls) == (True, "", 6)
    assert result.wall_s >= 1.5  # three half-second picks, all inside primitives
    assert result.code_s < 0.3


def test_the_codes_own_time_is_limited() -> None:
    code = "from lyra.api import pick\npick('red_block')\nwhile True:\n    pass\n"
    result = run_code(code, SlowTable(), timeout_s=0.3)
    assert (result.ok, result.error, result.primitive_calls) == (False, "timeout", 1)
    assert result.feedback == (
        "the code ran longer than the 0.3 s limit and was stopped; look for a loop that never ends"
    )


def test_a_call_that_never_returns_is_killed_and_the_backend_is_left_alone() -> None:
    table = FakeTable()
    code = (
        "import itertools\n"
        "from lyra.api import put_first_on_second\n"
        "put_first_on_second('red_block', 'blue_block')\n"
        "total = sum(itertools.count())\n"
    )
    started = time.monotonic()
    result = run_code(code, table, timeout_s=0.5)
    assert (result.ok, result.error, result.primitive_calls) == (False, "timeout", 1)
    assert result.feedback == (
        "the code was stopped after 0.5 s of its own time (the limit): it was stuck inside a "
        "call that never returns, such as summing an endless iterator; make every loop end"
    )
    assert time.monotonic() - started < 10
    # The worker is gone: the one call it made is all that ever reached the backend.
    time.sleep(0.3)
    assert table.calls == ["put red_block"]


def test_simulated_time_is_a_budget(ravens: Backend) -> None:
    code = (
        "from lyra.api import move_ee, Point\n"
        "for _ in range(50):\n"
        "    move_ee(Point(0.4, 0.2, 0.2))\n"
        "    move_ee(Point(0.4, -0.2, 0.2))\n"
    )
    run = run_episode(ravens, SCENE, 0, code, skills_root=None, budget=Budget(sim_seconds=2.0))
    assert (run.ok, run.result.error) == (False, "budget")
    # Three motions of 0.7 s each: the fourth call finds the budget spent.
    assert run.result.primitive_calls == 3
    assert run.result.feedback == (
        "the plan used more than 2 s of simulated time (the limit) and was stopped; look for "
        "motions repeated in a loop\n  at task.py:4: move_ee(Point(0.4, -0.2, 0.2))"
    )
    # The budget is simulated seconds: the same on any machine, however busy.
    again = run_episode(ravens, SCENE, 0, code, skills_root=None, budget=Budget(sim_seconds=2.0))
    assert again.result.primitive_calls == run.result.primitive_calls
    assert 2.0 < run.sim_seconds < 3.0


def test_the_judge_reads_the_backend_after_the_code(ravens: Backend) -> None:
    code = (
        "from lyra.api import put_first_on_second\nput_first_on_second('red_block', 'blue_block')\n"
    )
    success = [{"on_top": {"upper": "red_block", "lower": "blue_block"}}]
    run = run_episode(ravens, SCENE, 0, code, skills_root=None, success=success, hold_seconds=1.0)
    assert run.ok and run.calls == {"put_first_on_second": 1}
    red = Pose(Point(*run.snapshot["red_block"][:3]), tuple(run.snapshot["red_block"][3:]))
    blue = run.snapshot["blue_block"]
    assert red.position.distance_to(Point(blue[0], blue[1], blue[2] + 0.04)) < 0.005
    assert abs(red.yaw - Pose(Point(0, 0, 0), quat_from_yaw(0.0)).yaw) < 0.1
    failed = run_episode(
        ravens,
        SCENE,
        0,
        "x = 1\n",
        skills_root=None,
        success=success,
    )
    assert (failed.ok, failed.verdict.reason) == (False, "'red_block' is not over 'blue_block'")


def test_the_robot_is_parked_before_the_final_hold(ravens: Backend) -> None:
    # A structure that stands only while the arm leans on it does not stand.
    code = (
        "from lyra.api import put_first_on_second\nput_first_on_second('red_block', 'blue_block')\n"
    )
    home = ravens.table.kinematics.home_tip  # type: ignore[attr-defined]
    held = run_episode(ravens, SCENE, 0, code, skills_root=None, hold_seconds=0.5)
    assert held.ok and ravens.embodiment.ee_pose().position.distance_to(home) < 0.002
    judged_at_once = run_episode(ravens, SCENE, 0, code, skills_root=None)
    assert judged_at_once.ok and ravens.embodiment.ee_pose().position.distance_to(home) > 0.1
