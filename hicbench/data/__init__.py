"""Datasets for training and benchmarks: corpus builders, loaders, heading numbering."""
