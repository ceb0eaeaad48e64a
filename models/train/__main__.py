"""``python -m hichunk.models.train``: the same as ``hichunk train``."""

import argparse
import sys

from hichunk.cli.train import add_train_arguments, run
from hichunk.errors import HichunkError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.models.train", description="Train the encoder split-point model.")
    add_train_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except HichunkError as exc:
        print(f"hichunk.models.train: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
