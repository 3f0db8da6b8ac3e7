"""A robot is not a simulator: the fr3 backend on an address, and ``lyra deploy`` driving it.

"The robot" here is a franky-sim started in the test on the first free loopback address (the
``franky_sim`` fixture), connected to as to an arm; the dry run's own franky-sim then takes the
next one. Messages are compared with the address it got.
"""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("franky", reason="the fr3 tests need franky: pip install '.[fr3]'")
pytest.importorskip("franky_sim", reason="the fr3 tests need franky-sim: pip install '.[fr3]'")

import lyra.sandbox
from envs.fr3 import SPEC
from envs.fr3.arm import FR3Arm
from envs.fr3.backend import FR3Backend
from envs.fr3.sim import FrankySim
from lyra.check import check_example
from lyra.cli import main
from lyra.episode import run_episode
from lyra.errors import LyraError
from lyra.examples import Example
from tests.fr3.conftest import CUBES, ON_BLUE, PLAN, REPO, deploy

REFUSAL = (
    "does not run on a robot: a robot can be neither laid out from a seed nor nudged, and its "
    "time is real time, so learning, seeds and regression checks run in a simulator of the "
    "same robot. Run it in franky-sim, the fr3 backend without --robot:\n  "
)


def speed(sim: FrankySim, over: float = 0.05) -> float:
    """The arm's fastest joint, rad/s, from its positions ``over`` seconds apart (MuJoCo's qvel
    of an arm held still jitters by 0.08 rad/s)."""
    before = sim.sim.data.qpos[:7].copy()
    time.sleep(over)
    return float(np.abs(sim.sim.data.qpos[:7] - before).max()) / over


def when_moving(sim: FrankySim, act: Callable[[], None]) -> threading.Thread:
    """Call ``act`` once the arm of ``sim`` is moving (a joint faster than 0.05 rad/s)."""

    def watch() -> None:
        while speed(sim) < 0.05:
            pass
        act()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_the_same_backend_is_a_simulator_without_an_address_and_a_robot_with_one(
    franky_sim: FrankySim, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (SPEC.robot, SPEC.confinement) == (False, ())
    # Read from lyra.sandbox.LAYERS when connecting: a layer added there is required too.
    monkeypatch.setattr(lyra.sandbox, "LAYERS", (*lyra.sandbox.LAYERS, "tpm"))
    robot = FR3Backend(franky_sim.host)
    try:
        assert robot.spec.robot and robot.spec.confinement == (*lyra.sandbox.LAYERS,)
        robot.reset(CUBES, 0)
        example = Example(id="x", instruction="x", code="pass\n", scene={}, seed=0)
        with pytest.raises(LyraError) as refused:
            check_example(robot, example, REPO / "skills")
        assert str(refused.value) == f"a regression check {REFUSAL}lyra check"
        with pytest.raises(LyraError, match=r"^a nudged run does not run on a robot"):
            robot.reset(CUBES, 0, perturb=1)
        # Without every layer no code runs on the robot, and nothing moves.
        before = franky_sim.sim.data.qpos[:7].copy()
        run = run_episode(robot, CUBES, 0, "put_on('red', 'blue')\n", skills_root=None)
        assert (run.result.error, run.result.feedback) == (
            "policy",
            "the code was not run: this machine cannot confine it as required (tpm: not a "
            "layer lyra knows); run on a machine with these layers, or do not require them",
        )
        assert np.abs(franky_sim.sim.data.qpos[:7] - before).max() < 1e-3
    finally:
        robot.close()


def test_check_and_run_on_a_robot_refuse_naming_the_simulator_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "curricula/fr3", "--robot", "172.16.0.2"]) == 1
    assert capsys.readouterr().err == f"lyra: lyra check {REFUSAL}lyra check curricula/fr3\n"
    assert main(["run", "curricula/fr3/cubes.yaml", "--robot", "172.16.0.2"]) == 1
    assert capsys.readouterr().err == (
        f"lyra: lyra run {REFUSAL}lyra run curricula/fr3/cubes.yaml --backend fr3\n"
        "Then run an accepted plan on the robot, after a dry run in franky-sim:\n"
        "  lyra deploy PLAN.py --scene SCENE.yaml --robot 172.16.0.2\n"
    )
    assert main(["check", "--robot", "h", "--workspace", "."]) == 1
    assert main(["run", "x.yaml", "--backend", "ravens", "--robot", "h"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "lyra: the ravens backend is a simulator only: there is no robot to connect to "
        "(backends with robots: fr3)"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("plan", "success", "why"),
    [
        (PLAN + "raise RuntimeError('the tower fell')\n", "[]", "RuntimeError: the tower fell"),
        (
            "from lyra.api import put_first_on_second\n\nput_first_on_second('red', 'green')\n",
            ON_BLUE,
            "the task is not done",
        ),
    ],
    ids=["raises", "misses-the-target"],
)
def test_deploy_is_refused_when_the_dry_run_fails(
    franky_sim: FrankySim,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    plan: str,
    success: str,
    why: str,
) -> None:
    (workspace / "bad.py").write_text(plan)
    arm, red = franky_sim.sim.data.qpos[:7].copy(), franky_sim.sim.data.body("red").xpos.copy()
    options = ("--robot", franky_sim.host, "--success", success, "--yes")
    assert main(deploy(workspace, "bad.py", *options)) == 1
    out, err = capsys.readouterr()
    assert err.startswith(
        "lyra: refused: the dry run in franky-sim failed, so nothing was sent to the robot at "
        f"{franky_sim.host}:\nseed 0: "
    )
    assert why in err
    assert "This runs on" not in out  # never asked
    assert not (workspace / ".lyra" / "deploys").exists()
    # The robot never moved, and nor did its cubes.
    assert np.abs(franky_sim.sim.data.qpos[:7] - arm).max() < 1e-3
    assert np.abs(franky_sim.sim.data.body("red").xpos - red).max() < 1e-3


@pytest.mark.slow
def test_deploy_shows_what_will_run_asks_and_runs_only_on_yes(
    franky_sim: FrankySim,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    red = franky_sim.sim.data.body("red").xpos.copy()
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    options = ("--robot", franky_sim.host, "--success", ON_BLUE)
    assert main(deploy(workspace, "plan.py", *options)) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "dry run in franky-sim first, on the same scene"
    assert out.splitlines()[1].startswith("dry run passed (")
    assert "\n".join(out.splitlines()[2:]) == (
        f"This runs on the fr3 robot at {franky_sim.host}.\n"
        f"The scene ({workspace / 'scene.yaml'}); set the table up as it says:\n"
        "  objects:\n"
        "  - name: red\n    color: red\n    kind: cube\n    position:\n    - 0.45\n    - 0.15\n"
        "    yaw_deg: 0.0\n    size: 0.05\n"
        "  - name: green\n    color: green\n    kind: cube\n    position:\n    - 0.45\n    - -0.15\n"
        "    yaw_deg: 0.0\n    size: 0.05\n"
        "  - name: blue\n    color: blue\n    kind: cube\n    position:\n    - 0.6\n    - 0.0\n"
        "    yaw_deg: 0.0\n    size: 0.05\n"
        "  zones: []\n"
        "The skills it calls: skills/put_on.py\n"
        f"The plan ({workspace / 'plan.py'}):\n"
        "  from skills.put_on import put_on\n  \n  put_on('red', 'blue')\n"
        f"Run it on the robot at {franky_sim.host}? [y/N] not run: nothing was sent to the "
        f"robot at {franky_sim.host}"
    )
    assert np.abs(franky_sim.sim.data.body("red").xpos - red).max() < 1e-3
    # The passing dry run is on record: a second deploy runs on the robot without another.
    assert main(deploy(workspace, "plan.py", *options, "--yes")) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "a dry run of this plan, scene and skill versions passed in franky-sim at "
    )
    assert f"done on the robot at {franky_sim.host}: " in out
    blue = franky_sim.sim.data.body("blue").xpos
    landed = franky_sim.sim.data.body("red").xpos
    assert np.abs(landed - blue - [0, 0, 0.05]).max() < 0.01
    # A changed skill is another plan: its dry run runs again.
    put_on = workspace / "skills" / "put_on.py"
    put_on.write_text(put_on.read_text() + "\n# edited\n")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(deploy(workspace, "plan.py", "--robot", franky_sim.host)) == 1
    assert capsys.readouterr().out.startswith("dry run in franky-sim first")


@pytest.mark.slow
def test_ctrl_c_mid_motion_stops_the_arm_and_leaves_it_still(
    franky_sim: FrankySim, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only the robot's arm is watched: the dry run moves its own franky-sim's.
    at_interrupt: list[np.ndarray] = []

    def interrupt() -> None:
        at_interrupt.append(franky_sim.sim.data.qpos[:7].copy())
        os.kill(os.getpid(), signal.SIGINT)

    when_moving(franky_sim, interrupt)
    assert main(deploy(workspace, "plan.py", "--robot", franky_sim.host, "--yes")) == 130
    assert capsys.readouterr().err == (
        "\nlyra: stopped by Ctrl-C: the arm was told to stop and holds still, and nothing more "
        "is sent to it. Look at where the objects are, set the table up as the scene says, and "
        "run the same command again\n"
    )
    fastest = speed(franky_sim, over=0.5)
    moved = float(np.abs(franky_sim.sim.data.qpos[:7] - at_interrupt[0]).max())
    print(
        f"after Ctrl-C: fastest joint {fastest:.4f} rad/s over 0.5 s; {moved:.3f} rad moved since"
    )
    assert fastest < 0.01
    # Stopped on the way: red was never picked up.
    assert franky_sim.sim.data.body("red").xpos[2] < 0.03


@pytest.mark.slow
def test_a_control_error_on_the_robot_is_recovered_and_says_what_to_do(
    franky_sim: FrankySim,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # franky-sim's own server preempts the motion, as the arm's safety functions do: franky
    # raises a ControlException ("Move command preempted") on the client's side.
    when_moving(franky_sim, lambda: franky_sim._server.robot_servers[0].stop_motion())
    with caplog.at_level("INFO", logger="franky_sim"):
        assert main(deploy(workspace, "plan.py", "--robot", franky_sim.host, "--yes")) == 1
    out = capsys.readouterr().out
    assert (
        f"lyra: the plan did not finish on the robot at {franky_sim.host}: seed 0: the code "
        "failed:" in out
    )
    assert (
        "(libfranka: Move command preempted!); lyra called recover_from_errors() and the arm "
        "holds still. Look at the arm and the table (a collision, the user stop, an object in "
        "the way), set the objects back as the scene says, and run the plan again"
    ) in out
    # The recovery reached the robot over the protocol.
    assert "Executing Automatic Error Recovery" in caplog.messages
    assert speed(franky_sim, over=0.5) < 0.01


def test_a_perception_file_with_a_problem_is_refused_naming_its_line_before_the_dry_run(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    poses = workspace / "poses.yaml"
    poses.write_text("red:\n  position: [0.45, 0.15]\n  size: [0.05, 0.05, 0.05]\n")
    # No robot answers at this address: nothing connects before the run.
    options = ("--robot", "172.16.0.2", "--perception", str(poses), "--yes")
    assert main(deploy(workspace, "plan.py", *options)) == 1
    out, err = capsys.readouterr()
    assert out == ""  # no dry run, no question
    assert err == (
        f"lyra: {poses}:2: red.position.2: Field required\n"
        "a poses file maps each object to where it is: `red_cube: {position: [0.5, 0.1, 0.025], "
        "size: [0.05, 0.05, 0.05], yaw_deg: 0, color: red}` (docs/fr3.md)\n"
    )


@pytest.mark.parametrize("factor", ["0", "1.5", "-0.1"])
def test_a_speed_that_is_not_a_fraction_of_full_speed_is_refused_before_anything_runs(
    factor: str, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("--robot", "172.16.0.2", "--speed", factor, "--yes")
    assert main(deploy(workspace, "plan.py", *options)) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"lyra: --speed {float(factor):g}: give a fraction of the arm's full speed, above 0 and "
        "at most 1 (0.1 for a first run); nothing was run\n"
    )


@pytest.mark.slow
def test_deploy_takes_the_objects_poses_from_the_perception_file(
    franky_sim: FrankySim,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    poses = workspace / "poses.yaml"
    measured = {
        c.name: f"{c.name}: {{position: [{c.position[0]}, {c.position[1]}, 0.025], size: "
        "[0.05, 0.05, 0.05]}\n"
        for c in CUBES.objects
    }
    # A table where perception does not see blue: the robot refuses before anything moves.
    poses.write_text(measured["red"] + measured["green"])
    arm = franky_sim.sim.data.qpos[:7].copy()
    options = ("--robot", franky_sim.host, "--perception", str(poses), "--yes")
    assert main(deploy(workspace, "plan.py", *options)) == 1
    out, err = capsys.readouterr()
    assert f"Where the objects are: {poses}\n" in out
    assert err == (
        "lyra: perception does not see blue: set the table up as the scene says before running "
        "it on the robot\n"
    )
    assert np.abs(franky_sim.sim.data.qpos[:7] - arm).max() < 1e-3
    # Measured in full, the plan runs (its dry run is on record) and red lands on blue, at the
    # speed asked for.
    poses.write_text("".join(measured.values()))
    speeds: list[float] = []
    set_speed = FR3Arm.set_speed
    monkeypatch.setattr(
        FR3Arm, "set_speed", lambda arm, factor: speeds.append(set_speed(arm, factor)) or speeds[-1]
    )
    assert main(deploy(workspace, "plan.py", *options, "--speed", "0.1")) == 0
    out = capsys.readouterr().out
    assert "At 0.1 of the arm's full speed (never above the backend's cap)\n" in out
    assert f"done on the robot at {franky_sim.host}: " in out
    assert speeds == [pytest.approx(0.1)]
    landed = franky_sim.sim.data.body("red").xpos - franky_sim.sim.data.body("blue").xpos
    assert np.abs(landed - [0, 0, 0.05]).max() < 0.01
