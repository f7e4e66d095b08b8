"""Render synthetic pages in the real Chromium on a virtual display, capture them with mss and
label them with the MiniWoB DOM labeller, into a caap dataset.

Two kinds of page share this machinery (the renderer, the capture, the resumable multi-process
loop): text screens for the reader (below) and generated widget UIs (``caap.data.synth.ui``). A
kind is a :class:`Job`: its dataset group, each seed's device scale factor (one browser per
factor: Chromium takes it per launch), how to start a renderer and how to make one page.

Text screens:

Same renderer, same capture and same labeller as the MiniWoB data (``caap.data.miniwob``), so
fonts, antialiasing, widget looks and label conventions match what the agent sees. One page per
seed: planned and measured in the browser (exact sizes, so nothing is squeezed), laid out, put into
a page that stays loaded (no navigation per page: much faster), checked in the browser (each
widget inside the region, on one line, not overflowing, not overlapping; a widget that is not is
removed), captured once the frame on screen is provably this page's (a colour marker just outside
the region changes with every render) and labelled. Every placed string must come back as the
text of exactly one label of the right type inside its widget; widgets whose labels disagree are
removed and the page is shot again, and a page that still disagrees is not written.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import queue
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from caap.data.format import Annotation, Dataset, Source, open_dataset
from caap.data.synth.page import MARKER_ID, Measured, Page, PagePlan, layout, page_document, plan_page
from caap.elements import Element

GROUP = "synth-text"  # the dataset group (and Source.task) of every synthetic text screen
MARKER_W = 12  # px captured right of the region for the freshness marker, cut off before saving


def rules_for_synth(size: tuple[int, int]) -> dict[str, Any]:
    """annotate.js rules: the generic set, plus list rows as rows (tabled_text, the active one
    highlighted), as MiniWoB's menus are labelled."""
    return {"region": list(size), "links": ".alink", "rows": ".srow"}


# --- characters ------------------------------------------------------------------------------------
def chars_from_dataset(root: str | Path) -> str:
    """Every character in the label texts of a caap dataset (for ``extra_chars``)."""
    seen: dict[str, None] = {}
    for _, ann in open_dataset(root):
        for e in ann.elements:
            for c in e.text or "":
                seen.setdefault(c, None)
    return "".join(seen)


def font_coverage() -> set[int] | None:
    """Code points some installed font can draw (None when that cannot be found out here)."""
    if shutil.which("fc-list") is None:
        return None
    try:
        from fontTools.ttLib import TTFont
    except ImportError:
        return None
    files = subprocess.run(["fc-list", "--format", "%{file}\n"], capture_output=True, text=True,
                           timeout=30).stdout.split("\n")
    covered: set[int] = set()
    for f in filter(None, files):
        with contextlib.suppress(Exception):  # a font fontTools cannot read draws nothing we count on
            covered |= set(TTFont(f, fontNumber=0, lazy=True).getBestCmap())
    return covered


def drawable(chars: str) -> tuple[str, str]:
    """(chars some font here can draw, chars none can): the latter would show as boxes."""
    covered = font_coverage()
    if covered is None:
        return chars, ""
    ok = "".join(c for c in chars if ord(c) in covered)
    return ok, "".join(c for c in chars if ord(c) not in covered)


# --- browser side ---------------------------------------------------------------------------------
# Measures every widget of a plan the way the page will show it (inside an invisible box), after
# fitting each text field's width to its value (+ its data-fit slack) so it never scrolls.
_MEASURE_JS = r"""(frags) => {
  const box = document.createElement('div');
  box.style.cssText = 'position:absolute;left:0;top:0;width:4000px;height:10px;visibility:hidden;';
  document.body.appendChild(box);
  const probe = document.createElement('span');
  probe.style.cssText = 'position:absolute;white-space:pre;visibility:hidden;';
  box.appendChild(probe);
  const out = [];
  for (const f of frags) {
    const w = document.createElement('div');
    w.className = 'sw';
    w.style.left = '0px'; w.style.top = '0px';
    w.innerHTML = f.replace(/__FIT(\d+)__/g, '40');
    box.appendChild(w);
    const fits = [];
    for (const input of w.querySelectorAll('input[data-fit]')) {
      const s = getComputedStyle(input);
      probe.style.font = s.font;
      probe.style.letterSpacing = s.letterSpacing;
      probe.textContent = input.type === 'password' ? '\u2022'.repeat(input.value.length) : input.value;
      const width = Math.ceil(probe.getBoundingClientRect().width) + parseInt(input.dataset.fit || '4', 10);
      input.style.width = width + 'px';
      fits.push(width);
    }
    const r = w.getBoundingClientRect();
    let x2 = r.right, y2 = r.bottom;
    for (const d of w.querySelectorAll('*')) {
      const q = d.getBoundingClientRect();
      if (q.width > 0 && q.height > 0) { x2 = Math.max(x2, q.right); y2 = Math.max(y2, q.bottom); }
    }
    out.push([Math.ceil(x2 - r.left), Math.ceil(y2 - r.top), fits]);
  }
  box.remove();
  return out;
}"""

# Shows a page: replaces the body, drops every widget that lies outside the region, wraps or
# overflows, or overlaps a kept one, sets the selection and focus, and returns after the frame.
_RENDER_JS = r"""async (args) => {
  const [W, H] = args.size;
  const sel = window.getSelection();
  sel.removeAllRanges();
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  document.body.innerHTML = args.body;
  const boxes = [], kept = [], dropped = [];
  const textRects = (root) => {
    const rects = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent.trim() || n.parentElement.closest('option, select')) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      rects.push([...range.getClientRects()].filter((q) => q.width > 0 && q.height > 0));
    }
    return rects;
  };
  for (const el of [...document.querySelectorAll('#region > .sw')]) {
    const r = el.getBoundingClientRect();
    let x1 = r.left, y1 = r.top, x2 = r.right, y2 = r.bottom;
    for (const d of el.querySelectorAll('*')) {
      const q = d.getBoundingClientRect();
      if (q.width > 0 && q.height > 0) {
        x1 = Math.min(x1, q.left); y1 = Math.min(y1, q.top); x2 = Math.max(x2, q.right); y2 = Math.max(y2, q.bottom);
      }
    }
    let ok = x1 >= 0 && y1 >= 0 && x2 <= W && y2 <= H;
    for (const rects of textRects(el)) {  // each text node on one line
      const tops = new Set(rects.map((q) => Math.round(q.top)));
      if (tops.size > 1 || Math.max(...rects.map((q) => q.top)) - Math.min(...rects.map((q) => q.top)) > 1) ok = false;
    }
    for (const c of el.querySelectorAll('input, button')) if (c.scrollWidth > c.clientWidth + 1) ok = false;
    if (ok) ok = boxes.every((b) => x2 <= b[0] || b[2] <= x1 || y2 <= b[1] || b[3] <= y1);
    const id = parseInt(el.dataset.w, 10);
    if (!ok) { el.remove(); dropped.push(id); continue; }
    boxes.push([x1, y1, x2, y2]);
    kept.push([id, [Math.floor(x1), Math.floor(y1), Math.ceil(x2), Math.ceil(y2)]]);
  }
  let selected = false, focused = false;
  if (args.selection) {
    const [id, a, b] = args.selection;
    const span = document.querySelector(`.sw[data-w="${id}"] .ssel`);
    if (span && span.firstChild) {
      sel.setBaseAndExtent(span.firstChild, a, span.firstChild, b);
      selected = !sel.isCollapsed;
    }
  }
  if (args.focus) {
    const input = document.querySelector(`.sw[data-w="${args.focus}"] input`);
    if (input) { input.focus(); focused = document.activeElement === input; }
  }
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {kept, dropped, selected, focused};
}"""

_REMOVE_JS = r"""async (args) => {
  for (const id of args.ids) document.querySelector(`.sw[data-w="${id}"]`)?.remove();
  const m = document.getElementById(args.marker_id);
  if (m) m.style.background = args.colour;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return true;
}"""


def _marker_colour(n: int) -> tuple[int, int, int]:
    """A colour that differs in every channel from the one before (the frame counter's)."""
    return (n * 67 + 13) & 255, (n * 131 + 71) & 255, (n * 29 + 151) & 255


def _utf16(text: str, i: int) -> int:
    return len(text[:i].encode("utf-16-le")) // 2


class SynthError(RuntimeError):
    """The renderer could not show or capture a page."""


# Shows a magenta square at the viewport's top-left corner: where it lands on the display is the
# page's origin in device pixels, at any scale factor.
_ORIGIN_JS = r"""(async (show) => {
  document.getElementById('__synth_origin')?.remove();
  if (show) {
    const m = document.createElement('div');
    m.id = '__synth_origin';
    m.style.cssText = 'position:fixed;left:0;top:0;width:16px;height:16px;z-index:2147483647;'
      + 'background:rgb(255,0,255);';
    document.documentElement.appendChild(m);
  }
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return true;
})"""


class Renderer:
    """One Xvfb, one Chromium app window showing a page that each synthetic page replaces, and an mss
    grab of the region plus the marker strip right of it.

    ``scale`` is Chromium's device scale factor (fixed per launch): a W×H CSS-px region is captured
    as round(W·scale)×round(H·scale) pixels. ``max_size`` is the largest region the renderer will
    be asked to show (:meth:`resize` picks the current one); the window and the display are made big
    enough for it."""

    def __init__(self, size: tuple[int, int] = (320, 240), *, display: str | None = None,
                 chromium: str = "/usr/bin/chromium", scale: float = 1.0,
                 max_size: tuple[int, int] | None = None) -> None:
        from caap.bench.browser import Chromium
        from caap.bench.display import VirtualDisplay

        self.size = size
        self.scale = scale
        self._tmp = Path(tempfile.mkdtemp(prefix="caap-synth-"))
        shell = self._tmp / "page.html"
        shell.write_text(page_document(), encoding="utf-8")  # a file page: about:blank refuses innerHTML
        w, h = max_size or size
        window = (max(500, w + MARKER_W + 40), max(400, h + 40))  # CSS px: Chromium scales the window
        self._display = None
        if display is None:
            # The default 1280x800 screen holds the text kind's windows; a scaled or large window
            # needs a screen as big as it is in device pixels (it opens at 50,50).
            need = (int((window[0] + 100) * scale) + 8, int((window[1] + 100) * scale) + 8)
            fits = need[0] <= 1280 and need[1] <= 800
            screen = VirtualDisplay() if fits else VirtualDisplay(max(1280, need[0]), max(800, need[1]))
            self._display = screen.start()
            display = self._display.name
        self.display = display
        # --force-device-scale-factor is among the browser's base flags (1); Chromium reads the last
        # copy of a repeated switch, so this one wins.
        extra = [f"--force-device-scale-factor={scale:g}"] if scale != 1 else []
        self.screen: Any = None
        try:
            self.browser = Chromium(shell.as_uri(), display=display, binary=chromium, window_size=window,
                                    extra_args=extra).start()
            self.origin = self._find_origin()
        except BaseException:
            self.close()
            raise
        self._park_pointer()
        self.resize(size)
        self._frames = 0
        self._expect: tuple[int, int, int] | None = None  # the marker colour of the latest render

    def _find_origin(self, timeout: float = 5.0) -> tuple[int, int]:
        """The display pixel of the viewport's top-left corner."""
        import numpy as np

        from caap.bench.browser import grab_display

        deadline = time.monotonic() + timeout
        self.browser.evaluate(f"({_ORIGIN_JS})(true)")
        try:
            side = int(16 * self.scale) - 1
            while True:
                mask = np.all(grab_display(self.display) == (255, 0, 255), axis=2)
                ys, xs = np.nonzero(mask)
                if len(xs) and xs.max() - xs.min() >= side and ys.max() - ys.min() >= side:
                    return int(xs.min()), int(ys.min())
                if time.monotonic() > deadline:
                    raise SynthError(f"the page never showed on display {self.display}")
                time.sleep(0.05)
        finally:
            with contextlib.suppress(Exception):
                self.browser.evaluate(f"({_ORIGIN_JS})(false)")

    def _park_pointer(self) -> None:
        """The X pointer off the window, so no widget is drawn hovered (its look would not match its label)."""
        if shutil.which("xdotool"):
            with contextlib.suppress(Exception):
                subprocess.run(["xdotool", "mousemove", "0", "0"], env={"DISPLAY": self.display}, timeout=10,
                               capture_output=True)

    def resize(self, size: tuple[int, int]) -> None:
        """Show and capture a ``size`` region (CSS px) from now on."""
        from caap.observe.capture.live import CaptureTarget, LiveScreen

        self.size = size
        w, h = size
        region = (*self.origin, round((w + MARKER_W) * self.scale), round(h * self.scale))
        if self.screen is None:
            self.screen = LiveScreen(CaptureTarget(kind="region", region=region), display=self.display)
        else:
            self.screen.target = CaptureTarget(kind="region", region=region)

    @property
    def pixel_size(self) -> tuple[int, int]:
        """The captured image's size for the current region."""
        return round(self.size[0] * self.scale), round(self.size[1] * self.scale)

    def measure(self, plan: PagePlan) -> list[Measured]:
        sizes = self.browser.evaluate(f"({_MEASURE_JS})({json.dumps([w.html for w in plan.widgets])})")
        return [Measured(int(w), int(h), tuple(int(f) for f in fits)) for w, h, fits in sizes]

    def marker(self) -> tuple[str, tuple[int, int, int]]:
        """The HTML of a new freshness marker (put it in the body being shown) and its colour."""
        self._frames += 1
        rgb = _marker_colour(self._frames)
        self._expect = rgb
        w, _ = self.size
        return (f'<div id="{MARKER_ID}" style="position:absolute;left:{w + 2}px;top:0;width:8px;height:8px;'
                f'background:rgb{rgb};"></div>'), rgb

    def show(self, page: Page) -> dict[str, Any]:
        """Render ``page``; returns the browser's check: kept [[id, box]], dropped ids, selected, focused."""
        marker, _ = self.marker()
        selection = None
        if page.selection is not None:
            wid, a, b = page.selection
            text = next(e.text for p in page.placed if p.widget.id == wid for e in p.widget.expected)
            selection = [wid, _utf16(text, a), _utf16(text, b)]
        args = {"size": list(self.size), "body": page.body + marker, "selection": selection, "focus": page.focus}
        return self.browser.evaluate(f"({_RENDER_JS})({json.dumps(args)})")

    def remove(self, ids: Iterable[int]) -> None:
        """Take widgets off the shown page (and repaint, with a new marker colour)."""
        self._frames += 1
        self._expect = _marker_colour(self._frames)
        args = {"ids": list(ids), "marker_id": MARKER_ID, "colour": f"rgb{self._expect}"}
        self.browser.evaluate(f"({_REMOVE_JS})({json.dumps(args)})")

    def capture(self, timeout: float = 3.0) -> Image.Image:
        """The region as mss grabs it, once the marker shows the current render and two grabs agree."""
        w, _ = self.size
        probe = (round((w + 5) * self.scale), round(3 * self.scale))  # inside the marker at any scale
        deadline = time.monotonic() + timeout
        last: bytes | None = None
        while True:
            frame = self.screen.capture()
            if frame.getpixel(probe) == self._expect:
                data = frame.tobytes()
                if data == last:
                    return frame.crop((0, 0, *self.pixel_size))
                last = data
            if time.monotonic() > deadline:
                raise SynthError(f"the page never reached the screen within {timeout:g}s (display {self.display})")
            time.sleep(0.004)

    def label(self, rules: dict[str, Any] | None = None) -> list[Element]:
        """The shown page's labels under annotate.js ``rules`` (default: the text screens' rules)."""
        from caap.bench.dom_labels import label_page

        return label_page(self.browser, rules if rules is not None else rules_for_synth(self.size))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if getattr(self, "screen", None) is not None:
                self.screen.close()
        with contextlib.suppress(Exception):
            if getattr(self, "browser", None) is not None:
                self.browser.close()
        if self._display is not None:
            self._display.close()
            self._display = None
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- checking labels against what was placed -------------------------------------------------------
@dataclass
class Check:
    matched: int = 0
    bad_widgets: set[int] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)  # "type 'text'" of placed strings without a label
    extra: list[str] = field(default_factory=list)  # labels no placed string explains
    stray: int = 0  # extra labels outside every widget
    attr_mismatches: int = 0


def _inside(box: Sequence[int], outer: Sequence[int], tol: int = 2) -> bool:
    return (box[0] >= outer[0] - tol and box[1] >= outer[1] - tol and box[2] <= outer[2] + tol
            and box[3] <= outer[3] + tol)


def check_labels(page: Page, kept: dict[int, tuple[int, int, int, int]], labels: list[Element]) -> Check:
    """Match every placed string (of a kept widget) to exactly one label: same type, same text,
    inside the widget's box."""
    out = Check()
    used: set[int] = set()
    for p in page.placed:
        box = kept.get(p.widget.id)
        if box is None:
            continue
        for exp in p.widget.expected:
            found = next((i for i, e in enumerate(labels) if i not in used and e.type.value == exp.type
                          and (e.text or "") == exp.text and _inside(e.bbox, box)), None)
            if found is None:
                out.bad_widgets.add(p.widget.id)
                out.missing.append(f"{exp.type} {exp.text!r}")
                continue
            used.add(found)
            out.matched += 1
            e = labels[found]
            for name in ("checked", "focused", "highlighted"):
                want = getattr(exp, name)
                if want is not None and getattr(e, name) is not None and bool(getattr(e, name)) != want:
                    out.attr_mismatches += 1
    for i, e in enumerate(labels):
        if i in used:
            continue
        out.extra.append(f"{e.type.value} {e.text!r}")
        owner = next((wid for wid, box in kept.items() if _inside(e.bbox, box)), None)
        if owner is None:
            out.stray += 1
        else:
            out.bad_widgets.add(owner)
    return out


# --- the generation loop ---------------------------------------------------------------------------
@dataclass
class SynthStats:
    pages: int = 0  # seeds rendered in this run
    screens: int = 0  # written
    elements: int = 0
    text_elements: int = 0  # elements with a non-empty text
    placed: int = 0  # strings placed (kept by the browser's check), on written and dropped screens
    matched: int = 0  # strings read back exactly in the end (after any removal)
    mismatched: int = 0  # placed strings whose label disagreed (first look)
    extra_labels: int = 0  # labels that no placed string explained (first look)
    widgets_dropped_by_check: int = 0  # outside, wrapped, overflowing or overlapping in the browser
    widgets_removed: int = 0  # removed after a label mismatch
    screens_dropped: int = 0  # still mismatched after the removal
    attr_mismatches: int = 0
    skipped: int = 0  # seeds already in the dataset
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)  # a few mismatches, for the report
    types: dict[str, int] = field(default_factory=dict)  # labels written, per element type

    def add(self, other: SynthStats) -> None:
        for f in fields(self):
            if f.name == "seconds":
                self.seconds = max(self.seconds, other.seconds)
            elif f.name == "examples":
                self.examples.extend(other.examples[: max(0, 20 - len(self.examples))])
            elif f.name == "types":
                for k, v in other.types.items():
                    self.types[k] = self.types.get(k, 0) + v
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def done_seeds(out: str | Path, group: str = GROUP) -> set[int]:
    labels = Path(out) / "labels" / group
    return {int(p.stem.rsplit("-", 1)[-1]) for p in labels.glob(f"{group}-*.json")} if labels.is_dir() else set()


def render_seed(renderer: Renderer, seed: int, extra_chars: str, stats: SynthStats
                ) -> tuple[Image.Image, list[Element], Page] | None:
    """Plan, measure, lay out, show, capture and label page ``seed``; None when its labels still
    disagree with what was placed after removing the widgets that disagreed."""
    plan = plan_page(seed, renderer.size, extra_chars)
    page = layout(plan, renderer.measure(plan))
    shown = renderer.show(page)
    kept = {int(wid): tuple(box) for wid, box in shown["kept"]}
    stats.widgets_dropped_by_check += len(shown["dropped"])
    stats.placed += sum(len(p.widget.expected) for p in page.placed if p.widget.id in kept)
    frame = renderer.capture()
    labels = renderer.label()
    check = check_labels(page, kept, labels)
    stats.mismatched += len(check.missing)
    stats.extra_labels += len(check.extra)
    if check.missing or check.extra:
        if len(stats.examples) < 20:
            stats.examples.append(f"seed {seed}: missing {check.missing[:3]} extra {check.extra[:3]}")
        if check.stray == 0 and check.bad_widgets:
            renderer.remove(check.bad_widgets)
            stats.widgets_removed += len(check.bad_widgets)
            for wid in check.bad_widgets:
                kept.pop(wid, None)
            frame = renderer.capture()
            labels = renderer.label()
            check = check_labels(page, kept, labels)
    stats.matched += check.matched
    stats.attr_mismatches += check.attr_mismatches
    if check.missing or check.extra:
        stats.screens_dropped += 1
        return None
    return frame, labels, page


# --- kinds of page ---------------------------------------------------------------------------------------
@dataclass
class Shot:
    """One rendered page: what is written to the dataset."""

    image: Image.Image
    labels: list[Element]
    note: str
    scale: float | None = None  # the device scale factor it was drawn at (None: 1)


class Job(Protocol):
    """A kind of synthetic page, as the generation loop drives it (picklable: workers get a copy)."""

    @property
    def group(self) -> str: ...

    def scale_of(self, seed: int) -> float: ...

    def open(self, scale: float) -> Renderer: ...

    def page(self, renderer: Renderer, seed: int, stats: SynthStats) -> Shot | None: ...


@dataclass(frozen=True)
class TextJob:
    """The text screens: one size, factor 1."""

    size: tuple[int, int] = (320, 240)
    extra_chars: str = ""
    group: str = GROUP

    def scale_of(self, seed: int) -> float:
        return 1.0

    def open(self, scale: float) -> Renderer:
        return Renderer(self.size)

    def page(self, renderer: Renderer, seed: int, stats: SynthStats) -> Shot | None:
        result = render_seed(renderer, seed, self.extra_chars, stats)
        if result is None:
            return None
        frame, labels, page = result
        return Shot(frame, labels, f"theme={page.theme}")


# --- the generation loop ---------------------------------------------------------------------------
def _run(out: str, seeds: list[int], job: Job, info: dict[str, Any],
         on_page: Callable[[int, bool, int], None] | None) -> SynthStats:
    dataset = Dataset.create(out, "synth", info)
    stats = SynthStats()
    started = time.perf_counter()
    have = done_seeds(out, job.group)
    todo = [s for s in seeds if s not in have]
    stats.skipped = len(seeds) - len(todo)
    # Grouped by scale factor (stable within a group): one browser per factor.
    todo.sort(key=job.scale_of)
    if todo:
        from caap.bench.browser import BrowserError

        renderer: Renderer | None = None
        scale = 0.0
        try:
            for seed in todo:
                if renderer is None or job.scale_of(seed) != scale:
                    if renderer is not None:
                        renderer.close()
                    scale = job.scale_of(seed)
                    renderer = job.open(scale)
                page_stats = SynthStats()
                try:
                    shot = job.page(renderer, seed, page_stats)
                except (BrowserError, SynthError):
                    # A crashed browser or a lost frame: one fresh browser and display, one more try.
                    renderer.close()
                    renderer = job.open(scale)
                    page_stats = SynthStats()
                    shot = job.page(renderer, seed, page_stats)
                stats.add(page_stats)
                stats.pages += 1
                n = 0
                if shot is not None:
                    ann = Annotation(image="", width=shot.image.width, height=shot.image.height,
                                     elements=shot.labels,
                                     source=Source(kind="synth", task=job.group, seed=seed, note=shot.note,
                                                   scale=shot.scale))
                    dataset.add(job.group, f"{job.group}-{seed}", shot.image, ann)
                    n = len(shot.labels)
                    stats.screens += 1
                    stats.elements += n
                    stats.text_elements += sum(1 for e in shot.labels if e.text)
                    for e in shot.labels:
                        stats.types[e.type.value] = stats.types.get(e.type.value, 0) + 1
                if on_page:
                    on_page(seed, shot is not None, n)
        finally:
            if renderer is not None:
                renderer.close()
    stats.seconds = time.perf_counter() - started
    return stats


def _worker(out: str, seeds: list[int], job: Job, info: dict[str, Any], events: Any) -> SynthStats:
    return _run(out, seeds, job, info, lambda seed, ok, n: events.put((seed, ok, n)))


def generate_synth(out: str | Path, seeds: Sequence[int], *, size: tuple[int, int] = (320, 240), workers: int = 1,
                   extra_chars: str = "", info: dict[str, Any] | None = None,
                   on_page: Callable[[int, bool, int], None] | None = None, job: Job | None = None) -> SynthStats:
    """Synthetic screens for ``seeds`` into the dataset ``out`` (created, or resumed: seeds
    already there are skipped): text screens of ``size``, or the pages of ``job`` (e.g.
    ``ui.UiJob``). ``workers`` processes each run their own Xvfb and Chromium; ``extra_chars`` join
    the characters every text page set must cover (those no installed font can draw are left
    out; a job brings its own). ``on_page(seed, written, n_elements)`` reports progress."""
    started = time.perf_counter()
    if job is None:
        extra_chars, _ = drawable(extra_chars)
        job = TextJob(size, extra_chars)
    info = dict(info or {})
    Dataset.create(out, "synth", info)
    seeds = list(seeds)
    if workers <= 1 or len(seeds) <= 1:
        stats = _run(str(out), seeds, job, info, on_page)
        stats.seconds = time.perf_counter() - started
        return stats
    shards = [seeds[i::workers] for i in range(workers) if seeds[i::workers]]
    ctx = mp.get_context("spawn")  # no inherited X connections or threads
    total = SynthStats()
    with ctx.Manager() as manager, ProcessPoolExecutor(len(shards), mp_context=ctx) as pool:
        events = manager.Queue()
        futures = [pool.submit(_worker, str(out), shard, job, info, events) for shard in shards]

        def drain(block: bool) -> bool:
            try:
                event = events.get(timeout=0.5) if block else events.get_nowait()
            except queue.Empty:
                return False
            if on_page:
                on_page(*event)
            return True

        while not all(f.done() for f in futures):
            drain(True)
        while drain(False):
            pass
        for f in futures:
            total.add(f.result())  # re-raises a worker's error here
    total.seconds = time.perf_counter() - started
    return total
