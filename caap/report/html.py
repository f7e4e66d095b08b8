"""Shared pieces of the HTML reports: the page skeleton and its CSS, escaping, images as data URIs,
tables, number formats and stacked bars.

Every report is one self-contained file: CSS inline, images base64-embedded, no scripts, no
external URLs, so it can be mailed, archived next to a trace, or opened from a CI artifact.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image


class ReportError(RuntimeError):
    """A report cannot be written (missing or unreadable input); the message names the path."""


class Markup(str):
    """Text that is already HTML. Everything else handed to the helpers here is escaped."""

    __slots__ = ()


def esc(value: Any) -> str:
    """HTML for any value: Markup as is, None as empty, everything else escaped (quotes included)."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return ""
    return html.escape(str(value), quote=True)


def tag(name: str, content: Any = "", **attrs: Any) -> Markup:
    """``<name attr="...">content</name>``; attribute values are escaped, ``cls`` becomes ``class``,
    attributes whose value is None or False are left out, True gives a bare attribute."""
    parts = [name]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        key = "class" if key == "cls" else key.rstrip("_").replace("_", "-")
        parts.append(key if value is True else f'{key}="{esc(value)}"')
    return Markup(f"<{' '.join(parts)}>{esc(content)}</{name}>")


def join(items: Iterable[Any], sep: str = "") -> Markup:
    return Markup(sep.join(esc(i) for i in items))


# --- images ---------------------------------------------------------------------------------------

# Above this many pixels a screenshot goes in as JPEG: a full-HD PNG per step would make a report of a
# long run tens of megabytes, while small screens stay lossless (crisp 1-px lines and text).
_PNG_MAX_PIXELS = 1_200_000


def data_uri(image: Image.Image) -> str:
    """The image as a ``data:`` URI (PNG, or JPEG for very large images)."""
    buf = io.BytesIO()
    if image.width * image.height > _PNG_MAX_PIXELS:
        image.convert("RGB").save(buf, format="JPEG", quality=85)
        mime = "image/jpeg"
    else:
        image.save(buf, format="PNG", optimize=False)
        mime = "image/png"
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def img(image: Image.Image, alt: str, **attrs: Any) -> Markup:
    """An ``<img>`` with the image embedded and its natural size given (so the layout does not jump)."""
    extra = "".join(f' {k.replace("_", "-")}="{esc(v)}"' for k, v in attrs.items() if v is not None)
    return Markup(f'<img src="{data_uri(image)}" alt="{esc(alt)}" width="{image.width}" '
                  f'height="{image.height}"{extra}>')


# --- tables ---------------------------------------------------------------------------------------

def table(headers: Sequence[Any], rows: Iterable[Sequence[Any]], *, cls: str | None = None,
          row_classes: Sequence[str | None] | None = None, numeric: Iterable[int] = ()) -> Markup:
    """A table; cells are escaped unless Markup. ``numeric`` column indexes are right-aligned."""
    num = set(numeric)

    def cell(i: int, value: Any, name: str) -> str:
        return f'<{name} class="num">{esc(value)}</{name}>' if i in num else f"<{name}>{esc(value)}</{name}>"

    head = "".join(cell(i, h, "th") for i, h in enumerate(headers))
    body = []
    for n, row in enumerate(rows):
        rc = row_classes[n] if row_classes is not None and n < len(row_classes) else None
        attr = f' class="{esc(rc)}"' if rc else ""
        body.append(f"<tr{attr}>" + "".join(cell(i, v, "td") for i, v in enumerate(row)) + "</tr>")
    attr = f' class="{esc(cls)}"' if cls else ""
    return Markup(f'<div class="scroll"><table{attr}><thead><tr>{head}</tr></thead>'
                  f"<tbody>{''.join(body)}</tbody></table></div>")


def key_values(pairs: Iterable[tuple[str, Any]]) -> Markup:
    """A compact definition grid of label/value pairs (values escaped unless Markup)."""
    items = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>" for k, v in pairs)
    return Markup(f'<dl class="kv">{items}</dl>')


# --- numbers --------------------------------------------------------------------------------------

def num(value: Any) -> float | None:
    """A finite float, or None for anything else (missing keys, strings, NaN, booleans)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def fmt(value: Any, digits: int = 2, *, missing: str = "—") -> str:
    """A number with ``digits`` decimals (integers without), or ``missing``."""
    n = num(value)
    if n is None:
        return missing
    return f"{round(n):,}" if isinstance(value, int) else f"{n:,.{digits}f}"


def fmt_int(value: Any, *, missing: str = "—") -> str:
    n = num(value)
    return missing if n is None else f"{round(n):,}"


def fmt_cost(value: Any, *, missing: str = "unknown") -> str:
    n = num(value)
    if n is None:
        return missing
    return f"${n:.4f}" if n < 10 else f"${n:,.2f}"


def fmt_ms(value: Any) -> str:
    n = num(value)
    if n is None:
        return "—"
    return f"{n / 1000:.2f} s" if n >= 1000 else f"{n:.0f} ms" if n >= 10 else f"{n:.1f} ms"


def fmt_time(epoch: Any) -> str:
    n = num(epoch)
    if n is None:
        return "—"
    try:
        return datetime.fromtimestamp(n, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "—"


def fmt_duration(seconds: Any) -> str:
    n = num(seconds)
    if n is None:
        return "—"
    if n < 1:
        return f"{n * 1000:.0f} ms"
    if n < 60:
        return f"{n:.1f} s"
    minutes, secs = divmod(round(n), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


# --- latency bars ---------------------------------------------------------------------------------

# One colour per pipeline stage, the same in every report.
STAGES = ("capture", "detect", "read", "observe", "prompt", "llm", "act", "settle")
STAGE_COLOURS = {
    "capture": "#8c6d31", "detect": "#e6550d", "read": "#fd8d3c", "observe": "#f16913",
    "observe (other)": "#f16913", "prompt": "#756bb1",
    "llm": "#3182bd", "act": "#31a354", "settle": "#74c476",
}


def stage_items(timings: Any) -> list[tuple[str, float]]:
    """(stage, ms) in pipeline order, known stages first, then any others; non-numbers dropped."""
    if not isinstance(timings, dict):
        return []
    values = {k: num(timings.get(k)) for k in STAGES}
    observe, parts = values.get("observe"), [values[k] for k in ("detect", "read") if values[k] is not None]
    if observe is not None and parts:
        # Detect and read are measured inside observe (capture before it): show only the rest of it.
        inner = sum(values[k] or 0.0 for k in ("detect", "read"))
        values["observe"] = max(observe - inner, 0.0)
    out = [("observe (other)" if k == "observe" and parts else k, values[k]) for k in STAGES]
    out += [(str(k), num(v)) for k, v in timings.items() if k not in STAGES]
    return [(k, v) for k, v in out if v is not None and v >= 0]


def stacked_bar(items: Sequence[tuple[str, float]], *, total: float | None = None, legend: bool = True,
                small: bool = False) -> Markup:
    """A horizontal bar split into one segment per (stage, ms); widths are shares of ``total`` (default
    the sum). A hover title gives each segment's value."""
    total = total if total and total > 0 else sum(v for _, v in items)
    if not items or total <= 0:
        return Markup('<span class="muted">—</span>')
    segs = []
    for name, value in items:
        share = 100.0 * value / total
        if share <= 0:
            continue
        colour = STAGE_COLOURS.get(name, "#999")
        segs.append(f'<span style="width:{share:.2f}%;background:{colour}" title="{esc(name)}: '
                    f'{esc(fmt_ms(value))}"></span>')
    bar = f'<div class="bar{" small" if small else ""}">{"".join(segs)}</div>'
    if not legend:
        return Markup(bar)
    keys = "".join(
        f'<span class="key"><i style="background:{STAGE_COLOURS.get(n, "#999")}"></i>{esc(n)} {esc(fmt_ms(v))}</span>'
        for n, v in items)
    return Markup(f'{bar}<div class="legend">{keys}</div>')


# --- the page -------------------------------------------------------------------------------------

CSS = """
:root { --fg:#1d2330; --muted:#6b7280; --line:#e3e6ec; --bg:#f6f7f9; --card:#fff; --accent:#2563eb;
        --bad:#b91c1c; --badbg:#fef2f2; --good:#15803d; --goodbg:#f0fdf4; --warn:#a16207; --warnbg:#fefce8; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
       color:var(--fg); background:var(--bg); }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
h1 { font-size:20px; margin:0 0 6px; } h2 { font-size:17px; margin:0 0 10px; } h3 { font-size:14px; margin:14px 0 6px; }
.layout { display:flex; align-items:flex-start; }
nav.index { position:sticky; top:0; flex:0 0 150px; max-height:100vh; overflow-y:auto; padding:12px 8px;
            border-right:1px solid var(--line); background:var(--card); font-size:13px; }
nav.index b { display:block; margin:0 4px 6px; color:var(--muted); font-weight:600; }
nav.index a { display:block; padding:2px 6px; border-radius:4px; color:var(--fg); }
nav.index a:hover { background:var(--bg); text-decoration:none; }
nav.index a.bad { color:var(--bad); } nav.index a.bad::after { content:" ⚠"; }
main { flex:1; min-width:0; padding:16px 20px 40px; max-width:1400px; }
section, header.top { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px;
                      margin-bottom:16px; }
section { scroll-margin-top:8px; }
section.bad { border-left:4px solid var(--bad); }
.muted { color:var(--muted); }
.kv { display:flex; flex-wrap:wrap; gap:6px 22px; margin:8px 0 0; }
.kv div { min-width:90px; } .kv dt { color:var(--muted); font-size:12px; } .kv dd { margin:0; font-weight:600; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600;
         background:#e5e7eb; color:var(--fg); }
.badge.good { background:var(--goodbg); color:var(--good); border:1px solid #bbf7d0; }
.badge.bad { background:var(--badbg); color:var(--bad); border:1px solid #fecaca; }
.badge.warn { background:var(--warnbg); color:var(--warn); border:1px solid #fde68a; }
.notice { padding:8px 12px; border-radius:6px; margin:10px 0; background:var(--warnbg); border:1px solid #fde68a; }
.errors { background:var(--badbg); border:1px solid #fecaca; color:var(--bad); border-radius:6px; padding:8px 12px;
          margin:10px 0; }
.errors ul { margin:4px 0 0; padding-left:18px; } .errors code { color:var(--bad); }
.step-grid { display:flex; flex-wrap:wrap; gap:16px; align-items:flex-start; }
.step-grid > .shot { flex:0 0 auto; max-width:100%; margin:0; } .step-grid > .info { flex:1 1 380px; min-width:0; }
.shot img { display:block; max-width:100%; height:auto; border:1px solid var(--line); border-radius:4px;
            image-rendering:pixelated; }
.shot figcaption { color:var(--muted); font-size:12px; margin-top:4px; }
.noshot { width:240px; height:120px; display:flex; align-items:center; justify-content:center; text-align:center;
          border:1px dashed #c7ccd6; border-radius:4px; color:var(--muted); padding:8px; }
.scroll { overflow-x:auto; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:3px 8px; text-align:left; vertical-align:top; }
th { background:#f1f3f6; font-weight:600; position:sticky; top:0; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
tr.target td { background:#fff7ed; } tr.hidden td { color:var(--muted); }
tr.bad td { background:var(--badbg); }
pre { background:#f8fafc; border:1px solid var(--line); border-radius:6px; padding:8px 10px; white-space:pre-wrap;
      word-break:break-word; font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; margin:6px 0;
      max-height:480px; overflow:auto; }
code { font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
details { margin:8px 0; } summary { cursor:pointer; color:var(--accent); font-weight:600; }
.bar { display:flex; height:14px; width:100%; max-width:640px; border-radius:3px; overflow:hidden; background:#eef0f3; }
.bar.small { height:9px; max-width:160px; min-width:100px; }
.bar span { display:block; height:100%; }
.legend { display:flex; flex-wrap:wrap; gap:4px 14px; font-size:12px; color:var(--muted); margin-top:4px; }
.legend i { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:4px; vertical-align:-1px; }
.diff-up { color:var(--good); font-weight:600; } .diff-down { color:var(--bad); font-weight:600; }
.diff-bad { color:#fff; background:var(--bad); border-radius:3px; padding:0 4px; font-weight:600; }
.metrics { display:grid; grid-template-columns:repeat(auto-fit,minmax(210px,1fr)); gap:12px; }
.metric { border:1px solid var(--line); border-radius:8px; padding:10px 12px; }
.metric .label { color:var(--muted); font-size:12px; } .metric .pair { display:flex; gap:16px; align-items:baseline; }
.metric .ours { font-size:22px; font-weight:700; } .metric .paper { font-size:15px; color:var(--muted); }
ul.failures { margin:0; padding-left:16px; font-size:12px; }
ul.tasks { columns:4 180px; margin:0; padding-left:18px; }
footer { color:var(--muted); font-size:12px; margin-top:10px; }
"""


def page(title: str, body: Any, *, nav: Any = None) -> str:
    """The whole document: inline CSS, an optional sticky index on the left, the body."""
    nav_html = f'<nav class="index">{esc(nav)}</nav>' if nav else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head>"
            f"<body><div class=\"layout\">{nav_html}<main>{esc(body)}</main></div></body></html>\n")


def write_html(html_text: str, out: Path) -> Path:
    """Write atomically, so a browser never shows a half-written report."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(html_text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        raise ReportError(f"{out}: cannot write the report ({exc.strerror or exc})") from None
    return out
