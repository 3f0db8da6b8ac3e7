"""Values across the pipe between the trusted process and a code worker: framed, typed JSON.

Only plain values cross: None, booleans, numbers, strings, lists, tuples, string-keyed dicts and
lyra's value types (Point, Pose, Size, ObjectState, WorkspaceBox). Nothing is unpickled: what
the worker sends is untrusted, so decoding builds only those types, checks every field and
refuses messages that are too large or too deep; a lone surrogate in a string arrives escaped.
"""

from __future__ import annotations

import json
import math
import re
import socket
import struct
import time
from typing import Any

from lyra.embodiment import ObjectState, WorkspaceBox
from lyra.errors import LyraError
from lyra.geometry import Point, Pose, Size

# A world state of a few hundred objects is a few hundred kilobytes.
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 32
_HEADER = struct.Struct(">I")
_TAG = "~"
# A JSON escape of a UTF-16 surrogate: \uD800 to \uDFFF (a pair's halves too).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class WireError(LyraError):
    """A message that is not one this protocol sends: malformed, too large or of unknown types."""


class ClosedError(WireError):
    """The other side closed the connection (a worker that ended, or a parent that is gone)."""


def encode(value: Any, depth: int = 0) -> Any:
    """A JSON-ready form of a value; tuples and lyra's value types are tagged.

    Raises:
        WireError: the value is of a type that cannot cross (it names the type).
    """
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested more than {MAX_DEPTH} deep cannot be sent")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        # numpy scalars are ints and floats too; JSON wants the plain kinds.
        return float(value) if isinstance(value, float) else int(value)
    if isinstance(value, Point | Size):
        return {_TAG: type(value).__name__, "v": [value.x, value.y, value.z]}
    if isinstance(value, Pose):
        return {_TAG: "Pose", "p": encode(value.position), "q": list(value.orientation)}
    if isinstance(value, ObjectState):
        return {
            _TAG: "ObjectState",
            "name": value.name,
            "kind": value.kind,
            "color": value.color,
            "pose": encode(value.pose),
            "size": encode(value.size),
        }
    if isinstance(value, WorkspaceBox):
        return {
            _TAG: "WorkspaceBox",
            "low": encode(value.low),
            "high": encode(value.high),
            "table_z": value.table_z,
        }
    if isinstance(value, list):
        return [encode(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return {_TAG: "tuple", "v": [encode(item, depth + 1) for item in value]}
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise WireError("only dicts with string keys can be sent")
        return {_TAG: "dict", "v": {key: encode(item, depth + 1) for key, item in value.items()}}
    raise WireError(
        f"a {type(value).__name__} cannot be passed to or returned from a primitive: use "
        "numbers, strings, lists, dicts and lyra.api's Point, Pose and Size"
    )


def decode(data: Any, depth: int = 0) -> Any:
    """Rebuild a value :func:`encode` made, checking every field.

    Raises:
        WireError: the data is not such a value.
    """
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested more than {MAX_DEPTH} deep")
    if isinstance(data, float) and not math.isfinite(data):
        raise WireError(f"a number must be finite, got {data}")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(item, depth + 1) for item in data]
    if not isinstance(data, dict) or not isinstance(data.get(_TAG), str):
        raise WireError(f"not a value of the protocol: {type(data).__name__}")
    tag = data[_TAG]
    try:
        if tag in ("Point", "Size"):
            x, y, z = (_number(v, tag) for v in data["v"])
            return Point(x, y, z) if tag == "Point" else Size(x, y, z)
        if tag == "Pose":
            qx, qy, qz, qw = (_number(v, tag) for v in data["q"])
            if abs(math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw) - 1.0) > 1e-3:
                raise WireError("a Pose's orientation must be a unit quaternion (x, y, z, w)")
            return Pose(_point(data["p"], depth + 1), (qx, qy, qz, qw))
        if tag == "ObjectState":
            size = decode(data["size"], depth + 1)
            if not isinstance(size, Size):
                raise WireError("an ObjectState's size must be a Size")
            return ObjectState(
                _text(data["name"]),
                _text(data["kind"]),
                _text(data["color"]),
                _pose(data["pose"], depth + 1),
                size,
            )
        if tag == "WorkspaceBox":
            return WorkspaceBox(
                _point(data["low"], depth + 1),
                _point(data["high"], depth + 1),
                _number(data["table_z"], tag),
            )
        if tag == "tuple":
            return tuple(decode(item, depth + 1) for item in _list(data["v"]))
        if tag == "dict":
            items = data["v"]
            if not isinstance(items, dict):
                raise WireError("a dict's items must be a mapping")
            return {_text(key): decode(item, depth + 1) for key, item in items.items()}
    except (KeyError, TypeError, ValueError) as error:
        raise WireError(f"a malformed {tag}: {error}") from None
    raise WireError(f"unknown value type '{tag}'")


def _number(value: Any, what: str) -> float:
    """A coordinate: a finite number (a NaN target would pass every bound check unnoticed)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WireError(f"a {what} needs numbers, got {type(value).__name__}")
    if not math.isfinite(value):
        raise WireError(f"a {what} needs finite numbers, got {value}")
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise WireError(f"expected a string, got {type(value).__name__}")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise WireError(f"expected a list, got {type(value).__name__}")
    return value


def _point(data: Any, depth: int) -> Point:
    point = decode(data, depth)
    if not isinstance(point, Point):
        raise WireError("expected a Point")
    return point


def _pose(data: Any, depth: int) -> Pose:
    pose = decode(data, depth)
    if not isinstance(pose, Pose):
        raise WireError("expected a Pose")
    return pose


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    """Send one message (a dict of plain JSON, values already encoded) as a framed block."""
    data = json.dumps(message, allow_nan=True).encode("utf-8")
    if len(data) > MAX_MESSAGE_BYTES:
        raise WireError(f"a message of {len(data)} bytes is over the {MAX_MESSAGE_BYTES} limit")
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive(sock: socket.socket, deadline: float | None = None) -> dict[str, Any]:
    """Receive one framed message, whole, by a deadline on the monotonic clock (None: wait).

    Raises:
        ClosedError: the other side closed the connection.
        WireError: the message is too large or not JSON.
        TimeoutError: the deadline passed first.
    """
    size = _HEADER.unpack(_read(sock, _HEADER.size, deadline))[0]
    if size > MAX_MESSAGE_BYTES:
        raise WireError(f"a message of {size} bytes is over the {MAX_MESSAGE_BYTES} limit")
    try:
        text = _read(sock, size, deadline).decode("utf-8")
        message = json.loads(text, parse_constant=_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        # ValueError: not JSON, or an integer longer than Python converts.
        raise WireError(f"a message that is not JSON: {error}") from None
    if not isinstance(message, dict):
        raise WireError("a message must be a JSON object")
    # Only an escape in the JSON makes a lone surrogate (UTF-8 cannot carry one).
    return _encodable(message) if _SURROGATE_ESCAPE.search(text) else message


def _encodable(message: dict[str, Any]) -> dict[str, Any]:
    r"""The message with each lone surrogate in its strings and keys written as its escape.

    A string holding a lone surrogate (``raise ValueError('\ud800')``) fails wherever it is
    written as UTF-8 (a terminal, a kept example), so none gets past :func:`receive`. Written
    as ``\ud800``, as Python's ``backslashreplace`` writes it, rather than as U+FFFD: the
    feedback then shows what the code really had.
    """
    todo: list[Any] = [message]
    while todo:  # no recursion: json.loads let through as deep a message as the stack allows
        node = todo.pop()
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        if isinstance(node, dict):
            node.clear()  # refilled in order, under its keys made encodable
        for key, value in pairs:
            if isinstance(value, dict | list):
                todo.append(value)
            elif isinstance(value, str):
                value = _escaped(value)
            node[_escaped(key) if isinstance(key, str) else key] = value
    return message


def _escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _constant(name: str) -> float:
    # Python's JSON writes NaN and the infinities as bare words; nothing else is accepted.
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def _read(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    chunks = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the other side did not send in time")
            sock.settimeout(left)
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise ClosedError("the other side closed the connection")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
