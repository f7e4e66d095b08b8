"""`caap replay`: run a recorded demonstration again on the live screen, grounding each step visually."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from caap.cli.common import ConfigOpt, SecretOpt, app, config_from_flags, err, fail, out

EXIT_CODES = {"done": 0, "dry_run": 0, "missing": 1, "masked": 1, "denied": 1, "error": 1, "check": 1, "stopped": 130}


def _step_line(step: Any, total: int) -> str:
    """One rich line per step: what it did, on which element, and how far that element had moved."""
    from rich.markup import escape

    mark = {"done": "[green]✓[/]", "planned": "[cyan]·[/]", "end": "[green]■[/]"}.get(step.status, "[red]✗[/]")
    head = f"{mark} step {step.number}/{total} {step.action}"
    if step.status in ("done", "planned") and step.planned is not None:
        a = step.planned
        parts = []
        element = a.element or (step.found.element if step.found else None)  # a drag's grab point has no element arg
        if element is not None:
            text = f" {json.dumps(element.text, ensure_ascii=False)}" if element.text else ""
            parts.append(f"{element.type.value}{escape(text)}")
        if a.point is not None:
            parts.append(f"at ({a.point[0]}, {a.point[1]})")
        if step.displacement and step.displacement != (0, 0):
            parts.append(f"moved {step.displacement[0]:+d},{step.displacement[1]:+d}")
        if step.found is not None and step.found.text_similarity < 1.0:
            parts.append(f"text match {step.found.text_similarity:.2f}")
        if step.waited_s >= 0.05 and step.status == "done":
            parts.append(f"found after {step.waited_s:.1f}s")
        keyboard = {k: v for k, v in a.args.items() if k not in ("element_id", "x", "y")}
        if keyboard:
            parts.append(escape(json.dumps(keyboard, ensure_ascii=False)))
        return head + (" → " + ", ".join(parts) if parts else "")
    return f"{head}: {escape(step.message or step.status)}"


@app.command()
def replay(
    file: Annotated[Path, typer.Argument(help="The demonstration file to replay.")],
    monitor: Annotated[int | None, typer.Option(help="Capture this monitor (1 = first, 0 = all).")] = None,
    region: Annotated[str | None, typer.Option(help="Capture only LEFT,TOP,WIDTH,HEIGHT (OS pixels).")] = None,
    window: Annotated[str | None, typer.Option(
        help="Capture the window whose title matches this regular expression (X11, via xdotool).")] = None,
    backend: Annotated[str | None, typer.Option(
        help="OS input through 'pyautogui' (default) or 'xdotool' (X11).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Observe the screen once and print which element each step would use; act on nothing.")
    ] = False,
    max_wait: Annotated[float, typer.Option(
        min=0, help="Seconds to keep looking for a step's element (the screen may still be loading).")] = 3.0,
    secret: SecretOpt = None,
    elements: Annotated[Path | None, typer.Option(
        help="Read the element list from this JSON file (the format `caap observe --json` prints) instead "
        "of running the vision models; it stays fixed for the whole replay (testing, fixed-layout apps).")] = None,
    detector: Annotated[Path | None, typer.Option(
        help="Detector weights for the observer (default: the shipped models/detector/).")] = None,
    reader: Annotated[Path | None, typer.Option(
        help="Reader checkpoint for the observer (default: the shipped models/reader/).")] = None,
    stop_hotkey: Annotated[str | None, typer.Option(
        help="The global hotkey that stops the replay before its next OS event (default Ctrl+Alt+X).")] = None,
    no_confirm: Annotated[bool, typer.Option(
        "--no-confirm", help="Do not ask before risky actions (delete/send/pay/buy, password fields).")] = False,
    no_failsafe: Annotated[bool, typer.Option(
        "--no-failsafe", help="Disable pyautogui's fail-safe (pointer into a screen corner aborts).")] = False,
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Replay demonstration FILE on the live screen, without an LLM.

    Each step's recorded element is looked for on the current screen (same type, similar text,
    nearest position), the action is aimed at where it is now, performed with real mouse and
    keyboard input, and the screen is left to settle before the next step. A step whose element
    does not appear within --max-wait seconds stops the replay. Press Ctrl+Alt+X to stop.

    Exit codes: 0 replayed (or planned, with --dry-run), 1 a step could not be replayed, 2 bad
    input, 130 stopped.
    """
    import threading

    from caap.act.secrets import SecretError, Secrets
    from caap.agent.replay import ReplayOptions, ReplayStep
    from caap.agent.replay import replay as run_replay
    from caap.cli.live import live_device, live_safety, vision_observer
    from caap.cli.run import ELEMENTS_HINT
    from caap.decide.demos import DemoFileError, load_demo
    from caap.elements import ElementFileError, load_elements
    from caap.observe.capture.screen import ScreenError
    from caap.observe.observation import StaticObserver

    cfg = config_from_flags(config, {
        "observe.detector": detector, "observe.reader": reader,
        "screen.monitor": monitor, "screen.region": region, "screen.window": window,
        "executor.backend": backend, "executor.failsafe": False if no_failsafe else None,
        "safety.stop_hotkey": stop_hotkey, "safety.confirm": False if no_confirm else None,
    })
    try:
        demo = load_demo(file)
        observer: Any = (StaticObserver(load_elements(elements)) if elements is not None
                         else vision_observer(cfg, ELEMENTS_HINT))
    except (DemoFileError, ElementFileError) as exc:
        fail(str(exc))
    if not demo.steps:
        fail(f"{file}: the demonstration has no steps")
    device = live_device(cfg, dry_run=dry_run)  # a dry run plans only: its input is never sent
    screen = device.screen

    stop = threading.Event()
    hotkey = gate = None
    if not dry_run:
        hotkey, gate = live_safety(cfg, stop)

    def on_step(step: ReplayStep) -> None:
        if not as_json:
            err.print(_step_line(step, len(demo.steps)), soft_wrap=True, highlight=False)

    try:
        secrets = Secrets.parse(secret or [])
    except SecretError as exc:
        fail(str(exc))
    options = ReplayOptions(max_wait_s=max_wait, secrets=secrets, dry_run=dry_run)
    try:
        result = run_replay(demo, screen, observer, device.executor, options, on_step=on_step, stop=stop,
                            approve=gate)
    except ScreenError as exc:
        fail(str(exc), 1)
    finally:
        if hotkey:
            hotkey.stop()
        device.close()

    code = EXIT_CODES.get(result.status, 1)
    if as_json:
        sys.stdout.write(json.dumps({"status": result.status, "message": result.message,
                                     "steps": [s.to_json() for s in result.steps]}, ensure_ascii=False) + "\n")
    elif code:
        err.print(f"[bold red]error:[/] {result.message}", highlight=False, soft_wrap=True)
    else:
        out.print(f"{result.status}: {result.message}", highlight=False)
    if code:
        raise typer.Exit(code)
