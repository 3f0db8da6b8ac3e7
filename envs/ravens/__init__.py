"""The Ravens-style pybullet tabletop: a Panda with a suction tool, boxes, plates and zones.

Importing this package registers the Gymnasium environment ``lyra/RavensTabletop-v0`` and
defines ``SPEC``, the lyra backend ``ravens`` (found through the ``lyra.backends`` entry point);
the physics (pybullet) is imported only when an environment or a backend is made.
"""

from gymnasium.envs.registration import register

from lyra.api import ARTICULATION, PRIMITIVES
from lyra.backend import BackendSpec

SPEC = BackendSpec(
    name="ravens",
    summary="a pybullet Panda with a suction tool over a table of boxes, Ravens-style",
    capabilities=frozenset(PRIMITIVES) - ARTICULATION,
    factory="envs.ravens.backend:RavensBackend",
    scene="envs.ravens.scene:SceneSpec",
    predicates="envs.ravens.predicates:PREDICATES",
    prompts="envs.ravens.prompts:PACK",
    aliases=frozenset({"tabletop"}),
    bench="envs.ravens.bench:TASKS",
    sample="envs.ravens.bench:SAMPLE",
    layout="envs.ravens.scene:object_names",
    start="envs.ravens.scene:start_state",
    tolerance=0.005,
)

register(
    id="lyra/RavensTabletop-v0",
    entry_point="envs.ravens.env:RavensTabletopEnv",
    max_episode_steps=200,
)
