"""MetaWorld v3's Sawyer tasks (MuJoCo, through the ``metaworld`` package) as a lyra backend.

Importing this package defines ``SPEC``, the lyra backend ``metaworld`` (found through the
``lyra.backends`` entry point); MuJoCo and MetaWorld are imported only when a backend is made.
"""

from lyra.api import PRIMITIVES
from lyra.backend import BackendSpec

SPEC = BackendSpec(
    name="metaworld",
    summary="MetaWorld v3's Sawyer arm and its tabletop tasks (drawers, doors, buttons, pucks)",
    # The Sawyer's gripper cannot turn: MetaWorld's action space moves its hand, never its wrist.
    capabilities=frozenset(PRIMITIVES) - {"put_first_on_second", "turn"},
    factory="envs.metaworld.backend:MetaWorldBackend",
    scene="envs.metaworld.scene:MetaWorldScene",
    predicates="envs.metaworld.predicates:PREDICATES",
    prompts="envs.metaworld.prompts:PACK",
    sample="envs.metaworld.bench:SAMPLE",
    layout="envs.metaworld.scene:object_names",
    tolerance=0.01,
    must_let_go=False,
    peer="envs.metaworld.peer:run_expert",
    peer_name="MetaWorld's scripted expert",
)
