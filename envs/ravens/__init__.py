"""The Ravens-style pybullet tabletop: a Panda with a suction tool, boxes, plates and zones.

Importing this package registers the Gymnasium environment ``lyra/RavensTabletop-v0``; the
physics (pybullet) is imported only when an environment is made.
"""

from gymnasium.envs.registration import register

register(
    id="lyra/RavensTabletop-v0",
    entry_point="envs.ravens.env:RavensTabletopEnv",
    max_episode_steps=200,
)
