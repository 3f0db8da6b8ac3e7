"""Demonstrations: primitive calls on a scene, recorded from a person or a plan, to teach from.

The format and its loader are in :mod:`lyra.demos.format`; ``lyra demo record`` and
``lyra demo from-plan`` (:mod:`lyra.demos.cli`) write them.
"""
