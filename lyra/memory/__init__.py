"""The memory: skills and accepted examples in LanceDB, retrieved by text, vector or both.

Entry points: :class:`lyra.memory.store.Memory` (``open``, ``index_skill``, ``index_example``,
``rebuild``, ``retrieve``), :func:`lyra.memory.store.open_memory` and the embedders in
:mod:`lyra.memory.embedders`. This package imports nothing heavy itself, so the command line
can register ``lyra memory`` without loading LanceDB.
"""
