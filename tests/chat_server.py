"""A real chat-completions server on 127.0.0.1, answering from a script the test writes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Request:
    path: str
    authorization: str
    body: dict[str, Any]


def answer(text: str, model: str = "test-model", usage: bool = True) -> Reply:
    """A chat.completion body as OpenAI sends it."""
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25}
    return Reply(200, body)


def failure(status: int, message: str, code: str | None = None, **headers: str) -> Reply:
    """An error body as OpenAI sends it."""
    return Reply(status, {"error": {"message": message, "type": "error", "code": code}}, headers)


class ChatServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies: list[Reply] = []
        self.requests: list[Request] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        body = json.loads(self.rfile.read(length))
        self.server.requests.append(Request(self.path, self.headers.get("Authorization", ""), body))
        reply = self.server.replies.pop(0)
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""
