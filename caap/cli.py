"""The ``caap`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from caap import __version__
from caap.act.actions import REGISTRY, tool_schemas
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


def _load(config: Path | None, overrides: dict[str, Any]) -> CaapConfig:
    try:
        return load_config(config, overrides)
    except ConfigError as exc:
        fail(str(exc))


EXIT_CODES = {"done": 0, "finished": 0, "max_steps": 3, "timeout": 3, "over_budget": 3, "failed": 3,
              "invalid_answers": 3, "stopped": 130, "llm_error": 1, "screen_error": 1, "act_error": 1}


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What to do, in plain language (e.g. 'Select EiTE and click Submit').")],
    screenshot: Annotated[Path | None, typer.Option(
        help="Plan on this image file instead of the live screen (with --dry-run).")] = None,
    elements: Annotated[Path | None, typer.Option(
        help="Read the element list from this JSON file (the format `caap observe --json` prints) "
        "instead of running the vision models; on a live screen the list stays fixed (fixed-layout apps, "
        "testing).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Plan one step and print the actions with their target pixels; draw them on the "
        "screenshot in the trace; touch nothing.")] = False,
    show_prompt: Annotated[bool, typer.Option("--show-prompt", help="Print each prompt sent to the LLM.")] = False,
    demo: Annotated[list[Path] | None, typer.Option(
        "--demo", help="Demonstration file or directory of them (repeatable).")] = None,
    config: ConfigOpt = None,
    base_url: Annotated[str | None, typer.Option(
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (env: OPENAI_BASE_URL).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (env: OPENAI_MODEL; default gpt-4o).")] = None,
    mode: Annotated[str | None, typer.Option(
        help="'tools': actions offered as function schemas (tool calling); 'text': listed in the prompt "
        "and read back from Action_N=(...) lines.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature (default 0).")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Stop after this many LLM calls (default 30).")] = None,
    max_seconds: Annotated[float | None, typer.Option(help="Stop after this much wall time (default 600).")] = None,
    max_cost: Annotated[float | None, typer.Option(help="Stop once this many USD are spent (default 2).")] = None,
    token_budget: Annotated[int | None, typer.Option(
        help="Shorten the prompt (oldest demos first, then oldest history) beyond this many tokens.")] = None,
    no_demos: Annotated[bool, typer.Option("--no-demos", help="Ablation: leave demonstrations out.")] = False,
    no_rationales: Annotated[bool, typer.Option(
        "--no-rationales", help="Ablation: show demonstrations without their rationales.")] = False,
    no_cot: Annotated[bool, typer.Option("--no-cot", help="Ablation: leave the reasoning instructions out.")] = False,
    monitor: Annotated[int | None, typer.Option(help="Live: capture this monitor (1 = first, 0 = all).")] = None,
    region: Annotated[str | None, typer.Option(
        help="Live: capture only LEFT,TOP,WIDTH,HEIGHT (OS pixels).")] = None,
    window: Annotated[str | None, typer.Option(
        help="Live: capture the window whose title matches this regular expression (X11, via xdotool).")] = None,
    backend: Annotated[str | None, typer.Option(
        help="Live: OS input through 'pyautogui' (default) or 'xdotool' (X11).")] = None,
    stop_hotkey: Annotated[str | None, typer.Option(
        help="Live: the global hotkey that stops the agent before its next OS event (default <ctrl>+<alt>+x, "
        "i.e. Ctrl+Alt+X).")] = None,
    no_confirm: Annotated[bool, typer.Option(
        "--no-confirm", help="Live: do not ask before risky actions (password fields, delete/send/pay/buy).")] = False,
    no_failsafe: Annotated[bool, typer.Option(
        "--no-failsafe", help="Live: disable pyautogui's fail-safe (pointer into a screen corner aborts).")] = False,
    trace_dir: Annotated[Path | None, typer.Option(help="Where run traces go (default: ./runs).")] = None,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Write no trace directory.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Carry out TASK on the live screen, or plan one step (--dry-run) on it or on an image file.

    Live runs act with real mouse and keyboard input. Press Ctrl+Alt+X (the stop hotkey, see
    --stop-hotkey) to stop the agent before its next OS event; moving the mouse pointer into a screen
    corner also stops it (pyautogui fail-safe). Actions on password-like fields and on
    delete/send/pay/buy buttons wait for your yes on the terminal; no answer means no.

    The LLM endpoint comes from --base-url/--model, the config file, or OPENAI_BASE_URL,
    OPENAI_API_KEY and OPENAI_MODEL, so any OpenAI-compatible server works.

    Exit codes: 0 done, 3 gave up or hit a limit, 1 LLM/screen/executor error, 2 bad input, 130 stopped.
    """
    import threading

    from caap.act.backends import ExecutorError, make_executor
    from caap.act.dryrun import draw_calls
    from caap.act.executor import RecordingExecutor
    from caap.act.safety import ConfirmationGate, ConfirmRule, SafetyError, StopHotkey, describe_hotkey, terminal_ask
    from caap.agent.loop import Agent
    from caap.agent.trace import TraceWriter
    from caap.decide.demos import DemoFileError, load_demos
    from caap.decide.llm import LLMClient, LLMError
    from caap.decide.prompter import CaapPrompter, PromptOptions
    from caap.elements import ElementFileError, load_elements
    from caap.observe.capture import CaptureTarget, LiveScreen, SettleOptions
    from caap.observe.screen import ImageScreen, Screen, ScreenError, StaticObserver, load_image

    if mode is not None and mode not in ("tools", "text"):
        fail(f"--mode must be 'tools' or 'text', not {mode!r}")
    cfg = _load(config, {
        "llm.base_url": base_url, "llm.model": model, "llm.mode": mode, "llm.temperature": temperature,
        "agent.max_steps": max_steps, "agent.max_seconds": max_seconds, "agent.max_cost_usd": max_cost,
        "prompt.token_budget": token_budget, "trace.dir": trace_dir,
        "prompt.demonstrations": False if no_demos else None,
        "prompt.rationales": False if no_rationales else None,
        "prompt.cot": False if no_cot else None,
        "screen.monitor": monitor, "screen.region": region, "screen.window": window,
        "executor.backend": backend, "executor.failsafe": False if no_failsafe else None,
        "safety.stop_hotkey": stop_hotkey, "safety.confirm": False if no_confirm else None,
    })
    live = screenshot is None
    if not live and not dry_run:
        fail("an image file cannot be acted on: add --dry-run to plan on --screenshot, or leave --screenshot "
             "out to act on the live screen")
    if elements is None:
        fail("no element list: pass --elements FILE (the vision models that read the screen by themselves "
             "are not part of this build yet)")

    try:
        element_list = load_elements(elements)
        demos = load_demos(demo or [])
        screen: Screen
        if live:
            sc = cfg.screen
            target = CaptureTarget.parse(monitor=sc.monitor, region=sc.region, window=sc.window)
            settle = SettleOptions(sc.settle_min_s, sc.settle_interval_s, sc.settle_timeout_s)
            screen = LiveScreen(target, settle=settle)
            screen.capture()  # fail now, with a clear message, if there is no display
        else:
            assert screenshot is not None
            screen = ImageScreen(load_image(screenshot))
    except (ElementFileError, ScreenError, DemoFileError) as exc:
        fail(str(exc))

    prompter = CaapPrompter(PromptOptions(
        demonstrations=cfg.prompt.demonstrations, rationales=cfg.prompt.rationales, cot=cfg.prompt.cot,
        mode=cfg.llm.mode, token_budget=cfg.prompt.token_budget,
        max_demonstrations=cfg.prompt.max_demonstrations,
    ))
    try:
        planner = LLMClient(cfg.llm)
    except LLMError as exc:
        fail(str(exc))

    stop = threading.Event()
    hotkey = None
    gate = None
    executor: Any
    if dry_run:
        executor = RecordingExecutor()
    else:
        try:
            executor = make_executor(cfg.executor.backend, lambda: screen.mapping, failsafe=cfg.executor.failsafe)
            hotkey = StopHotkey(stop, cfg.safety.stop_hotkey).start()
        except (ExecutorError, SafetyError) as exc:
            fail(str(exc))
        if cfg.safety.confirm:
            ask = terminal_ask(cfg.safety.confirm_timeout_s)
            if cfg.safety.rules is None:
                gate = ConfirmationGate(ask=ask)
            else:
                gate = ConfirmationGate([ConfirmRule(tuple(r.actions), r.target, r.reason)
                                         for r in cfg.safety.rules], ask=ask)
        err.print(f"caap: acting on the live screen with {cfg.executor.backend}. Press "
                  f"{describe_hotkey(cfg.safety.stop_hotkey)} to stop"
                  + ("; or move the mouse into a screen corner." if cfg.executor.failsafe
                     and cfg.executor.backend == "pyautogui" else "."), highlight=False)

    secret = cfg.llm.api_key.get_secret_value() if cfg.llm.api_key else None
    trace = None if no_trace else TraceWriter(cfg.trace.dir, task, secrets=[secret] if secret else [],
                                              screenshots=cfg.trace.screenshots)
    if trace:
        trace.start({"task": task, "config": cfg.redacted(), "caap_version": __version__, "dry_run": dry_run,
                     "live": live, "screenshot": str(screenshot) if screenshot else None,
                     "elements_file": str(elements)})

    def on_step(record: dict[str, Any]) -> None:
        if show_prompt:
            out.rule(f"prompt (step {record['step']})")
            out.print(record["prompt"]["text"], markup=False, highlight=False)
            out.rule()
        if not dry_run and not as_json:
            done = ", ".join(f"{a['name']}({a.get('outcome')})" for a in record.get("actions", [])) or "nothing"
            err.print(f"step {record['step']}: {done}", highlight=False, soft_wrap=True)

    agent = Agent(
        screen=screen, observer=StaticObserver(element_list), executor=executor, planner=planner,
        prompter=prompter, config=cfg.agent.model_copy(update={"max_steps": 1}) if dry_run else cfg.agent,
        trace=trace, demonstrations=demos, on_step=on_step, stop=stop, approve=gate,
    )
    try:
        result = agent.run(task)
    finally:
        if hotkey:
            hotkey.stop()
        screen.close()
    step = result.last_step or {}
    drawn = None
    if dry_run and agent.last_frame is not None:
        drawn = draw_calls(agent.last_frame, executor.calls)
        if trace:
            trace.save_image("step_001_actions.png", drawn)

    if as_json:
        payload = {**result.to_json(), "errors": step.get("errors", []),
                   "response": (step.get("response") or {}).get("content"),
                   "trace_dir": str(trace.dir) if trace else None}
        if dry_run:
            payload["os_events"] = [{"call": n, **kw} for n, kw in executor.calls]
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    elif dry_run:
        _print_plan(step, result.status, result.reason)
    else:
        out.print(f"{result.status}: {result.reason} ({result.steps} steps, {result.seconds:.1f}s, "
                  f"cost {'unknown' if result.cost_usd is None else f'${result.cost_usd:.4f}'})", highlight=False)
    if trace and not as_json:
        out.print(f"trace: {trace.dir}", highlight=False)
    code = 0 if dry_run and result.status == "max_steps" else EXIT_CODES.get(result.status, 1)
    if code == 1 and (as_json or not dry_run):
        err.print(f"[bold red]error:[/] {result.reason}", highlight=False, soft_wrap=True)
    if code:
        raise typer.Exit(code)


def _print_plan(step: dict[str, Any], status: str, reason: str) -> None:
    if status == "llm_error":
        err.print(f"[bold red]error:[/] {reason}", highlight=False, soft_wrap=True)
        return
    response = (step.get("response") or {}).get("content")
    if response:
        out.rule("model answer")
        out.print(response, markup=False, highlight=False)
    table = Table(title="planned actions (captured-image pixels)")
    for col in ("#", "action", "arguments", "target element", "pixel (x, y)"):
        table.add_column(col)
    for i, a in enumerate(step.get("actions", []), start=1):
        el = a.get("element")
        target = f"element_{el['id']} {el['type']} {json.dumps(el.get('text'))}" if el else "-"
        pt = a.get("point")
        table.add_row(str(i), a["name"], json.dumps(a["args"], ensure_ascii=False), target,
                      f"({pt[0]}, {pt[1]})" if pt else "-")
    out.print(table)
    for e in step.get("errors", []):
        err.print(f"[yellow]rejected:[/] {e['message']}", highlight=False, soft_wrap=True)


@app.command()
def calibrate(
    backend: Annotated[str, typer.Option(help="OS input backend to check: 'pyautogui' or 'xdotool'.")] = "pyautogui",
    monitor: Annotated[int, typer.Option(help="Monitor to capture (mss numbering: 1 = first).")] = 1,
    grid: Annotated[int, typer.Option(help="Markers per side of the grid.", min=2, max=8)] = 3,
    tolerance: Annotated[float, typer.Option(help="Largest acceptable error in pixels.")] = 1.0,
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
    from caap.observe.capture import CaptureTarget, LiveScreen
    from caap.observe.screen import ScreenError

    screen = LiveScreen(CaptureTarget(kind="monitor", monitor=monitor))
    try:
        screen.capture()
        executor = make_executor(backend, lambda: screen.mapping)
        result = run_calibration(screen, executor, grid=grid)
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


dataset_app = typer.Typer(help="Build, check, convert and augment annotated screenshot datasets.",
                          no_args_is_help=True)
app.add_typer(dataset_app, name="dataset")


def _read_tasks(spec: str) -> list[str]:
    path = Path(spec)
    if path.is_file():
        tasks = [t.strip() for t in path.read_text(encoding="utf-8").split() if t.strip() and not t.startswith("#")]
    else:
        tasks = [t.strip() for t in spec.split(",") if t.strip()]
    if not tasks:
        fail(f"--tasks {spec!r} names no task")
    return tasks


@dataset_app.command("miniwob")
def dataset_miniwob(
    tasks: Annotated[str, typer.Option(help="Comma-separated task names, or a file with one per line.")],
    seeds: Annotated[str, typer.Option(help="Seed ranges, e.g. 1000-2999 (annotation seeds) or 0-999 (test).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Dataset directory (created; an interrupted run resumes).")],
    per_task: Annotated[int | None, typer.Option(
        help="Episodes per task: this many seeds spread evenly over --seeds (default: every seed).")] = None,
    steps: Annotated[str, typer.Option(help="Random interactions per episode, MIN-MAX.")] = "1-4",
    workers: Annotated[int, typer.Option(help="Parallel processes, each with its own Xvfb and Chromium.",
                                         min=1)] = 1,
) -> None:
    """Screenshots of MiniWoB++ tasks captured as the agent sees them, labelled from the DOM.

    Needs Xvfb, xdotool and Chromium (bash tools/setup.sh --system) and the bench extra.
    """
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from caap.bench.miniwob import MiniWoBError, list_tasks
    from caap.data.export import parse_seed_ranges
    from caap.data.format import DatasetError
    from caap.data.miniwob.run import generate_parallel, pick_seeds

    try:
        seed_list = pick_seeds(parse_seed_ranges(seeds), per_task)
        known = set(list_tasks())
    except (DatasetError, MiniWoBError) as exc:
        fail(str(exc))
    task_list = _read_tasks(tasks)
    unknown = [t for t in task_list if t not in known]
    if unknown:
        fail(f"unknown MiniWoB++ task(s): {', '.join(unknown)}")
    try:
        lo, hi = (int(x) for x in steps.split("-"))
    except ValueError:
        fail(f"--steps must be MIN-MAX, e.g. 1-4, not {steps!r}")
    info = {"command": "caap dataset miniwob", "tasks": task_list, "seeds": seeds, "per_task": per_task,
            "steps": [lo, hi], "caap_version": __version__}
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err) as progress:
        bar = progress.add_task("episodes", total=len(task_list) * len(seed_list))
        try:
            stats = generate_parallel(out_dir, task_list, seed_list, workers=workers, steps=(lo, hi), info=info,
                                      on_episode=lambda task, seed, kept: progress.update(
                                          bar, advance=1, description=f"{task} {seed}"))
        except Exception as exc:  # a worker's browser or display failure, re-raised here
            fail(f"generation stopped: {exc} (what was written is kept; run again to resume)", code=1)
    out.print(
        f"{stats.screenshots} screenshots ({stats.elements} elements) from {stats.episodes} new episodes in "
        f"{time.perf_counter() - started:.0f}s; {stats.duplicates} near-duplicates dropped; "
        f"{stats.ended_by_interaction} episodes ended by an interaction; dataset: {out_dir}", highlight=False)


SplitOpt = Annotated[str, typer.Option(
    "--split", help="Which seeds are validation: val:2800-2999 (ranges), val:every10 (seeds divisible by 10), "
    "or train:... for the other way round. Images without a seed always go to train.")]


def _split(spec: str) -> Any:
    from caap.data.export import SplitRule
    from caap.data.format import DatasetError

    try:
        return SplitRule.parse(spec)
    except DatasetError as exc:
        fail(str(exc))


def _dataset_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    from caap.data.format import DatasetError

    try:
        return fn(*args, **kwargs)
    except DatasetError as exc:
        fail(str(exc))


@dataset_app.command("report")
def dataset_report(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    sheet: Annotated[Path | None, typer.Option(help="Write a contact sheet PNG (boxes and labels drawn).")] = None,
    per_group: Annotated[int, typer.Option(help="Images per task/group on the contact sheet.", min=1)] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Counts per type, attribute value and task; optionally a contact sheet to check labels by eye."""
    from caap.data.format import open_dataset
    from caap.data.report import contact_sheet, dataset_stats, format_stats

    _dataset_call(open_dataset, dataset)
    stats = _dataset_call(dataset_stats, dataset)
    if as_json:
        sys.stdout.write(json.dumps(stats, indent=2) + "\n")
    else:
        out.print(format_stats(stats))
    if sheet is not None:
        for path in _dataset_call(contact_sheet, dataset, sheet, per_group=per_group):
            err.print(f"contact sheet: {path}", highlight=False)


@dataset_app.command("export-yolo")
def dataset_export_yolo(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    out_dir: Annotated[Path, typer.Argument(help="Output directory for the YOLO dataset (images, labels, data.yaml).")],
    split: SplitOpt = "val:every10",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty output directory.")] = False,
) -> None:
    """An ultralytics detection dataset; classes from the taxonomy; train/val split by seed."""
    from caap.data.export import export_yolo

    result = _dataset_call(export_yolo, dataset, out_dir, split=_split(split), overwrite=overwrite)
    images, boxes = result["images"], result["elements"]
    out.print(f"YOLO dataset in {result['out_dir']}: train {images['train']} images / {boxes['train']} boxes, "
              f"val {images['val']} images / {boxes['val']} boxes", highlight=False)


@dataset_app.command("export-reader")
def dataset_export_reader(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    out_dir: Annotated[Path, typer.Argument(help="Output directory for train.jsonl and val.jsonl.")],
    split: SplitOpt = "val:every10",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty output directory.")] = False,
) -> None:
    """Element reader samples: one line per element with its image, box and target record."""
    from caap.data.export import export_reader_samples

    result = _dataset_call(export_reader_samples, dataset, out_dir, split=_split(split), overwrite=overwrite)
    out.print(json.dumps(result), highlight=False)


@dataset_app.command("augment")
def dataset_augment(
    dataset: Annotated[Path, typer.Argument(help="Source dataset directory.")],
    out_dir: Annotated[Path, typer.Argument(help="New dataset directory (originals + augmented copies).")],
    multiplier: Annotated[int, typer.Option(help="Images per original in the result (3 = tripled, as in CAAP).",
                                            min=1)] = 3,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same copies.")] = 0,
    train_split: Annotated[str | None, typer.Option(
        "--split", help="Augment only the train side of this split (e.g. val:every10); validation images "
        "are copied unchanged.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty output directory.")] = False,
) -> None:
    """Colour changes, small box jitter and Gaussian noise, as in the CAAP paper; never a flip."""
    from caap.data.augment import augment_dataset

    rule = _split(train_split) if train_split else None
    result = _dataset_call(augment_dataset, dataset, out_dir, multiplier=multiplier, seed=seed, overwrite=overwrite,
                           only_train=rule)
    out.print(f"{result['images']} images ({result['originals']} originals, {result['augmented']} augmented) in "
              f"{result['out_root']} ({result['seconds']:.0f}s)", highlight=False)


@dataset_app.command("export-labelstudio")
def dataset_export_labelstudio(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    out_file: Annotated[Path, typer.Option("--out", help="Label Studio tasks JSON to write.")],
    image_root_url: Annotated[str | None, typer.Option(
        help="URL prefix under which the dataset's files are served (default: Label Studio local-files "
        "URLs; see annotation/GUIDE.md).")] = None,
) -> None:
    """Label Studio tasks with the current labels as predictions (labeling config: annotation/)."""
    from caap.data.labelstudio import export_tasks

    n = _dataset_call(export_tasks, dataset, out_file, image_root_url=image_root_url)
    out.print(f"{n} Label Studio tasks written to {out_file}", highlight=False)


@dataset_app.command("import-labelstudio")
def dataset_import_labelstudio(
    export_file: Annotated[Path, typer.Argument(help="A Label Studio JSON export.")],
    dataset: Annotated[Path, typer.Argument(help="The dataset the tasks came from.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Write a new dataset here instead of updating DATASET's labels.")] = None,
) -> None:
    """Bring corrected annotations from Label Studio back into the canonical format."""
    from caap.data.labelstudio import import_export

    n = _dataset_call(import_export, export_file, dataset, out_root=out_dir)
    out.print(f"{n} annotations imported into {out_dir or dataset}", highlight=False)


train_app = typer.Typer(help="Train the vision models.", no_args_is_help=True)
app.add_typer(train_app, name="train")


@train_app.command("detector")
def train_detector(
    data: Annotated[Path, typer.Option(help="A caap dataset (exported to YOLO, split by seed) or a YOLO dataset "
                                            "directory with data.yaml.")],
    model: Annotated[str | None, typer.Option(
        help="YOLO config to train from scratch (yolov8n.yaml, yolov8s.yaml, ...) or a .pt checkpoint to "
        "fine-tune (default from the config: yolov8n.yaml).")] = None,
    config: Annotated[Path | None, typer.Option(help="Training settings (default: training/detector.yaml).")] = None,
    epochs: Annotated[int | None, typer.Option(help="Epochs (default from the config).", min=1)] = None,
    imgsz: Annotated[int | None, typer.Option(help="Training image size (default from the config).", min=32)] = None,
    batch: Annotated[int | None, typer.Option(help="Batch size (default from the config).", min=1)] = None,
    device: Annotated[str | None, typer.Option(help="cpu, 0, 0,1 ... (default: GPU if present, else CPU).")] = None,
    split: Annotated[str | None, typer.Option(
        help="Validation seeds when --data is a caap dataset (default from the config: val:2800-2999).")] = None,
    project: Annotated[Path, typer.Option(help="Where run directories go.")] = Path("runs/detector"),
    name: Annotated[str, typer.Option(help="Run name (directory under --project).")] = "train",
    resume: Annotated[bool, typer.Option("--resume", help="Continue the interrupted run --project/--name.")] = False,
) -> None:
    """Train the UI element detector (ultralytics YOLOv8) with the paper's loss weights."""
    from caap.data.format import DatasetError
    from caap.train.detector import TrainingError
    from caap.train.detector import train as run_training

    try:
        run_dir = run_training(data, config=config, model=model, epochs=epochs, imgsz=imgsz, device=device,
                               batch=batch, split=split, project=project, name=name, resume=resume)
    except (TrainingError, DatasetError) as exc:
        fail(str(exc))
    out.print(f"run directory: {run_dir} (best weights: {run_dir / 'weights' / 'best.pt'})", highlight=False)


eval_app = typer.Typer(help="Measure the vision models on held-out data.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("detector")
def eval_detector(
    data: Annotated[Path, typer.Option(help="A caap dataset of held-out screens (e.g. MiniWoB++ seeds 0-999).")],
    weights: Annotated[Path, typer.Option(help="Detector weights (.pt).")],
    conf: Annotated[float, typer.Option(help="Confidence threshold for precision/recall.")] = 0.25,
    device: Annotated[str, typer.Option(help="Device for the accuracy pass (latency runs on CPU and GPU).")] = "cpu",
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the result JSON here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Precision, recall, mAP50 and mAP50-95 per class and overall at IoU 0.5, and latency per image."""
    from caap.data.format import DatasetError
    from caap.observe.detector import DetectorError
    from caap.train.eval_detector import evaluate

    try:
        result = evaluate(data, weights, conf=conf, device=device)
    except (DatasetError, DetectorError) as exc:
        fail(str(exc))
    text = json.dumps(result, indent=2)
    if out_file:
        out_file.write_text(text + "\n", encoding="utf-8")
    if as_json:
        sys.stdout.write(text + "\n")
        return
    o = result["overall"]
    table = Table(title=f"detector on {result['images']} images, {result['elements']} elements (IoU {result['iou']}, "
                        f"conf {result['conf']})")
    for col in ("class", "labelled", "precision", "recall", "AP50", "AP50-95"):
        table.add_column(col)
    for name, c in result["per_class"].items():
        table.add_row(name, str(c["gt"]), _fmt(c["precision"]), _fmt(c["recall"]), _fmt(c["ap50"]), _fmt(c["ap50_95"]))
    table.add_row("all (class-agnostic)", str(result["elements"]), _fmt(o["precision"]), _fmt(o["recall"]),
                  _fmt(result["map50"]), _fmt(result["map50_95"]), style="bold")
    out.print(table)
    for dev, lat in result["latency_ms"].items():
        out.print(f"latency ({dev}): mean {lat['mean']} ms, p50 {lat['p50']} ms, p90 {lat['p90']} ms per image "
                  f"({lat['images']} images)", highlight=False)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


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
    cfg = _load(config, {})
    sys.stdout.write(json.dumps(cfg.redacted(), indent=2, default=str) + "\n")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
