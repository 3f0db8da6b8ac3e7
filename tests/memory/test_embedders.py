"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1, and the config."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lyra.examples import Example
from lyra.memory.embedders import EmbedderConfig, OpenAIEmbedder, make_embedder
from lyra.memory.errors import EmbedderUnavailableError, EmbeddingEndpointError
from lyra.memory.store import Memory


def toy_vector(text: str) -> list[float]:
    """A deterministic 4-d 'embedding': word count, length, count of 'a', a constant."""
    return [float(len(text.split())), float(len(text)), float(text.count("a")), 1.0]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, self.headers.get("Authorization"), body))
        if body["model"] == "missing":
            self._answer(404, {"error": {"message": "model 'missing' not found"}})
            return
        data = [
            {"object": "embedding", "index": i, "embedding": toy_vector(text)}
            for i, text in enumerate(body["input"])
        ]
        # Clients must order by the index field, not by position in the list.
        self._answer(200, {"object": "list", "data": data[::-1], "model": body["model"]})

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


class _Server(ThreadingHTTPServer):
    requests: list[tuple[str, str | None, dict[str, Any]]]


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def base_url(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def unit(rows: list[list[float]]) -> np.ndarray:
    array = np.array(rows, dtype=np.float32)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


def test_embeds_in_index_order_as_unit_vectors(server: _Server):
    embedder = OpenAIEmbedder(base_url(server), "toy-embed", "test-key", timeout_s=5)
    texts = ["stack a on b", "build a wall", "go"]
    vectors = embedder.embed(texts)
    np.testing.assert_allclose(vectors, unit([toy_vector(t) for t in texts]), rtol=1e-6)
    assert server.requests == [
        ("/v1/embeddings", "Bearer test-key", {"model": "toy-embed", "input": texts})
    ]
    assert (embedder.name, embedder.dim) == ("openai:toy-embed", 4)


def test_sends_large_inputs_in_batches_and_probes_the_dimension_once(server: _Server):
    embedder = OpenAIEmbedder(base_url(server), "toy-embed", None, timeout_s=5)
    assert embedder.dim == 4
    vectors = embedder.embed([f"text {i}" for i in range(130)])
    assert vectors.shape == (130, 4)
    assert [len(body["input"]) for _, _, body in server.requests] == [1, 128, 2]
    assert server.requests[0][1] is None


def test_http_errors_name_the_status_and_what_to_check(server: _Server):
    embedder = OpenAIEmbedder(base_url(server), "missing", "k", timeout_s=5)
    with pytest.raises(EmbeddingEndpointError) as error:
        embedder.embed(["x"])
    assert str(error.value) == (
        f"{base_url(server)}/embeddings answered HTTP 404: "
        '{"error": {"message": "model \'missing\' not found"}}; '
        "check LYRA_EMBEDDINGS_MODEL and LYRA_EMBEDDINGS_API_KEY"
    )


def test_an_unreachable_endpoint_says_how_to_do_without(server: _Server):
    url = base_url(server)
    server.shutdown()
    server.server_close()
    with pytest.raises(EmbeddingEndpointError, match="set LYRA_EMBEDDER=none"):
        OpenAIEmbedder(url, "toy-embed", None, timeout_s=5).embed(["x"])


def test_memory_runs_hybrid_retrieval_on_the_endpoint(server: _Server, tmp_path: Path):
    config = EmbedderConfig(kind="openai", base_url=base_url(server), model="toy-embed")
    memory = Memory(tmp_path / "memory", make_embedder(config))
    memory.index_example(Example(id="wall", instruction="build a wall", code="build_wall()"))
    memory.index_example(Example(id="tower", instruction="a tower", code="build_tower()"))
    retrieval = memory.retrieve("build a wall", k_examples=1)
    assert [e.id for e in retrieval.examples] == ["wall"]
    assert [(m.query, m.method, m.rank) for m in retrieval.examples[0].matches] == [
        ("instruction", "text", 1),
        ("instruction", "vector", 1),
    ]


def test_config_reads_the_environment():
    env = {
        "LYRA_EMBEDDER": "openai",
        "LYRA_EMBEDDINGS_BASE_URL": "http://127.0.0.1:9/v1",
        "LYRA_EMBEDDINGS_MODEL": "toy",
        "OPENAI_API_KEY": "k",
    }
    assert EmbedderConfig.from_env(env) == EmbedderConfig(
        kind="openai", base_url="http://127.0.0.1:9/v1", model="toy", api_key="k"
    )
    assert make_embedder(EmbedderConfig.from_env({"LYRA_EMBEDDER": "none"})) is None


def test_config_defaults_to_full_text_without_minilm_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("LYRA_MINILM_DIR", str(tmp_path))
    assert EmbedderConfig.from_env({}).kind == "none"


def test_config_rejects_an_unknown_embedder():
    with pytest.raises(EmbedderUnavailableError) as error:
        EmbedderConfig.from_env({"LYRA_EMBEDDER": "bert"})
    assert (
        str(error.value)
        == "LYRA_EMBEDDER='bert' is not an embedder: use one of minilm, openai, none"
    )
