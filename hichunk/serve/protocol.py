"""The HTTP connection layer: uvicorn's h11 protocol with limits a slow or idle client cannot exhaust.

uvicorn (0.5x) gives a connection unlimited time to send its request headers and counts
idle sockets against ``limit_concurrency``: 520 clients that each send half a request hold
every other client at 503. This subclass of ``uvicorn.protocols.http.h11_impl.H11Protocol``
(passed as ``uvicorn.Config(http=...)``) adds:

* ``TCP_NODELAY`` on every accepted socket: the response's headers and body go out as two
  writes, and with Nagle's algorithm the second waited for the client's delayed ACK
  (~40 ms on every keep-alive request, even ``GET /health``);
* a header timeout: a request's headers must be complete within ``header_timeout``
  seconds of the connection opening or of the previous response, else the connection is
  closed (the keep-alive timeout stays as uvicorn's for idle connections);
* at most ``max_connections`` open connections, counted without making anyone wait: a new
  connection over the limit closes the connection that is cheapest to lose — one still
  waiting for its first request's headers (oldest first), else an idle keep-alive one
  (idle longest first); only when every connection has a request in flight is the new
  one answered 503 and closed.

Request bodies have their own time limit in the application (``app.BodyLimit``).
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass

from uvicorn.protocols.http.h11_impl import H11Protocol

BUSY_RESPONSE = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
                 b"content-length: 54\r\n\r\n" + b'{"error": "too many connections, all of them working"}')
assert len(BUSY_RESPONSE.split(b"\r\n\r\n", 1)[1]) == 54


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = 10.0  # seconds to send a request's headers
    max_connections: int = 512  # open connections, idle ones included


def protocol_class(limits: ConnectionLimits) -> type[H11Protocol]:
    """An H11Protocol subclass that applies ``limits`` (one class per server: its connections are its own)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})


class GuardedH11Protocol(H11Protocol):
    limits = ConnectionLimits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        self.opened_at = self.idle_since = time.monotonic()
        self.served = 0
        self.header_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections and not self._make_room():
            transport.write(BUSY_RESPONSE)
            transport.close()
            return
        self._arm_header_timer()

    # -- the header timeout -----------------------------------------------------------
    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self.header_timer = self.loop.call_later(max(self.limits.header_timeout, self.timeout_keep_alive),
                                                 self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _headers_too_slow(self) -> None:
        self.header_timer = None
        if self.waiting_for_request() and not self.transport.is_closing():
            self.transport.close()

    def waiting_for_request(self) -> bool:
        """No request in flight: before a request's headers are complete, or idle between requests."""
        return self.cycle is None or self.cycle.response_complete

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before:  # a request's headers arrived: the application has it now
            self._disarm_header_timer()

    def on_response_complete(self) -> None:
        self.served += 1
        self.idle_since = time.monotonic()
        super().on_response_complete()
        if not self.transport.is_closing() and self.waiting_for_request():
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    # -- the connection limit ----------------------------------------------------------
    def _make_room(self) -> bool:
        """Close the connection that is cheapest to lose (see the module doc); False when none may go."""
        def cost(conn: GuardedH11Protocol) -> tuple:
            # never served first (oldest first), then idle keep-alive ones (idle longest first)
            return (1, conn.idle_since) if conn.served else (0, conn.opened_at)

        idle = [c for c in self.connections if c is not self and isinstance(c, GuardedH11Protocol)
                and c.waiting_for_request() and not c.transport.is_closing()]
        if not idle:
            return False
        victim = min(idle, key=cost)
        victim._disarm_header_timer()
        victim.transport.close()
        self.connections.discard(victim)
        return True
