"""The HTTP service: one loaded index answers queries from many clients at once.

Endpoints (JSON unless noted):

* ``POST /query`` ``{"query", "budget", "auto_merge", "mode", "doc", "fill", "order", "max_candidates"}``
  -> exactly the JSON of ``hichunk query --json`` (context, passages with exact provenance, merges).
* ``POST /chunk`` a document as ``{"text", "format", "name", "method", "leaf_tokens", "max_level",
  "merge_over_chunk", "hints"}`` or as a multipart file upload (field ``file``, the same options as form
  fields; PDF and DOCX files too) -> the tree JSON of ``hichunk chunk --format json``.
* ``POST /index/update`` (only when the app is made with ``allow_update``; with a token, only with
  ``Authorization: Bearer TOKEN``) ``{"documents": [{"id", "text", "format"}], "remove": [ids]}`` -> the
  update report; additions and removals are one commit.
* ``GET /health``; ``GET /`` (HTML: a query form, and the answer page for ``?q=``);
  ``GET /tree?doc=ID`` (HTML: a document's chunk tree).

Bad input gets a 4xx status and ``{"error": "<one line>"}``; an unexpected failure
is logged with its traceback on the server and answered with a 500 that holds
none. JSON fields are checked strictly (``true`` is not a number, ``"yes"`` not a
boolean) and every text field refuses lone surrogates (422).

Resources are bounded per request: bodies over ``max_body`` bytes are refused
(413) as they stream in, and must arrive within ``body_timeout`` seconds (408);
documents over the work limits after decoding, inflation or extraction are
refused (413). Parsing, chunking and embedding run in a few worker processes
(``workers``), never in the threads that answer queries: at most that many
requests do such work at once, ``queue`` more wait, the rest get 503; each has a
wall-clock limit after which its worker is killed (503). Queries run
concurrently in the server's thread pool on one index; an update stages its
documents outside the index's readers-writer lock and holds it only to commit,
so a query never waits for a parse and never sees half an update. Every request
first checks (one stat) whether another process committed to the index, and
follows it. Queries that arrive together are encoded in one batch (off with
``batch_queries=False``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from hichunk.extras import require_extra

require_extra("serve", what="hichunk serve")

from fastapi import FastAPI, Request  # noqa: E402
from fastapi.responses import HTMLResponse, JSONResponse  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, ValidationError  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402

from hichunk import __version__  # noqa: E402
from hichunk.document.decode import lone_surrogate  # noqa: E402
from hichunk.document.limits import WorkLimitExceeded, WorkLimits, check_chars  # noqa: E402
from hichunk.errors import HichunkError, IndexBusy, IndexChanged  # noqa: E402
from hichunk.retrieval.index import Index  # noqa: E402
from hichunk.retrieval.search import MAX_QUERY_CHARS, FillOptions  # noqa: E402
from hichunk.serve.jobs import ChunkJob, ChunkSpec, TextSource, chunk_job  # noqa: E402
from hichunk.serve.workers import PoolBusy, TaskFailed, WorkerLost, WorkerPool, WorkTimeout  # noqa: E402

log = logging.getLogger("hichunk.serve")

MAX_BODY = 16 * 1024 * 1024  # bytes of one request body
MAX_BUDGET = 1_000_000  # tokens
MAX_CANDIDATES = 100_000
MAX_DOCS_PER_QUERY = 1000
INTERNAL_ERROR = "internal error (details are in the server log)"
RETRIES_WHEN_CHANGED = 3  # a search that meets files another process deleted follows the index and tries again


@dataclass(frozen=True)
class ServiceSettings:
    """The service's limits (``hichunk serve`` options in brackets)."""

    allow_update: bool = False  # [--allow-update]
    token: str | None = None  # [--token, $HICHUNK_SERVE_TOKEN] required by /index/update when set
    max_body: int = MAX_BODY  # [--max-body-mb] bytes of one request body
    body_timeout: float = 60.0  # [--body-timeout] seconds for a whole request body to arrive
    workers: int = 2  # [--workers] worker processes for parsing, chunking and embedding
    worker_nice: int = 10  # [--worker-nice] added to the workers' niceness (queries first; 0: equal priority)
    queue: int = 8  # requests that wait for a worker; more get 503
    chunk_seconds: float = 120.0  # [--chunk-seconds] wall-clock limit of one /chunk request's work
    update_seconds: float = 1800.0  # [--update-seconds] ... of one /index/update request's work
    limits: WorkLimits = field(default_factory=lambda: WorkLimits(
        max_chars=16_000_000, max_pages=5000, max_paragraphs=200_000, max_inflated_bytes=256 * 1024 * 1024))
    batch_queries: bool = True  # [--no-query-batching]


class ReadWriteLock:
    """Many readers or one writer; a waiting writer holds back new readers (so updates are not starved)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


def _no_surrogates(value: Any, where: str = "") -> None:
    """422 for a lone surrogate anywhere in parsed JSON (keys and values): it is not Unicode text."""
    if isinstance(value, str):
        at = lone_surrogate(value)
        if at is not None:
            raise ServiceError(422, f"{where or 'body'}: a lone surrogate at character {at} (not valid Unicode)")
    elif isinstance(value, dict):
        for k, v in value.items():
            _no_surrogates(k, where)
            _no_surrogates(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _no_surrogates(v, f"{where}.{i}" if where else str(i))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryRequest(_Strict):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    budget: int = Field(4096, ge=1, le=MAX_BUDGET)
    auto_merge: bool = True
    mode: Literal["paper", "reference"] = "paper"
    fill: Literal["truncate", "whole"] = "truncate"
    order: Literal["rank", "document"] = "rank"
    doc: str | list[str] | None = None
    max_candidates: int = Field(1000, ge=1, le=MAX_CANDIDATES)

    def options(self) -> FillOptions:
        return FillOptions(budget=self.budget, auto_merge=self.auto_merge, mode=self.mode, fill=self.fill,
                           order=self.order, max_candidates=self.max_candidates)

    def docs(self) -> list[str] | None:
        docs = [self.doc] if isinstance(self.doc, str) else self.doc
        if docs is not None and not 1 <= len(docs) <= MAX_DOCS_PER_QUERY:
            raise HichunkError(f"doc: give 1 to {MAX_DOCS_PER_QUERY} document ids")
        return docs


class ChunkSettings(_Strict):
    format: Literal["text", "markdown", "html", "rst", "groff", "pdf", "docx"] | None = None
    name: str = Field("<text>", max_length=1000)
    method: str = "hichunk"
    leaf_tokens: int = Field(200, ge=1, le=100_000)
    max_level: int = Field(10, ge=1, le=10)
    merge_over_chunk: bool = True
    hints: Literal["use", "ignore"] = "use"

    def spec(self) -> ChunkSpec:
        from hichunk.chunkers import check_method

        return ChunkSpec(check_method(self.method), self.leaf_tokens, self.max_level, self.merge_over_chunk, self.hints)


class ChunkRequest(ChunkSettings):
    text: str


class UpdateDocument(_Strict):
    id: str = Field(min_length=1, max_length=4096)
    text: str
    format: Literal["text", "markdown", "html", "rst", "groff"] = "text"


class UpdateRequest(_Strict):
    documents: list[UpdateDocument] = []
    remove: list[str] = []


class ServiceError(Exception):
    """An answer with a 4xx/5xx status and a one-line reason."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.headers = headers


BUSY = {"Retry-After": "1"}
# Errors of the machinery, as statuses and messages that name no server paths.
_ERRORS: list[tuple[type[BaseException], int, str, dict | None]] = [
    (WorkLimitExceeded, 413, "", None),
    (WorkTimeout, 503, "the work took longer than this server's limit for one request; send a smaller document", None),
    (PoolBusy, 503, "every worker is busy; retry later", BUSY),
    (WorkerLost, 503, "the work was stopped (a worker was lost, or the server is stopping); retry", BUSY),
    (IndexBusy, 409, "another process is writing the index; retry when it is done", BUSY),
    (IndexChanged, 503, "the index is being changed by another process; retry", BUSY),
]


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "bad request"


def _validation_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    if first.get("type") == "json_invalid":
        return "the body is not valid JSON"
    where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query"))
    return _one_line(f"{where}: {first.get('msg', 'invalid value')}" if where else first.get("msg", "invalid value"))


def _parse(model: type[BaseModel], body: object, strict: bool = True):
    try:
        return model.model_validate(body, strict=strict)
    except ValidationError as exc:
        raise ServiceError(422, _validation_message(exc)) from None


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` (413), by Content-Length or while they stream in, and bodies
    that take longer than ``timeout`` seconds to arrive (408)."""

    def __init__(self, app, max_bytes: int, timeout: float):
        self.app, self.max_bytes, self.timeout = app, max_bytes, timeout

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            return await _send_error(send, 413, f"request body over {self.max_bytes} bytes")
        seen = 0
        started = False
        deadline = time.monotonic() + self.timeout

        async def limited_receive():
            nonlocal seen
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.001))
            except asyncio.TimeoutError:
                raise _TooSlow(408, f"the request body did not arrive within {self.timeout:g} s") from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge(413, f"request body over {self.max_bytes} bytes")
            return message

        async def tracking_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except (_TooLarge, _TooSlow) as exc:
            if not started:
                await _send_error(send, exc.status_code, exc.detail)
        except Exception:  # the app's handler has answered 500 without details; the traceback goes to the log, once
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await _send_error(send, 500, INTERNAL_ERROR)


class _TooLarge(HTTPException):
    """Raised while a body streams in; the app answers it as any HTTP error (413)."""


class _TooSlow(HTTPException):
    """Raised when a body does not arrive in time (408)."""


async def _send_error(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class Admission:
    """At most ``active`` heavy requests at once and ``queue`` waiting (in the event loop, holding no thread)."""

    def __init__(self, active: int, queue: int):
        self.active, self.queue = active, queue
        self._waiting = 0
        self._semaphore: asyncio.Semaphore | None = None

    @asynccontextmanager
    async def slot(self):
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.active)
        if self._semaphore.locked() and self._waiting >= self.queue:
            raise ServiceError(503, "too many documents are being processed; retry later", BUSY)
        self._waiting += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._semaphore.release()


class Service:
    """What the endpoints share: the index, its lock, the worker pool and the limits."""

    def __init__(self, index: Index, settings: ServiceSettings | None = None):
        self.index = index
        self.settings = settings or ServiceSettings()
        self.lock = ReadWriteLock()
        self.pool = WorkerPool(self.settings.workers, self.settings.worker_nice)
        self.admission = Admission(self.settings.workers, self.settings.queue)
        self._threads = ThreadPoolExecutor(self.settings.workers, thread_name_prefix="hichunk-heavy")
        self._follow_lock = threading.Lock()
        self._embedder_spec = index._base_embedder or index.config.embedder  # what a worker loads (or is given)

    @property
    def allow_update(self) -> bool:
        return self.settings.allow_update

    def warm_up(self) -> None:
        """Start the workers (in the background) and load the embedder, the leaf pool and the tokenizer."""
        threading.Thread(target=self._start_workers, name="hichunk-workers", daemon=True).start()
        if self.index.n_leaves:
            self.index.search("warm up", FillOptions(budget=16))
        else:
            self.index.embed_query("warm up")

    def _start_workers(self) -> None:
        from hichunk.serve.jobs import warm_up

        try:
            self.pool.start(warm_up, self._embedder_spec, self.allow_update)
        except Exception:  # the first heavy request will try again and say why
            log.warning("the worker processes did not start", exc_info=True)

    async def heavy(self, fn: Callable, *args):
        """``fn(*args)`` on one of the service's own threads, after waiting (in the loop) for a slot."""
        async with self.admission.slot():
            return await asyncio.get_running_loop().run_in_executor(self._threads, fn, *args)

    def close(self) -> None:
        """Stop the workers (running work ends now) and the threads that wait for them."""
        self.pool.close()
        self._threads.shutdown(wait=False, cancel_futures=True)

    # -- following other writers --------------------------------------------------------
    def follow(self, force: bool = False) -> None:
        """Reopen the index's committed state when another process committed (one stat when nothing did)."""
        if not (force or self.index.changed_on_disk()):
            return
        with self._follow_lock:  # one thread re-reads; the others find it done
            if force or self.index.changed_on_disk():
                with self.lock.writing():
                    self.index.refresh()

    @contextmanager
    def reading(self) -> Iterator[None]:
        """The index for reading: following other processes' commits first."""
        self.follow()
        with self.lock.reading():
            yield

    def _retrying(self, read: Callable[[], Any]) -> Any:
        for attempt in range(RETRIES_WHEN_CHANGED + 1):
            try:
                with self.reading():
                    return read()
            except IndexChanged:
                if attempt == RETRIES_WHEN_CHANGED:
                    raise
                self.follow(force=True)
        raise AssertionError("unreachable")

    # -- the endpoints' work ----------------------------------------------------------------
    def search(self, request: QueryRequest, with_trees: bool = False):
        """The search result (and, for the answer page, the trees of its passages' documents), under one read lock."""
        docs = request.docs()

        def read():
            missing = [d for d in docs or () if d not in self.index.docs]
            if missing:
                raise ServiceError(404, f"no document {missing[0]!r} in the index")
            result = self.index.search(request.query, request.options(), None, docs)
            trees = {p.doc: self.index.tree(p.doc) for p in result.passages} if with_trees else {}
            return result, trees

        return self._retrying(read)

    def query(self, request: QueryRequest) -> dict:
        """The JSON of ``hichunk query --json``."""
        return self.search(request)[0].to_dict()

    def chunk(self, source: str | bytes, settings: ChunkSettings, encoding: str = "utf-8") -> dict:
        """The tree JSON of ``hichunk chunk --format json`` (worked out in a worker, within the limits)."""
        if isinstance(source, str):
            check_chars(len(source), settings.name, self.settings.limits)
        job = ChunkJob(source, settings.format or "text", settings.name, encoding, settings.spec(),
                       self.settings.limits, self._embedder_spec)
        return self.pool.run(chunk_job, job, timeout=self.settings.chunk_seconds)

    def update(self, request: UpdateRequest) -> dict:
        if not self.allow_update:
            raise ServiceError(403, "index updates are off (start the server with --allow-update)")
        ids = [d.id for d in request.documents]
        if len(set(ids)) != len(ids):
            raise ServiceError(400, "documents: an id appears twice")
        for d in request.documents:
            check_chars(len(d.text), d.id, self.settings.limits)
        self.follow()
        unknown = [d for d in request.remove if d not in self.index.docs]
        if unknown:
            raise ServiceError(404, f"no document {unknown[0]!r} in the index")
        items = [(d.id, TextSource(d.text, d.format, d.id)) for d in request.documents]
        with self.pool.limited(self.settings.update_seconds) as workers:
            report = self.index.add(items, ray=workers, remove=request.remove, guard=self.lock.writing)
        out = report.to_dict()
        out["docs"] = [{k: d[k] for k in ("doc", "status", "leaves")} if d["status"] == "removed" else d
                       for d in out["docs"]]
        out["documents"] = len(self.index)
        return out

    def health(self) -> dict:
        self.follow()
        return {"status": "ok", "version": __version__, "documents": len(self.index), "leaves": self.index.n_leaves,
                "generation": self.index.generation,
                "embedder": self.index.store.embedder_id or self.index.config.embedder,
                "allow_update": self.allow_update, "workers": self.settings.workers}


def _json_content(request: Request, also_empty: bool = True) -> None:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json" and not (also_empty and kind == ""):
        raise ServiceError(415, "send the request as JSON (Content-Type: application/json)")


async def _json_body(request: Request) -> object:
    raw = await request.body()
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ServiceError(422, "the body is not valid JSON") from None
    _no_surrogates(body)
    return body


def create_app(index: Index, allow_update: bool = False, max_body: int = MAX_BODY, batch_queries: bool = True,
               settings: ServiceSettings | None = None) -> FastAPI:
    """The FastAPI application over ``index`` (already open). ``hichunk.serve.serve`` runs it.

    ``settings`` (``ServiceSettings``) gives every limit; ``allow_update``, ``max_body`` and
    ``batch_queries`` are shortcuts for the fields of the same names. The app's ``state.service``
    holds the worker pool: call its ``close()`` when done.
    """
    if settings is None:
        settings = ServiceSettings(allow_update=allow_update, max_body=max_body, batch_queries=batch_queries)
    index.batch_queries(settings.batch_queries)
    service = Service(index, settings)
    app = FastAPI(title="hichunk", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        return JSONResponse({"error": _one_line(str(exc))}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(HichunkError)
    async def _hichunk_error(request: Request, exc: HichunkError):
        for kind, status, message, headers in _ERRORS:
            if isinstance(exc, kind):
                return JSONResponse({"error": message or _one_line(str(exc))}, status_code=status, headers=headers)
        return JSONResponse({"error": _one_line(str(exc))}, status_code=400)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException):
        return JSONResponse({"error": _one_line(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):  # logged by BodyLimit, which sees it re-raised
        if isinstance(exc, TaskFailed):
            log.error("%s\n%s", exc, exc.details)
        return JSONResponse({"error": INTERNAL_ERROR}, status_code=500)

    @app.get("/health")
    def health() -> dict:
        return service.health()

    @app.post("/query")
    async def query(request: Request) -> JSONResponse:
        _json_content(request)
        parsed = _parse(QueryRequest, await _json_body(request))
        return JSONResponse(await run_in_threadpool(service.query, parsed))

    @app.post("/chunk")
    async def chunk(request: Request) -> JSONResponse:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "multipart/form-data":
            source, settings, encoding = await _uploaded(request)
        elif kind in ("application/json", ""):
            parsed = _parse(ChunkRequest, await _json_body(request))
            source, encoding = parsed.text, "utf-8"
            settings = ChunkSettings.model_validate(parsed.model_dump(exclude={"text"}))
        else:
            raise ServiceError(415, "send JSON ({\"text\": ..., \"format\": ...}) or a multipart file upload (field 'file')")
        return JSONResponse(await service.heavy(service.chunk, source, settings, encoding))

    @app.post("/index/update")
    async def update(request: Request) -> JSONResponse:
        if not service.allow_update:
            raise ServiceError(403, "index updates are off (start the server with --allow-update)")
        if service.settings.token is not None and not _authorised(request, service.settings.token):
            raise ServiceError(401, "index updates need the server's token (Authorization: Bearer TOKEN)",
                               {"WWW-Authenticate": "Bearer"})
        _json_content(request)
        parsed = _parse(UpdateRequest, await _json_body(request))
        return JSONResponse(await service.heavy(service.update, parsed))

    @app.get("/", response_class=HTMLResponse)
    def page(q: str | None = None, budget: int = 4096, auto_merge: str | None = None, form: str | None = None,
             doc: str | None = None):
        from hichunk.htmlview import answer_page, index_page, query_form

        with service.reading():
            docs = sorted(service.index.docs)
            leaves = service.index.n_leaves
        if not q:
            return HTMLResponse(index_page(docs, f"{len(docs)} documents, {leaves} leaves"))
        merge = auto_merge is not None or not form  # the form sends its checkbox; a bare link keeps Auto-Merge on
        request = _parse(QueryRequest, {"query": q, "budget": budget, "auto_merge": merge, "doc": doc})
        result, trees = service.search(request, with_trees=True)
        return HTMLResponse(answer_page(result, trees, query_form(q, budget, merge, docs)))

    @app.get("/tree", response_class=HTMLResponse)
    def tree(doc: str):
        from hichunk.htmlview import tree_page

        def read():
            if doc not in service.index.docs:
                raise ServiceError(404, f"no document {doc!r} in the index")
            return HTMLResponse(tree_page([service.index.tree(doc)]))

        return service._retrying(read)

    return BodyLimit(app, settings.max_body, settings.body_timeout)  # type: ignore[return-value]


def _authorised(request: Request, token: str) -> bool:
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


async def _uploaded(request: Request) -> tuple[bytes, ChunkSettings, str]:
    from hichunk.document import detect_format

    form = await request.form()
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise ServiceError(400, "a multipart upload needs a file in the field 'file'")
    fields = {k: v for k, v in form.items() if k != "file" and isinstance(v, str)}
    _no_surrogates(fields)
    unknown = set(fields) - set(ChunkSettings.model_fields) - {"encoding"}
    if unknown:
        raise ServiceError(422, f"{sorted(unknown)[0]}: unknown field")
    name = fields.pop("name", None) or upload.filename or "<upload>"
    _no_surrogates(name, "file name")
    encoding = fields.pop("encoding", "utf-8")
    settings = _parse(ChunkSettings, {**fields, "name": name, "format": fields.get("format") or detect_format(name)},
                      strict=False)  # form fields are strings: "16" is a number here
    data = await upload.read()
    return data, settings, encoding
