"""`caap run`: act on the live screen, or plan one step on it or on a file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from caap import __version__
from caap.cli.common import ConfigOpt, SecretOpt, app, config_from_flags, err, fail, out
from caap.records import AGENT_SUCCEEDED, EpisodeStatus, StepRecord

ELEMENTS_HINT = "(or pass --elements FILE to plan on a given element list)"


# Exit status per episode status: 0 the task was done, 3 a limit or the model ended it undone,
# 130 stopped by the user, 1 a failure around the agent.
EXIT_CODES: dict[EpisodeStatus, int] = {
    EpisodeStatus.DONE: 0, EpisodeStatus.FINISHED: 0, EpisodeStatus.MAX_STEPS: 3, EpisodeStatus.TIMEOUT: 3,
    EpisodeStatus.OVER_BUDGET: 3, EpisodeStatus.FAILED: 3, EpisodeStatus.INVALID_ANSWERS: 3, EpisodeStatus.STOPPED: 130,
    EpisodeStatus.LLM_ERROR: 1, EpisodeStatus.SCREEN_ERROR: 1, EpisodeStatus.ACT_ERROR: 1,
    EpisodeStatus.HARNESS_ERROR: 1,
}


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What to do, in plain language (e.g. 'Select EiTE and click Submit').")],
    screenshot: Annotated[Path | None, typer.Option(
        help="Plan on this image file instead of the live screen (with --dry-run).")] = None,
    elements: Annotated[Path | None, typer.Option(
        help="Read the element list from this JSON file (the format `caap observe --json` prints) "
        "instead of running the vision models; on a live screen the list stays fixed (fixed-layout apps, "
        "testing).")] = None,
    detector: Annotated[Path | None, typer.Option(
        help="Detector weights for the observer (default: the shipped models/detector/).")] = None,
    reader: Annotated[Path | None, typer.Option(
        help="Reader checkpoint for the observer (default: the shipped models/reader/).")] = None,
    ui_scale: Annotated[float | None, typer.Option(
        help="The device scale factor the application draws at (1, 1.25, 1.5, 2; default: the config's "
             "observe section).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Plan one step and print the actions with their target pixels; draw them on the "
        "screenshot in the trace; touch nothing.")] = False,
    show_prompt: Annotated[bool, typer.Option("--show-prompt", help="Print each prompt sent to the LLM.")] = False,
    demo: Annotated[list[Path] | None, typer.Option(
        "--demo", help="Demonstration file (always shown) or directory (the most similar tasks are shown); "
        "repeatable.")] = None,
    family: Annotated[str | None, typer.Option(
        help="Task family name shared by runs of the same kind of task (experience, auto-context); "
        "default: the task text with its quoted values and numbers blanked.")] = None,
    experience: Annotated[Path | None, typer.Option(
        help="Keep experience per task family in this directory: rules from failures, past attempts.")] = None,
    auto_context: Annotated[Path | None, typer.Option(
        help="Save a successful run as a demonstration in this directory (at most 2 per family); it is "
        "also searched for demonstrations.")] = None,
    cache: Annotated[Path | None, typer.Option(
        help="Action cache file: a screen solved before is acted on without calling the LLM.")] = None,
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
    popups: Annotated[str | None, typer.Option(
        help="What appears on the screen by itself while the model decides: off | mark (shown to the model as "
        "such; default) | confirm (also ask before acting on it, but for closing it).")] = None,
    no_injection_defence: Annotated[bool, typer.Option(
        "--no-injection-defence", help="Ablation: leave out the prompt's rule that screen text is data, and its "
        "examples of pop-ups to dismiss.")] = False,
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
    save_test: Annotated[Path | None, typer.Option(
        help="Live: when the task succeeds, save the run as a regression test here (caap replay FILE re-runs it "
             "without an LLM, checking the screen after each step).")] = None,
    trace_dir: Annotated[Path | None, typer.Option(help="Where run traces go (default: ./runs).")] = None,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Write no trace directory.")] = False,
    secret: SecretOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Carry out TASK on the live screen, or plan one step (--dry-run) on it or on an image file.

    Live runs act with real mouse and keyboard input. Press Ctrl+Alt+X (the stop hotkey, see
    --stop-hotkey) to stop the agent before its next OS event; moving the mouse pointer into a screen
    corner also stops it (pyautogui fail-safe). Actions on password-like fields and on
    delete/send/pay/buy buttons wait for your yes on the terminal; no answer means no.

    The LLM endpoint comes from --base-url/--model, the config file, or OPENAI_BASE_URL,
    OPENAI_API_KEY and OPENAI_MODEL, so any OpenAI-compatible server works.

    A password or other secret goes in as --secret NAME=VALUE and the task says {NAME} where it is
    typed: the LLM never sees the value, and traces, prompts and memory hold only {NAME}.

    Exit codes: 0 done, 3 gave up or hit a limit, 1 LLM/screen/executor error, 2 bad input, 130 stopped.
    """
    import threading

    from caap.act.device import Device
    from caap.act.dryrun import draw_calls
    from caap.act.secrets import SecretError, Secrets
    from caap.agent.loop import Agent
    from caap.agent.trace import TraceWriter
    from caap.cli.live import live_device, live_safety, popup_guard, vision_observer
    from caap.decide.demos import DemoFileError
    from caap.decide.llm import LLMClient, LLMError
    from caap.elements import ElementFileError, load_elements
    from caap.memory.cache import CacheError
    from caap.memory.experience import ExperienceError
    from caap.memory.session import Memory, MemoryOptions
    from caap.observe.capture.screen import ScreenError, load_image
    from caap.observe.observation import StaticObserver

    if mode is not None and mode not in ("tools", "text"):
        fail(f"--mode must be 'tools' or 'text', not {mode!r}")
    cfg = config_from_flags(config, {
        "llm.base_url": base_url, "llm.model": model, "llm.mode": mode, "llm.temperature": temperature,
        "agent.max_steps": max_steps, "agent.max_seconds": max_seconds, "agent.max_cost_usd": max_cost,
        "prompt.token_budget": token_budget, "trace.dir": trace_dir,
        "observe.detector": detector, "observe.reader": reader, "observe.ui_scale": ui_scale,
        "prompt.demonstrations": False if no_demos else None,
        "prompt.rationales": False if no_rationales else None,
        "prompt.cot": False if no_cot else None,
        "prompt.injection_defence": False if no_injection_defence else None,
        "safety.popups": popups,
        "screen.monitor": monitor, "screen.region": region, "screen.window": window,
        "executor.backend": backend, "executor.failsafe": False if no_failsafe else None,
        "safety.stop_hotkey": stop_hotkey, "safety.confirm": False if no_confirm else None,
        "memory.experience": experience, "memory.auto_context": auto_context, "memory.cache": cache,
    })
    try:
        secrets = Secrets.parse(secret or [])
        secrets.check(task)
    except SecretError as exc:
        fail(str(exc))
    live = screenshot is None
    if not live and not dry_run:
        fail("an image file cannot be acted on: add --dry-run to plan on --screenshot, or leave --screenshot "
             "out to act on the live screen")
    try:
        observer: Any = (StaticObserver(load_elements(elements)) if elements is not None
                         else vision_observer(cfg, ELEMENTS_HINT))
        # Live: captured once, so no display fails here with a clear message; a dry run sends no input.
        device = (live_device(cfg, dry_run=dry_run) if screenshot is None
                  else Device.image(load_image(screenshot)))
    except (ElementFileError, ScreenError) as exc:
        fail(str(exc))
    try:
        planner = LLMClient(cfg.llm)
    except LLMError as exc:
        fail(str(exc))
    try:
        memory = Memory(MemoryOptions.from_config(cfg, demos=[*(demo or []), *cfg.memory.demos],
                                                  cache=None if dry_run else cfg.memory.cache), planner)
        demos = memory.demonstrations(task, family)
        lessons = memory.experience_lines(task, family)
    except (DemoFileError, CacheError, ExperienceError) as exc:
        fail(str(exc))

    stop = threading.Event()
    hotkey = gate = None
    if not dry_run:
        hotkey, gate = live_safety(cfg, stop)

    api_key = cfg.llm.api_key.get_secret_value() if cfg.llm.api_key else None
    trace = None if no_trace else TraceWriter(cfg.trace.dir, task, secrets=[api_key] if api_key else [],
                                              screenshots=cfg.trace.screenshots, hidden=secrets)
    if trace:
        trace.start({"task": task, "config": cfg.redacted(), "caap_version": __version__, "dry_run": dry_run,
                     "live": live, "screenshot": str(screenshot) if screenshot else None,
                     "elements_file": str(elements)})

    def on_step(record: StepRecord) -> None:
        if show_prompt and record.prompt is not None:
            out.rule(f"prompt (step {record.step})")
            out.print(record.prompt.text, markup=False, highlight=False)
            out.rule()
        if not dry_run and not as_json:
            done = ", ".join(f"{a.name}({a.outcome_text()})" for a in record.actions) or "nothing"
            err.print(f"step {record.step}: {done}", highlight=False, soft_wrap=True)

    # A dry run plans one step.
    planned = cfg.model_copy(update={"agent": cfg.agent.model_copy(update={"max_steps": 1})}) if dry_run else cfg
    agent = Agent.from_config(planned, device, observer=observer, planner=planner, memory=memory, trace=trace,
                              demonstrations=demos, on_step=on_step, stop=stop, approve=gate, experience=lessons,
                              family=family, secrets=secrets, popup_guard=None if dry_run else popup_guard(cfg))
    try:
        result = agent.run(task)
    finally:
        if hotkey:
            hotkey.stop()
        device.close()
    kept: dict[str, Any] = {}
    if not dry_run:
        try:
            kept = memory.finish(task, success=result.status in AGENT_SUCCEEDED, status=result.status,
                                 reason=result.reason, steps=agent.steps, family=family,
                                 screen=agent.last_frame.size if agent.last_frame is not None else None)
        except (CacheError, ExperienceError, OSError) as exc:
            err.print(f"[yellow]warning:[/] the run's memory was not saved: {exc}", highlight=False)
        if memory.cache is not None:
            kept["cache"] = {"lookups": memory.cache.lookups, "hits": memory.cache.hits}
        if save_test is not None and result.status in AGENT_SUCCEEDED:
            from caap.agent.regression import save_test as write_test

            frame = agent.last_frame
            try:
                kept["test"] = str(write_test(task, agent.steps, save_test, source="caap run",
                                              screen=frame.size if frame is not None else None))
            except OSError as exc:
                err.print(f"[yellow]warning:[/] the test was not saved: {exc}", highlight=False)
        elif save_test is not None:
            err.print(f"no test saved: the run ended {result.status.value}", highlight=False)
    step = result.last_step
    drawn = None
    calls = getattr(device.executor, "calls", [])  # a dry run's device records its input (RecordingExecutor)
    if dry_run and agent.last_frame is not None:
        drawn = draw_calls(agent.last_frame, calls)
        if trace:
            trace.save_image("step_001_actions.png", drawn)

    if as_json:
        payload = {**result.to_json(), "errors": step.errors if step else [],
                   "response": (step.response or {}).get("content") if step else None,
                   "trace_dir": str(trace.dir) if trace else None, "memory": kept}
        if dry_run:
            payload["os_events"] = [{"call": n, **kw} for n, kw in calls]
        sys.stdout.write(secrets.redact(json.dumps(payload, ensure_ascii=False)) + "\n")
    elif dry_run:
        _print_plan(step, result.status, result.reason)
    else:
        out.print(f"{result.status}: {result.reason} ({result.steps} steps, {result.seconds:.1f}s, "
                  f"cost {'unknown' if result.cost_usd is None else f'${result.cost_usd:.4f}'})", highlight=False)
        if "cache" in kept:
            c = kept["cache"]
            out.print(f"action cache: {c['hits']} of {c['lookups']} steps reused", highlight=False)
        if kept.get("auto_context"):
            out.print(f"saved as a demonstration: {kept['auto_context']}", highlight=False)
        if kept.get("test"):
            out.print(f"saved as a test: {kept['test']} (caap replay {kept['test']})", highlight=False)
    if trace and not as_json:
        out.print(f"trace: {trace.dir}", highlight=False)
    code = 0 if dry_run and result.status == EpisodeStatus.MAX_STEPS else EXIT_CODES.get(result.status, 1)
    if code == 1 and (as_json or not dry_run):
        err.print(f"[bold red]error:[/] {result.reason}", highlight=False, soft_wrap=True)
    if code:
        raise typer.Exit(code)


def _print_plan(step: StepRecord | None, status: EpisodeStatus, reason: str) -> None:
    if status == EpisodeStatus.LLM_ERROR or step is None:
        err.print(f"[bold red]error:[/] {reason}", highlight=False, soft_wrap=True)
        return
    response = (step.response or {}).get("content")
    if response:
        out.rule("model answer")
        out.print(response, markup=False, highlight=False)
    table = Table(title="planned actions (captured-image pixels)")
    for col in ("#", "action", "arguments", "target element", "pixel (x, y)"):
        table.add_column(col)
    for i, a in enumerate(step.actions, start=1):
        el = a.target()
        target = f"element_{el.id} {el.type.value} {json.dumps(el.text)}" if el else "-"
        pt = a.point
        table.add_row(str(i), a.name, json.dumps(a.args, ensure_ascii=False), target,
                      f"({pt[0]}, {pt[1]})" if pt else "-")
    out.print(table)
    for e in step.errors:
        err.print(f"[yellow]rejected:[/] {e['message']}", highlight=False, soft_wrap=True)
