"""``caap report TRACE_DIR``: one self-contained HTML page for one agent run.

The page reads only what the trace writer (caap.agent.trace) left behind: run.json, steps.jsonl,
the step screenshots and summary.json. Traces are written while the run goes and may be cut short
by a crash, so every key is optional here: a page with gaps beats no page when debugging a failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from caap.act.dryrun import DRAG, KEYS, LEFT, MOVE, RIGHT
from caap.agent.trace import read_steps
from caap.geometry import centre
from caap.records import AGENT_SUCCEEDED, ActionRecord, EpisodeStatus, StepRecord, StepRecordError
from caap.report.draw import draw_elements, label_font
from caap.report.html import (
    Markup,
    ReportError,
    esc,
    fmt,
    fmt_cost,
    fmt_duration,
    fmt_int,
    fmt_ms,
    fmt_time,
    img,
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
from caap.taxonomy import ElementType, prompt_shows

__all__ = ["TraceData", "draw_actions", "load_trace", "render_trace", "screen_scale", "write_trace_report"]

GOOD_STATUSES = {s.value for s in AGENT_SUCCEEDED}
SOFT_STATUSES = {EpisodeStatus.STOPPED.value}
DENIED = (140, 140, 140)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _read_json(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    """A JSON object from ``path``; None when absent; a warning (not an error) when unreadable."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.append(f"{path.name} could not be read ({exc}); its details are missing below")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path.name} does not hold a JSON object; its details are missing below")
        return None
    return data


@dataclass
class TraceData:
    """What a trace directory holds, read leniently."""

    dir: Path
    run: dict[str, Any]
    steps: list[StepRecord]
    summary: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)


def load_trace(trace_dir: str | Path) -> TraceData:
    """Read a trace directory; raises ReportError (naming the path) when it is not a readable trace."""
    path = Path(trace_dir)
    if not path.exists():
        raise ReportError(f"{path}: no such trace directory")
    if not path.is_dir():
        raise ReportError(f"{path}: not a directory (expected a run trace directory)")
    steps_file = path / "steps.jsonl"
    if not steps_file.is_file():
        raise ReportError(f"{path}: not a run trace (no steps.jsonl)")
    warnings: list[str] = []
    try:
        records = read_steps(path)
        lines = [ln for ln in steps_file.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{steps_file}: cannot read the step records ({exc})") from None
    if lines and not records:
        raise ReportError(f"{steps_file}: not a step log (its first line is not JSON)")
    if len(lines) > len(records):
        # read_steps stops at the first broken line (a crash cuts off the last one).
        warnings.append(f"steps.jsonl: {len(lines) - len(records)} line(s) after step record {len(records)} "
                        "could not be read")
    steps: list[StepRecord] = []
    for line_no, record in enumerate(records, start=1):
        try:
            steps.append(StepRecord.from_json(record))
        except StepRecordError as exc:  # a record of another caap version, or damaged by hand
            warnings.append(f"steps.jsonl line {line_no}: not a step record ({exc}); skipped")
    run = _read_json(path / "run.json", warnings)
    if run is None and not (path / "run.json").exists():
        warnings.append("run.json is missing: the task and configuration are unknown")
    summary = _read_json(path / "summary.json", warnings)
    return TraceData(path, run or {}, steps, summary, warnings)


# --- elements and drawing -------------------------------------------------------------------------

@dataclass
class _Element:
    """An element record as drawn and tabulated; built from JSON that may be incomplete or odd."""

    id: int | None
    type: ElementType
    bbox: tuple[int, int, int, int] | None
    text: str | None = None
    subtype: str | None = None
    checked: bool | None = None
    focused: bool | None = None
    highlighted: bool | None = None
    expanded: bool | None = None
    score: float | None = None
    visible: bool = True

    @classmethod
    def from_json(cls, rec: Any) -> _Element | None:
        if not isinstance(rec, dict):
            return None
        try:
            etype = ElementType(str(rec.get("type")))
        except ValueError:
            etype = ElementType.UNKNOWN
        bbox = None
        raw = rec.get("bbox")
        if isinstance(raw, list | tuple) and len(raw) == 4 and all(num(v) is not None for v in raw):
            x1, y1, x2, y2 = (round(float(v)) for v in raw)
            bbox = (x1, y1, x2, y2) if x2 > x1 and y2 > y1 else None
        eid = rec.get("id")

        def flag(name: str) -> bool | None:
            value = rec.get(name)
            return value if isinstance(value, bool) else None

        text = rec.get("text")
        subtype = rec.get("subtype")
        return cls(
            id=eid if isinstance(eid, int) and not isinstance(eid, bool) else None, type=etype, bbox=bbox,
            text=None if text is None else str(text), subtype=None if subtype is None else str(subtype),
            checked=flag("checked"), focused=flag("focused"), highlighted=flag("highlighted"),
            expanded=flag("expanded"),
            score=num(rec.get("score")), visible=rec.get("visible") is not False,
        )


def screen_scale(width: int, height: int) -> float:
    """How much a screenshot is enlarged on the page: small benchmark screens (MiniWoB's 160x210) 3x,
    medium ones 2x, desktops as they are, very wide ones shrunk to keep the file small."""
    if width <= 400 and height <= 400:
        return 3.0
    if width <= 700 and height <= 700:
        return 2.0
    return 1.0 if width <= 1600 else 1600 / width


def _target(action: ActionRecord, elements: dict[int, _Element]) -> tuple[int, int] | None:
    """The image pixel an executed action aimed at: its recorded point, else the centre of its element
    (geometry's convention), else its x/y arguments."""
    point = action.point
    if point is not None and len(point) == 2:
        return round(point[0]), round(point[1])
    el = _Element.from_json(action.element)
    if el is not None and el.bbox is not None:
        return centre(el.bbox)
    args = action.args
    eid = args.get("element_id")
    if isinstance(eid, int) and eid in elements and elements[eid].bbox is not None:
        return centre(elements[eid].bbox)  # type: ignore[arg-type]
    x, y = num(args.get("x")), num(args.get("y"))
    if x is not None and y is not None:
        return round(x), round(y)
    return None


def _label(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, colour: tuple[int, int, int],
           size: tuple[int, int], font: Any, placed: list[tuple[int, int, int, int]]) -> None:
    """A label on a white background (dry-run style), kept inside the image and moved down (then up)
    past labels already placed, so several actions on one spot stay readable."""
    box = draw.textbbox((0, 0), text, font=font)
    w, h = round(box[2] - box[0]), round(box[3] - box[1])
    x = min(max(2, xy[0]), max(2, size[0] - w - 4))
    y0 = min(max(1, xy[1]), max(1, size[1] - h - 4))
    step = h + 6

    def rect(y: int) -> tuple[int, int, int, int]:
        return (x - 2, y - 1, x + w + 2, y + h + 3)

    def free(r: tuple[int, int, int, int]) -> bool:
        return all(r[2] < p[0] or r[0] > p[2] or r[3] < p[1] or r[1] > p[3] for p in placed)

    candidates = [y0 + k * step for k in range(12)] + [y0 - k * step for k in range(1, 12)]
    y = next((c for c in candidates if 1 <= c <= size[1] - h - 4 and free(rect(c))), y0)
    placed.append(rect(y))
    draw.rectangle(rect(y), fill=(255, 255, 255), outline=colour)
    draw.text((x - box[0], y - box[1] + 1), text, fill=colour, font=font)


def _short(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# The dry-run drawing's colours (caap.act.dryrun), per way an action shows (ActionSpec.mark).
_MARK_COLOURS: dict[str, tuple[int, int, int]] = {
    "click": LEFT, "double_click": LEFT, "right_click": RIGHT, "hover": MOVE, "press": DRAG, "drag": DRAG,
    "release": DRAG, "scroll": KEYS, "type": KEYS, "keys": KEYS, "wait": KEYS,
}


def draw_actions(canvas: Image.Image, actions: list[ActionRecord], elements: dict[int, _Element],
                 scale: float) -> Image.Image:
    """Draw a step's executed actions on an (already scaled) screenshot, numbered in order: a crosshair
    and ring at each click target (red left, blue right, double ring for double clicks), a ring for a
    hover, the drag path, an arrow for scrolling, typed text and keys at the pointer. Refused actions
    are grey. Colours follow the dry-run drawing (caap.act.dryrun)."""
    draw = ImageDraw.Draw(canvas)
    font = label_font(13 if scale >= 2 else 11)
    unit = max(3, round(2 * scale))
    width = 2
    half = int(scale // 2)  # the middle of the enlarged pixel

    def at(p: tuple[int, int]) -> tuple[int, int]:
        return round(p[0] * scale) + half, round(p[1] * scale) + half

    pointer: tuple[int, int] | None = None
    drag: tuple[int, int] | None = None
    placed: list[tuple[int, int, int, int]] = []
    for n, action in enumerate(actions, start=1):
        name, args, spec = action.name, action.args, action.spec
        mark = spec.mark if spec is not None else "click"  # an action no longer registered: its point
        refused = action.refused
        target = _target(action, elements)
        xy = at(target) if target is not None else None
        if mark == "none":
            continue  # no pixel: the actions table says it
        colour = DENIED if refused else _MARK_COLOURS[mark]
        tag_text = f"{n} {name}" + (f" ({action.outcome.value})" if refused else "")
        if mark == "scroll":
            xy = xy or (canvas.width // 2, canvas.height // 2)
            vec = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}.get(str(args.get("direction")),
                                                                                    (0, 1))
            end = (xy[0] + vec[0] * 6 * unit, xy[1] + vec[1] * 6 * unit)
            draw.line([xy, end], fill=colour, width=width)
            draw.polygon(_arrow_head(xy, end, 2 * unit), fill=colour)
            tag_text = f"{n} scroll {args.get('direction', '')} {args.get('amount', '')}".rstrip()
        elif mark == "release":
            xy = xy or drag or pointer
            if xy is None:
                continue
            draw.rectangle([xy[0] - unit, xy[1] - unit, xy[0] + unit, xy[1] + unit], fill=colour)
            drag = None
        elif mark in ("type", "keys", "wait"):
            if mark == "type":
                tag_text = f"{n} type {_short(str(args.get('string_to_type', '')))!r}"
            elif mark == "wait":
                tag_text = f"{n} wait {args.get('seconds', '')}s"
            elif "key" in args:
                tag_text = f"{n} key {args.get('key', '')}"
            else:  # a fixed combination (press_control_A): the action's own name says which
                tag_text = f"{n} {name.removeprefix('press_').replace('control_', 'ctrl+').lower()}"
            anchor = pointer or (4, canvas.height - 24)
            _label(draw, (anchor[0] + 2 * unit, anchor[1] + 2 * unit), tag_text, colour, canvas.size, font, placed)
            continue
        elif xy is None:
            continue
        elif mark == "press":
            draw.rectangle([xy[0] - unit, xy[1] - unit, xy[0] + unit, xy[1] + unit], outline=colour, width=width)
            drag = xy
        elif mark == "drag" and drag is not None:
            draw.line([drag, xy], fill=colour, width=width)
            draw.polygon(_arrow_head(drag, xy, 2 * unit), fill=colour)
            drag = xy
        else:
            arm, ring = 3 * unit, 2 * unit
            draw.line([(xy[0] - arm, xy[1]), (xy[0] + arm, xy[1])], fill=colour, width=width)
            draw.line([(xy[0], xy[1] - arm), (xy[0], xy[1] + arm)], fill=colour, width=width)
            draw.ellipse([xy[0] - ring, xy[1] - ring, xy[0] + ring, xy[1] + ring], outline=colour, width=width)
            if mark == "double_click":
                r2 = ring + unit
                draw.ellipse([xy[0] - r2, xy[1] - r2, xy[0] + r2, xy[1] + r2], outline=colour, width=width)
            if refused:
                draw.line([(xy[0] - ring, xy[1] - ring), (xy[0] + ring, xy[1] + ring)], fill=colour, width=width)
        if xy is not None:
            pointer = xy
            _label(draw, (xy[0] + 2 * unit + 2, xy[1] + unit), tag_text, colour, canvas.size, font, placed)
    return canvas


def _arrow_head(start: tuple[int, int], end: tuple[int, int], size: int) -> list[tuple[float, float]]:
    dx, dy = end[0] - start[0], end[1] - start[1]
    length = max(1e-6, (dx * dx + dy * dy) ** 0.5)
    ux, uy = dx / length, dy / length
    bx, by = end[0] - ux * size, end[1] - uy * size
    return [end, (bx - uy * size / 2, by + ux * size / 2), (bx + uy * size / 2, by - ux * size / 2)]


def _open_image(path: Path) -> Image.Image | None:
    try:
        with Image.open(path) as im:
            return im.convert("RGB")
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


# --- the page -------------------------------------------------------------------------------------

def _status_class(status: str | None) -> str:
    if status in GOOD_STATUSES:
        return "good"
    if status is None or status in SOFT_STATUSES:
        return "warn"
    return "bad"


def _state_marks(e: _Element) -> str:
    marks = []
    if e.checked is not None and prompt_shows(e.type, "checked", e.checked):  # as the prompt says it
        marks.append("checked" if e.checked else "unchecked")
    if e.focused:
        marks.append("focused")
    if e.highlighted:
        marks.append("highlighted")
    if e.expanded is not None:
        marks.append("expanded" if e.expanded else "collapsed")
    if not e.visible:
        marks.append("hidden")
    return ", ".join(marks)


def _origin(record: Any) -> str:
    """An element's provenance as ``added_by > changed_by ...``; a dash where none was kept."""
    if not isinstance(record, dict) or not isinstance(record.get("added_by"), str):
        return "—"
    changed = [c for c in _list(record.get("changed_by")) if isinstance(c, str)]
    return " > ".join([record["added_by"], *changed])


def _elements_table(elements: list[_Element], targets: set[int], provenance: list[Any] | None = None) -> Markup:
    rows, classes = [], []
    origins = provenance if provenance is not None and len(provenance) == len(elements) else None
    for i, e in enumerate(elements):
        c = centre(e.bbox) if e.bbox else None
        rows.append([
            "?" if e.id is None else e.id, e.type.value + (f" ({e.subtype})" if e.subtype else ""),
            tag("span", e.text, cls="muted") if e.text is None else e.text,
            "—" if e.bbox is None else ", ".join(str(v) for v in e.bbox),
            "—" if c is None else f"{c[0]}, {c[1]}", _state_marks(e), fmt(e.score, 2),
            *([_origin(origins[i])] if origins is not None else []),
        ])
        classes.append("target" if e.id in targets else ("hidden" if not e.visible else None))
    return table(["id", "type", "text", "bbox x1,y1,x2,y2", "centre", "state", "score",
                  *(["from (step that added it > steps that changed it)"] if origins is not None else [])], rows,
                 row_classes=classes, numeric=[0, 6])


def _observer_steps(step: StepRecord) -> Markup:
    """The observer's steps on this screen: time and what each did to the element list."""
    runs = [r for r in step.observe_steps if isinstance(r, dict)]
    if not runs:
        return Markup("")
    rows = [[r.get("name", "?"), r.get("stage", "?"), fmt(r.get("ms"), 1), r.get("added", 0), r.get("changed", 0),
             r.get("removed", 0)] for r in runs]
    steps = table(["step", "stage", "ms", "added", "changed", "removed"], rows, numeric=[2, 3, 4, 5])
    return Markup(f"<details><summary>Observer steps</summary>{steps}</details>")


def _args_text(args: Any) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False) if isinstance(v, str) else v}"
                         for k, v in args.items())
    return "" if args is None else str(args)


def _actions_table(actions: list[ActionRecord]) -> Markup:
    rows, classes = [], []
    for n, a in enumerate(actions, start=1):
        args = _args_text(a.args)
        action = Markup(f"<code>{esc(a.name)}</code>"
                        + (f'<br><span class="muted">{esc(args)}</span>' if args else ""))
        el = _Element.from_json(a.element)
        target = []
        if el is not None:
            text = f"element_{el.id if el.id is not None else '?'} {el.type.value}"
            target.append(esc(text + (f' "{_short(el.text, 30)}"' if el.text else "")))
        point = a.point
        if point is not None and len(point) == 2:
            target.append(f'<span class="muted">at ({esc(point[0])}, {esc(point[1])})</span>')
        outcome = esc(a.outcome_text())
        if a.reason and a.refused:
            outcome += f": {esc(a.reason)}"
        if a.changed_px is not None:
            outcome += f'<br><span class="muted">{esc(fmt_int(a.changed_px))} px changed</span>'
        times = [f"{k} {fmt_ms(ms)}" for k, ms in (("act", a.act_ms), ("settle", a.settle_ms)) if ms is not None]
        rows.append([n, action, Markup("<br>".join(target)), Markup(outcome),
                     Markup("<br>".join(esc(t) for t in times))])
        classes.append("bad" if a.refused else None)
    if not rows:
        return Markup('<p class="muted">No action was executed in this step.</p>')
    return table(["#", "action", "target", "outcome", "time"], rows, row_classes=classes, numeric=[0, 4])


def _errors_box(step: StepRecord) -> Markup:
    items = []
    if step.error:
        items.append(tag("li", Markup(f"<b>LLM error:</b> {esc(step.error)}")))
    for e in step.errors:
        if isinstance(e, dict):
            kind = e.get("kind") or e.get("code") or "error"
            action = f" (action {e['action']})" if e.get("action") else ""
            items.append(tag("li", Markup(f"<code>{esc(kind)}</code>{esc(action)}: {esc(e.get('message', ''))}")))
        else:
            items.append(tag("li", str(e)))
    if not items:
        return Markup("")
    return Markup(f'<div class="errors"><b>Errors</b><ul>{join(items)}</ul></div>')


def _response_block(step: StepRecord) -> Markup:
    resp = step.response
    if resp is None:
        return Markup('<p class="muted">No response was recorded for this step.</p>')
    parts = []
    content = resp.get("content")
    if content:
        parts.append(tag("pre", content, cls="response"))
    calls = [c for c in _list(resp.get("tool_calls")) if isinstance(c, dict)]
    if calls:
        parts.append(table(["tool call", "arguments"],
                           [[tag("code", c.get("name")), tag("code", c.get("arguments"))] for c in calls]))
    if not content and not calls:
        parts.append(Markup('<p class="muted">(empty answer)</p>'))
    usage = _dict(resp.get("usage"))
    meta = [("model", resp.get("model") or "—"), ("prompt tokens", fmt_int(usage.get("prompt_tokens"))),
            ("completion tokens", fmt_int(usage.get("completion_tokens"))),
            ("latency", fmt_duration(resp.get("latency_s"))),
            ("cost", fmt_cost(step.cost_usd if step.cost_usd is not None else resp.get("cost_usd")))]
    if resp.get("finish_reason"):
        meta.append(("finish reason", resp["finish_reason"]))
    if resp.get("retries"):
        meta.append(("retries", resp["retries"]))
    parts.append(key_values(meta))
    attempts = _list(resp.get("attempts"))
    if attempts:
        parts.append(Markup(f'<p class="muted">Retried after: {esc("; ".join(str(a) for a in attempts))}</p>'))
    return join(parts)


def _proposals_block(step: StepRecord) -> Markup:
    props = [p for p in step.proposals if isinstance(p, dict)]
    if not props:
        return Markup("")
    rows = [[p.get("number", ""), tag("code", p.get("name")), _args_text(p.get("args")), p.get("source", "")]
            for p in props]
    return Markup(f"<details><summary>What the model proposed ({len(props)})</summary>"
                  f"{table(['#', 'action', 'arguments', 'source'], rows)}</details>")


def _prompt_block(step: StepRecord) -> Markup:
    prompt = step.prompt
    if prompt is None or not prompt.text:
        return Markup('<p class="muted">No prompt was recorded for this step.</p>')
    info = [f"~{fmt_int(prompt.estimated_tokens)} tokens"]
    if prompt.trims:
        info.append(f"trimmed: {json.dumps(prompt.trims, ensure_ascii=False)}")
    if prompt.over_budget:
        info.append("over the token budget")
    # Closed by default: prompts are long and mostly the same from step to step.
    return Markup(f'<details class="prompt"><summary>Prompt ({esc(", ".join(info))})</summary>'
                  f'{tag("pre", prompt.text)}</details>')


def _shot_figure(trace: TraceData, step: StepRecord, elements: list[_Element]) -> Markup:
    n = step.step
    name = step.screenshot
    if not name and (trace.dir / f"step_{n:03d}.png").is_file():
        name = f"step_{n:03d}.png"
    if not name:
        return Markup('<div class="noshot">No screenshot for this step (screenshots were off or the step '
                      'failed before one was taken).</div>')
    path = trace.dir / Path(str(name)).name  # only files inside the trace directory
    shot = _open_image(path)
    if shot is None:
        return Markup(f'<div class="noshot">The screenshot {esc(path.name)} is missing or unreadable.</div>')
    scale = screen_scale(shot.width, shot.height)
    by_id = {e.id: e for e in elements if e.id is not None}
    visible = [e for e in elements if e.bbox is not None and e.visible]
    drawn = draw_elements(shot, visible, scale=scale, font=label_font(12 if scale >= 2 else 10), with_ids=True)
    drawn = draw_actions(drawn, step.actions, by_id, scale)
    zoom = f", shown at {scale:g}x" if scale != 1 else ""
    caption = f"{path.name}: {shot.width}x{shot.height} px{zoom}; boxes are the elements (id first), numbered " \
              "markers the executed actions"
    # The figure is as wide as its image, so a long caption wraps instead of pushing the details below.
    return Markup(f'<figure class="shot" style="width:{drawn.width}px">{img(drawn, f"step {n} screenshot")}'
                  f"<figcaption>{esc(caption)}</figcaption></figure>")


def _dry_run_figure(trace: TraceData, step: StepRecord) -> Markup:
    n = step.step
    path = trace.dir / f"step_{n:03d}_actions.png"
    shot = _open_image(path) if path.is_file() else None
    if shot is None:
        return Markup("")
    scale = screen_scale(shot.width, shot.height)
    if scale != 1:
        shot = shot.resize((round(shot.width * scale), round(shot.height * scale)),
                           Image.Resampling.NEAREST if scale > 1 else Image.Resampling.BOX)
    return Markup(f'<figure class="shot" style="width:{shot.width}px">{img(shot, f"step {n} dry-run OS events")}'
                  f"<figcaption>{esc(path.name)}: the OS events the dry run would have sent</figcaption></figure>")


def _step_section(trace: TraceData, step: StepRecord) -> Markup:
    n = step.step
    origins = step.provenance if len(step.provenance) == len(step.elements) else [None] * len(step.elements)
    kept = [(e, o) for e, o in zip((_Element.from_json(r) for r in step.elements), origins, strict=True)
            if e is not None]
    elements = [e for e, _ in kept]
    actions = step.actions
    targets = set()
    for a in actions:
        el = _Element.from_json(a.element)
        if el is not None and el.id is not None:
            targets.add(el.id)
        eid = a.args.get("element_id")
        if isinstance(eid, int):
            targets.add(eid)
    bad = bool(step.error or step.errors)
    names = ", ".join(a.name for a in actions) or "no action"
    when = f" · t = {step.t:.1f} s"
    timing_items = stage_items(step.timings_ms)
    total = sum(v for _, v in timing_items)
    head = (f'<h2>Step {esc(n)} <span class="muted">· {esc(names)}{esc(when)}</span>'
            + (' <span class="badge bad">error</span>' if bad else "") + "</h2>")
    info = [
        _errors_box(step),
        Markup("<h3>Actions</h3>"), _actions_table(actions),
        Markup("<h3>Response</h3>"), _response_block(step), _proposals_block(step),
        Markup(f"<h3>Timings <span class=\"muted\">({esc(fmt_ms(total))} in all)</span></h3>"),
        stacked_bar(timing_items),
        _observer_steps(step),
        _prompt_block(step),
    ]
    grid = (f'<div class="step-grid">{_shot_figure(trace, step, elements)}{_dry_run_figure(trace, step)}'
            f'<div class="info">{join(info)}</div></div>')
    provenance = [o for _, o in kept] if step.provenance else None
    el_table = (f"<h3>Elements ({len(elements)})</h3>{_elements_table(elements, targets, provenance)}" if elements
                else '<h3>Elements</h3><p class="muted">No elements were recorded for this step.</p>')
    cls = "step bad" if bad else "step"
    return Markup(f'<section class="{cls}" id="step-{esc(n)}">{head}{grid}{el_table}</section>')


def _model(trace: TraceData) -> str:
    models = []
    for s in trace.steps:
        m = _dict(s.response).get("model")
        if m and m not in models:
            models.append(str(m))
    if models:
        return ", ".join(models)
    return str(_dict(_dict(trace.run.get("config")).get("llm")).get("model") or "—")


def _header(trace: TraceData) -> Markup:
    run, summary, steps = trace.run, trace.summary, trace.steps
    task = run.get("task") or "(task unknown)"
    usage = [_dict(_dict(s.response).get("usage")) for s in steps]
    if summary is not None:
        status = str(summary.get("status") or "unknown")
        reason = summary.get("reason") or ""
        prompt_tokens, completion_tokens = summary.get("prompt_tokens"), summary.get("completion_tokens")
        cost, seconds, n_steps = summary.get("cost_usd"), summary.get("seconds"), summary.get("steps", len(steps))
        n_actions = len(_list(summary.get("actions"))) if "actions" in summary else None
        banner = Markup("")
    else:
        status, reason = "unfinished", "the run did not finish: there is no summary.json (it crashed, was killed, " \
                                       "or is still running)"
        prompt_tokens = sum(num(u.get("prompt_tokens")) or 0 for u in usage)
        completion_tokens = sum(num(u.get("completion_tokens")) or 0 for u in usage)
        costs = [s.cost_usd for s in steps]
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        last_t = steps[-1].t if steps else None
        seconds, n_steps = last_t, len(steps)
        n_actions = None
        banner = Markup(f'<div class="notice"><b>The run did not finish.</b> There is no summary.json: the run '
                        f"crashed, was killed, or is still running. {len(steps)} step(s) were recorded; the "
                        "totals below are summed from them.</div>")
    if n_actions is None:
        n_actions = sum(len(s.actions) for s in steps)
    badge = tag("span", status, cls=f"badge {_status_class(None if status == 'unfinished' else status)}")
    kv = [("steps", fmt_int(n_steps)), ("actions", fmt_int(n_actions)),
          ("seconds", fmt_duration(seconds)), ("prompt tokens", fmt_int(prompt_tokens)),
          ("completion tokens", fmt_int(completion_tokens)), ("cost", fmt_cost(cost)), ("model", _model(trace)),
          ("started", fmt_time(run.get("started")))]
    if run.get("dry_run"):
        kv.append(("mode", "dry run"))
    if run.get("caap_version"):
        kv.append(("caap", run["caap_version"]))
    warnings = "".join(f'<div class="notice">{esc(w)}</div>' for w in trace.warnings)
    # Where the time went, per step on average.
    totals: dict[str, float] = {}
    for s in steps:
        for k, v in stage_items(s.timings_ms):
            totals[k] = totals.get(k, 0.0) + v
    timing = Markup("")
    if totals and steps:
        mean = [(k, v / len(steps)) for k, v in totals.items()]
        timing = Markup(f"<h3>Mean time per step</h3>{stacked_bar(mean)}")
    return Markup(f'<header class="top"><div class="muted">caap run report · {esc(trace.dir.name)}</div>'
                  f"<h1>{esc(task)}</h1>"
                  + (f"<div>{badge} {esc(reason)}</div>" if reason else f"<div>{badge}</div>")
                  + f"{banner}{warnings}{key_values(kv)}{timing}</header>")


def _overview(trace: TraceData) -> Markup:
    rows, classes = [], []
    for s in trace.steps:
        n = s.step
        usage = _dict(_dict(s.response).get("usage"))
        names = ", ".join(a.name for a in s.actions) or "—"
        errs = len(s.errors) + (1 if s.error else 0)
        rows.append([Markup(f'<a href="#step-{esc(n)}">{esc(n)}</a>'), names, errs or "",
                     fmt_int(usage.get("prompt_tokens")), fmt_int(usage.get("completion_tokens")),
                     fmt_ms(s.timings_ms.get("llm")), fmt_cost(s.cost_usd, missing="—")])
        classes.append("bad" if errs else None)
    return Markup("<section><h2>Steps</h2>"
                  + table(["step", "actions", "errors", "prompt tok.", "completion tok.", "LLM", "cost"], rows,
                          row_classes=classes, numeric=[0, 2, 3, 4, 5, 6])
                  + "</section>")


def render_trace(trace_dir: str | Path) -> str:
    """The HTML page for one run trace (self-contained). Raises ReportError if it is not a trace."""
    trace = load_trace(trace_dir)
    sections = [_header(trace)]
    if trace.steps:
        sections.append(_overview(trace))
        sections += [_step_section(trace, s) for s in trace.steps]
    else:
        sections.append(Markup('<section><p class="muted">No steps were recorded.</p></section>'))
    nav_links = []
    for s in trace.steps:
        n = s.step
        bad = bool(s.error or s.errors)
        nav_links.append(tag("a", f"Step {n}", href=f"#step-{n}", cls="bad" if bad else None))
    nav = Markup("<b>Steps</b>" + join(nav_links)) if nav_links else None
    footer = Markup(f"<footer>Written by caap report from {esc(trace.dir.resolve())}.</footer>")
    title = f"caap · {trace.run.get('task') or trace.dir.name}"
    return page(title, join([*sections, footer]), nav=nav)


def write_trace_report(trace_dir: str | Path, out: str | Path | None = None) -> Path:
    """Render the trace and write it (default TRACE_DIR/report.html); returns the path written."""
    html_text = render_trace(trace_dir)
    return write_html(html_text, Path(out) if out is not None else Path(trace_dir) / "report.html")
