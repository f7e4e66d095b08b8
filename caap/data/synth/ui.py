"""Generated widget UIs (``caap dataset synth --kind ui``): one page per seed, rendered in the real
Chromium on Xvfb, labelled from the DOM by annotate.js, in captured-image pixels.

A page's size (CSS px, from the requested sizes) and device scale factor (from the requested
factors) follow from its seed; so does everything on it: a theme (``themes``), bars (menu bar,
header, toolbar, footer), a sidebar, a main area filled with widget blocks (``widgets``) and
sometimes popups over it (an open menu, a context menu, a dialog, a calendar). The page is built
in one go: Python writes the HTML, the browser lays it out and drops what does not fit its box (a
block that would be cut by its card or the window), places the popups, focuses a field, and the
labeller reads the result (annotate.js with ``rules_for_ui``: the widget roles, boxes × factor,
nothing cut or covered). The capture waits for the frame that shows this page (the marker strip
right of the region).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from caap.data.synth.generate import Renderer, Shot, SynthError, SynthStats, drawable
from caap.data.synth.strings import StringGen
from caap.data.synth.themes import make_theme, stylesheet
from caap.data.synth.widgets import BLOCKS, Builder, icon_rules

GROUP = "synth-ui"
# The page generator's version: bumped whenever the same seed draws a different page (new blocks or
# looks), so a dataset is not silently resumed with pages of another generation (see ``UiJob.info``).
GENERATOR_VERSION = 8
SCALES = (1.0, 1.25, 1.5, 2.0)  # the device scale factors pages are rendered at
MIN_SIZE, MAX_SIZE = (320, 240), (1920, 1080)
# Window sizes people use, drawn more often than the random ones.
COMMON_SIZES = ((320, 240), (360, 640), (400, 300), (480, 320), (640, 480), (800, 600), (1024, 768),
                (1280, 720), (1280, 800), (1366, 768), (1440, 900), (1600, 900), (1920, 1080))


class SizeSpecError(ValueError):
    """Sizes or scale factors that cannot be used; the message says why."""


@dataclass(frozen=True)
class SizeRange:
    """Region sizes in CSS px: one size, or every size between two corners."""

    lo: tuple[int, int]
    hi: tuple[int, int]


def _size(text: str, spec: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().replace("×", "x").split("x"))
    except ValueError:
        raise SizeSpecError(f"--sizes {spec!r}: {text!r} is not WIDTHxHEIGHT") from None
    return w, h


def parse_sizes(spec: str) -> tuple[SizeRange, ...]:
    """``"320x240,1920x1080"`` (these sizes) or ``"320x240-1920x1080"`` (anything between), mixed."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        lo_text, _, hi_text = part.partition("-")
        lo = _size(lo_text, spec)
        hi = _size(hi_text, spec) if hi_text else lo
        if hi[0] < lo[0] or hi[1] < lo[1]:
            raise SizeSpecError(f"--sizes {spec!r}: {part} runs backwards")
        for w, h in (lo, hi):
            if not (MIN_SIZE[0] <= w <= MAX_SIZE[0] and MIN_SIZE[1] <= h <= MAX_SIZE[1]):
                raise SizeSpecError(f"--sizes {spec!r}: {w}x{h} is outside {MIN_SIZE[0]}x{MIN_SIZE[1]} to "
                                    f"{MAX_SIZE[0]}x{MAX_SIZE[1]}")
        out.append(SizeRange(lo, hi))
    if not out:
        raise SizeSpecError(f"--sizes {spec!r}: no size")
    return tuple(out)


def parse_scales(spec: str) -> tuple[float, ...]:
    """``"1,1.25,1.5,2"``: device scale factors out of :data:`SCALES`."""
    out: list[float] = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        try:
            value = float(part)
        except ValueError:
            raise SizeSpecError(f"--scales {spec!r}: {part!r} is not a number") from None
        if value not in SCALES:
            raise SizeSpecError(f"--scales {spec!r}: {part} is not one of {', '.join(f'{s:g}' for s in SCALES)}")
        if value not in out:
            out.append(value)
    if not out:
        raise SizeSpecError(f"--scales {spec!r}: no factor")
    return tuple(out)


def check_whole_pixels(sizes: tuple[SizeRange, ...], scales: tuple[float, ...]) -> None:
    """A fixed size must be a whole number of pixels at every factor (ranges are drawn that way)."""
    for r in sizes:
        if r.lo != r.hi:
            continue
        for s in scales:
            if any(v * s != int(v * s) for v in r.lo):
                raise SizeSpecError(f"--sizes: {r.lo[0]}x{r.lo[1]} at factor {s:g} is not a whole number of "
                                    "pixels (use multiples of 4)")


def parse_blocks(spec: str) -> tuple[tuple[str, float], ...]:
    """``"dots,checkgrid:2,form:0.2"``: the main area's block kinds to draw and their weights (1 when
    left out); kinds not named are not drawn. Names are ``widgets.BLOCKS``' keys."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, weight = part.partition(":")
        name = name.strip()
        if name not in BLOCKS:
            raise SizeSpecError(f"--blocks {spec!r}: unknown block kind {name!r}; known kinds: "
                                f"{', '.join(sorted(BLOCKS))}")
        try:
            value = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise SizeSpecError(f"--blocks {spec!r}: weight {weight!r} of {name} is not a number") from None
        if not value > 0 or value == float("inf"):
            raise SizeSpecError(f"--blocks {spec!r}: weight of {name} must be a positive number")
        out[name] = value
    if not out:
        raise SizeSpecError(f"--blocks {spec!r}: no block kind; known kinds: {', '.join(sorted(BLOCKS))}")
    return tuple(out.items())


def page_setup(seed: int, sizes: tuple[SizeRange, ...], scales: tuple[float, ...]) -> tuple[tuple[int, int], float]:
    """Page ``seed``'s region size (CSS px) and scale factor."""
    rng = random.Random(f"synth-ui-setup:{seed}")
    scale = rng.choice(scales)
    r = rng.choice(sizes)
    if r.lo == r.hi:
        return r.lo, scale
    inside = [s for s in COMMON_SIZES if r.lo[0] <= s[0] <= r.hi[0] and r.lo[1] <= s[1] <= r.hi[1]]
    if inside and rng.random() < 0.4:
        return rng.choice(inside), scale
    # Multiples of 4: whole pixels at 1.25 and 1.5 too.
    w = rng.randint(-(-r.lo[0] // 4), r.hi[0] // 4) * 4
    h = rng.randint(-(-r.lo[1] // 4), r.hi[1] // 4) * 4
    return (w, h), scale


def largest(sizes: tuple[SizeRange, ...]) -> tuple[int, int]:
    return max(r.hi[0] for r in sizes), max(r.hi[1] for r in sizes)


def rules_for_ui(size: tuple[int, int], scale: float) -> dict[str, Any]:
    """annotate.js rules for a generated UI page: the generic ones plus the opt-in widget rules."""
    return {
        "region": list(size), "scale": scale, "widgets": True, "whole": True, "covers": ".u-pop",
        "links": ".alink", "rows": "[role=menuitem], [role=option]", "icons": icon_rules(), "draggable": ".u-drag",
    }


# --- the page -----------------------------------------------------------------------------------------
@dataclass
class UiPage:
    seed: int
    size: tuple[int, int]
    scale: float
    theme: str
    body: str  # what goes into <body> (a <style> and the region #ur)
    focus: float | None  # which text field gets focus (a fraction of those shown), if any
    blocks: list[str]  # the main area's block kinds, in order
    overlay: str = "none"  # what is drawn over the page (before the layout pass may drop it)

    @property
    def note(self) -> str:
        return (f"ui {self.size[0]}x{self.size[1]}@{self.scale:g} theme={self.theme} overlay={self.overlay} "
                f"blocks={','.join(self.blocks)}")


def build_page(seed: int, size: tuple[int, int], scale: float = 1.0, extra_chars: str = "",
               blocks: tuple[tuple[str, float], ...] | None = None) -> UiPage:
    """The HTML of page ``seed`` at ``size`` (deterministic; the scale only goes into the record).
    ``blocks`` (from :func:`parse_blocks`): the main area's block kinds and weights instead of
    ``BLOCKS``' own."""
    rng = random.Random(f"synth-ui:{seed}")
    theme = make_theme(rng)
    b = Builder(rng, StringGen(f"synth-ui:{seed}", extra_chars), theme)
    w, h = size
    parts = [f"<style>{stylesheet(theme, size)}</style>", '<div id="ur" class="u-box">']
    pops: list[str] = []
    small = w < 480 or h < 320
    # At most one thing over the page: a menu open under its title, a context menu, a dialog (modal:
    # the page behind it dimmed and not labelled) or a calendar open under its date field.
    overlay = rng.choices(("none", "menu", "context", "dialog", "calendar"), weights=(5, 2, 1, 1.8, 1))[0]
    if rng.random() < (0.15 if small else 0.35):
        bar, ids = b.menubar()
        if overlay == "menu":
            opened = rng.choice(ids)
            bar = bar.replace(f'id="{opened}" class="u-mb u-fit"', f'id="{opened}" class="u-mb u-fit active"')
            pops.append(f'<div class="u-pop" data-anchor="{opened}">{b.menu()}</div>')
        parts.append(bar)
    if rng.random() < (0.25 if small else 0.5):
        parts.append(b.header())
    if rng.random() < (0.15 if small else 0.35):
        parts.append(b.toolbar())
    parts.append('<div class="u-body">')
    if w >= 560 and rng.random() < 0.5:
        side_w = max(140, min(320, round(w * rng.uniform(0.16, 0.28))))
        parts.append(f'<div class="u-side u-box" style="width:{side_w}px">{b.sidebar_content()}</div>')
    main_area = w * h * 0.7
    n = max(1, min(40, round(main_area / (theme.size ** 2 * 170) * 1.4)))
    names = [k for k, _ in blocks] if blocks else list(BLOCKS)
    weights = [w for _, w in blocks] if blocks else [BLOCKS[k][1] for k in names]
    kinds = rng.choices(names, weights=weights, k=n)
    parts.append('<div class="u-main u-box">' + "".join(BLOCKS[k][0](b) for k in kinds) + "</div>")
    if w >= 1100 and rng.random() < 0.3:
        parts.append(f'<div class="u-side u-box" style="width:{rng.randint(200, 320)}px">{b.sidebar_content()}</div>')
    parts.append("</div>")
    if rng.random() < (0.15 if small else 0.3):
        parts.append(b.footer())
    if overlay == "context":
        pops.append(f'<div class="u-pop" data-place="{rng.random():.3f},{rng.random():.3f}">{b.menu()}</div>')
    elif overlay == "dialog":
        modal = rng.random() < 0.6
        if modal:
            pops.append('<div class="u-back"></div>')
        place = f"{rng.uniform(0.3, 0.7):.3f},{rng.uniform(0.2, 0.6):.3f}" if modal else \
            f"{rng.random():.3f},{rng.random():.3f}"
        pops.append(f'<div class="u-pop{" u-modal" if modal else ""}" data-place="{place}">{b.dialog()}</div>')
    elif overlay == "calendar":
        ids = re.findall(r'id="(f\d+)" type="date"', "".join(parts))
        if ids:
            pops.append(f'<div class="u-pop" data-anchor="{rng.choice(ids)}"><div class="u-dlg">{b.calendar()}'
                        f"</div></div>")
    parts += pops
    parts.append("</div>")
    focus = rng.random() if rng.random() < 0.25 else None
    return UiPage(seed, size, scale, theme.name, "".join(parts), focus, kinds, overlay if pops else "none")


# Lays the page out: replaces the body, drops blocks that do not fit their box (trimming their rows
# first), places the popups, focuses a field, and returns after the frame is drawn.
_RENDER_JS = r"""async (args) => {
  const [W, H] = args.size;
  window.getSelection().removeAllRanges();
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  document.body.innerHTML = args.body;
  // HTML has no markup for a box neither ticked nor clear: the page marks it and the property sets it.
  for (const el of document.querySelectorAll('#ur input[data-mixed]')) el.indeterminate = true;
  await document.fonts.ready;
  const inner = (el) => {
    const r = el.getBoundingClientRect();
    const x = r.left + el.clientLeft, y = r.top + el.clientTop;
    return [x, y, x + el.clientWidth, y + el.clientHeight];
  };
  const fits = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return true;
    const box = el.parentElement.closest('.u-box');
    const c = box ? inner(box) : [0, 0, W, H];
    if (r.left < Math.max(0, c[0]) - 0.5 || r.top < Math.max(0, c[1]) - 0.5 ||
        r.right > Math.min(W, c[2]) + 0.5 || r.bottom > Math.min(H, c[3]) + 0.5) return false;
    const scroller = el.matches('.u-scroll, textarea, select');
    if (el.clientWidth && el.scrollWidth > el.clientWidth + 1 && !scroller) return false;
    return true;
  };
  let dropped = 0, trimmed = 0;
  for (const el of [...document.querySelectorAll('#ur .u-fit')]) {
    if (!el.isConnected || fits(el)) continue;
    const trims = [...el.querySelectorAll('.u-trim')];
    while (trims.length > 1 && !fits(el)) { trims.pop().remove(); trimmed++; }
    if (!fits(el)) { el.remove(); dropped++; }
  }
  for (const pop of [...document.querySelectorAll('#ur .u-pop')]) {
    const r = pop.getBoundingClientRect();
    let x, y;
    if (pop.dataset.anchor) {
      const a = document.getElementById(pop.dataset.anchor);
      if (!a) { pop.remove(); continue; }
      const q = a.getBoundingClientRect();
      x = q.left; y = q.bottom + 2;
      if (y + r.height > H) y = q.top - 2 - r.height;
    } else if (pop.dataset.place) {
      const [fx, fy] = pop.dataset.place.split(',').map(Number);
      x = fx * (W - r.width); y = fy * (H - r.height);
    } else {
      continue;  // placed by its own style
    }
    x = Math.min(x, W - r.width);
    if (x < 0 || y < 0 || y + r.height > H) { pop.remove(); continue; }
    pop.style.left = Math.round(x) + 'px';
    pop.style.top = Math.round(y) + 'px';
  }
  if (!document.querySelector('#ur .u-modal')) document.querySelector('#ur .u-back')?.remove();
  let focused = false;
  if (args.focus !== null) {
    const fields = [...document.querySelectorAll('#ur input[type=text], #ur input[type=search], ' +
      '#ur input[type=email], #ur input[type=password], #ur input[type=number], #ur textarea')]
      .filter((e) => e.getClientRects().length);
    if (fields.length) {
      const f = fields[Math.floor(args.focus * fields.length)];
      f.focus({preventScroll: true});
      focused = document.activeElement === f;
    }
  }
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {dropped, trimmed, focused};
}"""


def show(renderer: Renderer, page: UiPage) -> dict[str, Any]:
    """Render ``page`` in ``renderer`` (resized to it); the layout pass's counts."""
    if page.scale != renderer.scale:
        raise SynthError(f"page {page.seed} is for factor {page.scale:g}, the renderer runs at {renderer.scale:g}")
    renderer.resize(page.size)
    marker, _ = renderer.marker()
    args = {"size": list(page.size), "body": page.body + marker, "focus": page.focus}
    return renderer.browser.evaluate(f"({_RENDER_JS})({json.dumps(args)})")


def render_page(renderer: Renderer, page: UiPage) -> Shot:
    """Show, label and capture ``page``: labels in captured-image pixels, all inside the image."""
    show(renderer, page)
    labels = renderer.label(rules_for_ui(page.size, page.scale))
    image = renderer.capture()
    w, h = image.size
    outside = [e for e in labels if e.bbox[0] < 0 or e.bbox[1] < 0 or e.bbox[2] > w or e.bbox[3] > h]
    if outside:  # the labeller clips to the region: a box outside it is a bug, never data
        raise SynthError(f"page {page.seed}: {len(outside)} labels outside the {w}x{h} image, e.g. {outside[0]}")
    return Shot(image, labels, page.note, page.scale)


@dataclass(frozen=True)
class UiJob:
    """Generated widget UIs over a space of sizes and scale factors (see :func:`page_setup`)."""

    sizes: tuple[SizeRange, ...] = (SizeRange(MIN_SIZE, MAX_SIZE),)
    scales: tuple[float, ...] = SCALES
    extra_chars: str = ""
    group: str = GROUP
    blocks: tuple[tuple[str, float], ...] | None = None  # block kinds and weights (parse_blocks); None: all

    def info(self) -> dict[str, Any]:
        """What a dataset's generator record says about this job (with the generator's version)."""
        return {"generator_version": GENERATOR_VERSION,
                "blocks": ",".join(f"{k}:{w:g}" for k, w in self.blocks) if self.blocks else "all"}

    def setup(self, seed: int) -> tuple[tuple[int, int], float]:
        return page_setup(seed, self.sizes, self.scales)

    def scale_of(self, seed: int) -> float:
        return self.setup(seed)[1]

    def open(self, scale: float) -> Renderer:
        return Renderer(MIN_SIZE, scale=scale, max_size=largest(self.sizes))

    def page(self, renderer: Renderer, seed: int, stats: SynthStats) -> Shot | None:
        size, scale = self.setup(seed)
        return render_page(renderer, build_page(seed, size, scale, self.extra_chars, self.blocks))


def ui_job(sizes: str = "320x240-1920x1080", scales: str = "1,1.25,1.5,2", extra_chars: str = "",
           blocks: str | None = None) -> UiJob:
    """A job from the command line's ``--sizes``, ``--scales`` and ``--blocks`` (SizeSpecError when
    they cannot be used)."""
    size_ranges, factors = parse_sizes(sizes), parse_scales(scales)
    check_whole_pixels(size_ranges, factors)
    kinds = parse_blocks(blocks) if blocks is not None else None
    return UiJob(size_ranges, factors, drawable(extra_chars)[0], blocks=kinds)


__all__ = ["GENERATOR_VERSION", "GROUP", "SCALES", "SizeRange", "SizeSpecError", "UiJob", "UiPage", "build_page",
           "page_setup", "parse_blocks", "parse_scales", "parse_sizes", "render_page", "rules_for_ui", "ui_job"]
