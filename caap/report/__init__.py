"""Self-contained HTML reports: one page per agent run (``render_trace``) and one per benchmark run
(``render_bench``), written next to what they describe and openable anywhere without a server."""

from caap.report.bench import is_bench_dir, load_paper_results, render_bench, write_bench_report
from caap.report.html import ReportError
from caap.report.trace import render_trace, write_trace_report

__all__ = ["ReportError", "is_bench_dir", "load_paper_results", "render_bench", "render_trace",
           "write_bench_report", "write_trace_report"]
