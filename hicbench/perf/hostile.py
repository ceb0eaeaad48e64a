"""Hostile clients of ``hichunk serve`` for the load test (issue 19 rows 1-3), each bounded in count and time.

* ``OptionFlood``: tiny ``/chunk`` requests, every one with other options (``leaf_tokens`` counts up), as a
  client would that wants a server to load one model per option set.
* ``DocxUploads``: uploads of a DOCX with many paragraphs and styles (a parse that was slow per paragraph),
  several at once, again and again.
* ``HalfRequests``: connections that send half a request's headers and then nothing, held open (and opened
  again when the server closes them), more than the server's connection limit.

Loopback only: every client connects to 127.0.0.1. ``status`` counts the answers each attacker got.
"""

from __future__ import annotations

import http.client
import io
import json
import socket
import threading
import time
import uuid
from collections import Counter

HOST = "127.0.0.1"


class Attacker:
    """Runs ``threads`` loops of ``attack_once`` until ``stop`` is set, ``limit`` attacks are made or time is up."""

    name = "attacker"

    def __init__(self, port: int, threads: int, limit: int, seconds: float):
        self.port, self.threads, self.limit, self.seconds = port, threads, limit, seconds
        self.status: Counter[str] = Counter()
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._made = 0
        self._workers: list[threading.Thread] = []

    def start(self) -> None:
        deadline = time.monotonic() + self.seconds
        self._workers = [threading.Thread(target=self._loop, args=(deadline,), daemon=True) for _ in range(self.threads)]
        for t in self._workers:
            t.start()

    def _next(self) -> int | None:
        with self._lock:
            if self._made >= self.limit:
                return None
            self._made += 1
            return self._made

    def _loop(self, deadline: float) -> None:
        while not self.stop.is_set() and time.monotonic() < deadline:
            n = self._next()
            if n is None:
                return
            try:
                outcome = self.attack_once(n, deadline)
            except (OSError, http.client.HTTPException) as exc:
                outcome = type(exc).__name__
            with self._lock:
                self.status[outcome] += 1

    def attack_once(self, n: int, deadline: float) -> str:
        raise NotImplementedError

    def finish(self) -> None:
        self.stop.set()
        for t in self._workers:
            t.join(30)

    def summary(self) -> str:
        return f"{self.name}: {self._made} made, answers {dict(sorted(self.status.items()))}"


def _post(port: int, path: str, body: bytes, kind: str, timeout: float) -> str:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": kind})
        resp = conn.getresponse()
        resp.read()
        return str(resp.status)
    finally:
        conn.close()


class OptionFlood(Attacker):
    """Row 1: ``/chunk`` with a new ``leaf_tokens`` every time."""

    name = "distinct-option /chunk"

    def attack_once(self, n: int, deadline: float) -> str:
        body = json.dumps({"text": f"# Note {n}\n\nA short note. It has two sentences.", "format": "markdown",
                           "leaf_tokens": 16 + n}).encode()
        return _post(self.port, "/chunk", body, "application/json", max(deadline - time.monotonic(), 1.0))


def slow_docx(paragraphs: int = 4000, styles: int = 150) -> bytes:
    """A DOCX with many paragraphs and custom styles (python-docx scans every style per style lookup)."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    d = docx.Document()
    for i in range(styles):
        d.styles.add_style(f"Custom {i}", WD_STYLE_TYPE.PARAGRAPH).base_style = d.styles["Normal"]
    for i in range(paragraphs):
        if i % 40 == 0:
            d.add_heading(f"Section {i // 40}", 1 + (i // 40) % 3)
        d.add_paragraph(f"Paragraph {i} says something short.", style=f"Custom {i % styles}" if i % 3 == 0 else None)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


class DocxUploads(Attacker):
    """Row 2: the same slow DOCX uploaded again and again, ``threads`` at a time."""

    name = "DOCX uploads"

    def __init__(self, port: int, threads: int, limit: int, seconds: float, data: bytes):
        super().__init__(port, threads, limit, seconds)
        self.data = data

    def attack_once(self, n: int, deadline: float) -> str:
        boundary = uuid.uuid4().hex
        body = (f'--{boundary}\r\nContent-Disposition: form-data; name="method"\r\n\r\nstructure\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow-{n}.docx"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n").encode() + self.data + f"\r\n--{boundary}--\r\n".encode()
        return _post(self.port, "/chunk", body, f"multipart/form-data; boundary={boundary}",
                     max(deadline - time.monotonic(), 1.0))


class HalfRequests:
    """Row 3: ``count`` connections, each sending half a request's headers, kept open until ``finish``."""

    name = "half-request connections"

    def __init__(self, port: int, count: int, seconds: float):
        self.port, self.count, self.seconds = port, count, seconds
        self.status: Counter[str] = Counter()
        self.stop = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _open(self) -> socket.socket | None:
        try:
            s = socket.create_connection((HOST, self.port), timeout=5)
            s.sendall(b"POST /query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
            s.setblocking(False)
            self.status["opened"] += 1
            return s
        except OSError as exc:
            self.status[type(exc).__name__] += 1
            return None

    def _hold(self) -> None:
        deadline = time.monotonic() + self.seconds
        held = [s for s in (self._open() for _ in range(self.count)) if s is not None]
        while not self.stop.is_set() and time.monotonic() < deadline:
            alive = []
            for s in held:  # the server closing one: open another (bounded: at most `count` held)
                try:
                    gone = s.recv(1) == b""
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    self.status["closed by the server"] += 1
                    s.close()
                else:
                    alive.append(s)
            held = alive + [s for s in (self._open() for _ in range(self.count - len(alive))) if s is not None]
            self.stop.wait(0.5)
        for s in held:
            s.close()

    def finish(self) -> None:
        self.stop.set()
        self._thread.join(30)

    def summary(self) -> str:
        return f"{self.name}: {self.count} held at a time, {dict(sorted(self.status.items()))}"
