"""franky-sim started in this process on a free loopback address, and the fr3 backend driving it.

franky connects to libfranka's fixed ports, so a second franky-sim on this machine (another
engineer's, a test running beside) takes the next free address (127.0.0.2, ...), not a port.
"""

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from envs.fr3.backend import FR3Backend
from envs.fr3.perception import SimPerception
from envs.fr3.scene import FR3Scene
from envs.fr3.sim import FrankySim
from lyra.backend import make

REPO = Path(__file__).resolve().parents[2]
PLAN = "from skills.put_on import put_on\n\nput_on('red', 'blue')\n"
ON_BLUE = "[{on_top: {upper: red, lower: blue}}]"
CUBES = FR3Scene.model_validate(
    {
        "objects": [
            {"name": "red", "color": "red", "position": [0.45, 0.15]},
            {"name": "green", "color": "green", "position": [0.45, -0.15]},
            {"name": "blue", "color": "blue", "position": [0.6, 0.0]},
        ]
    }
)


@pytest.fixture
def franky_sim() -> Iterator[FrankySim]:
    """franky-sim with three 5 cm cubes on the table, served on the first free loopback address."""
    sim = FrankySim(CUBES)
    yield sim
    sim.close()


@pytest.fixture
def fr3() -> Iterator[FR3Backend]:
    """The fr3 backend as ``make`` builds it: franky-sim started here on each reset."""
    backend = make("fr3")
    assert isinstance(backend, FR3Backend)
    yield backend
    backend.close()


@pytest.fixture
def robot(franky_sim: FrankySim) -> Iterator[FR3Backend]:
    """The backend connected to that franky-sim over the libfranka protocol, as to an arm."""
    backend = FR3Backend(host=franky_sim.host, perception=SimPerception(franky_sim.sim, CUBES))
    backend.reset(CUBES, 0)
    yield backend
    backend.close()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with the reference put_on skill, a scene of the three cubes and a plan."""
    (tmp_path / "skills").mkdir()
    for name in ("__init__.py", "put_on.py"):
        shutil.copy(REPO / "skills" / name, tmp_path / "skills" / name)
    cubes = "".join(
        f"  - {{name: {c.name}, color: {c.color}, position: [{c.position[0]}, {c.position[1]}]}}\n"
        for c in CUBES.objects
    )
    (tmp_path / "scene.yaml").write_text(f"backend: fr3\nobjects:\n{cubes}")
    (tmp_path / "plan.py").write_text(PLAN)
    monkeypatch.setenv("LYRA_WORKSPACE", str(tmp_path))
    return tmp_path


def deploy(workspace: Path, plan: str = "plan.py", *options: str) -> list[str]:
    return ["deploy", str(workspace / plan), "--scene", str(workspace / "scene.yaml"), *options]
