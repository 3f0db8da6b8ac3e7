"""``lyra fr3 sim`` as a person starts it: a process serving franky-sim, which ``lyra deploy``
drives as it would the arm."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("franky", reason="the fr3 tests need franky: pip install '.[fr3]'")
pytest.importorskip("franky_sim", reason="the fr3 tests need franky-sim: pip install '.[fr3]'")

from lyra.cli import main
from tests.conftest import as_from_a_terminal
from tests.fr3.conftest import ON_BLUE, REPO, deploy

POSE = re.compile(r"^  (\w+) \(([-\d.]+), ([-\d.]+), ([-\d.]+)\) yaw -?\d+$")


@pytest.mark.slow
def test_lyra_fr3_sim_serves_an_arm_that_lyra_deploy_moves_the_cube_on(workspace: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "lyra.cli", "fr3", "sim", "--scene", str(workspace / "scene.yaml")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_terminal,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        served = re.fullmatch(
            r"franky-sim serves a simulated FR3 at (\S+), with red, green, blue on the table\n",
            first,
        )
        assert served, first + server.stderr.read() if server.stderr else first
        host = served.group(1)
        # lyra deploy connects to it as to an arm; its own dry run takes the next address.
        assert (
            main(deploy(workspace, "plan.py", "--robot", host, "--yes", "--success", ON_BLUE)) == 0
        )
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            out, err = server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            # Not left serving on a loopback address the later fr3 tests would find taken.
            server.kill()
            raise
    assert server.returncode == 0, err
    assert out.endswith("\nfranky-sim stopped\n")
    poses = {
        match.group(1): tuple(float(match.group(i)) for i in (2, 3, 4))
        for line in out.splitlines()
        if (match := POSE.match(line))
    }
    # In the served sim: red now rests on blue, which stayed where the scene put it.
    assert set(poses) == {"red", "green", "blue"}
    red, blue = poses["red"], poses["blue"]
    assert blue == pytest.approx((0.6, 0.0, 0.025), abs=0.005)
    assert red[:2] == pytest.approx(blue[:2], abs=0.01)
    assert red[2] == pytest.approx(0.075, abs=0.005)
