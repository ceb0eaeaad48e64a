"""Running the service: uvicorn on a socket we bind ourselves (so port 0 works and the port is known).

``serve`` blocks until SIGINT or SIGTERM, then shuts down within ``shutdown_seconds``:
it stops accepting connections, lets running requests finish until then, then
cancels what is left (the worker processes are killed, waiting requests end), closes
the index and returns; ``hichunk serve`` then exits even if a thread is still busy.
Connections go through ``protocol.GuardedH11Protocol`` (header timeout, TCP_NODELAY,
a connection limit that idle clients cannot exhaust). ``BackgroundServer`` runs the
same server in a thread (tests, notebooks).
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
from hichunk.serve.app import MAX_BODY, ServiceSettings, create_app
from hichunk.serve.protocol import ConnectionLimits, protocol_class

GRACEFUL_SECONDS = 10
KEEP_ALIVE_SECONDS = 5  # an idle keep-alive connection is closed after this
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


def _config(app, log_level: str, connections: ConnectionLimits, shutdown_seconds: float) -> uvicorn.Config:
    # limit_concurrency stays off: uvicorn counts idle sockets against it; the protocol class limits connections
    return uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="off", http=protocol_class(connections),
                          timeout_graceful_shutdown=shutdown_seconds, timeout_keep_alive=KEEP_ALIVE_SECONDS,
                          server_header=False, backlog=BACKLOG)


def serve(index: Index, host: str = "127.0.0.1", port: int = 8000, allow_update: bool = False,
          max_body: int = MAX_BODY, log_level: str = "warning", batch_queries: bool = True,
          settings: ServiceSettings | None = None, connections: ConnectionLimits | None = None,
          shutdown_seconds: float = GRACEFUL_SECONDS) -> None:
    """Serve ``index`` until interrupted; the index is warmed up first and closed at the end."""
    app = create_app(index, allow_update=allow_update, max_body=max_body, batch_queries=batch_queries,
                     settings=settings)
    service = app.app.state.service
    sock = bind(host, port)
    try:
        service.warm_up()
        shown = f"[{host}]" if ":" in host else host
        print(f"hichunk: serving {len(index)} documents ({index.n_leaves} leaves) on "
              f"http://{shown}:{sock.getsockname()[1]}/ (Ctrl-C stops)", file=sys.stderr, flush=True)
        # uvicorn catches SIGINT/SIGTERM, drains, then re-raises the signal to the handler it found: make that
        # handler ours, so a graceful stop ends the command normally instead of killing it.
        previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            uvicorn.Server(_config(app, log_level, connections or ConnectionLimits(), shutdown_seconds)).run(sockets=[sock])
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        service.close()  # kills the workers: whatever is still running stops now
        sock.close()
        index.close()
    print("hichunk: server stopped", file=sys.stderr, flush=True)


class BackgroundServer:
    """The service in a thread on 127.0.0.1 and a free port: ``with BackgroundServer(index) as url: ...``."""

    def __init__(self, index: Index, allow_update: bool = False, max_body: int = MAX_BODY, host: str = "127.0.0.1",
                 batch_queries: bool = True, settings: ServiceSettings | None = None,
                 connections: ConnectionLimits | None = None, shutdown_seconds: float = GRACEFUL_SECONDS):
        self.app = create_app(index, allow_update=allow_update, max_body=max_body, batch_queries=batch_queries,
                              settings=settings)
        self.service = self.app.app.state.service
        self.sock = bind(host, 0)
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        self.shutdown_seconds = shutdown_seconds
        self.server = uvicorn.Server(_config(self.app, "warning", connections or ConnectionLimits(), shutdown_seconds))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> str:
        self.service.warm_up()
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(self.shutdown_seconds + 5)
        self.service.close()
        self.sock.close()
