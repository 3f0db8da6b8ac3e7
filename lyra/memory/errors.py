"""Errors of the memory; each message says what to do next."""

from __future__ import annotations

from pathlib import Path

from lyra.errors import LyraError


class EmbedderUnavailableError(LyraError):
    """The configured embedder cannot run here (weights, package or endpoint missing)."""


class EmbeddingEndpointError(LyraError):
    """The OpenAI-compatible embeddings endpoint failed or answered something unusable."""


class EmbedderMismatchError(LyraError):
    """The index on disk was built with another embedder than the one configured now."""

    def __init__(self, path: Path, stored: str, configured: str) -> None:
        self.path = path
        self.stored = stored
        self.configured = configured
        super().__init__(
            f"the memory in {path} was indexed with embedder {stored}, "
            f"but the configured embedder is {configured}: run `lyra memory rebuild` "
            "to re-index with it, or set LYRA_EMBEDDER back to the one the index was built with"
        )
