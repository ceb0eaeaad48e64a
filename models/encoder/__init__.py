"""The offline default split-point model: hashed n-grams, layout cues and a BiGRU tagger."""

from hichunk.models.encoder.model import EncoderModel, load_encoder

__all__ = ["EncoderModel", "load_encoder"]
