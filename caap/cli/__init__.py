"""The ``caap`` command line (typer). Each module registers its commands on the shared app."""

from caap.cli import bench, dataset, models, observe, report, run, tools  # noqa: F401  (registers the commands)
from caap.cli import rationalize as _rationalize  # noqa: F401
from caap.cli import record as _record  # noqa: F401
from caap.cli import replay as _replay  # noqa: F401
from caap.cli.common import app


def main() -> None:
    app()


__all__ = ["app", "main"]
