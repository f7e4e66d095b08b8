"""The ``caap`` command line (typer). Each module registers its commands on the shared app."""

from caap.cli import bench, dataset, models, observe, report, run, tools  # noqa: F401  (registers the commands)
from caap.cli.common import app


def main() -> None:
    app()


__all__ = ["app", "main"]
