"""``python -m rummy_grpc serve|export|replay ...``: the service subcommands without the
``rummy`` console script (used by the kill-and-restart test)."""

from __future__ import annotations

import argparse
import sys

from rummy_grpc.cli import add_parsers


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m rummy_grpc")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parsers(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
