"""MetaWorld's own scripted experts (``metaworld.policies``), run on lyra's scenes and seeds.

``lyra run`` shows them beside lyra's skills: the same task, laid out by the same seed, for
MetaWorld's 500 steps, success read from the same ``info["success"]``.
"""

from __future__ import annotations

import time
import warnings

from envs.metaworld.arm import MetaWorldArm
from envs.metaworld.scene import EPISODE_STEPS, MetaWorldScene
from envs.metaworld.tasks import env_name
from lyra.backend import PeerRun

# One arm per process: its environments are built once and reused, as lyra's backend does.
_ARM = MetaWorldArm()


def run_expert(scene: MetaWorldScene, seed: int) -> PeerRun:
    """The task's scripted expert for a whole episode on this seed's layout."""
    from metaworld.policies import ENV_POLICY_MAP

    start = time.perf_counter()
    _ARM.reset(scene.task, seed, EPISODE_STEPS)
    env = _ARM.env
    # The map's values are the concrete expert classes (typed as their abstract base).
    policy = ENV_POLICY_MAP[env_name(scene.task)]()  # type: ignore[abstract]
    obs = env._get_obs()
    held = any_step = False
    with warnings.catch_warnings():
        # Some experts' gains exceed the action bounds, which MetaWorld clips (as intended).
        warnings.filterwarnings("ignore", "Constant", UserWarning)
        for _ in range(EPISODE_STEPS):
            obs, _, _, _, info = env.step(policy.get_action(obs))
            held = bool(info["success"])
            any_step = any_step or held
    return PeerRun(held, any_step, time.perf_counter() - start)
