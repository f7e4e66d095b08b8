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


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What to do, in plain language (e.g. 'Select EiTE and click Submit').")],
    screenshot: Annotated[Path | None, typer.Option(
        help="Plan on this image file instead of the live screen (use with --dry-run).")] = None,
    elements: Annotated[Path | None, typer.Option(
        help="Read the element list from this JSON file (the format `caap observe --json` prints) "
        "instead of running the vision models.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Plan one step and print the actions with their target pixels; touch nothing.")] = False,
    show_prompt: Annotated[bool, typer.Option("--show-prompt", help="Print the prompt sent to the LLM.")] = False,
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
    trace_dir: Annotated[Path | None, typer.Option(help="Where run traces go (default: ./runs).")] = None,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Write no trace directory.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Carry out TASK. With --screenshot and --dry-run, plan one step on an image file.

    The LLM endpoint comes from --base-url/--model, the config file, or OPENAI_BASE_URL,
    OPENAI_API_KEY and OPENAI_MODEL, so any OpenAI-compatible server works.
    """
    from caap.act.executor import RecordingExecutor
    from caap.agent.loop import Agent
    from caap.agent.trace import TraceWriter
    from caap.decide.demos import DemoFileError, load_demos
    from caap.decide.llm import LLMClient, LLMError
    from caap.decide.prompter import CaapPrompter, PromptOptions
    from caap.elements import ElementFileError, load_elements
    from caap.observe.screen import ImageScreen, ScreenError, StaticObserver, load_image

    if mode is not None and mode not in ("tools", "text"):
        fail(f"--mode must be 'tools' or 'text', not {mode!r}")
    cfg = _load(config, {
        "llm.base_url": base_url, "llm.model": model, "llm.mode": mode, "llm.temperature": temperature,
        "agent.max_steps": max_steps, "agent.max_seconds": max_seconds, "agent.max_cost_usd": max_cost,
        "prompt.token_budget": token_budget, "trace.dir": trace_dir,
        "prompt.demonstrations": False if no_demos else None,
        "prompt.rationales": False if no_rationales else None,
        "prompt.cot": False if no_cot else None,
    })

    if screenshot is None and elements is None:
        fail("live runs need screen capture and OS input, which are not part of this build yet; "
             "plan on a file instead: caap run TASK --screenshot IMAGE --elements FILE --dry-run")
    if not dry_run:
        fail("planning on a file (--screenshot/--elements) only makes sense with --dry-run: "
             "there is no live screen to act on")
    if elements is None:
        fail("no element list: pass --elements FILE (the vision models that read a screenshot by "
             "themselves are not part of this build yet)")

    try:
        element_list = load_elements(elements)
        if screenshot is not None:
            image = load_image(screenshot)
        else:
            from PIL import Image

            # No image: a blank canvas just large enough for every element.
            w = max((e.bbox[2] for e in element_list), default=1)
            h = max((e.bbox[3] for e in element_list), default=1)
            image = Image.new("RGB", (w, h), "white")
        demos = load_demos(demo or [])
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

    secret = cfg.llm.api_key.get_secret_value() if cfg.llm.api_key else None
    trace = None if no_trace else TraceWriter(cfg.trace.dir, task, secrets=[secret] if secret else [],
                                              screenshots=cfg.trace.screenshots)
    if trace:
        trace.start({"task": task, "config": cfg.redacted(), "caap_version": __version__,
                     "dry_run": True, "screenshot": str(screenshot) if screenshot else None,
                     "elements_file": str(elements)})

    def on_step(record: dict[str, Any]) -> None:
        if show_prompt:
            out.rule("prompt")
            out.print(record["prompt"]["text"], markup=False, highlight=False)
            out.rule()

    executor = RecordingExecutor()
    agent = Agent(
        screen=ImageScreen(image), observer=StaticObserver(element_list), executor=executor,
        planner=planner, prompter=prompter, config=cfg.agent.model_copy(update={"max_steps": 1}),
        trace=trace, demonstrations=demos, on_step=on_step,
    )
    result = agent.run(task)
    step = result.last_step or {}
    if trace:
        step_image = _draw_actions(image, step.get("actions", []))
        trace.save_image("step_001_actions.png", step_image)

    if as_json:
        payload = {**result.to_json(), "errors": step.get("errors", []),
                   "response": (step.get("response") or {}).get("content"),
                   "trace_dir": str(trace.dir) if trace else None,
                   "os_events": [{"call": n, **kw} for n, kw in executor.calls]}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    else:
        _print_plan(step, result.status, result.reason)
        if trace:
            out.print(f"trace: {trace.dir}", highlight=False)
    if result.status == "llm_error":
        raise typer.Exit(1)


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


def _draw_actions(image: Any, actions: list[dict[str, Any]]) -> Any:
    """A copy of the screenshot with each planned action's target marked and numbered."""
    from PIL import ImageDraw

    canvas = image.convert("RGB").copy()
    draw = ImageDraw.Draw(canvas)
    for i, a in enumerate(actions, start=1):
        if a.get("element"):
            draw.rectangle(a["element"]["bbox"], outline=(255, 0, 0), width=1)
        if a.get("point"):
            x, y = a["point"]
            draw.line([(x - 4, y), (x + 4, y)], fill=(255, 0, 0))
            draw.line([(x, y - 4), (x, y + 4)], fill=(255, 0, 0))
            draw.text((x + 3, y + 2), str(i), fill=(255, 0, 0))
    return canvas


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
