"""`caap bench miniwob`: the agent end to end on MiniWoB++ episodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from caap.cli.common import ConfigOpt, SecretOpt, app, config_from_flags, err, fail, out
from caap.decide.ablations import ABLATIONS

bench_app = typer.Typer(help="Benchmark the whole agent.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


@bench_app.command("miniwob")
def bench_miniwob(
    tasks: Annotated[str, typer.Option(
        help="Comma-separated MiniWoB++ tasks, a file with one per line, or 'caap67' (the paper's 67).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Run directory; an interrupted run resumes from it.")],
    seeds: Annotated[str, typer.Option(help="Seeds, e.g. 0-49 or 0-9,20.")] = "0-49",
    workers: Annotated[int, typer.Option(help="Parallel workers, each with its own Xvfb, Chromium and models.",
                                         min=1)] = 1,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS",
        help="Run the --workers workers as Ray actors (needs the ray extra): 'local' starts a Ray instance for "
             "this run; HOST:6379, ray://HOST:10001 or 'auto' uses that cluster, each actor with its own Xvfb, "
             "Chromium and models on its node. Without --ray: local worker processes (the default).")] = None,
    demos: Annotated[Path | None, typer.Option(
        help="Demonstrations: DIR/TASK/*.json or DIR/TASK.json are shown for TASK.")] = None,
    experience: Annotated[Path | None, typer.Option(
        help="Keep experience per task in this directory (rules from failures, past attempts) and show it.")] = None,
    auto_context: Annotated[Path | None, typer.Option(
        help="Save successful episodes as demonstrations here (at most 2 per task) and show them.")] = None,
    cache: Annotated[Path | None, typer.Option(
        help="Action cache file: a screen solved before is acted on without the LLM; hit rate in the summary.")] = None,
    reference: Annotated[Path | None, typer.Option(
        help="Reference trajectories DIR/TASK/*.json: exact and prefix match of each episode in the summary.")] = None,
    ablation: Annotated[str, typer.Option(
        help=f"{' | '.join(ABLATIONS)} (the paper's ablations).")] = "none",
    max_steps: Annotated[int, typer.Option(help="LLM calls per episode before it counts as failed.", min=1)] = 10,
    observer: Annotated[str, typer.Option(
        help="vision: the detector and reader (the real agent); oracle: elements from the page's DOM, to "
             "measure the planner with perfect perception.")] = "vision",
    detector: Annotated[Path | None, typer.Option(help="Detector weights (default: the shipped ones).")] = None,
    reader: Annotated[Path | None, typer.Option(help="Reader checkpoint (default: the shipped one).")] = None,
    no_screenshots: Annotated[bool, typer.Option(
        "--no-screenshots", help="Keep traces small: no step screenshots.")] = False,
    secret: SecretOpt = None,
    config: ConfigOpt = None,
    base_url: Annotated[str | None, typer.Option(
        help="OpenAI-compatible endpoint (env: OPENAI_BASE_URL).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (env: OPENAI_MODEL).")] = None,
    mode: Annotated[str | None, typer.Option(help="tools | text (see caap run --help).")] = None,
) -> None:
    """Run the agent on every task and seed; success is MiniWoB reward > 0.

    Writes OUT/episodes.jsonl (one line per episode, so a run resumes), OUT/summary.json (per task
    and overall, with the paper's fair metrics), OUT/report.html (beside the paper's numbers) and
    OUT/traces/TASK/seed-N/ (the agent's trace of each episode).
    """
    from caap.bench.harness import BenchSettings, parse_tasks

    cfg, data, task_list, seed_list = _run_inputs(config, base_url, model, mode, detector, reader, tasks, seeds,
                                             parse_tasks)
    settings = BenchSettings(
        tasks=task_list, seeds=seed_list, out=out_dir, workers=workers, ablation=ablation, max_steps=max_steps,
        observer=observer, demos=str(demos) if demos else None, screenshots=not no_screenshots, config=data,
        experience=str(experience) if experience else None, auto_context=str(auto_context) if auto_context else None,
        cache=str(cache) if cache else None, reference=str(reference) if reference else None, ray=ray,
        secrets=_secrets(secret))
    if observer == "vision":
        from caap.observe.vision import miniwob_observe

        _check_models(miniwob_observe(cfg.observe))
    _run(settings)


def _secrets(flags: list[str] | None) -> dict[str, str]:
    """The run's --secret NAME=VALUE flags and CAAP_SECRET_NAME variables, or one clear error."""
    from caap.act.secrets import SecretError, Secrets

    try:
        return dict(Secrets.parse(flags or []).values)
    except SecretError as exc:
        fail(str(exc))


def _run(settings: Any) -> None:
    """Run a benchmark with a progress bar, then print its table (a run resumes in its --out)."""
    from caap.bench.harness import BenchError, load_episodes, run_bench

    out_dir = settings.out
    if (out_dir / "episodes.jsonl").is_file():
        wanted = {(t, s) for t in settings.tasks for s in settings.seeds}
        kept = sum((r.get("task"), r.get("seed")) in wanted for r in load_episodes(out_dir))
        if kept:
            err.print(f"resuming: {kept} of {len(wanted)} episodes are already in {out_dir}/episodes.jsonl and are "
                      "not run again (use another --out to run them afresh)", highlight=False)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=err) as progress:
        bar = progress.add_task("episodes", total=len(settings.tasks) * len(settings.seeds), rate="")
        wins = {"n": 0, "ok": 0}

        def on_episode(record: dict[str, Any], count: int, total: int) -> None:
            wins["n"] += 1
            wins["ok"] += bool(record.get("success"))
            progress.update(bar, completed=count, rate=f"{record['task']} seed {record['seed']}: "
                            f"{'ok' if record.get('success') else record.get('status')} · "
                            f"{wins['ok']}/{wins['n']} succeeded")

        try:
            summary = run_bench(settings, on_episode=on_episode)
        except BenchError as exc:
            fail(str(exc), code=1)
        except KeyboardInterrupt:
            err.print(f"interrupted: finished episodes are kept in {out_dir}/episodes.jsonl; run the same "
                      "command again to resume", highlight=False)
            raise typer.Exit(130) from None
    if settings.benchmark == "desktop":
        _print_desktop_summary(summary)
    else:
        _print_summary(summary)
    out.print(f"summary: {out_dir / 'summary.json'}  report: {out_dir / 'report.html'}", highlight=False)


@bench_app.command("desktop")
def bench_desktop(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory; an interrupted run resumes from it.")
                       ] = None,
    tasks: Annotated[str, typer.Option(
        help="all | training | reserved (the tasks in the applications kept for evaluation) | A,B | a file with "
             "one task per line.")] = "training",
    seeds: Annotated[str, typer.Option(help="Seeds, e.g. 0-9.")] = "0-4",
    list_tasks: Annotated[bool, typer.Option("--list", help="Print the tasks with app, toolkit and set, and exit.")
                          ] = False,
    workers: Annotated[int, typer.Option(help="Parallel workers, each with its own virtual desktop and models.",
                                         min=1)] = 1,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS", help="Run the workers as Ray actors (see caap bench miniwob --help).")] = None,
    demos: Annotated[Path | None, typer.Option(help="Demonstrations: DIR/TASK/*.json are shown for TASK.")] = None,
    save_tests: Annotated[Path | None, typer.Option(
        help="Save every solved episode as a replayable test (DIR/TASK/seed-N.json; caap replay FILE).")] = None,
    replay: Annotated[Path | None, typer.Option(
        help="Replay the tests saved in DIR (by --save-tests) instead of running the agent: no LLM; success is "
             "a replay that passes its checks and the task's own.")] = None,
    max_steps: Annotated[int | None, typer.Option(
        help="LLM calls per episode before it counts as failed (default: each task's own).", min=1)] = None,
    observer: Annotated[str, typer.Option(
        help="vision: the detector and reader (the real agent); oracle: elements from the accessibility tree, "
             "to measure the planner with perfect perception.")] = "vision",
    detector: Annotated[Path | None, typer.Option(help="Detector weights (default: the shipped ones).")] = None,
    reader: Annotated[Path | None, typer.Option(help="Reader checkpoint (default: the shipped one).")] = None,
    no_screenshots: Annotated[bool, typer.Option(
        "--no-screenshots", help="Keep traces small: no step screenshots.")] = False,
    secret: SecretOpt = None,
    config: ConfigOpt = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint (env: OPENAI_BASE_URL).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (env: OPENAI_MODEL).")] = None,
    mode: Annotated[str | None, typer.Option(help="tools | text (see caap run --help).")] = None,
) -> None:
    """Run the agent on real desktop applications (GTK 3/4, Qt 5, Tk) on a private virtual desktop;
    success is every check of the task holding on the application's final state.

    Writes OUT/episodes.jsonl, OUT/summary.json (per task, per set and toolkit), OUT/report.html and
    OUT/traces/TASK/seed-N/, as caap bench miniwob does.
    """
    from caap.bench.desktop.tasks import TASKS, parse_desktop_tasks
    from caap.bench.harness import BenchSettings

    if list_tasks:
        table = Table(title=f"desktop tasks ({len(TASKS)})")
        for col in ("task", "app", "toolkit", "set", "covers"):
            table.add_column(col)
        for t in TASKS.values():
            table.add_row(t.name, t.app, t.toolkit, t.split, ", ".join(t.kinds))
        out.print(table)
        return
    if out_dir is None:
        fail("--out is needed (the run directory)")
    cfg, data, task_list, seed_list = _run_inputs(config, base_url, model, mode, detector, reader, tasks, seeds,
                                             parse_desktop_tasks)
    settings = BenchSettings(
        tasks=task_list, seeds=seed_list, out=out_dir, benchmark="desktop", workers=workers,
        max_steps=max_steps or 0, observer=observer, demos=str(demos) if demos else None,
        screenshots=not no_screenshots, config=data, ray=ray, save_tests=str(save_tests) if save_tests else None,
        replay=str(replay) if replay else None, secrets=_secrets(secret))
    if replay is not None and not replay.is_dir():
        fail(f"{replay}: no such directory of saved tests")
    if observer == "vision":
        _check_models(cfg.observe)
    _run(settings)


def _run_inputs(config: Any, base_url: str | None, model: str | None, mode: str | None, detector: Any,
                reader: Any, tasks: str, seeds: str,
                parse: Callable[[str], list[str]]) -> tuple[Any, dict[str, Any], list[str], list[int]]:
    """A benchmark run's configuration (flags over the config file, the API key in the clear for the
    workers), its tasks and its seeds, or one clear error."""
    from caap.bench.harness import BenchError
    from caap.seeds import SeedRangeError, parse_seed_ranges

    if mode is not None and mode not in ("tools", "text"):
        fail(f"--mode must be 'tools' or 'text', not {mode!r}")
    cfg = config_from_flags(config, {"llm.base_url": base_url, "llm.model": model, "llm.mode": mode,
                                     "observe.detector": detector, "observe.reader": reader})
    try:
        task_list = parse(tasks)
        seed_list = parse_seed_ranges(seeds)
    except (BenchError, SeedRangeError, ValueError) as exc:
        fail(str(exc))
    data: dict[str, Any] = cfg.model_dump(mode="json")
    data["llm"]["api_key"] = cfg.llm.api_key.get_secret_value() if cfg.llm.api_key else None
    # The workers rebuild the config from this dump, where every field would count as set: the
    # observe section keeps only what the config, environment or flags set, so the benchmark's own
    # defaults still apply (miniwob_observe: MiniWoB is observed as web pages unless told).
    data["observe"] = cfg.observe.model_dump(mode="json", exclude_unset=True)
    return cfg, data, task_list, seed_list


def _print_desktop_summary(summary: dict[str, Any]) -> None:
    table = Table(title="desktop tasks: success rate")
    for col in ("task", "app", "set", "success", "episodes", "mean steps", "s/step"):
        table.add_column(col, justify="left" if col in ("task", "app", "set") else "right")
    for task, t in summary["tasks"].items():
        table.add_row(task, t.get("app", "?"), t.get("split", "?"), f"{t['success_rate']:.2f}", str(t["episodes"]),
                      f"{t['mean_steps']:.1f}", "-" if t["mean_seconds_per_step"] is None
                      else f"{t['mean_seconds_per_step']:.2f}")
    o = summary["overall"]
    if o.get("episodes"):
        table.add_row("all", "", "", f"{o['success_rate']:.3f}", str(o["episodes"]), f"{o['mean_steps']:.1f}",
                      "" if o["mean_seconds_per_step"] is None else f"{o['mean_seconds_per_step']:.2f}", style="bold")
    out.print(table)
    for key in ("by_split", "by_toolkit"):
        if o.get(key):
            out.print(f"{key.removeprefix('by_')}: " + ", ".join(
                f"{name} {g['successes']}/{g['episodes']}" for name, g in o[key].items()), highlight=False)
    if o.get("replayed"):
        r = o["replayed"]
        out.print(f"saved tests: {r['passed']}/{r['tests']} passed"
                  + (f" ({r['pass_rate']:.3f})" if r["pass_rate"] is not None else "")
                  + f"; {r['no_test']} episode(s) without a test (not solved when saved)", highlight=False)
    if o.get("latency_ms"):
        out.print("per step (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in o["latency_ms"].items()), highlight=False)


def _check_models(observe: Any) -> None:
    """Fail before starting any browser when the vision models are missing."""
    from caap.observe.vision import DEFAULT_DETECTOR, DEFAULT_READER

    detector = Path(observe.detector or DEFAULT_DETECTOR)
    if not detector.is_file():
        fail(f"{detector}: detector weights not found (or use --observer oracle)")
    try:
        from caap.observe.read.configuration import load_checkpoint_meta

        load_checkpoint_meta(observe.reader or DEFAULT_READER)
    except ImportError:
        fail("the vision observer needs the vision extra: pip install 'caap[vision]'")
    except Exception as exc:  # ReaderError: missing or unusable checkpoint
        fail(f"{exc} (or use --observer oracle)")


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title="MiniWoB++ success rate")
    for col in ("task", "success", "paper", "episodes", "mean steps", "s/step"):
        table.add_column(col, justify="left" if col == "task" else "right")
    from caap.bench.harness import PAPER_RESULTS
    from caap.report.bench import load_paper_results

    column = summary["paper"]["column"]
    paper = load_paper_results(PAPER_RESULTS)
    for task, t in summary["tasks"].items():
        ref = paper.get(task, {}).get(column)
        table.add_row(task, f"{t['success_rate']:.2f}", "-" if ref is None else f"{ref:.2f}", str(t["episodes"]),
                      f"{t['mean_steps']:.1f}", "-" if t["mean_seconds_per_step"] is None
                      else f"{t['mean_seconds_per_step']:.2f}")
    o = summary["overall"]
    if o.get("covered_tasks"):
        table.add_row("mean (covered)", f"{o['mean_success_covered']:.3f}", "", str(o["episodes"]),
                      f"{o['mean_steps']:.1f}", "" if o["mean_seconds_per_step"] is None
                      else f"{o['mean_seconds_per_step']:.2f}", style="bold")
    out.print(table)
    if o.get("latency_ms"):
        out.print("per step (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in o["latency_ms"].items()), highlight=False)
    out.print(f"tasks >= 0.8: {o['tasks_at_least_0.8']}, >= 0.9: {o['tasks_at_least_0.9']}, "
              f"mean over the paper's 67 (uncovered = 0): {o['mean_success_all_67']:.3f}", highlight=False)


def _bench_against(against: str, paths: list[Path], *, repeat: int, rounds: int, options: list[str],
                   as_json: bool) -> None:
    """``caap bench observe --against``: this checkout and ``against`` timed alternately."""
    import json
    import sys
    from dataclasses import asdict

    import caap
    from caap.bench.observe_speed import AgainstError, checkout_of, compare

    here = Path(caap.__file__).resolve().parents[1]
    try:
        with checkout_of(against, here) as base:
            rows, _ = compare(here, base, [p.resolve() for p in paths], rounds=rounds, repeat=repeat, options=options,
                              progress=lambda line: print(line, file=sys.stderr))
    except AgainstError as exc:
        fail(str(exc))
    if as_json:
        for row in rows:
            sys.stdout.write(json.dumps({**asdict(row), "first_ratio": row.first_ratio,
                                         "again_ratio": row.again_ratio}) + "\n")
        return
    table = Table(title=f"observe, ms: this version against {against} (median of {rounds} alternating rounds)")
    for col in ("screen", f"{against} first", "first", "ratio", f"{against} again", "again", "ratio "):
        table.add_column(col, justify="left" if col == "screen" else "right")
    for r in rows:
        table.add_row(Path(r.screen).name, f"{r.base_first:.0f}", f"{r.new_first:.0f}", f"{r.first_ratio:.2f}",
                      f"{r.base_again:.0f}", f"{r.new_again:.0f}", f"{r.again_ratio:.2f}")
    out.print(table)


@bench_app.command("observe")
def bench_observe(
    images: Annotated[list[Path], typer.Argument(help="Screenshot files or folders of them.")],
    repeat: Annotated[int, typer.Option(help="Observations of each screen after the first.", min=1)] = 3,
    detector: Annotated[Path | None, typer.Option(help="Detector weights (default: models/detector/).")] = None,
    reader: Annotated[Path | None, typer.Option(help="Reader checkpoint (default: models/reader/).")] = None,
    detector_runtime: Annotated[str | None, typer.Option(
        help="auto | openvino | onnx | torch: what runs the detector (default: the config's observe section).")] = None,
    reader_runtime: Annotated[str | None, typer.Option(
        help="auto | onnx | torch: what runs the reader's encoder (default: the config's observe section).")] = None,
    ui_scale: Annotated[float | None, typer.Option(
        help="The device scale factor the screens were drawn at (default from the config's observe section).")] = None,
    disable_step: Annotated[list[str] | None, typer.Option(
        "--disable-step", help="Switch an observer step off (repeatable; caap observe --list-steps).")] = None,
    against: Annotated[str | None, typer.Option(
        help="Also time another version on the same screens in this run and print the ratio: a caap "
             "checkout folder or a git revision of this one (a tag, a commit).")] = None,
    rounds: Annotated[int, typer.Option(help="With --against: alternating rounds of the two versions.", min=1)] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per screen.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Time the observer per screen: first sight (every element read) and the same screen again
    (remembered), then the median of every named step over the screens. Models are loaded and
    warmed once. With --against, this version and another alternate on the same screens, each in
    a process of its own, and the table gives both and their ratio."""
    import json
    import sys
    from dataclasses import asdict

    from caap.bench.observe_speed import step_medians, time_screen, warm_up
    from caap.cli.observe import image_paths
    from caap.observe.capture.screen import ScreenError, load_image
    from caap.observe.detect.detector import DetectorError
    from caap.observe.read.configuration import ReaderError
    from caap.observe.vision import VisionObserver

    cfg = config_from_flags(config, {"observe.detector": detector, "observe.reader": reader,
                                     "observe.detector_runtime": detector_runtime, "observe.ui_scale": ui_scale,
                                     "observe.reader_runtime": reader_runtime})
    paths = image_paths(images)
    if against is not None:
        passed = {"--detector": detector and detector.resolve(), "--reader": reader and reader.resolve(),
                  "--detector-runtime": detector_runtime,
                  "--reader-runtime": reader_runtime, "--ui-scale": ui_scale}
        options = [str(v) for k, value in passed.items() if value is not None for v in (k, value)]
        options += [v for name in disable_step or () for v in ("--disable-step", name)]
        if config is not None:
            options += ["--config", str(Path(config).resolve())]
        _bench_against(against, paths, repeat=repeat, rounds=rounds, options=options, as_json=as_json)
        return
    _check_models(cfg.observe)
    try:
        observer = VisionObserver.from_config(cfg.observe, disable=disable_step or ())
    except (DetectorError, ReaderError, ValueError) as exc:
        fail(str(exc))
    timings = []
    runtimes = (f"detector runtime: {observer.detector.runtime if observer.detector else '-'}, "
                f"reader runtime: {getattr(observer.reader, 'runtime', '-')}")
    table = Table(title=f"observe, ms ({runtimes})")
    for col in ("screen", "size", "elements", "detect", "read", "ocr", "first total", "again total"):
        table.add_column(col, justify="left" if col == "screen" else "right")
    warmed = False
    for path in paths:
        try:
            image = load_image(path)
        except ScreenError as exc:
            fail(str(exc))
        if not warmed:
            warm_up(observer, image)
            warmed = True
        t = time_screen(observer, image, repeat)
        timings.append(t)
        if as_json:
            sys.stdout.write(json.dumps({"image": str(path), **asdict(t)}) + "\n")
            continue
        f = t.first
        table.add_row(path.name, f"{t.width}x{t.height}", str(t.elements), f"{f['detect']:.0f}", f"{f['read']:.0f}",
                      f"{f['ocr']:.0f}" if "ocr" in f else "-", f"{f['total']:.0f}", f"{t.again['total']:.0f}")
    if not as_json:
        out.print(table)
        stages = {s["name"]: s["stage"] for s in observer.steps()}
        per_step = Table(title=f"observer steps, median ms over {len(timings)} screens")
        for col in ("step", "stage", "first", "again"):
            per_step.add_column(col, justify="left" if col in ("step", "stage") else "right")
        for name, (first, again) in step_medians(timings).items():
            per_step.add_row(name, stages.get(name, "?"), f"{first:.1f}", f"{again:.1f}")
        out.print(per_step)
