"""The split-point engine: iterative windowed inference with any split-point model.

``infer_points`` runs the algorithm over unit texts; ``model_units`` turns a
document into those texts; ``merge_with_headings`` combines predictions with
explicit headings. The ``hichunk`` chunker (``hichunk.chunkers.model``) puts
them together into a chunk tree.
"""

from hichunk.engine.cache import PredictionCache, default_cache_path, window_key
from hichunk.engine.hints import merge_with_headings, relative_headings
from hichunk.engine.loop import EngineResult, EngineSettings, WindowRecord, infer_points
from hichunk.engine.residual import RESIDUAL_STEPS, residual_units
from hichunk.engine.units import Unit, model_units

__all__ = [
    "RESIDUAL_STEPS",
    "EngineResult",
    "EngineSettings",
    "PredictionCache",
    "Unit",
    "WindowRecord",
    "default_cache_path",
    "infer_points",
    "merge_with_headings",
    "model_units",
    "relative_headings",
    "residual_units",
    "window_key",
]
