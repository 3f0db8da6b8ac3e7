"""The studio's web server: a Starlette app over :mod:`.runs` and :mod:`.views`, and its guard.

Only the local user reaches it by default: it binds to the loopback address and refuses a Host
header naming another (DNS rebinding), and a request from another site's page (its Origin) or a
state change that is not JSON (a plain form post). Bound to another interface it needs a token:
every request but the page's own scripts carries it (a header, or the cookie the first page
load sets), and every state change in the header, where no other site can put it.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import fields
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from lyra.backend import registered
from lyra.errors import LyraError
from lyra.studio import views
from lyra.studio.runs import BusyError, OutsideError, TaskChoice, TeachingRun, inside
from lyra.studio.teacher import Answer, Events, NoQuestionError
from lyra.workspace import Workspace

STATIC = Path(__file__).parent / "static"
TOKEN_HEADER = "x-lyra-token"
TOKEN_COOKIE = "lyra_token"
# What the file route serves: pictures and clips, from these folders of the workspace.
SERVED_FOLDERS = (".lyra/attempts", "evals", "docs", "demos", "curricula")
SERVED_SUFFIXES = {".gif", ".png", ".svg", ".jpg", ".jpeg"}
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


class Studio:
    """One workspace's studio: its event log, its teaching run, and how files become URLs."""

    def __init__(self, workspace: Workspace, llm: str | None, max_rounds: int = 6) -> None:
        self.ws = workspace
        self.events = Events()
        self.runs = TeachingRun(workspace, self.events, llm, self.web_path, max_rounds)

    def web_path(self, path: Path) -> str:
        """The URL the file route serves a workspace file at."""
        return "/files/" + quote(path.resolve().relative_to(self.ws.root.resolve()).as_posix())

    def close(self) -> None:
        """End a teaching run still going (its open question is answered 'reject')."""
        self.runs.close()


def create_app(
    studio: Studio, token: str | None = None, allowed_hosts: set[str] | None = None
) -> Guard:
    """The ASGI app: pages, the JSON API, the event stream and the file route, guarded.

    Args:
        studio: the workspace's studio.
        token: what every request must carry (None: no token, for the loopback address).
        allowed_hosts: the names the Host header may give (None: any, where a token guards).
    """
    ws = studio.ws

    async def index(request: Request) -> Response:
        given = request.query_params.get("token")
        if token is not None and given is not None:
            # The link `lyra studio` printed: the token goes into a same-site cookie, which the
            # page's script copies into the header of each change (no other site can read it).
            response: Response = RedirectResponse("/", status_code=303)
            response.set_cookie(TOKEN_COOKIE, given, httponly=False, samesite="strict")
            return response
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def state(request: Request) -> Response:
        return JSONResponse(
            {
                "workspace": str(ws.root),
                "llm": studio.runs.llm,
                "busy": studio.runs.busy,
                "token_required": token is not None,
                "backends": sorted(registered()),
            }
        )

    async def events(request: Request) -> Response:
        after = int(request.query_params.get("after", "0"))

        async def stream() -> Any:
            seen = after
            while not await request.is_disconnected():
                for event in studio.events.since(seen):
                    seen = event["seq"]
                    yield f"id: {seen}\ndata: {json.dumps(event)}\n\n"
                await asyncio.sleep(0.1)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    async def curricula(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.curricula, ws))

    async def scene(request: Request) -> Response:
        q = request.query_params
        seed = int(q["seed"]) if q.get("seed") else None
        png = await run_in_threadpool(views.scene_png, ws, q["curriculum"], q["task"], seed)
        return Response(png, media_type="image/png")

    async def teach(request: Request) -> Response:
        body = await request.json()
        names = {f.name for f in fields(TaskChoice)} - {"seeds"}
        seeds = tuple(int(s) for s in body.get("seeds") or [0])
        choice = TaskChoice(**{k: v for k, v in body.items() if k in names}, seeds=seeds)
        return JSONResponse(await run_in_threadpool(studio.runs.start, choice))

    async def answer(request: Request) -> Response:
        body = await request.json()
        teacher = studio.runs.teacher
        if teacher is None:
            raise NoQuestionError("nothing is being taught: start an attempt first")
        teacher.answer(
            Answer(
                int(body["question"]),
                str(body["action"]),
                str(body.get("text", "")),
                body.get("fields"),
            )
        )
        return JSONResponse({"ok": True})

    async def library(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.library, ws))

    async def skill(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.skill, ws, request.path_params["name"]))

    async def version(request: Request) -> Response:
        p = request.path_params
        text = await run_in_threadpool(views.version_source, ws, p["name"], p["version"])
        return PlainTextResponse(text)

    async def revert(request: Request) -> Response:
        body = await request.json()
        studio.runs.refuse_while_busy("revert")
        done = await run_in_threadpool(
            views.revert, ws, request.path_params["name"], int(body["to"])
        )
        return JSONResponse(done)

    async def memory(request: Request) -> Response:
        q = request.query_params
        found = await run_in_threadpool(
            views.memory_search,
            ws,
            q.get("q", ""),
            [h for h in q.getlist("hint") if h.strip()],
            q.get("correction") or None,
            q.get("backend") or None,
            not studio.runs.busy,
        )
        return JSONResponse(found)

    async def sessions(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.sessions, ws))

    async def session(request: Request) -> Response:
        path = request.path_params["path"]
        return JSONResponse(await run_in_threadpool(views.session, ws, path))

    async def results(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.results, ws, studio.web_path))

    async def files(request: Request) -> Response:
        return FileResponse(served_file(ws, request.path_params["path"]))

    routes = [
        Route("/", index),
        Route("/api/state", state),
        Route("/api/events", events),
        Route("/api/curricula", curricula),
        Route("/api/scene", scene),
        Route("/api/teach", teach, methods=["POST"]),
        Route("/api/answer", answer, methods=["POST"]),
        Route("/api/library", library),
        Route("/api/skills/{name}", skill),
        Route("/api/skills/{name}/versions/{version:int}", version),
        Route("/api/skills/{name}/revert", revert, methods=["POST"]),
        Route("/api/memory", memory),
        Route("/api/sessions", sessions),
        Route("/api/sessions/{path:path}", session),
        Route("/api/results", results),
        Route("/files/{path:path}", files),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            OutsideError: _refused(403),
            BusyError: _refused(409),
            NoQuestionError: _refused(409),
            FileNotFoundError: _refused(404),
            LyraError: _refused(400),
            KeyError: _missing,
            ValueError: _refused(400),
        },
    )
    return Guard(app, token, allowed_hosts)


def served_file(ws: Workspace, relative: str) -> Path:
    """A picture or clip the file route may serve.

    Raises:
        OutsideError: the path leads out of the workspace, or to a file the studio does not
            serve (only pictures and clips, from the folders in ``SERVED_FOLDERS``).
        FileNotFoundError: there is no such file.
    """
    path = inside(ws.root, relative)
    root = ws.root.resolve()
    folders = [(root / folder).resolve() for folder in SERVED_FOLDERS]
    if path.suffix.lower() not in SERVED_SUFFIXES or not any(
        path.is_relative_to(folder) for folder in folders
    ):
        raise OutsideError(
            f"refused: '{relative}' is not a picture or clip the studio serves "
            f"(only {', '.join(sorted(SERVED_SUFFIXES))} under {', '.join(SERVED_FOLDERS)})"
        )
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {relative}")
    return path


def _refused(status: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    async def handler(request: Request, error: Exception) -> Response:
        return JSONResponse({"error": str(error)}, status_code=status)

    return handler


async def _missing(request: Request, error: Exception) -> Response:
    return JSONResponse({"error": f"missing field {error}"}, status_code=400)


class Guard:
    """Refuses what the local user did not send: see the module's docstring."""

    def __init__(self, app: ASGIApp, token: str | None, allowed_hosts: set[str] | None) -> None:
        self.app = app
        self.token = token
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Pass the request on, or answer it with why it is refused."""
        if scope["type"] == "http":
            why = self.refusal(scope)
            if why is not None:
                status, message = why
                await JSONResponse({"error": message}, status_code=status)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and message a request is refused with, or None to let it through."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if self.allowed_hosts is not None and _hostname(host) not in self.allowed_hosts:
            return 403, f"refused: the Host '{host}' is not this studio's address"
        origin = headers.get("origin")
        if origin is not None and origin.split("://", 1)[-1] != host:
            return 403, "refused: a request from another site's page"
        path, method = scope["path"], scope["method"]
        changes = method not in _SAFE_METHODS
        if changes and not headers.get("content-type", "").startswith("application/json"):
            return 415, "refused: a change must be sent as JSON (Content-Type: application/json)"
        if self.token is None or path.startswith("/static/"):
            return None
        given = headers.get(TOKEN_HEADER)
        if given is None and not changes:
            given = _cookie(headers.get("cookie", ""), TOKEN_COOKIE)
            if path == "/" and given is None:
                given = parse_qs(scope.get("query_string", b"").decode()).get("token", [None])[0]
        if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
            return 401, (
                "refused: this studio needs its token: open the address `lyra studio` printed "
                f"(it ends in ?token=...), or send it in the {TOKEN_HEADER} header"
            )
        return None


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None
