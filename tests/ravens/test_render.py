"""The picture a person reads: from the robot's right, the work area framed and named, and a close view."""

from __future__ import annotations

import numpy as np

import lyra
from envs.ravens.render import AXES_ORIGIN, AXIS_LENGTH, CLOSE_SIZE, Camera, render
from envs.ravens.tabletop import Tabletop


def test_the_view_is_a_person_beside_the_robot() -> None:
    camera = Camera()
    near, far = camera.project((0.3, 0.0, 0.0)), camera.project((0.7, 0.0, 0.0))
    right, left = camera.project((0.5, -0.3, 0.0)), camera.project((0.5, 0.3, 0.0))
    assert far[0] > near[0] + 150  # away from the robot runs to the right
    assert left[1] < right[1] - 100  # the robot's left runs into the picture
    # The robot's base is at the left edge, not in front of the work.
    assert camera.project((0.0, 0.0, 0.3))[0] < 100
    # Every corner of the work area, both staging edges included, is in frame.
    for x in (0.27, 0.75):
        for y in (-0.42, 0.42):
            column, row = camera.project((x, y, 0.0))
            assert 0 < column < camera.width and 0 < row < camera.height, (x, y)


def test_the_axes_are_drawn_on_the_table(two_blocks: Tabletop) -> None:
    camera = Camera()
    image = render(two_blocks)
    assert image.shape == (camera.height, camera.width + CLOSE_SIZE, 3)
    x0, y0, z0 = AXES_ORIGIN
    for tip in ((x0 + AXIS_LENGTH, y0, z0), (x0, y0 + AXIS_LENGTH, z0)):
        start, end = np.array(camera.project(AXES_ORIGIN)), np.array(camera.project(tip))
        column, row = ((start + end) / 2).round().astype(int)
        assert image[row, column].max() < 60  # a dark line where the table is light


def test_the_close_view_frames_what_was_built(two_blocks: Tabletop) -> None:
    with lyra.use(two_blocks):
        lyra.api.put_first_on_second("red_block", "blue_block")
    two_blocks.home()
    image = render(two_blocks)
    whole, close = image[:, : Camera().width], image[:, Camera().width :]

    def red(part: np.ndarray) -> int:
        r, g, b = (part[:, :, i].astype(int) for i in range(3))
        return int(((r > 150) & (g < 90) & (b < 90)).sum())

    # The stack fills far more of the close view than of the whole work area's.
    assert red(close) > 8 * red(whole) > 0
