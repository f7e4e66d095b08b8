"""Self-contained HTML reports: one page per agent run (``render_trace``) and one per benchmark run
(``render_bench``), and benchmark runs side by side (``write_comparison``), written next to what they
describe and openable anywhere without a server."""

from caap.report.bench import is_bench_dir, load_paper_results, render_bench, write_bench_report
from caap.report.compare import write_comparison
from caap.report.html import ReportError
from caap.report.trace import render_trace, write_trace_report

__all__ = ["ReportError", "is_bench_dir", "load_paper_results", "render_bench", "render_trace",
           "write_bench_report", "write_comparison", "write_trace_report"]
