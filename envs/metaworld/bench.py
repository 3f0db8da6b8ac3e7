"""MetaWorld's sample scene: a puck to pick and a goal to carry it to."""

from lyra.backend import Sample

SAMPLE = Sample(scene={"task": "pick-place"}, objects=("puck", "goal"), free=(0.05, 0.65, 0.02))
