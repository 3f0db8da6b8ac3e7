from lyra.api import move_ee, object_names, object_pose


def reach(target: str) -> None:
    """Move the fingertips in a straight line to an object's centre and stop there, without grasping or pushing anything.

    Args:
        target: name of the object to reach, as listed by object_names() (for example
            the goal). The fingertips' centre ends up at the object's centre as
            object_pose() gives it when the skill starts, with the gripper pointing down.
            The gripper is left as it was, open or closed, holding whatever it held.
    """
    if target not in object_names():
        raise ValueError(f"unknown object: {target!r}")
    # Read the target once, at the start, so the end point does not drift.
    goal = object_pose(target).position
    # move_ee goes in a straight line with the gripper pointing down and leaves
    # the gripper's state (open, closed, holding) unchanged.
    move_ee(goal)
