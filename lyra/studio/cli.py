"""``lyra studio``: start the browser studio on a workspace; starlette loads only when it runs."""

from __future__ import annotations

import argparse
import errno
import secrets
import socket
import sys
from pathlib import Path

from lyra.errors import LyraError, MissingDependencyError

DEFAULT_PORT = 8765


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lyra studio``."""
    from lyra.llm.cli import add_llm_option

    parser = subparsers.add_parser(
        "studio", help="teach, watch and review in the browser (a local web app)"
    )
    parser.add_argument(
        "folder", nargs="?", type=Path, help="the workspace (default: as other commands find it)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default 8765)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1: only this machine); any other needs a token",
    )
    parser.add_argument(
        "--token",
        help="the token every request must carry (default: none on 127.0.0.1, a new random "
        "one on any other address, printed in the link)",
    )
    add_llm_option(parser)
    parser.add_argument("--max-rounds", type=int, default=6, help="rounds per task (default 6)")
    parser.set_defaults(func=_studio)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``.

    Raises:
        LyraError: the port is taken, or the address is not this machine's.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise LyraError(
                f"port {port} on {host} is in use (another lyra studio?): stop what uses it, "
                "or pick another port with --port"
            ) from None
        raise LyraError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.listen(128)
    return sock


def _studio(args: argparse.Namespace) -> int:
    from lyra.llm.openai_provider import loopback_host

    try:
        import uvicorn

        from lyra.studio.app import LOOPBACK, Studio, create_app
    except ImportError as error:
        raise MissingDependencyError(
            f"the studio's server needs {error.name}: pip install 'lyra-robot[studio]' "
            "(or, in a clone, pip install -e '.[studio]')"
        ) from None
    from lyra.workspace import find_workspace

    workspace = find_workspace(args.folder.resolve() if args.folder else None)
    if not workspace.skills_dir.is_dir():
        raise LyraError(
            f"{workspace.root} is not a workspace (it has no skills/ folder): start one with "
            "`lyra init DIR`, or name one"
        )
    local = loopback_host(args.host)
    token = args.token or (None if local else secrets.token_urlsafe(24))
    sock = bind(args.host, args.port)
    port = sock.getsockname()[1]
    studio = Studio(workspace, args.llm, args.max_rounds)
    app = create_app(studio, token, allowed_hosts=LOOPBACK | {args.host} if local else None)
    link = f"http://{args.host}:{port}/" + (f"?token={token}" if token else "")
    print(f"lyra studio on {workspace.root}: {link}", flush=True)
    if not local:
        print(
            "lyra: the studio is reachable from other machines; every request needs the token",
            file=sys.stderr,
        )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    finally:
        studio.close()
        sock.close()
    return 0
