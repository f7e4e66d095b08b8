"""The benchmark report: one HTML page for a MiniWoB++ run (its summary.json), set against the
paper's per-task results for the same ablation.

The harness writes summary.json while it runs, so the page accepts a partial summary (``finished``
null, tasks missing, keys absent) and says what it is showing.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from caap.decide.ablations import ABLATIONS
from caap.report.html import (
    Markup,
    ReportError,
    esc,
    fmt,
    fmt_cost,
    fmt_duration,
    fmt_int,
    fmt_time,
    join,
    key_values,
    num,
    page,
    stacked_bar,
    stage_items,
    table,
    tag,
    write_html,
)

__all__ = ["PAPER_COLUMNS", "is_bench_dir", "load_paper_results", "load_summary", "paper_column", "paper_path", "pct",
           "render_bench", "write_bench_report"]

PAPER_COLUMNS = ("full", "demo_without_cot", "cot_without_demo", "cot_with_action_only_demo", "no_cot_no_demo")
PAPER_HEADER = ("task", *PAPER_COLUMNS)


def load_paper_results(path: str | Path) -> dict[str, dict[str, float]]:
    """The paper's per-task success rates: ``{task: {column: rate}}`` from its tab-separated table
    (header ``task full demo_without_cot cot_without_demo cot_with_action_only_demo no_cot_no_demo``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: no such paper results file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read the paper results ({exc})") from None
    rows = [r for r in csv.reader(text.splitlines(), delimiter="\t") if any(c.strip() for c in r)]
    if not rows or tuple(c.strip() for c in rows[0]) != PAPER_HEADER:
        got = "\t".join(rows[0]) if rows else "an empty file"
        raise ReportError(f"{path}: expected the header {' '.join(PAPER_HEADER)!r} (tab-separated), got {got!r}")
    out: dict[str, dict[str, float]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(PAPER_HEADER):
            raise ReportError(f"{path}, line {line}: expected {len(PAPER_HEADER)} tab-separated fields, got {len(row)}")
        try:
            out[row[0].strip()] = {c: float(v) for c, v in zip(PAPER_COLUMNS, row[1:], strict=True)}
        except ValueError:
            raise ReportError(f"{path}, line {line}: the success rates must be numbers") from None
    return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def paper_column(summary: dict[str, Any]) -> str:
    """The paper's column for a summary's ablation (``full`` when it names none)."""
    column = _dict(summary.get("paper")).get("column")
    if column in PAPER_COLUMNS:
        return str(column)
    ablation = ABLATIONS.get(str(_dict(summary.get("config")).get("ablation") or "none"))
    return ablation.paper_column if ablation else "full"


def pct(value: Any) -> str:
    """A rate as a percentage with one decimal, or a dash."""
    n = num(value)
    return "—" if n is None else f"{100 * n:.1f}%"


def _diff_cell(ours: float | None, paper: float | None) -> Markup:
    if ours is None or paper is None:
        return Markup('<span class="muted">—</span>')
    d = ours - paper
    text = f"{100 * d:+.1f}"
    # Within half a point is a tie; ten points or more below the paper is flagged loudly.
    cls = "diff-up" if d > 0.005 else "muted" if d >= -0.005 else "diff-bad" if d <= -0.1 else "diff-down"
    return tag("span", text, cls=cls)


def _statuses(statuses: Any) -> str:
    items = sorted(_dict(statuses).items(), key=lambda kv: -(num(kv[1]) or 0))
    return ", ".join(f"{k} {fmt_int(v)}" for k, v in items) or "—"


def _trace_link(task: str, failure: dict[str, Any]) -> str | None:
    """The relative link to a failed episode's report (the harness writes one per trace)."""
    trace = failure.get("trace")
    if not trace and isinstance(failure.get("seed"), int):
        trace = f"traces/{task}/seed-{failure['seed']}"
    if not trace:
        return None
    rel = str(trace).strip("/")
    return quote(f"{rel}/report.html", safe="/-_.~")


def _failures(task: str, failures: Any, limit: int = 5) -> Markup:
    items = []
    for f in failures if isinstance(failures, list) else []:
        if not isinstance(f, dict):
            continue
        seed = f.get("seed", "?")
        label = f"seed {seed}"
        link = _trace_link(task, f)
        head = tag("a", label, href=link) if link else tag("span", label)
        reason = f.get("reason") or ""
        status = f.get("status") or ""
        items.append(Markup(f"<li>{head} <b>{esc(status)}</b>{' — ' if reason else ''}{esc(reason)}</li>"))
    if not items:
        return Markup('<span class="muted">—</span>')
    shown = Markup(f'<ul class="failures">{join(items[:limit])}</ul>')
    if len(items) <= limit:
        return shown
    # Long lists fold away so one bad task does not stretch the table.
    return Markup(f"{shown}<details><summary>{len(items) - limit} more</summary>"
                  f'<ul class="failures">{join(items[limit:])}</ul></details>')


def _metric(label: str, ours: str, paper: str, diff: Markup | None = None) -> Markup:
    d = f" {diff}" if diff else ""
    return Markup(f'<div class="metric"><div class="label">{esc(label)}</div><div class="pair">'
                  f'<span class="ours">{esc(ours)}</span><span class="paper">paper {esc(paper)}</span>{d}</div></div>')


def render_bench(summary: dict[str, Any], paper_tsv: Path | None) -> str:
    """The benchmark report page for a summary (the harness's summary.json), compared with the paper's
    results in ``paper_tsv`` (None: no comparison)."""
    summary = _dict(summary)
    config = _dict(summary.get("config"))
    tasks = {str(k): _dict(v) for k, v in _dict(summary.get("tasks")).items()}
    overall = _dict(summary.get("overall"))
    column = paper_column(summary)

    notices: list[Markup] = []
    paper: dict[str, dict[str, float]] = {}
    if paper_tsv is not None:
        try:
            paper = load_paper_results(paper_tsv)
        except ReportError as exc:
            notices.append(Markup(f'<div class="notice">No comparison with the paper: {esc(exc)}</div>'))
    else:
        notices.append(Markup('<div class="notice">No paper results file was given: no comparison.</div>'))
    paper_col = {t: r[column] for t, r in paper.items() if column in r}
    all_tasks = len(paper_col) or 67  # the paper's benchmark: 67 MiniWoB++ tasks

    finished = summary.get("finished")
    if finished is None:
        notices.insert(0, Markup(
            '<div class="notice"><b>In progress.</b> This summary was written while the benchmark was still '
            f"running: {fmt_int(overall.get('episodes', sum(num(t.get('episodes')) or 0 for t in tasks.values())))}"
            f" episode(s) over {len(tasks)} task(s) so far.</div>"))

    # --- ours: from the summary, recomputed from the tasks where the harness left a key out
    rates = {t: num(r.get("success_rate")) for t, r in tasks.items()}
    known = [v for v in rates.values() if v is not None]
    ours_mean = num(overall.get("mean_success_covered"))
    ours_mean = ours_mean if ours_mean is not None else _mean(known)
    ours_08 = overall.get("tasks_at_least_0.8", sum(v >= 0.8 for v in known))
    ours_09 = overall.get("tasks_at_least_0.9", sum(v >= 0.9 for v in known))
    ours_all: float | None
    if paper_col:  # the same denominator as the paper's figure: every task in its table
        ours_all = sum(v for t, v in rates.items() if t in paper_col and v is not None) / all_tasks
    else:
        ours_all = num(overall.get("mean_success_all_67"))
        if ours_all is None and known:
            ours_all = sum(known) / all_tasks
    covered = overall.get("covered_tasks", len(tasks))

    # --- the paper's, on the same tasks (and on all of them for the last figure)
    on_ours = [paper_col[t] for t in tasks if t in paper_col]
    paper_mean = _mean(on_ours)
    paper_08 = sum(v >= 0.8 for v in on_ours) if paper_col else None
    paper_09 = sum(v >= 0.9 for v in on_ours) if paper_col else None
    paper_all = _mean(list(paper_col.values()))

    title = f"caap benchmark · {config.get('model') or 'unknown model'} · ablation {config.get('ablation') or 'none'}"
    metrics = Markup('<div class="metrics">' + join([
        _metric(f"mean success over the {fmt_int(covered)} covered task(s)", pct(ours_mean), pct(paper_mean),
                _diff_cell(ours_mean, paper_mean)),
        _metric("covered tasks with success ≥ 0.8", fmt_int(ours_08), fmt_int(paper_08)),
        _metric("covered tasks with success ≥ 0.9", fmt_int(ours_09), fmt_int(paper_09)),
        _metric(f"mean success over all {all_tasks} tasks (not run = 0)", pct(ours_all), pct(paper_all),
                _diff_cell(ours_all, paper_all)),
    ]) + "</div>")
    paper_note = Markup(
        f'<p class="muted">Paper column: <code>{esc(column)}</code>'
        + (f" from {esc(Path(paper_tsv).name)}" if paper_tsv is not None and paper else "")
        + ". The paper's figures in the first three boxes are over the same tasks as ours.</p>")

    started, finished_n = num(summary.get("started")), num(finished)
    duration = (finished_n - started) if started is not None and finished_n is not None else None
    seeds = config.get("seeds")
    run_kv = key_values([
        ("status", tag("span", "finished" if finished is not None else "in progress",
                       cls=f"badge {'good' if finished is not None else 'warn'}")),
        ("model", config.get("model") or "—"), ("ablation", config.get("ablation") or "none"),
        ("observer", config.get("observer") or "—"),
        ("tasks", fmt_int(len(config["tasks"])) if isinstance(config.get("tasks"), list) else len(tasks)),
        ("seeds", seeds if seeds is not None else "—"), ("max steps", fmt_int(config.get("max_steps"))),
        ("workers", fmt_int(config.get("workers"))), ("episodes", fmt_int(overall.get("episodes"))),
        ("started", fmt_time(started)), ("duration", fmt_duration(duration)),
        ("caap", summary.get("caap_version") or "—"),
    ])
    usage = _dict(overall.get("tokens_per_episode"))
    cost_kv = key_values([
        ("mean steps / episode", fmt(overall.get("mean_steps"), 2)),
        ("seconds / step", fmt(overall.get("mean_seconds_per_step"), 2)),
        ("prompt tokens / episode", fmt_int(usage.get("prompt"))),
        ("completion tokens / episode", fmt_int(usage.get("completion"))),
        ("cost / episode", fmt_cost(overall.get("cost_per_episode_usd"))),
    ])
    latency = stage_items(overall.get("latency_ms"))
    header = Markup(
        f'<header class="top"><div class="muted">caap benchmark report</div><h1>{esc(title)}</h1>'
        f"{join(notices)}{run_kv}"
        + (f'<p class="muted">Endpoint: <code>{esc(config["base_url"])}</code></p>' if config.get("base_url") else "")
        + "</header>")
    top = Markup(f"<section><h2>Results vs the paper</h2>{metrics}{paper_note}</section>")
    cost_section = Markup(
        f"<section><h2>Cost and speed</h2>{cost_kv}<h3>Mean latency per step</h3>{stacked_bar(latency)}</section>")

    # --- per task
    rows, classes = [], []
    for task in sorted(tasks):
        r = tasks[task]
        ours_rate = rates[task]
        p = paper_col.get(task)
        task_latency = stage_items(r.get("latency_ms"))
        rows.append([
            Markup(f'<span id="task-{esc(task)}">{esc(task)}</span>'), pct(ours_rate), pct(p),
            _diff_cell(ours_rate, p), fmt_int(r.get("episodes")), fmt(r.get("mean_steps"), 1),
            fmt(r.get("mean_seconds_per_step"), 2), stacked_bar(task_latency, legend=False, small=True),
            _statuses(r.get("statuses")), _failures(task, r.get("failures")),
        ])
        classes.append("bad" if ours_rate is not None and p is not None and ours_rate - p <= -0.1 else None)
    task_table = (table(["task", "ours", "paper", "Δ pts", "episodes", "steps", "s/step", "latency",
                         "statuses", "failures (trace reports)"], rows, row_classes=classes,
                        numeric=[1, 2, 3, 4, 5, 6])
                  if rows else Markup('<p class="muted">No task has finished an episode yet.</p>'))
    tasks_section = Markup(f"<section><h2>Tasks run ({len(tasks)})</h2>{task_table}</section>")

    # --- not covered
    missing = [t for t in paper if t not in tasks]
    if paper:
        planned = set(config.get("tasks") or []) if isinstance(config.get("tasks"), list) else set()
        items = join(tag("li", Markup(f"{esc(t)} <span class=\"muted\">({pct(paper_col.get(t))})"
                                      f"{' · queued' if t in planned and finished is None else ''}</span>"))
                     for t in missing)
        body = (f'<ul class="tasks">{items}</ul>' if missing
                else '<p class="muted">Every task of the paper was run.</p>')
        uncovered = Markup(f'<section id="uncovered"><h2>Paper tasks not run ({len(missing)})</h2>'
                           f'<p class="muted">They count as 0 in the mean over all {all_tasks} tasks; the paper\'s '
                           f"rate is in brackets.</p>{body}</section>")
    else:
        uncovered = Markup("")
    footer = Markup("<footer>Written by caap report. Δ pts: our success rate minus the paper's, in percentage "
                    "points.</footer>")
    return page(title, join([header, top, cost_section, tasks_section, uncovered, footer]))


def is_bench_dir(path: str | Path) -> bool:
    """A benchmark directory holds summary.json with a "tasks" key and no steps.jsonl (a run trace's)."""
    path = Path(path)
    if (path / "steps.jsonl").exists() or not (path / "summary.json").is_file():
        return False
    try:
        data = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "tasks" in data


def paper_path(summary: dict[str, Any], bench_dir: Path) -> Path | None:
    """The paper results file a summary names, resolved against its benchmark directory if relative."""
    raw = _dict(summary.get("paper")).get("tsv")
    if not raw:
        return None
    path = Path(str(raw)).expanduser()
    if not path.is_absolute() and not path.exists() and (bench_dir / path).exists():
        path = bench_dir / path  # a path relative to the benchmark directory
    return path


def load_summary(bench_dir: str | Path) -> dict[str, Any]:
    """BENCH_DIR/summary.json, or one ``ReportError`` saying why it is not a benchmark summary."""
    bench_dir = Path(bench_dir)
    path = bench_dir / "summary.json"
    if not bench_dir.is_dir():
        raise ReportError(f"{bench_dir}: no such benchmark directory")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{bench_dir}: not a benchmark directory (no summary.json)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read the benchmark summary ({exc})") from None
    if not isinstance(summary, dict) or not isinstance(summary.get("tasks"), dict):
        raise ReportError(f"{path}: not a benchmark summary (no \"tasks\")")
    return summary


def write_bench_report(bench_dir: str | Path, out: str | Path | None = None, *,
                       paper_tsv: Path | None = None) -> Path:
    """Read BENCH_DIR/summary.json and write its report (default BENCH_DIR/report.html). The paper's
    results come from ``paper_tsv`` or else the summary's ``paper.tsv``."""
    bench_dir = Path(bench_dir)
    summary = load_summary(bench_dir)
    html_text = render_bench(summary, paper_tsv if paper_tsv is not None else paper_path(summary, bench_dir))
    return write_html(html_text, Path(out) if out is not None else bench_dir / "report.html")
