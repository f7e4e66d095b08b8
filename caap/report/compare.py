"""Benchmark runs side by side: one row per task with each run's success, steps, seconds per step and
latency breakdown, the difference between the first two runs, and the paper's column.

The usual pair is the same tasks and seeds with ``--observer vision`` and ``--observer oracle``: the
difference is what perception costs, task by task. The page is written as self-contained HTML and,
with ``markdown``, as a Markdown table that a repository can keep and link.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caap.report.bench import load_paper_results, load_summary, paper_column, paper_path, pct
from caap.report.html import (
    Markup,
    ReportError,
    esc,
    fmt,
    fmt_int,
    join,
    num,
    page,
    stacked_bar,
    stage_items,
    table,
    tag,
    write_html,
)

__all__ = ["BenchRun", "load_run", "render_comparison", "render_comparison_markdown", "write_comparison"]

GOOD = 0.95  # the per-task bar the comparison counts (issue 14's target for the vision ceiling)


class BenchRun:
    """One benchmark directory's summary, named for the page (its observer unless told otherwise)."""

    def __init__(self, path: Path, summary: dict[str, Any], name: str | None = None) -> None:
        self.path = path
        self.summary = summary
        raw_config = summary.get("config")
        config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
        self.config = config
        self.name = name or str(config.get("observer") or path.name)
        raw_tasks = summary.get("tasks")
        tasks: dict[str, Any] = raw_tasks if isinstance(raw_tasks, dict) else {}
        self.tasks: dict[str, dict[str, Any]] = {str(k): v for k, v in tasks.items() if isinstance(v, dict)}
        overall = summary.get("overall")
        self.overall: dict[str, Any] = overall if isinstance(overall, dict) else {}

    def rate(self, task: str) -> float | None:
        return num(self.tasks.get(task, {}).get("success_rate"))

    def mean(self, tasks: Sequence[str]) -> float | None:
        rates = [r for t in tasks if (r := self.rate(t)) is not None]
        return sum(rates) / len(rates) if rates else None

    def at_least(self, tasks: Sequence[str], bar: float) -> int:
        return sum((r := self.rate(t)) is not None and r >= bar for t in tasks)


def load_run(path: str | Path, name: str | None = None) -> BenchRun:
    """A benchmark directory (with summary.json) as a ``BenchRun``; one ``ReportError`` if it is not one."""
    return BenchRun(Path(path), load_summary(path), name)


def _names(runs: Sequence[BenchRun]) -> list[str]:
    """Distinct column names: two runs with the same observer get their directory names instead."""
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        names = [r.path.name for r in runs]
    if len(set(names)) < len(names):
        names = [f"{n} ({i + 1})" for i, n in enumerate(names)]
    return names


def _tasks(runs: Sequence[BenchRun]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        for task in run.tasks:
            seen.setdefault(task, None)
    return sorted(seen)


def _paper(runs: Sequence[BenchRun], paper_tsv: Path | None) -> tuple[str, dict[str, float]]:
    column = paper_column(runs[0].summary)
    path = paper_tsv if paper_tsv is not None else paper_path(runs[0].summary, runs[0].path)
    if path is None:
        return column, {}
    try:
        table_ = load_paper_results(path)
    except ReportError:
        return column, {}
    return column, {t: r[column] for t, r in table_.items() if column in r}


def _prepare(runs: Sequence[BenchRun], paper_tsv: Path | None) -> tuple[list[str], list[str], str, dict[str, float]]:
    """Column names, the tasks of any run, and the paper's column (name, rate per task)."""
    if len(runs) < 2:
        raise ReportError("a comparison needs at least two benchmark directories")
    column, paper = _paper(runs, paper_tsv)
    return _names(runs), _tasks(runs), column, paper


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _diff_text(d: float | None) -> str:
    return "—" if d is None else f"{100 * d:+.0f}"


def _failure_reasons(run: BenchRun, task: str, limit: int = 3) -> list[str]:
    out = []
    for f in run.tasks.get(task, {}).get("failures") or []:
        if isinstance(f, dict):
            reason = str(f.get("reason") or f.get("status") or "")
            out.append(f"seed {f.get('seed', '?')}: {reason}"[:160])
    return out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])


def _check_comparable(runs: Sequence[BenchRun]) -> list[str]:
    """Warnings (not errors) when the runs differ in what they measured."""
    notes = []
    seeds = {str(r.config.get("seeds")) for r in runs}
    if len(seeds) > 1:
        notes.append("The runs used different seeds (" + ", ".join(sorted(seeds)) + "): rows are not paired episodes.")
    steps = {str(r.config.get("max_steps")) for r in runs}
    if len(steps) > 1:
        notes.append("The runs used different step limits (" + ", ".join(sorted(steps)) + ").")
    unfinished = [r.path.name for r in runs if r.summary.get("finished") is None]
    if unfinished:
        notes.append("Still running (partial results): " + ", ".join(unfinished) + ".")
    return notes


def render_comparison(runs: Sequence[BenchRun], paper_tsv: Path | None = None) -> str:
    """The HTML page comparing ``runs`` (the first two give the Δ column)."""
    names, tasks, column, paper = _prepare(runs, paper_tsv)
    first, second = runs[0], runs[1]

    headline = []
    for name, run in zip(names, runs, strict=True):
        covered = [t for t in tasks if t in run.tasks]
        headline.append([
            tag("b", name), fmt_int(len(covered)), fmt_int(run.overall.get("episodes")), pct(run.mean(covered)),
            f"{run.at_least(covered, GOOD)} / {len(covered)}", f"{run.at_least(covered, 0.9)} / {len(covered)}",
            fmt(run.overall.get("mean_steps"), 2), fmt(run.overall.get("mean_seconds_per_step"), 3),
            stacked_bar(stage_items(run.overall.get("latency_ms")), small=True),
        ])
    if paper:
        on = [paper[t] for t in tasks if t in paper]
        headline.append([tag("b", f"paper ({column})"), fmt_int(len(on)), "—", pct(sum(on) / len(on) if on else None),
                         f"{sum(v >= GOOD for v in on)} / {len(on)}", f"{sum(v >= 0.9 for v in on)} / {len(on)}",
                         "—", "—", "—"])
    summary_table = table(["run", "tasks", "episodes", "mean success", f"tasks ≥ {GOOD}", "tasks ≥ 0.9",
                           "steps / episode", "s / step", "latency per step"], headline, numeric=[1, 2, 3, 4, 5, 6, 7])

    rows, classes = [], []
    for task in tasks:
        a, b = first.rate(task), second.rate(task)
        d = _diff(a, b)
        row: list[Any] = [task]
        for run in runs:
            row.append(pct(run.rate(task)))
        row += [Markup(tag("span", _diff_text(d), cls="diff-bad" if d is not None and d <= -0.1
                           else "diff-down" if d is not None and d < 0 else "muted")),
                pct(paper.get(task)) if paper else "—"]
        for run in runs:
            t = run.tasks.get(task, {})
            row.append(f"{fmt(t.get('mean_steps'), 1)} · {fmt(t.get('mean_seconds_per_step'), 2)} s")
        row.append(stacked_bar(stage_items(first.tasks.get(task, {}).get("latency_ms")), legend=False, small=True))
        reasons = _failure_reasons(first, task)
        row.append(Markup("<br>".join(esc(r) for r in reasons)) if reasons else Markup('<span class="muted">—</span>'))
        rows.append(row)
        classes.append("bad" if a is not None and a < GOOD else None)
    headers = ["task", *names, f"Δ {names[0]} − {names[1]} (pts)", f"paper ({column})",
               *[f"{n}: steps · s/step" for n in names], f"{names[0]}: latency", f"{names[0]}: failures"]
    task_table = table(headers, rows, row_classes=classes, numeric=list(range(1, len(runs) + 3)))

    notes = join(Markup(f'<div class="notice">{esc(n)}</div>') for n in _check_comparable(runs))
    sources = Markup("<ul>" + "".join(
        f"<li><b>{esc(n)}</b>: <code>{esc(r.path)}</code>, observer {esc(r.config.get('observer') or '—')}, "
        f"model {esc(r.config.get('model') or '—')}, seeds {esc(r.config.get('seeds') or '—')}, "
        f"max steps {esc(r.config.get('max_steps') or '—')}</li>" for n, r in zip(names, runs, strict=True)) + "</ul>")
    title = "caap benchmark comparison · " + " vs ".join(names)
    body = join([
        Markup(f'<header class="top"><div class="muted">caap benchmark comparison</div><h1>{esc(title)}</h1>'
               f"{notes}{sources}</header>"),
        Markup(f"<section><h2>Overall</h2>{summary_table}</section>"),
        Markup(f"<section><h2>Per task ({len(tasks)})</h2><p class=\"muted\">Rows where {esc(names[0])} is below "
               f"{GOOD} are marked. Δ: {esc(names[0])} minus {esc(names[1])} in percentage points.</p>"
               f"{task_table}</section>"),
        Markup("<footer>Written by caap report.</footer>"),
    ])
    return page(title, body)


def render_comparison_markdown(runs: Sequence[BenchRun], paper_tsv: Path | None = None) -> str:
    """The same comparison as a Markdown document (headline table, then one row per task)."""
    names, tasks, column, paper = _prepare(runs, paper_tsv)
    first, second = runs[0], runs[1]

    def rate(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"

    def mean(v: float | None) -> str:  # a third decimal: 0.965 is not the 0.97 a target asks
        return "—" if v is None else f"{v:.3f}"

    lines = ["| run | tasks | episodes | mean success | tasks ≥ 0.95 | tasks ≥ 0.9 | steps / episode | s / step | "
             "per step (ms) |", "|---|---|---|---|---|---|---|---|---|"]
    for name, run in zip(names, runs, strict=True):
        covered = [t for t in tasks if t in run.tasks]
        latency = ", ".join(f"{k} {v:.0f}" for k, v in stage_items(run.overall.get("latency_ms")))
        lines.append(f"| {name} | {len(covered)} | {run.overall.get('episodes', '—')} | {mean(run.mean(covered))} | "
                     f"{run.at_least(covered, GOOD)} | {run.at_least(covered, 0.9)} | "
                     f"{fmt(run.overall.get('mean_steps'), 2)} | {fmt(run.overall.get('mean_seconds_per_step'), 3)} | "
                     f"{latency or '—'} |")
    if paper:
        on = [paper[t] for t in tasks if t in paper]
        lines.append(f"| paper ({column}) | {len(on)} | — | {mean(sum(on) / len(on) if on else None)} | "
                     f"{sum(v >= GOOD for v in on)} | {sum(v >= 0.9 for v in on)} | — | — | — |")
    lines += ["", "| task | " + " | ".join(names) + " | Δ (pts) | paper | "
              + " | ".join(f"{n} steps · s/step" for n in names) + f" | {names[0]} failures |",
              "|---" * (len(runs) * 2 + 4) + "|"]
    for task in tasks:
        d = _diff(first.rate(task), second.rate(task))
        cells = [task, *[rate(r.rate(task)) for r in runs], _diff_text(d), rate(paper.get(task))]
        for run in runs:
            t = run.tasks.get(task, {})
            cells.append(f"{fmt(t.get('mean_steps'), 1)} · {fmt(t.get('mean_seconds_per_step'), 2)}")
        reasons = "; ".join(_failure_reasons(first, task)).replace("|", "\\|")
        cells.append(reasons or "—")
        lines.append("| " + " | ".join(cells) + " |")
    notes = _check_comparable(runs)
    sources = [f"- **{n}**: `{r.path.name}`, observer {r.config.get('observer')}, model {r.config.get('model')}, "
               f"seeds {r.config.get('seeds')}, max steps {r.config.get('max_steps')}"
               for n, r in zip(names, runs, strict=True)]
    return "\n".join(["# " + " vs ".join(names), "", *sources, *(["", *notes] if notes else []), "", *lines, ""])


def write_comparison(dirs: Sequence[str | Path], out: str | Path, *, names: Sequence[str] | None = None,
                     markdown: str | Path | None = None, paper_tsv: Path | None = None) -> list[Path]:
    """Write the comparison page to ``out`` (and the Markdown table to ``markdown``); returns the paths."""
    if names is not None and len(names) != len(dirs):
        raise ReportError(f"{len(names)} names for {len(dirs)} benchmark directories")
    runs = [load_run(d, names[i] if names else None) for i, d in enumerate(dirs)]
    written = [write_html(render_comparison(runs, paper_tsv), Path(out))]
    if markdown is not None:
        path = Path(markdown)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(render_comparison_markdown(runs, paper_tsv), encoding="utf-8")
            tmp.replace(path)
        except OSError as exc:
            raise ReportError(f"{path}: cannot write the Markdown table ({exc})") from None
        written.append(path)
    return written
