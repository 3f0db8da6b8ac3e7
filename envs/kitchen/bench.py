"""The Kitchen's sample scene: the kettle, to carry to the far left burner's side."""

from lyra.backend import Sample

SAMPLE = Sample(
    scene={"tasks": ["kettle"]},
    objects=("kettle", "top_left_burner"),
    free=(-0.2, 0.6, 1.62),
    clear=(-0.3, 0.55, 2.1),
)
