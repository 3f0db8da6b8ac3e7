import threading

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs.ravens  # noqa: F401  (registers lyra/RavensTabletop-v0)
import lyra
from envs.ravens.render import CLOSE_SIZE
from lyra.api import object_names, object_pose, put_first_on_second

SCENE = {"objects": [{"type": "block", "color": "red"}, {"type": "block", "color": "blue"}]}
STACKED = [{"stacked": ["blue_block", "red_block"]}]


@pytest.fixture
def env():
    environment = gym.make("lyra/RavensTabletop-v0", scene=SCENE, success=STACKED)
    yield environment
    environment.close()


# Actions are workspace coordinates in metres on purpose (what a plan means by "there"), not the
# [-1, 1] box the checker recommends for learning agents.
@pytest.mark.filterwarnings("ignore:.*For Box action spaces, we recommend:UserWarning")
def test_passes_gymnasium_env_checker(env) -> None:
    check_env(env.unwrapped, skip_render_check=True)


def test_step_is_a_pick_and_place_with_success_in_info(env) -> None:
    obs, info = env.reset(seed=1)
    assert obs["objects"].shape == (2, 7) and obs["ee"].shape == (7,)
    assert info["success"] is False
    assert info["reason"] == "'red_block' is not over 'blue_block'"
    blue, red = obs["objects"]  # sorted names: blue_block, red_block
    obs, reward, terminated, truncated, info = env.step(
        {"pick": red[:2], "place": np.array([blue[0], blue[1], 0.0])}
    )
    assert (reward, terminated, truncated, info["success"]) == (1.0, True, False, True)
    assert obs["objects"][1][2] == pytest.approx(0.06, abs=0.003)


def test_step_with_nothing_under_the_pick_point_reports_the_error(env) -> None:
    env.reset(seed=1)
    _, reward, terminated, _, info = env.step(
        {"pick": np.array([0.2, 0.4]), "place": np.array([0.5, 0.0, 0.0])}
    )
    assert (reward, terminated) == (0.0, False)
    assert info["error"] == "no object lies at (0.200, 0.400): pick where an object is"


def test_facade_on_the_gym_env_and_same_seed_same_result(env) -> None:
    finals = []
    for _ in range(2):
        env.reset(seed=5)
        with lyra.use(env):
            put_first_on_second("red_block", "blue_block")
            finals.append(np.array([object_pose(n).position.as_array() for n in object_names()]))
        assert env.unwrapped.verdict()
    assert np.max(np.abs(finals[0] - finals[1])) < 1e-6


def test_two_envs_in_two_threads_do_not_mix() -> None:
    seen: dict[str, list[str]] = {}

    def work(label: str, scene: dict) -> None:
        environment = gym.make("lyra/RavensTabletop-v0", scene=scene)
        environment.reset(seed=0)
        with lyra.use(environment):
            for _ in range(50):
                seen.setdefault(label, []).extend(object_names())
        environment.close()

    one = {"objects": [{"type": "block", "color": "red"}]}
    two = {"objects": [{"type": "plate", "color": "brown"}]}
    threads = [threading.Thread(target=work, args=(k, s)) for k, s in (("one", one), ("two", two))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(seen["one"]) == {"red_block"} and set(seen["two"]) == {"brown_plate"}


def test_render_gives_an_rgb_frame() -> None:
    environment = gym.make("lyra/RavensTabletop-v0", scene=SCENE, render_mode="rgb_array")
    environment.reset(seed=0)
    frame = environment.render()
    environment.close()
    assert frame.shape == (480, 640 + CLOSE_SIZE, 3) and frame.dtype == np.uint8
    # The red block shows up: some pixels are strongly red.
    red = (frame[:, :, 0] > 150) & (frame[:, :, 1] < 80) & (frame[:, :, 2] < 80)
    assert red.sum() > 50
