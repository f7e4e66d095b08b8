"""`caap report`: a self-contained HTML page for a run trace or a benchmark directory, or several
benchmark directories side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from caap.cli.common import app, fail, out


@app.command()
def report(
    trace_dirs: Annotated[list[Path], typer.Argument(
        help="A run trace directory (with steps.jsonl), or a benchmark directory (with summary.json); two or "
             "more benchmark directories are compared task by task (the first two give the difference column).",
        show_default=False, metavar="DIR...")],
    out_file: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Where to write the page (default: report.html inside the directory; with several "
                            "directories, compare.html inside the first).")] = None,
    markdown: Annotated[Path | None, typer.Option(
        help="Comparison only: also write the per-task table as Markdown to this file.")] = None,
    name: Annotated[list[str] | None, typer.Option(
        "--name", help="Comparison only: a column name per directory, in order (default: each run's observer).")
    ] = None,
) -> None:
    """Write an HTML report of one agent run (or of a benchmark run): screenshots with the elements and
    actions drawn, prompts, answers, errors, timings and cost, all in one file that opens anywhere.
    Given several benchmark directories (e.g. the same tasks and seeds with --observer vision and
    --observer oracle), write one page that sets them side by side per task, with the paper's column."""
    from caap.report import ReportError, is_bench_dir, write_bench_report, write_comparison, write_trace_report

    try:
        if len(trace_dirs) > 1:
            not_bench = [str(d) for d in trace_dirs if not is_bench_dir(d)]
            if not_bench:
                fail(f"only benchmark directories (with summary.json) can be compared: {', '.join(not_bench)}")
            target = out_file or trace_dirs[0] / "compare.html"
            written = write_comparison(trace_dirs, target, names=name or None, markdown=markdown)
            for path in written:
                out.print(str(path), highlight=False, soft_wrap=True)
            return
        if markdown is not None or name:
            fail("--markdown and --name apply to a comparison of two or more benchmark directories")
        if is_bench_dir(trace_dirs[0]):
            path = write_bench_report(trace_dirs[0], out_file)
        else:
            path = write_trace_report(trace_dirs[0], out_file)
    except ReportError as exc:
        fail(str(exc))
    out.print(str(path), highlight=False, soft_wrap=True)
