"""Labels from a page's DOM: every visible element of the screen in caap's taxonomy, as the page
itself knows it (``annotate.js`` run in the page, with per-task rules where the generic ones are
wrong: ``dom_rules``). The DOM oracle observes through it, and the dataset generators label their
screenshots with it; the agent's own observer never reads a DOM.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from caap.bench.browser import Chromium
from caap.bench.dom_rules import rules_for
from caap.bench.miniwob import TASK_REGION, MiniWoBEnv
from caap.elements import Element
from caap.geometry import area, intersection
from caap.taxonomy import ENABLED, INDETERMINATE, VALUE, ElementType, attributes_of

ANNOTATE_JS = (Path(__file__).with_name("annotate.js")).read_text(encoding="utf-8")


# --- labelling ---------------------------------------------------------------------------------
LATER_STATES = (ENABLED, INDETERMINATE, VALUE)


def _clean(raw: dict[str, Any]) -> tuple[Element, tuple[bool, bool]] | None:
    """The element of one label record and its run's DOM whitespace (before, after)."""
    spaces = (bool(raw.get("_space_before")), bool(raw.get("_space_after")))
    record = {k: v for k, v in raw.items() if v is not None and not k.startswith("_")}
    try:
        carried = attributes_of(record.get("type", ""))
    except ValueError:
        return None
    for name in LATER_STATES:  # said of every element; kept where the type carries it
        if name not in carried:
            record.pop(name, None)
    try:
        return Element.model_validate(record), spaces
    except ValueError:
        return None


def label_page(browser: Chromium, rules: dict[str, Any]) -> list[Element]:
    """The labels of the page now shown in ``browser`` under annotate.js ``rules``, line runs merged
    (shared by MiniWoB screens and the synthetic text screens of caap.data.synth)."""
    raw = browser.evaluate(f"({ANNOTATE_JS})({json.dumps(rules)})")
    cleaned = [c for c in (_clean(r) for r in raw) if c is not None]
    # Boxes are in device pixels under rules["scale"] (synthetic UIs): the joining gap scales with them.
    gap = round(5 * float(rules.get("scale", 1)))
    return merge_line_runs([e for e, _ in cleaned], [sp for _, sp in cleaned], max_gap=gap)


def annotate(env: MiniWoBEnv, popup: tuple[int, int, int, int] | None = None) -> list[Element]:
    """The visible elements of the current screen of ``env``'s open task."""
    assert env.browser is not None and env.task is not None
    elements = label_page(env.browser, rules_for(env.task, TASK_REGION))
    if popup is not None:
        elements = _with_popup(env, elements, popup)
    return _dedupe(elements)


LINE_TYPES = ("text", "tabled_text", "draggable_text")


def merge_line_runs(elements: list[Element], spaces: list[tuple[bool, bool]] | None = None,
                    max_gap: int = 5) -> list[Element]:
    """Join text runs that sit side by side on one line (a bold word inside a sentence is its own
    DOM text node but not a separate thing on screen): the detector sees one line of text.

    ``spaces`` (one per element) says whether the page has whitespace right before and after each
    run; two runs are joined with a space where the page has one between them or where they are at
    least 2 px apart. Without ``spaces`` only the pixel gap decides."""
    flags = list(spaces) if spaces is not None else [(False, False)] * len(elements)
    if len(flags) != len(elements):
        raise ValueError(f"spaces: {len(flags)} entries for {len(elements)} elements")
    out: list[Element] = []
    after: list[bool] = []  # whitespace after the last run merged into out[i]
    order = sorted(range(len(elements)), key=lambda i: (elements[i].bbox[1], elements[i].bbox[0]))
    for k in order:
        e, (space_before, space_after) = elements[k], flags[k]
        if e.type.value in LINE_TYPES:
            for i, prev in enumerate(out):
                if prev.type != e.type:
                    continue
                top, bottom = max(prev.bbox[1], e.bbox[1]), min(prev.bbox[3], e.bbox[3])
                overlap = bottom - top
                gap = e.bbox[0] - prev.bbox[2]
                if overlap >= 0.7 * min(prev.bbox[3] - prev.bbox[1], e.bbox[3] - e.bbox[1]) and -1 <= gap <= max_gap:
                    joiner = " " if gap >= 2 or after[i] or space_before else ""
                    merged: dict[str, object] = {
                        "bbox": (prev.bbox[0], min(prev.bbox[1], e.bbox[1]), max(prev.bbox[2], e.bbox[2]),
                                 max(prev.bbox[3], e.bbox[3])),
                        "text": f"{prev.text or ''}{joiner}{e.text or ''}",
                    }
                    if prev.highlighted is not None or e.highlighted is not None:
                        merged["highlighted"] = bool(prev.highlighted) or bool(e.highlighted)
                    out[i] = prev.model_copy(update=merged)
                    after[i] = space_after
                    break
            else:
                out.append(e)
                after.append(space_after)
        else:
            out.append(e)
            after.append(space_after)
    return out


def _dedupe(elements: list[Element]) -> list[Element]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for e in elements:
        key = (e.type, e.bbox)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def popup_rect(env: MiniWoBEnv) -> tuple[int, int, int, int] | None:
    """The open native <select> popup (a separate X window), in task-region pixels."""
    assert env.browser is not None
    main = env.browser.evaluate("[window.screenX, window.screenY, window.outerWidth, window.outerHeight]")
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", ""], capture_output=True, text=True,
                           env={"DISPLAY": env.display}, timeout=10).stdout.split()
    region = env.region
    for wid in found:
        geo = subprocess.run(["xdotool", "getwindowgeometry", "--shell", wid], capture_output=True, text=True,
                             env={"DISPLAY": env.display}, timeout=10).stdout
        v = dict(line.split("=", 1) for line in geo.split() if "=" in line)
        x, y, w, h = int(v["X"]), int(v["Y"]), int(v["WIDTH"]), int(v["HEIGHT"])
        if (w, h) == (main[2], main[3]) or w >= 600 or x < region.left - 5:
            continue  # the browser window itself, or the root-sized helper window
        return (x - region.left, y - region.top, x - region.left + w, y - region.top + h)
    return None


def _with_popup(env: MiniWoBEnv, elements: list[Element], popup: tuple[int, int, int, int]) -> list[Element]:
    """Rows of an open dropdown popup: the popup is drawn by the browser outside the page, so the
    DOM neither knows where its rows are nor that it covers what lies beneath it."""
    assert env.browser is not None
    options = env.browser.evaluate("""(() => { const s = document.activeElement;
        if (!s || s.tagName !== 'SELECT') return null;
        return {texts: [...s.options].map(o => o.text.replace(/\\s+/g, ' ').trim()),
                selected: s.selectedIndex}; })()""")
    w, h = TASK_REGION
    kept = [e for e in elements if intersection(e.bbox, popup) < 0.3 * area(e.bbox)]
    if not options or not options["texts"]:
        return kept
    n = min(len(options["texts"]), 20)  # Chromium shows at most 20 rows and scrolls the rest
    x1, y1, x2, y2 = popup
    row = (y2 - y1 - 2) / n
    for i, text in enumerate(options["texts"][:n]):
        top, bottom = round(y1 + 1 + i * row), round(y1 + 1 + (i + 1) * row)
        box = (max(0, x1 + 1), max(0, top), min(w, x2 - 1), min(h, bottom))
        if box[2] - box[0] >= 2 and box[3] - box[1] >= 4 and text:
            kept.append(Element(type=ElementType.TABLED_TEXT, bbox=box, text=text,
                                highlighted=i == options["selected"]))
    return kept
