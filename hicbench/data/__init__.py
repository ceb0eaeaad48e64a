"""HiCBench datasets: the HiCBench format, and benchmark datasets (documents + questions) made from documents."""
