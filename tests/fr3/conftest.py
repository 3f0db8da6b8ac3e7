"""franky-sim started in this process on 127.0.0.1, and the fr3 backend driving it through franky."""

from collections.abc import Iterator

import pytest

from envs.fr3.backend import FR3Backend
from envs.fr3.perception import SimPerception
from envs.fr3.scene import FR3Scene
from envs.fr3.sim import FrankySim

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
    """franky-sim with three 5 cm cubes on the table, served on 127.0.0.1."""
    sim = FrankySim(CUBES)
    yield sim
    sim.close()


@pytest.fixture
def robot(franky_sim: FrankySim) -> Iterator[FR3Backend]:
    """The backend connected to that franky-sim over the libfranka protocol, as to an arm."""
    backend = FR3Backend(host=franky_sim.host, perception=SimPerception(franky_sim.sim, CUBES))
    backend.reset(CUBES, 0)
    yield backend
    backend.close()
