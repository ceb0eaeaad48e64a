"""What a write to the index did, per document and in total (the CLI prints these)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class DocReport:
    doc: str
    status: str  # added | updated | unchanged | removed | failed
    leaves: int = 0
    encoded: int = 0  # leaves whose vector was computed (not found in the cache)
    recompute_ratio: float | None = None  # REFERENCE.md §6 R against the previous version (updates only)
    error: str | None = None


@dataclass
class UpdateReport:
    docs: list[DocReport] = field(default_factory=list)
    leaves: int = 0
    encoded: int = 0
    cache_hits: int = 0
    new_input_tokens: int = 0  # tokens of unique new-version inputs of updated documents
    missing_input_tokens: int = 0  # ... of those not in the previous version
    seconds: float = 0.0
    encode_seconds: float = 0.0  # inside the embedder (on Ray: summed over the workers)
    driver_seconds: float = 0.0  # on Ray: the driver's own work on results (cache, staging, segment writes)
    encode_tasks: list[tuple[int, float]] = field(default_factory=list, repr=False)  # on Ray: (texts, seconds) per task

    @property
    def recompute_ratio(self) -> float | None:
        """R over all updated documents: missing tokens / tokens of unique new inputs."""
        return self.missing_input_tokens / self.new_input_tokens if self.new_input_tokens else None

    def count(self, status: str) -> int:
        return sum(1 for d in self.docs if d.status == status)

    def to_dict(self) -> dict:
        out = asdict(self)
        out.pop("encode_tasks")
        out["recompute_ratio"] = self.recompute_ratio
        return out
