"""``hichunk serve``: the index over HTTP (FastAPI + uvicorn, extra ``serve``).

    from hichunk.serve import create_app, serve, BackgroundServer

``create_app(index)`` is an ASGI application to mount or run with any server;
``serve(index, host, port)`` runs it until SIGINT/SIGTERM; ``BackgroundServer``
runs it in a thread on a free localhost port. See ``hichunk.serve.app`` for the
endpoints.
"""

from hichunk.extras import require_extra

require_extra("serve", what="hichunk serve")

from hichunk.serve.app import create_app  # noqa: E402
from hichunk.serve.server import BackgroundServer, serve  # noqa: E402

__all__ = ["BackgroundServer", "create_app", "serve"]
