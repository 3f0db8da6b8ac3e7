"""Text embedders behind one small protocol, and the configuration that picks one.

``minilm`` runs all-MiniLM-L6-v2 locally with numpy; ``openai`` calls any OpenAI-compatible
``/embeddings`` endpoint; ``none`` means full-text search only (no embedder at all).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from lyra.memory import minilm
from lyra.memory.errors import EmbedderUnavailableError, EmbeddingEndpointError

EmbedderKind = Literal["minilm", "openai", "none"]
KINDS: tuple[EmbedderKind, ...] = ("minilm", "openai", "none")
# Inputs per request: well under the 2048 that OpenAI accepts, and small for local servers.
REQUEST_BATCH = 128


class Embedder(Protocol):
    """Turns texts into unit vectors of a fixed dimension."""

    @property
    def name(self) -> str:
        """Identifies the model; stored with the index so a change is noticed."""
        ...

    @property
    def dim(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return a float32 array of shape ``(len(texts), dim)``, one unit row per text."""
        ...


@dataclass(frozen=True)
class EmbedderConfig:
    """Which embedder the memory uses, and how to reach a remote one.

    Attributes:
        kind: ``minilm``, ``openai`` or ``none``.
        base_url: the OpenAI-compatible API root, e.g. ``http://localhost:8000/v1``.
        model: the embedding model the endpoint serves.
        api_key: sent as a bearer token; local servers usually accept anything.
        timeout_s: per request.
    """

    kind: EmbedderKind = "minilm"
    base_url: str = "https://api.openai.com/v1"
    model: str = "text-embedding-3-small"
    api_key: str | None = None
    timeout_s: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> EmbedderConfig:
        """Read ``LYRA_EMBEDDER`` and the ``LYRA_EMBEDDINGS_*`` variables.

        ``LYRA_EMBEDDER`` defaults to ``minilm`` where its weights are installed, else ``none``;
        the endpoint falls back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``.

        Raises:
            EmbedderUnavailableError: ``LYRA_EMBEDDER`` names no known embedder.
        """
        env = os.environ if env is None else env
        kind = env.get("LYRA_EMBEDDER") or ("minilm" if minilm.available() else "none")
        if kind not in KINDS:
            raise EmbedderUnavailableError(
                f"LYRA_EMBEDDER={kind!r} is not an embedder: use one of {', '.join(KINDS)}"
            )
        defaults = cls()
        return cls(
            kind=kind,
            base_url=env.get("LYRA_EMBEDDINGS_BASE_URL")
            or env.get("OPENAI_BASE_URL")
            or defaults.base_url,
            model=env.get("LYRA_EMBEDDINGS_MODEL") or defaults.model,
            api_key=env.get("LYRA_EMBEDDINGS_API_KEY") or env.get("OPENAI_API_KEY"),
        )


def make_embedder(config: EmbedderConfig) -> Embedder | None:
    """Return the configured embedder, or None for full-text search only."""
    if config.kind == "none":
        return None
    if config.kind == "openai":
        return OpenAIEmbedder(config.base_url, config.model, config.api_key, config.timeout_s)
    return minilm.MiniLMEmbedder()


def describe(embedder: Embedder | None) -> str:
    """Name and dimension as stored in the index metadata, e.g. ``minilm-l6-v2/384``."""
    return "none" if embedder is None else f"{embedder.name}/{embedder.dim}"


def _unit_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, vLLM, Ollama...)."""

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout_s: float) -> None:
        """Remember the endpoint; nothing is sent until the first :meth:`embed`."""
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._dim: int | None = None

    @property
    def name(self) -> str:
        """``openai:<model>``."""
        return f"openai:{self._model}"

    @property
    def dim(self) -> int:
        """The endpoint's vector length, learnt from one probe request the first time."""
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return unit vectors for ``texts``, sent in batches of :data:`REQUEST_BATCH`."""
        chunks = [
            self._request(list(texts[i : i + REQUEST_BATCH]))
            for i in range(0, len(texts), REQUEST_BATCH)
        ]
        vectors = np.concatenate(chunks) if chunks else np.zeros((0, self._dim or 0), np.float32)
        self._dim = self._dim or int(vectors.shape[1])
        return _unit_rows(vectors)

    def _request(self, texts: list[str]) -> npt.NDArray[np.float32]:
        body = json.dumps({"model": self._model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                payload = json.load(response)
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:300]
            raise EmbeddingEndpointError(
                f"{self._url} answered HTTP {error.code}: {detail}; check "
                "LYRA_EMBEDDINGS_MODEL and LYRA_EMBEDDINGS_API_KEY"
            ) from error
        except (urllib.error.URLError, TimeoutError) as error:
            raise EmbeddingEndpointError(
                f"cannot reach {self._url}: {error}; check LYRA_EMBEDDINGS_BASE_URL, "
                "or set LYRA_EMBEDDER=none for full-text search only"
            ) from error
        return self._parse(payload, len(texts))

    def _parse(self, payload: object, expected: int) -> npt.NDArray[np.float32]:
        try:
            data = sorted(payload["data"], key=lambda item: item["index"])  # type: ignore[index]
            vectors = np.array([item["embedding"] for item in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as error:
            raise EmbeddingEndpointError(
                f"{self._url} did not answer in the OpenAI embeddings format "
                f"(data[].index, data[].embedding): {error!r}"
            ) from error
        if vectors.ndim != 2 or len(vectors) != expected:
            raise EmbeddingEndpointError(
                f"{self._url} returned {len(vectors)} vectors for {expected} texts; "
                "is it an embeddings endpoint?"
            )
        return vectors
