"""Small commands: `caap calibrate`, `caap actions`, `caap config`."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Table

from caap.act.actions import REGISTRY, tool_schemas
from caap.cli.common import ConfigOpt, app, config_from_flags, fail, out


@app.command()
def calibrate(
    backend: Annotated[str, typer.Option(help="OS input backend to check: 'pyautogui' or 'xdotool'.")] = "pyautogui",
    monitor: Annotated[int, typer.Option(help="Monitor to capture (mss numbering: 1 = first).")] = 1,
    grid: Annotated[int, typer.Option(help="Markers per side of the grid.", min=2, max=8)] = 3,
    tolerance: Annotated[float, typer.Option(help="Largest acceptable error in pixels.")] = 1.0,
    scale: Annotated[float, typer.Option(
        help="Draw the markers as an application at this device scale factor would (1, 1.25, 1.5, 2).",
        min=0.5, max=4.0)] = 1.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Check that clicks land where the capture says: open a window with markers, find them in a
    screenshot, click each through the executor, and measure where the clicks arrived.

    Needs a display (X11 on Linux: $DISPLAY; it may be an Xvfb). Exit code 1 when the largest error
    exceeds --tolerance.
    """
    from caap.act.backends import ExecutorError, make_executor
    from caap.act.calibrate import CalibrationError
    from caap.act.calibrate import calibrate as run_calibration
    from caap.observe.capture.live import CaptureTarget, LiveScreen
    from caap.observe.capture.screen import ScreenError

    screen = LiveScreen(CaptureTarget(kind="monitor", monitor=monitor))
    try:
        screen.capture()
        executor = make_executor(backend, lambda: screen.mapping)
        result = run_calibration(screen, executor, grid=grid, scale=scale)
    except (ScreenError, ExecutorError, CalibrationError) as exc:
        fail(str(exc))
    finally:
        screen.close()
    ok = result.max_error <= tolerance
    if as_json:
        sys.stdout.write(json.dumps({"backend": backend, "max_error_px": result.max_error,
                                     "mean_error_px": result.mean_error, "points": result.points,
                                     "scale": screen.mapping.scale, "ok": ok}) + "\n")
    else:
        table = Table(title=f"calibration ({backend}, scale {screen.mapping.scale:g})")
        for col in ("image pixel", "expected (OS)", "landed (OS)", "error px"):
            table.add_column(col)
        for p in result.points:
            table.add_row(str(p["image"]), str(p["expected_os"]), str(p["landed_os"]), f"{p['error_px']:.2f}")
        out.print(table)
        out.print(f"max error {result.max_error:.2f} px, mean {result.mean_error:.2f} px: "
                  + ("OK" if ok else f"above the {tolerance:g} px tolerance"), highlight=False)
    if not ok:
        raise typer.Exit(1)


@app.command("actions")
def list_actions(
    as_json: Annotated[bool, typer.Option("--json", help="Print the OpenAI tool schemas as JSON.")] = False,
) -> None:
    """List the actions the agent can take (the registry every part derives from)."""
    if as_json:
        sys.stdout.write(json.dumps(tool_schemas(), indent=2) + "\n")
        return
    table = Table(title="caap actions")
    for col in ("action", "arguments", "origin", "description"):
        table.add_column(col)
    for spec in REGISTRY.values():
        args = ", ".join(f"{p.name}{'' if p.required else '?'}: {p.kind}" for p in spec.params)
        table.add_row(spec.name, args or "-", "paper" if spec.from_paper else "caap", spec.description)
    out.print(table)


@app.command("config")
def show_config(config: ConfigOpt = None) -> None:
    """Print the effective configuration (file < environment < defaults), API key redacted."""
    cfg = config_from_flags(config, {})
    sys.stdout.write(json.dumps(cfg.redacted(), indent=2, default=str) + "\n")
