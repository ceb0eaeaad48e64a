"""The HTTP service: one loaded index answers queries from many clients at once.

Endpoints (JSON unless noted):

* ``POST /query`` ``{"query", "budget", "auto_merge", "mode", "doc", "fill", "order", "max_candidates"}``
  -> exactly the JSON of ``hichunk query --json`` (context, passages with exact provenance, merges).
* ``POST /chunk`` a document as ``{"text", "format", "name", "method", "leaf_tokens", "max_level",
  "merge_over_chunk", "hints"}`` or as a multipart file upload (field ``file``, the same options as form
  fields; PDF and DOCX files too) -> the tree JSON of ``hichunk chunk --format json``.
* ``POST /index/update`` (only when the app is made with ``allow_update``)
  ``{"documents": [{"id", "text", "format"}], "remove": [ids]}`` -> the update report.
* ``GET /health``; ``GET /`` (HTML: a query form, and the answer page for ``?q=``);
  ``GET /tree?doc=ID`` (HTML: a document's chunk tree).

Bad input gets a 4xx status and ``{"error": "<one line>"}``; an unexpected failure
is logged with its traceback on the server and answered with a 500 that holds
none. Bodies over ``max_body`` bytes are refused (413) before they are read
whole. Queries run concurrently in the server's thread pool and share one
index; an index update waits for running queries and holds new ones until it
has committed (a readers-writer lock), so a query never sees half an update.
Queries that arrive together are encoded in one batch (off with
``batch_queries=False``), which multiplies throughput under load.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from hichunk.extras import require_extra

require_extra("serve", what="hichunk serve")

from fastapi import FastAPI, Request  # noqa: E402
from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.responses import HTMLResponse, JSONResponse  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, ValidationError  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402

from hichunk import __version__  # noqa: E402
from hichunk.errors import HichunkError  # noqa: E402
from hichunk.retrieval.index import Index  # noqa: E402
from hichunk.retrieval.search import MAX_QUERY_CHARS, FillOptions  # noqa: E402

log = logging.getLogger("hichunk.serve")

MAX_BODY = 16 * 1024 * 1024  # bytes of one request body
MAX_BUDGET = 1_000_000  # tokens
MAX_CANDIDATES = 100_000
MAX_DOCS_PER_QUERY = 1000
INTERNAL_ERROR = "internal error (details are in the server log)"


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
    """An answer with a 4xx status and a one-line reason."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _one_line(text: str) -> str:
    return " ".join(str(text).split()) or "bad request"


def _validation_message(exc: ValidationError | RequestValidationError) -> str:
    first = exc.errors()[0]
    if first.get("type") == "json_invalid":
        return "the body is not valid JSON"
    where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query"))
    return _one_line(f"{where}: {first.get('msg', 'invalid value')}" if where else first.get("msg", "invalid value"))


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` (413), by Content-Length or while they stream in."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            return await _send_error(send, 413, f"request body over {self.max_bytes} bytes")
        seen = 0
        started = False

        async def limited_receive():
            nonlocal seen
            message = await receive()
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
        except _TooLarge:
            if not started:
                await _send_error(send, 413, f"request body over {self.max_bytes} bytes")
        except Exception:  # the app's handler has answered 500 without details; the traceback goes to the log, once
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await _send_error(send, 500, INTERNAL_ERROR)


class _TooLarge(HTTPException):
    """Raised while a body streams in; the app answers it as any HTTP error (413)."""


async def _send_error(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class Service:
    """What the endpoints share: the index, its lock, and one cached chunker per chunking setting."""

    def __init__(self, index: Index, allow_update: bool = False):
        self.index, self.allow_update = index, allow_update
        self.lock = ReadWriteLock()
        self._chunkers: dict[tuple, tuple[object, threading.Lock]] = {}
        self._chunkers_lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the embedder, the leaf pool and the tokenizer before the first request."""
        if len(self.index):
            self.index.search("warm up", FillOptions(budget=16))
        else:
            self.index.embed_query("warm up")

    def search(self, request: QueryRequest, with_trees: bool = False):
        """The search result (and, for the answer page, the trees of its passages' documents), under one read lock."""
        docs = request.docs()
        with self.lock.reading():
            missing = [d for d in docs or () if d not in self.index.docs]
            if missing:
                raise ServiceError(404, f"no document {missing[0]!r} in the index")
            result = self.index.search(request.query, request.options(), None, docs)
            trees = {p.doc: self.index.tree(p.doc) for p in result.passages} if with_trees else {}
        return result, trees

    def query(self, request: QueryRequest) -> dict:
        """The JSON of ``hichunk query --json``."""
        return self.search(request)[0].to_dict()

    def chunk(self, source: str | bytes, settings: ChunkSettings, encoding: str = "utf-8") -> dict:
        """The tree JSON of ``hichunk chunk --format json``: ``source`` is text (without a format: plain text)
        or an uploaded file's bytes (PDF and DOCX too)."""
        from hichunk.api import make_chunker
        from hichunk.document import parse_bytes, parse_document
        from hichunk.tree import to_dict

        key = (settings.method, settings.leaf_tokens, settings.max_level, settings.merge_over_chunk, settings.hints)
        with self._chunkers_lock:
            if key not in self._chunkers:
                embedder = self.index.embedder.embedder if settings.method == "semantic" else None
                chunker = make_chunker(settings.method, embedder=embedder, leaf_tokens=settings.leaf_tokens,
                                       max_level=settings.max_level, merge_over_chunk=settings.merge_over_chunk,
                                       hints=settings.hints)
                self._chunkers[key] = (chunker, threading.Lock())
            chunker, lock = self._chunkers[key]
        if isinstance(source, bytes):
            doc = parse_bytes(source, settings.format or "text", settings.name, encoding)
        else:
            doc = parse_document(source, settings.format or "text", settings.name)
        with lock:  # a chunker (and its model) serves one document at a time
            return to_dict(chunker.chunk(doc))

    def update(self, request: UpdateRequest) -> dict:
        from hichunk.document import parse_document

        if not self.allow_update:
            raise ServiceError(403, "index updates are off (start the server with --allow-update)")
        ids = [d.id for d in request.documents]
        if len(set(ids)) != len(ids):
            raise ServiceError(400, "documents: an id appears twice")
        with self.lock.writing():
            unknown = [d for d in request.remove if d not in self.index.docs]
            if unknown:
                raise ServiceError(404, f"no document {unknown[0]!r} in the index")
            report = self.index.add([(d.id, (lambda d=d: parse_document(d.text, d.format, d.id)))
                                     for d in request.documents]) if request.documents else None
            removed = self.index.remove(request.remove) if request.remove else None
        out = report.to_dict() if report else {"docs": []}
        if removed:
            out["docs"] += [{"doc": r.doc, "status": r.status, "leaves": r.leaves} for r in removed.docs]
        out["documents"] = len(self.index)
        return out

    def health(self) -> dict:
        return {"status": "ok", "version": __version__, "documents": len(self.index), "leaves": self.index.n_leaves,
                "embedder": self.index.store.embedder_id or self.index.config.embedder,
                "allow_update": self.allow_update}


def create_app(index: Index, allow_update: bool = False, max_body: int = MAX_BODY, batch_queries: bool = True) -> FastAPI:
    """The FastAPI application over ``index`` (already open). ``hichunk.serve.serve`` runs it.

    ``batch_queries``: queries that arrive together are encoded in one batch (``Index.batch_queries``).
    """
    index.batch_queries(batch_queries)
    service = Service(index, allow_update)
    app = FastAPI(title="hichunk", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        return JSONResponse({"error": _one_line(str(exc))}, status_code=exc.status)

    @app.exception_handler(HichunkError)
    async def _hichunk_error(request: Request, exc: HichunkError):
        return JSONResponse({"error": _one_line(str(exc))}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        return JSONResponse({"error": _validation_message(exc)}, status_code=422)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException):
        return JSONResponse({"error": _one_line(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):  # logged by BodyLimit, which sees it re-raised
        return JSONResponse({"error": INTERNAL_ERROR}, status_code=500)

    @app.get("/health")
    def health() -> dict:
        return service.health()

    @app.post("/query")
    def query(request: QueryRequest) -> JSONResponse:
        return JSONResponse(service.query(request))

    @app.post("/chunk")
    async def chunk(request: Request) -> JSONResponse:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "multipart/form-data":
            source, settings, encoding = await _uploaded(request)
        elif kind in ("application/json", ""):
            body = await _json_body(request)
            try:
                parsed = ChunkRequest.model_validate(body)
            except ValidationError as exc:
                raise ServiceError(422, _validation_message(exc)) from None
            source, encoding = parsed.text, "utf-8"
            settings = ChunkSettings.model_validate(parsed.model_dump(exclude={"text"}))
        else:
            raise ServiceError(415, "send JSON ({\"text\": ..., \"format\": ...}) or a multipart file upload (field 'file')")
        return JSONResponse(await run_in_threadpool(service.chunk, source, settings, encoding))

    @app.post("/index/update")
    def update(request: UpdateRequest) -> JSONResponse:
        return JSONResponse(service.update(request))

    @app.get("/", response_class=HTMLResponse)
    def page(q: str | None = None, budget: int = 4096, auto_merge: str | None = None, form: str | None = None,
             doc: str | None = None):
        from hichunk.htmlview import answer_page, index_page, query_form

        with service.lock.reading():
            docs = sorted(service.index.docs)
        if not q:
            return HTMLResponse(index_page(docs, f"{len(docs)} documents, {service.index.n_leaves} leaves"))
        merge = auto_merge is not None or not form  # the form sends its checkbox; a bare link keeps Auto-Merge on
        try:
            request = QueryRequest(query=q, budget=budget, auto_merge=merge, doc=doc)
        except ValidationError as exc:
            raise ServiceError(422, _validation_message(exc)) from None
        result, trees = service.search(request, with_trees=True)
        return HTMLResponse(answer_page(result, trees, query_form(q, budget, merge, docs)))

    @app.get("/tree", response_class=HTMLResponse)
    def tree(doc: str):
        from hichunk.htmlview import tree_page

        with service.lock.reading():
            if doc not in service.index.docs:
                raise ServiceError(404, f"no document {doc!r} in the index")
            return HTMLResponse(tree_page([service.index.tree(doc)]))

    return BodyLimit(app, max_body)  # type: ignore[return-value]


async def _json_body(request: Request) -> object:
    raw = await request.body()
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ServiceError(400, "the body is not JSON") from None


async def _uploaded(request: Request) -> tuple[bytes, ChunkSettings, str]:
    from hichunk.document import detect_format

    form = await request.form()
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise ServiceError(400, "a multipart upload needs a file in the field 'file'")
    fields = {k: v for k, v in form.items() if k != "file" and isinstance(v, str)}
    unknown = set(fields) - set(ChunkSettings.model_fields) - {"encoding"}
    if unknown:
        raise ServiceError(422, f"{sorted(unknown)[0]}: unknown field")
    name = fields.pop("name", None) or upload.filename or "<upload>"
    encoding = fields.pop("encoding", "utf-8")
    try:
        settings = ChunkSettings.model_validate({**fields, "name": name,
                                                 "format": fields.get("format") or detect_format(name)})
    except ValidationError as exc:
        raise ServiceError(422, _validation_message(exc)) from None
    data = await upload.read()
    return data, settings, encoding
