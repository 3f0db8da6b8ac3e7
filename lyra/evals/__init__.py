"""Evaluation suites: instructions a person gives, held apart from what was taught, and judged.

A suite (``evals/<name>/suite.yaml``) turns instruction templates and attribute values into
plan tasks split by what a method has seen (:mod:`lyra.evals.suite`); ``lyra eval`` runs a
method on them. The format is documented in ``docs/evals.md``.
"""
