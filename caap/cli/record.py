"""`caap record`: record a human demonstration on the live screen (the demonstration file format)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from caap.cli.common import ConfigOpt, SecretOpt, app, config_from_flags, err, fail, out
from caap.cli.live import vision_observer


def _describe(step: Any) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in step.args.items())
    where = f" at {tuple(step.point)}" if step.point is not None else ""
    e = step.element
    what = "" if e is None else f" on {e.label} ({e.type.value}{f' {e.text!r}' if e.text else ''})"
    return f"{step.action}({args}){what}{where}" + (" [masked]" if step.masked else "")


@app.command()
def record(
    task: Annotated[str, typer.Option("--task", help="What the demonstration does, in plain language.")],
    out_file: Annotated[Path, typer.Option("--out", help="The demonstration file to write (JSON); screenshots go "
                                           "to a FILE-stem.assets/ folder beside it.")],
    region: Annotated[str | None, typer.Option(help="Capture only LEFT,TOP,WIDTH,HEIGHT (OS pixels).")] = None,
    monitor: Annotated[int | None, typer.Option(help="Capture this monitor (1 = first; default).")] = None,
    window: Annotated[str | None, typer.Option(
        help="Capture the window whose title matches this regular expression (X11, via xdotool).")] = None,
    no_observe: Annotated[bool, typer.Option(
        "--no-observe", help="Store points and screenshots only; no vision models (no element ids).")] = False,
    stop_hotkey: Annotated[str | None, typer.Option(
        help="The global hotkey that ends the recording (default <ctrl>+<alt>+x, i.e. Ctrl+Alt+X).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing demonstration file.")] = False,
    secret: SecretOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Record a human demonstration: every click, drag, key and scroll inside the captured area becomes a
    step of the action registry, with before/after screenshots and (unless --no-observe) the elements.

    With --secret NAME=VALUE the value you type is stored as {NAME} (caap replay types it back when
    given the secret), what the screen shows of it is written as {NAME} too, and the screenshots are
    blacked out where it was typed or shows."""
    from caap.act.safety import SafetyError, StopHotkey, describe_hotkey
    from caap.act.secrets import SecretError, Secrets
    from caap.observe.capture.live import CaptureTarget, SettleOptions
    from caap.observe.capture.screen import ScreenError
    from caap.record.recorder import Recorder, RecordError, RecordOptions, assets_dir

    cfg = config_from_flags(config, {"screen.monitor": monitor, "screen.region": region, "screen.window": window,
                                     "safety.stop_hotkey": stop_hotkey})
    sc = cfg.screen
    try:
        secrets = Secrets.parse(secret or [])
    except SecretError as exc:
        fail(str(exc))
    if secrets and no_observe:
        fail("--secret needs the observer: without it a secret the screen shows cannot be found and hidden in "
             "the screenshots (leave out --no-observe)")
    try:
        target = CaptureTarget.parse(monitor=sc.monitor, region=sc.region, window=sc.window)
    except ScreenError as exc:
        fail(str(exc))
    if out_file.exists() and not force:
        fail(f"{out_file} exists; pass --force to overwrite it")
    if out_file.is_dir():
        fail(f"{out_file} is a folder; --out names the demonstration file")
    try:  # fail before the models load, not after
        out_file.parent.mkdir(parents=True, exist_ok=True)
        probe = out_file.with_name(f".{out_file.name}.probe")
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        fail(f"cannot write {out_file}: {exc}")
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        fail("no display: $DISPLAY is not set (start an X server, or run under Xvfb)")

    observer = None if no_observe else vision_observer(cfg, "(record points only with --no-observe)")
    combo = cfg.safety.stop_hotkey
    settle = SettleOptions(sc.settle_min_s, sc.settle_interval_s, min(sc.settle_timeout_s, 2.0), sc.settle_poll_s)

    def on_steps(index: int, steps: list[Any]) -> None:
        for n, step in enumerate(steps, start=index):
            out.print(f"[bold]{n:>4}[/] [dim]{step.t:7.2f}s[/] {_describe(step)}", highlight=False)

    recorder = Recorder(RecordOptions(task, out_file, target, combo, settle=settle, secrets=secrets), observer,
                        on_steps=on_steps, on_error=lambda m: err.print(f"[yellow]warning:[/] {m}", highlight=False))
    stop = threading.Event()
    try:
        recorder.start()
        hotkey = StopHotkey(stop, combo).start()
    except (RecordError, SafetyError) as exc:
        fail(str(exc))
    out.print(f"Recording {task!r} into {out_file} — press {describe_hotkey(combo)} (or Ctrl-C) to stop.",
              highlight=False)
    try:
        demo = recorder.run(stop)
    except RecordError as exc:
        fail(str(exc))
    finally:
        hotkey.stop()
    size = demo.screen or {}
    out.print(f"Recorded {len(demo.steps)} steps ({size.get('width')}x{size.get('height')} screen) in {out_file}; "
              f"screenshots in {assets_dir(out_file)}/.", highlight=False)
