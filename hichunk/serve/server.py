"""Running the service: uvicorn on a socket we bind ourselves (so port 0 works and the port is known).

``serve`` blocks until SIGINT or SIGTERM, then shuts down gracefully: it stops
accepting connections, lets running requests finish (up to
``GRACEFUL_SECONDS``), and closes the index. ``BackgroundServer`` runs the same
server in a thread (tests, notebooks).
"""

from __future__ import annotations

import logging
import signal
import socket
import sys
import threading
import time

import uvicorn

from hichunk.errors import HichunkError
from hichunk.retrieval.index import Index
from hichunk.serve.app import MAX_BODY, create_app

GRACEFUL_SECONDS = 10
MAX_CONNECTIONS = 512  # concurrent connections before the server answers 503
BACKLOG = 2048

log = logging.getLogger("hichunk.serve")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise HichunkError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def _config(app, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="off",
                          timeout_graceful_shutdown=GRACEFUL_SECONDS, limit_concurrency=MAX_CONNECTIONS,
                          timeout_keep_alive=30, server_header=False)


def serve(index: Index, host: str = "127.0.0.1", port: int = 8000, allow_update: bool = False,
          max_body: int = MAX_BODY, log_level: str = "warning", batch_queries: bool = True) -> None:
    """Serve ``index`` until interrupted; the index is warmed up first and closed at the end."""
    app = create_app(index, allow_update=allow_update, max_body=max_body, batch_queries=batch_queries)
    sock = bind(host, port)
    try:
        app.app.state.service.warm_up()
        shown = f"[{host}]" if ":" in host else host
        print(f"hichunk: serving {len(index)} documents ({index.n_leaves} leaves) on "
              f"http://{shown}:{sock.getsockname()[1]}/ (Ctrl-C stops)", file=sys.stderr, flush=True)
        # uvicorn catches SIGINT/SIGTERM, drains, then re-raises the signal to the handler it found: make that
        # handler ours, so a graceful stop ends the command normally instead of killing it.
        previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            uvicorn.Server(_config(app, log_level)).run(sockets=[sock])
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        sock.close()
        index.close()
    print("hichunk: server stopped", file=sys.stderr, flush=True)


class BackgroundServer:
    """The service in a thread on 127.0.0.1 and a free port: ``with BackgroundServer(index) as url: ...``."""

    def __init__(self, index: Index, allow_update: bool = False, max_body: int = MAX_BODY, host: str = "127.0.0.1",
                 batch_queries: bool = True):
        self.app = create_app(index, allow_update=allow_update, max_body=max_body, batch_queries=batch_queries)
        self.sock = bind(host, 0)
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(_config(self.app, "warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> str:
        self.app.app.state.service.warm_up()
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(GRACEFUL_SECONDS + 5)
        self.sock.close()
