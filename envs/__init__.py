"""One package per backend, each implementing lyra's Embodiment protocol."""
