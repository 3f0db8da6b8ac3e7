"""lyra studio's server: its guard, its file route and its start, against the real process."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from lyra.studio.views import markdown_blocks
from tests.studio.conftest import REPO, Served, serve, stop


def request(
    url: str, method: str, path: str, body: object = None, headers: dict[str, str] | None = None
) -> tuple[int, dict]:
    """One raw request: the path goes out exactly as given (no client normalises '..')."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    sent = {"Content-Type": "application/json", **(headers or {})}
    connection.request(method, path, None if body is None else json.dumps(body), sent)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, json.loads(data) if data.startswith(b"{") else {"raw": data}


def test_path_traversal_is_refused_in_every_file_serving_route(studio: Served) -> None:
    (studio.workspace / ".lyra" / "attempts").mkdir(parents=True)
    (studio.workspace / ".lyra" / "attempts" / "a.gif").write_bytes(b"GIF89a")
    (studio.workspace.parent / "secret.png").write_bytes(b"secret")
    assert request(studio.url, "GET", "/files/.lyra/attempts/a.gif")[0] == 200
    outside = {"error": "refused: '../secret.png' is outside the workspace"}
    assert request(studio.url, "GET", "/files/../secret.png") == (403, outside)
    assert request(studio.url, "GET", "/files/%2e%2e/secret.png") == (403, outside)
    assert request(studio.url, "GET", "/files/.lyra/attempts/../../../secret.png") == (
        403,
        {"error": "refused: '.lyra/attempts/../../../secret.png' is outside the workspace"},
    )
    assert request(studio.url, "GET", f"/files/{studio.workspace.parent / 'secret.png'}") == (
        403,
        {"error": f"refused: '{studio.workspace.parent / 'secret.png'}' is outside the workspace"},
    )
    # Inside the workspace, only pictures and clips of the folders it shows.
    assert request(studio.url, "GET", "/files/skills/__init__.py")[0] == 403
    assert request(studio.url, "GET", "/api/sessions/../../etc/passwd") == (
        403,
        {"error": "refused: '../../etc/passwd' is outside the workspace"},
    )
    assert request(studio.url, "GET", "/static/../../studio/app.py")[0] == 404


def test_a_task_that_cannot_be_taught_says_why(studio: Served) -> None:
    assert request(studio.url, "POST", "/api/teach", {"instruction": "Stack them."}) == (
        400,
        {"error": "give a curriculum and task, or an instruction, a backend and a scene"},
    )
    typed = {"instruction": "Stack them.", "backend": "ravens", "scene": "objects: [", "seeds": [0]}
    status, body = request(studio.url, "POST", "/api/teach", typed)
    assert (status, body["error"].split(":")[0]) == (
        400,
        "the scene or the success check is not valid YAML",
    )
    assert request(studio.url, "POST", "/api/teach", {"curriculum": "../x.yaml"}) == (
        403,
        {"error": "refused: '../x.yaml' is outside the workspace"},
    )


def test_the_local_studio_refuses_other_sites_and_form_posts(studio: Served) -> None:
    port = urlsplit(studio.url).port
    assert request(studio.url, "GET", "/api/state")[1]["token_required"] is False
    assert request(studio.url, "GET", "/api/state", headers={"Host": f"evil.test:{port}"}) == (
        403,
        {"error": f"refused: the Host 'evil.test:{port}' is not this studio's address"},
    )
    origin = {"Origin": "http://evil.test"}
    assert request(studio.url, "POST", "/api/teach", {}, origin) == (
        403,
        {"error": "refused: a request from another site's page"},
    )
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert request(studio.url, "POST", "/api/teach", {}, form) == (
        415,
        {"error": "refused: a change must be sent as JSON (Content-Type: application/json)"},
    )
    assert request(studio.url, "POST", "/api/answer", {"question": 1, "action": "accept"}) == (
        409,
        {"error": "nothing is being taught: start an attempt first"},
    )


REFUSED = (
    401,
    {
        "error": "refused: this studio needs its token: open the address `lyra studio` printed "
        "(it ends in ?token=...), or send it in the x-lyra-token header"
    },
)


def test_another_interface_needs_the_token_it_prints(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    served = serve(tmp_path, "--host", "0.0.0.0")
    try:
        token = served.url.split("?token=")[1]
        assert len(token) >= 32
        local = served.url.replace("0.0.0.0", "127.0.0.1").split("?")[0]
        assert request(local, "GET", "/api/library") == REFUSED
        assert request(local, "GET", "/api/library", headers={"X-Lyra-Token": "wrong"}) == REFUSED
        assert request(local, "POST", "/api/skills/x/revert", {"to": 1}) == REFUSED
        cookie = {"Cookie": f"lyra_token={token}"}
        # The cookie lets a page read; a change needs the token in the header.
        assert request(local, "GET", "/api/library", headers=cookie)[0] == 200
        assert request(local, "POST", "/api/skills/x/revert", {"to": 1}, cookie) == REFUSED
        with_token = {"X-Lyra-Token": token}
        status, body = request(local, "POST", "/api/skills/x/revert", {"to": 1}, with_token)
        assert (status, body["error"].split(";")[0]) == (400, "'x' has no version 1")
        status, _ = request(local, "GET", f"/?token={token}")
        assert status == 303
        assert request(local, "GET", "/static/studio.js")[0] == 200
    finally:
        stop(served)


def test_a_token_given_on_loopback_is_required_too(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    served = serve(tmp_path, "--token", "s3cret")
    try:
        assert request(served.url, "POST", "/api/teach", {"curriculum": "x.yaml"}) == REFUSED
        assert request(served.url, "GET", "/api/curricula") == REFUSED
        assert request(served.url, "GET", "/api/curricula", headers={"X-Lyra-Token": "s3cret"}) == (
            200,
            {"raw": b"[]"},
        )
    finally:
        stop(served)


def test_a_port_in_use_is_named(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "lyra.cli", "studio", str(tmp_path), "--port", str(port)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr == (
        f"lyra: port {port} on 127.0.0.1 is in use (another lyra studio?): stop what uses it, "
        "or pick another port with --port\n"
    )


def test_a_folder_without_skills_is_not_a_workspace(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lyra.cli", "studio", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={"LYRA_WORKSPACE": "", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1
    assert f"{tmp_path} is not a workspace (it has no skills/ folder)" in done.stderr


def test_result_pages_read_as_headings_tables_and_text() -> None:
    blocks = markdown_blocks("# Results\n\nSome words\nmore.\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n")
    assert blocks == [
        {"kind": "heading", "level": 1, "text": "Results"},
        {"kind": "text", "text": "Some words more."},
        {"kind": "table", "head": ["a", "b"], "rows": [["1", "2"]]},
    ]
