"""Writing files so that a crash leaves either the old text or the new one, never half of each."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

_TEMPORARY = ".*.tmp"


def write_atomic(path: Path, text: str) -> None:
    """Replace a file's content all at once: a crash leaves either the old or the new text.

    The text reaches the disk before the rename makes it the file, so even a power cut leaves
    one of the two.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # not every platform can open a folder
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def remove_temporaries(folders: Iterable[Path]) -> list[Path]:
    """Delete what a killed write_atomic left behind (``.NAME.XXXX.tmp``) under some folders.

    Only safe while nothing else writes there: the caller holds the workspace's lock.
    """
    removed = []
    for folder in folders:
        if folder.is_dir():
            for path in folder.rglob(_TEMPORARY):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed
