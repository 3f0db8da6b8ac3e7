"""The memory: skills and accepted examples in LanceDB, retrieved by text, vector or both.

Entry points: :class:`lyra.memory.store.Memory` (``open``, ``index_skill``, ``index_example``,
``rebuild``, ``retrieve``), :func:`lyra.memory.store.open_memory` and the embedders in
:mod:`lyra.memory.embedders`. This package imports nothing heavy itself, so the command line
can register ``lyra memory`` without loading LanceDB.
"""

import os

# lancedb warns on stderr for every table it creates ("No existing dataset ... it will be
# created"), which says nothing a user can act on; its errors still show. A user's own
# LANCEDB_LOG wins. Set before lancedb is imported, since it reads the variable as it loads.
os.environ.setdefault("LANCEDB_LOG", "error")
