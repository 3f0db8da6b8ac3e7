"""A Franka FR3 through franky (``pip install lyra-robot[fr3]``) as a lyra backend.

Importing this package defines ``SPEC``, the lyra backend ``fr3`` (found through the
``lyra.backends`` entry point); franky and franky-sim are imported only when a backend is made.
Made without a robot's address, the backend starts franky-sim in this process and drives it
through franky over the libfranka protocol on a loopback address, as it would drive the arm: a
simulator of the FR3. Connected to an address (``SPEC.connect_robot``), it is the robot.
"""

from lyra.api import ARTICULATION, PRIMITIVES
from lyra.backend import BackendSpec

SPEC = BackendSpec(
    name="fr3",
    summary="a Franka FR3 through franky: cubes on a table (franky-sim, or the arm itself)",
    capabilities=frozenset(PRIMITIVES) - ARTICULATION,
    factory="envs.fr3.backend:FR3Backend",
    scene="envs.fr3.scene:FR3Scene",
    # The tabletop's predicates (stacked, on_top, ...) are about boxes on a table at z = 0.
    predicates="envs.ravens.predicates:PREDICATES",
    prompts="envs.fr3.scene:PACK",
    sample="envs.fr3.scene:SAMPLE",
    layout="envs.fr3.scene:object_names",
    tolerance=0.01,
    # A stop brakes along franky's trajectory (Ruckig), not within one 1 ms control tick.
    control_step=0.1,
    connect="envs.fr3.backend:FR3Backend",
    simulator="franky-sim",
    # franky-sim steps on its own thread in real time: its runs differ by that, not by a nudge.
    nudges=False,
)
