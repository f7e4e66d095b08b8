"""`caap rationalize`: have an LLM write the rationale of every demonstration step."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from caap.cli.common import ConfigOpt, app, config_from_flags, err, fail, out


@app.command()
def rationalize(
    files: Annotated[list[Path], typer.Argument(help="Demonstration files to annotate (rewritten in place).")],
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="LLM calls in flight at once.")] = 4,
    max_chars: Annotated[int, typer.Option(
        min=40, help="Longest rationale kept; longer answers are cut at a sentence boundary.")] = 400,
    force: Annotated[bool, typer.Option(
        "--force", help="Rewrite rationales that are already there (default: skip those steps).")] = False,
    cache: Annotated[Path | None, typer.Option(
        help="Answer cache directory (default ~/.cache/caap/rationales); a cached answer costs no call.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the answer cache.")] = False,
    config: ConfigOpt = None,
    base_url: Annotated[str | None, typer.Option(
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (env: OPENAI_BASE_URL).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (env: OPENAI_MODEL; default gpt-4o).")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature (default 0).")] = None,
) -> None:
    """Write a short LLM rationale into every step of demonstration FILEs.

    For each step the model gets the task, the steps before it, the action, and the element lists
    before and after it, and explains in a few sentences why a person looking at that screen would
    have done it and what it changed. Calls run in parallel (--concurrency), are retried on
    transient errors, and are cached by prompt. Each file is rewritten atomically once its calls are
    over, with every rationale that succeeded.

    The LLM endpoint comes from --base-url/--model, the config file, or OPENAI_BASE_URL,
    OPENAI_API_KEY and OPENAI_MODEL.

    Exit codes: 0 all written, 1 some steps failed (the rest are saved), 2 bad input.
    """
    from caap.decide.demos import DemoFileError, Demonstration, load_demo, save_demo
    from caap.decide.llm import LLMClient, LLMError
    from caap.decide.rationale import (
        DEFAULT_CACHE_DIR,
        RationaleCache,
        RationaleOptions,
        StepResult,
        plan_jobs,
    )
    from caap.decide.rationale import rationalize as run_rationalize

    cfg = config_from_flags(config, {"llm.base_url": base_url, "llm.model": model, "llm.temperature": temperature})
    demos: list[Demonstration] = []
    for path in files:
        try:
            demos.append(load_demo(path))
        except DemoFileError as exc:
            fail(str(exc))
        if not demos[-1].complete:
            err.print(f"[yellow]warning:[/] {path} is marked incomplete (a recording still running, or cut "
                      "off); a recorder still writing it would overwrite these rationales", highlight=False)
    try:
        client = LLMClient(cfg.llm)
    except LLMError as exc:
        fail(str(exc))
    store = None if no_cache else RationaleCache(cache or DEFAULT_CACHE_DIR)
    options = RationaleOptions(concurrency=concurrency, max_chars=max_chars, force=force)

    jobs, _ = plan_jobs(demos, cfg.llm.model, force)
    progress = Progress(TextColumn("rationales"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                        TimeElapsedColumn(), console=err, transient=True)
    bar = progress.add_task("", total=len(jobs))
    failed_so_far = 0

    def on_result(result: StepResult) -> None:
        nonlocal failed_so_far
        if result.status == "skipped":
            return
        failed_so_far += result.status == "failed"
        progress.update(bar, advance=1, description=f"{failed_so_far} failed" if failed_so_far else "")

    with progress:
        report = run_rationalize(demos, client, model=cfg.llm.model, options=options, cache=store,
                                 on_result=on_result)

    table = Table(title=f"rationales ({cfg.llm.model})")
    for col in ("file", "steps", "written", "cached", "skipped", "failed", "tokens"):
        table.add_column(col, justify="left" if col == "file" else "right", overflow="fold")
    for d, (path, demo) in enumerate(zip(files, demos, strict=True)):
        changed = report.count(d, "written") + report.count(d, "cached")
        if changed:
            save_demo(demo, path)
        table.add_row(str(path), str(len(demo.steps)), str(report.count(d, "written")),
                      str(report.count(d, "cached")), str(report.count(d, "skipped")),
                      str(report.count(d, "failed")), str(report.tokens(d)))
    out.print(table)
    total = len(report.results)
    out.print(f"{total} steps: {report.count(status='written')} written, {report.count(status='cached')} from the "
              f"cache, {report.count(status='skipped')} skipped, {report.count(status='failed')} failed; "
              f"{report.tokens()} tokens", highlight=False)

    failed = report.failed
    if failed:
        # One line per distinct reason, naming its steps: an unreachable endpoint reads once, not N times.
        reasons: dict[str, list[str]] = {}
        for r in failed:
            reasons.setdefault(r.error or "unknown error", []).append(f"{files[r.demo]} step {r.step}")
        for reason, where in reasons.items():
            err.print(f"[bold red]failed:[/] {', '.join(where)}: {reason}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
