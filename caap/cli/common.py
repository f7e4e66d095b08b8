"""Shared pieces of the command line: the app, consoles, errors, config loading."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from caap import __version__
from caap.config import CaapConfig, ConfigError, load_config

app = typer.Typer(
    name="caap",
    help="Vision-only desktop automation agent: sees the screen as pixels, plans with an LLM (CAAP "
    "prompting), acts with the mouse and keyboard.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        out.print(f"caap {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """caap: context-aware action planning from pixels."""


ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", "-c", help="TOML config file (default: $CAAP_CONFIG, ./caap.toml, ~/.config/caap/config.toml).")]


SecretOpt = Annotated[list[str] | None, typer.Option(
    "--secret", metavar="NAME=VALUE",
    help="A secret (a password) typed where the task or a saved step says {NAME}: the model sees only {NAME}, the "
         "executor types the value, and nothing written holds it; replay types the one given where the recording "
         "hid the text (repeatable; also CAAP_SECRET_NAME).")]


def config_from_flags(config: Path | None, overrides: dict[str, Any]) -> CaapConfig:
    try:
        return load_config(config, overrides)
    except ConfigError as exc:
        fail(str(exc))
