"""gymnasium-robotics' Franka Kitchen (``FrankaKitchen-v1``, MuJoCo) as a lyra backend.

Importing this package defines ``SPEC``, the lyra backend ``kitchen`` (found through the
``lyra.backends`` entry point); MuJoCo and gymnasium-robotics are imported only when a backend
is made.
"""

from lyra.api import PRIMITIVES
from lyra.backend import BackendSpec

SPEC = BackendSpec(
    name="kitchen",
    summary="the Franka Kitchen: a Franka arm, a kettle, a stove's knobs, a microwave, cabinets",
    capabilities=frozenset(PRIMITIVES) - {"put_first_on_second"},
    factory="envs.kitchen.backend:KitchenBackend",
    scene="envs.kitchen.scene:KitchenScene",
    predicates="envs.kitchen.predicates:PREDICATES",
    prompts="envs.kitchen.prompts:PACK",
    sample="envs.kitchen.bench:SAMPLE",
    layout="envs.kitchen.scene:object_names",
    tolerance=0.01,
    control_step=0.08,
)
