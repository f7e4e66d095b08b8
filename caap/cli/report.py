"""`caap report`: a self-contained HTML page for a run trace or a benchmark directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from caap.cli.common import app, fail, out


@app.command()
def report(
    trace_dir: Annotated[Path, typer.Argument(
        help="A run trace directory (with steps.jsonl), or a benchmark directory (with summary.json).",
        show_default=False, metavar="TRACE_DIR")],
    out_file: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Where to write the page (default: report.html inside the directory).")] = None,
) -> None:
    """Write an HTML report of one agent run (or of a benchmark run): screenshots with the elements and
    actions drawn, prompts, answers, errors, timings and cost, all in one file that opens anywhere."""
    from caap.report import ReportError, is_bench_dir, write_bench_report, write_trace_report

    try:
        if is_bench_dir(trace_dir):
            written = write_bench_report(trace_dir, out_file)
        else:
            written = write_trace_report(trace_dir, out_file)
    except ReportError as exc:
        fail(str(exc))
    out.print(str(written), highlight=False, soft_wrap=True)
