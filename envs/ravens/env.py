"""The tabletop as a Gymnasium environment, with lyra's primitives facade on top.

An action is a Ravens-style pick-and-place: pick the topmost object under an (x, y) point and
set it down at (x, y, yaw), on whatever is there. Observations give the tool pose and every
object's pose, in the order of ``env.unwrapped.object_order``. ``info["success"]`` is the
task predicate's verdict, when the episode was given one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from envs.ravens.predicates import PREDICATES
from envs.ravens.scene import SceneSpec, load_scene
from envs.ravens.tabletop import Tabletop, TabletopConfig
from lyra.errors import LyraError
from lyra.geometry import Point, Pose
from lyra.predicates import Predicate, Verdict, from_spec

ObsType = dict[str, Any]
ActType = dict[str, Any]


def _pose_row(pose: Pose) -> np.ndarray:
    return np.array([*pose.position.as_array(), *pose.orientation], dtype=np.float32)


class RavensTabletopEnv(gym.Env[ObsType, ActType]):
    """A Panda with a suction tool and a scene of boxes, stepped one pick-and-place at a time."""

    # Gymnasium declares metadata as an instance attribute, so it cannot be a ClassVar here.
    metadata = {"render_modes": ["rgb_array"], "render_fps": 3}  # noqa: RUF012

    def __init__(
        self,
        scene: SceneSpec | dict[str, Any] | str | Path | None = None,
        success: Predicate | list[dict[str, Any]] | None = None,
        render_mode: str | None = None,
        config: TabletopConfig | None = None,
    ) -> None:
        self.embodiment = Tabletop(config)
        self.scene = load_scene(scene) if scene is not None else SceneSpec()
        self.success = from_spec(success, PREDICATES) if isinstance(success, list) else success
        self.render_mode = render_mode
        self.object_order: list[str] = []
        box = self.embodiment.config
        self.action_space = spaces.Dict(
            {
                "pick": spaces.Box(
                    np.array(box.box_low[:2], dtype=np.float32),
                    np.array(box.box_high[:2], dtype=np.float32),
                ),
                "place": spaces.Box(
                    np.array([*box.box_low[:2], -math.pi], dtype=np.float32),
                    np.array([*box.box_high[:2], math.pi], dtype=np.float32),
                ),
            }
        )
        self._set_observation_space(sum(group.count for group in self.scene.objects))

    def _set_observation_space(self, count: int) -> None:
        # Rows are (x, y, z, qx, qy, qz, qw): positions within 2 m of the base, unit quaternions.
        low = np.array([-2, -2, -2, -1, -1, -1, -1], dtype=np.float32)
        self.observation_space = spaces.Dict(
            {
                "ee": spaces.Box(low, -low, dtype=np.float32),
                "objects": spaces.Box(
                    np.tile(low, (count, 1)), np.tile(-low, (count, 1)), dtype=np.float32
                ),
            }
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Lay the scene out from the seed; ``options`` may replace the scene and the predicate."""
        super().reset(seed=seed)
        options = options or {}
        if "scene" in options:
            self.scene = load_scene(options["scene"])
            self._set_observation_space(sum(group.count for group in self.scene.objects))
        if "success" in options:
            spec = options["success"]
            self.success = from_spec(spec, PREDICATES) if isinstance(spec, list) else spec
        layout_seed = int(self.np_random.integers(2**31)) if seed is None else seed
        self.embodiment.reset(self.scene, layout_seed)
        self.object_order = sorted(self.embodiment.bodies)
        return self._observation(), self._info()

    def step(self, action: ActType) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        """Pick the topmost object under ``action["pick"]`` and put it at ``action["place"]``."""
        pick = np.asarray(action["pick"], dtype=float)
        x, y, yaw = (float(v) for v in np.asarray(action["place"], dtype=float))
        error = None
        try:
            name = self.embodiment.topmost_at(float(pick[0]), float(pick[1]))
            self.embodiment.put_first_on_second(name, Pose.from_yaw(Point(x, y, 0.0), yaw), yaw=yaw)
        except LyraError as caught:
            error = str(caught)
        info = self._info()
        if error is not None:
            info["error"] = error
        return self._observation(), float(info["success"]), bool(info["success"]), False, info

    def render(self) -> np.ndarray | None:
        """Return an RGB frame of the scene (render_mode "rgb_array")."""
        if self.render_mode != "rgb_array":
            return None
        from envs.ravens.render import render

        return render(self.embodiment)

    def close(self) -> None:
        """Release the physics clients."""
        self.embodiment.close()

    def verdict(self) -> Verdict:
        """The task predicate's verdict on the scene now (true when the episode has none)."""
        if self.success is None:
            return Verdict(True)
        return self.success(self.embodiment.world_state())

    def _observation(self) -> ObsType:
        objects = [_pose_row(self.embodiment.object_pose(n)) for n in self.object_order]
        return {
            "ee": _pose_row(self.embodiment.ee_pose()),
            "objects": np.array(objects, dtype=np.float32).reshape(len(objects), 7),
        }

    def _info(self) -> dict[str, Any]:
        verdict = self.verdict() if self.success is not None else None
        return {
            "success": bool(verdict) if verdict is not None else False,
            "reason": verdict.reason if verdict is not None else "",
            "sim_steps": self.embodiment.steps,
        }
