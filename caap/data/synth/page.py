"""One synthetic UI page per seed: absolutely positioned, non-overlapping widgets in a W×H region,
each showing one generated string on one line.

A page is planned first (:func:`plan_page`: panels, colours, fonts, widgets and their strings),
then measured (by the browser in ``generate``, or by :func:`estimate_sizes` without one), then laid
out (:func:`layout`) into the HTML that is rendered. Every widget records the labels the DOM
labeller (``caap/bench/annotate.js``) must return for it, so the labels can be checked
against what was placed.

Two looks: "miniwob" (MiniWoB's own page: 160-px columns with the yellow query bar, 10-16 px
Arial, Chromium's default buttons and fields) and "app" (panels in random legible colour pairs,
the font families Chromium resolves on our display, 9-18 px, styled widgets).
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from caap.data.synth.strings import StringGen

Box = tuple[int, int, int, int]

# Families as written in CSS, and what Chromium resolves them to here (fc-match plus Chromium's own
# generic defaults): Arial/Helvetica/sans-serif -> Liberation Sans, Times/serif -> Liberation Serif,
# Courier -> Liberation Mono, monospace -> DejaVu Sans Mono; CJK falls back to Droid Sans Fallback.
FAMILIES: dict[str, float] = {
    "Arial": 6, "Helvetica": 2, "sans-serif": 2, "Times": 2, "serif": 1, "Courier": 1.5, "monospace": 1,
    "'DejaVu Sans'": 3, "'DejaVu Serif'": 1.5, "'Droid Sans Fallback'": 0.7,
}
MINIWOB_FAMILIES: dict[str, float] = {"Arial": 8, "Helvetica": 1, "sans-serif": 1}
# Rough advance per character as a fraction of the font size, for estimates without a browser.
_ADVANCE = {"Courier": 0.62, "monospace": 0.62, "'DejaVu Sans'": 0.62, "'DejaVu Serif'": 0.62, "Times": 0.5,
            "serif": 0.5}

STATIC_CSS = """
html, body { margin: 0; padding: 0; background: #555; }
#region { position: absolute; left: 0; top: 0; overflow: hidden; }
.sp { position: absolute; }
.sw { position: absolute; white-space: nowrap; }
.sw * { white-space: nowrap; }
.alink { text-decoration: underline; color: blue; cursor: pointer; }
.slist { list-style: none; margin: 0; padding: 0; }
.srow { padding: 3px 1em 3px .4em; border: 1px solid transparent; }
.slist .ui-state-active { border: 1px solid #003eff; background: #007fff; color: #fff; }
table.st { border-collapse: collapse; }
table.st td, table.st th { padding: 2px 5px; text-align: left; }
"""

MARKER_ID = "__synth_marker"


# --- records --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Expected:
    """A label the DOM labeller must return for a widget (attributes left None are not checked)."""

    type: str
    text: str
    checked: bool | None = None
    focused: bool | None = None
    highlighted: bool | None = None


@dataclass
class Widget:
    id: int
    kind: str
    panel: int
    html: str  # inside the widget's wrapper; input widths are __FIT<i>__ placeholders
    expected: list[Expected]
    est: tuple[int, int]  # estimated (w, h) in px
    fits: list[int] = field(default_factory=list)  # estimated input widths for the placeholders
    select: tuple[int, int] | None = None  # (start, end) of a DOM text selection in its .ssel span


@dataclass
class Panel:
    box: Box
    bg: str
    fg: str
    mode: str  # "rows", "scatter" or "stack"
    pad: int


@dataclass
class PagePlan:
    seed: int
    size: tuple[int, int]
    theme: str
    panels: list[Panel]
    widgets: list[Widget]
    focus: int | None = None  # id of the widget whose field has focus


@dataclass
class Placed:
    widget: Widget
    box: Box  # the widget's wrapper in region pixels (x2, y2 exclusive)


@dataclass
class Page:
    seed: int
    size: tuple[int, int]
    theme: str
    body: str  # the region's HTML: what goes into <body>
    placed: list[Placed]
    focus: int | None
    selection: tuple[int, int, int] | None  # (widget id, start, end)

    @property
    def html(self) -> str:
        """The whole page as one HTML document."""
        return page_document(self.body)

    def expected(self) -> list[tuple[int, Expected, Box]]:
        return [(p.widget.id, e, p.box) for p in self.placed for e in p.widget.expected]


def page_document(body: str = "") -> str:
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>synth</title>"
            f"<style>{STATIC_CSS}</style></head><body>{body}</body></html>\n")


# --- colours ----------------------------------------------------------------------------------------
def _lum(rgb: tuple[int, int, int]) -> float:
    def chan(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * chan(r) + 0.7152 * chan(g) + 0.0722 * chan(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG contrast ratio (1 to 21)."""
    la, lb = sorted((_lum(a), _lum(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _rgb(hexcolour: str) -> tuple[int, int, int]:
    h = hexcolour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _colour(rng: random.Random, light: bool, saturation: float = 0.35) -> tuple[int, int, int]:
    """A random light or dark colour, mostly greyish, sometimes tinted."""
    import colorsys

    hue = rng.random()
    sat = rng.random() * saturation if rng.random() < 0.7 else rng.random()
    val = rng.uniform(0.86, 1.0) if light else rng.uniform(0.05, 0.4)
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return round(r * 255), round(g * 255), round(b * 255)


def pair(rng: random.Random, dark_bg: bool = False, min_contrast: float = 4.5) -> tuple[str, str]:
    """(background, foreground): a random but legible colour pair (WCAG contrast >= min_contrast)."""
    for _ in range(50):
        bg = _colour(rng, light=not dark_bg, saturation=0.3)
        fg = _colour(rng, light=dark_bg, saturation=0.8)
        if contrast(bg, fg) >= min_contrast:
            return _hex(bg), _hex(fg)
    return ("#202020", "#f0f0f0") if dark_bg else ("#ffffff", "#000000")


def fg_on(rng: random.Random, bg: str, min_contrast: float = 4.5, saturation: float = 0.8) -> str:
    """A legible text colour on ``bg``."""
    dark_bg = _lum(_rgb(bg)) < 0.3
    for _ in range(50):
        fg = _colour(rng, light=dark_bg, saturation=saturation)
        if contrast(_rgb(bg), fg) >= min_contrast:
            return _hex(fg)
    return "#ffffff" if dark_bg else "#000000"


def link_colour(rng: random.Random, bg: str) -> str:
    """Blue-ish, as links are, legible on ``bg``."""
    dark_bg = _lum(_rgb(bg)) < 0.3
    options = ("#8ab4f8", "#9ecbff", "#7fb2ff", "#a0c4ff") if dark_bg else ("#0000ee", "#0000ff", "#1a0dab",
                                                                            "#0645ad", "#551a8b", "#0b57d0")
    for c in rng.sample(options, len(options)):
        if contrast(_rgb(c), _rgb(bg)) >= 4.5:
            return c
    return fg_on(rng, bg)


# --- the plan -----------------------------------------------------------------------------------------
@dataclass
class _Style:
    family: str
    size: int
    bold: bool
    italic: bool
    fg: str
    bg: str

    def css(self, colour: bool = True) -> str:
        s = f"font-family:{self.family};font-size:{self.size}px;"
        if self.bold:
            s += "font-weight:bold;"
        if self.italic:
            s += "font-style:italic;"
        if colour:
            s += f"color:{self.fg};"
        return s


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _advance(family: str, bold: bool) -> float:
    return _ADVANCE.get(family, 0.56) * (1.08 if bold else 1.0)


def text_width(text: str, style: _Style | tuple[str, int, bool]) -> int:
    """Estimated width of ``text`` in px (a generous guess; the browser measures for real)."""
    family, size, bold = (style.family, style.size, style.bold) if isinstance(style, _Style) else style
    adv = _advance(family, bold)
    w = 0.0
    for c in text:
        if ord(c) >= 0x2E80:
            w += size * 1.0
        elif c in "mwMW@%—":
            w += size * 0.9
        elif c in "iljtf.,:;'|!I ":
            w += size * 0.3
        else:
            w += size * adv
    return int(w) + 2


def _line(size: int) -> int:
    return round(size * 1.2) + 2


class _Planner:
    def __init__(self, seed: int, size: tuple[int, int], extra_chars: str) -> None:
        self.seed = seed
        self.size = size
        self.rng = random.Random(f"synth-page:{seed}")
        self.strings = StringGen(seed, extra_chars)
        self.widgets: list[Widget] = []
        self.panels: list[Panel] = []

    # --- helpers --------------------------------------------------------------------------------
    def _family(self, families: dict[str, float]) -> str:
        names = list(families)
        return self.rng.choices(names, weights=[families[n] for n in names])[0]

    def _max_len(self, width: int, style: _Style, extra: int = 0) -> int:
        """How many characters of an average string fit ``width`` px, capped at 40."""
        per = style.size * _advance(style.family, style.bold)
        return max(1, min(40, int((width - extra) / per)))

    def _text(self, profile: str, width: int, style: _Style, extra: int = 0, cap: int = 40) -> str:
        n = min(cap, self._max_len(width, style, extra))
        # Mostly short strings, some long: long ones are drawn only where they can fit.
        r = self.rng.random()
        if r < 0.7:
            n = min(n, 20)
        elif r < 0.85 and n >= 24 and profile in ("text", "link", "label", "row"):
            return self.strings.text("long", max_len=n)
        return self.strings.text(profile, max_len=max(1, n))

    def _add(self, kind: str, panel: int, body: str, expected: list[Expected], est: tuple[int, int],
             fits: list[int] | None = None, select: tuple[int, int] | None = None) -> None:
        self.widgets.append(Widget(len(self.widgets) + 1, kind, panel, body, expected, est, fits or [], select))

    # --- panels ---------------------------------------------------------------------------------
    def plan(self) -> PagePlan:
        theme = "miniwob" if self.rng.random() < 0.4 else "app"
        if theme == "miniwob":
            self._miniwob_panels()
        else:
            self._app_panels()
        focus = None
        fields = [w for w in self.widgets if w.kind in ("input", "password")]
        if fields and self.rng.random() < 0.12 and not any(w.select for w in self.widgets):
            f = self.rng.choice(fields)
            focus = f.id
            f.expected = [Expected(e.type, e.text, focused=True) for e in f.expected]
        return PagePlan(self.seed, self.size, theme, self.panels, self.widgets, focus)

    def _miniwob_panels(self) -> None:
        w, h = self.size
        columns = max(1, w // 160)
        col_w = w // columns
        for c in range(columns):
            x1 = c * col_w
            query_h = min(50, h // 3)
            # MiniWoB's #query: yellow, 10px Arial, 3px padding; its #area: white, 2px padding.
            self.panels.append(Panel((x1, 0, x1 + col_w, query_h), "#ffff00", "#000000", "stack", 3))
            q = len(self.panels) - 1
            style = _Style("Arial", 10, False, False, "#000000", "#ffff00")
            for _ in range(self.rng.randint(1, 4)):
                self._plain(q, style, col_w - 6, "text", bold_word=self.rng.random() < 0.3)
            self.panels.append(Panel((x1, query_h, x1 + col_w, h), "#ffffff", "#000000",
                                     self.rng.choice(("rows", "rows", "scatter")), 3))
            self._fill(len(self.panels) - 1, miniwob=True)

    def _app_panels(self) -> None:
        w, h = self.size
        rng = self.rng
        layout = rng.choice(("single", "single", "header", "sidebar", "footer", "columns"))
        boxes: list[Box]
        if layout == "header":
            hh = rng.randint(20, 36)
            boxes = [(0, 0, w, hh), (0, hh, w, h)]
        elif layout == "footer":
            fh = rng.randint(20, 36)
            boxes = [(0, 0, w, h - fh), (0, h - fh, w, h)]
        elif layout == "sidebar":
            sw = rng.randint(w // 5, w * 2 // 5)
            boxes = [(0, 0, sw, h), (sw, 0, w, h)] if rng.random() < 0.7 else [(0, 0, w - sw, h), (w - sw, 0, w, h)]
        elif layout == "columns":
            mid = rng.randint(w * 2 // 5, w * 3 // 5)
            boxes = [(0, 0, mid, h), (mid, 0, w, h)]
        else:
            boxes = [(0, 0, w, h)]
        for box in boxes:
            dark = rng.random() < (0.45 if box[3] - box[1] < 40 or box[2] - box[0] < w // 2 else 0.2)
            bg, fg = pair(rng, dark_bg=dark)
            thin = box[3] - box[1] < 40
            mode = "rows" if thin else rng.choice(("rows", "rows", "rows", "scatter"))
            # Pads of 3+ px keep texts of neighbouring panels more than 5 px apart (separate labels).
            self.panels.append(Panel(box, bg, fg, mode, rng.randint(3, 4 if thin else 8)))
            self._fill(len(self.panels) - 1, miniwob=False)

    def _panel_style(self, panel: Panel, miniwob: bool) -> _Style:
        rng = self.rng
        if miniwob:
            family = self._family(MINIWOB_FAMILIES)
            size = rng.choice((10, 10, 10, 11, 12, 13, 14, 16))
        else:
            family = self._family(FAMILIES)
            size = rng.randint(9, 18) if rng.random() < 0.6 else rng.choice((11, 12, 13, 14))
        inner = panel.box[3] - panel.box[1] - 2 * panel.pad
        size = max(9, min(size, int((inner - 2) / 1.25)))  # a bar's text must fit its height
        return _Style(family, size, rng.random() < 0.12, False, panel.fg, panel.bg)

    def _widget_style(self, base: _Style, miniwob: bool) -> _Style:
        rng = self.rng
        s = _Style(base.family, base.size, base.bold, False, base.fg, base.bg)
        if rng.random() < 0.3:
            s.family = self._family(MINIWOB_FAMILIES if miniwob else FAMILIES)
        if rng.random() < 0.35:
            s.size = max(9, min(18 if not miniwob else 16, s.size + rng.randint(-3, 4)))
        if rng.random() < 0.2:
            s.bold = not s.bold
        s.italic = rng.random() < 0.07
        if not miniwob and rng.random() < 0.25:
            s.fg = fg_on(rng, s.bg)
        return s

    def _fill(self, p: int, miniwob: bool) -> None:
        """Enough widgets to fill panel ``p`` (the layout drops what does not fit)."""
        panel = self.panels[p]
        x1, y1, x2, y2 = panel.box
        width, area = x2 - x1 - 2 * panel.pad, (x2 - x1) * (y2 - y1)
        base = self._panel_style(panel, miniwob)
        kinds = {"text": 22, "highlight": 2, "link": 5, "alink": 4, "button": 12, "input": 7, "password": 1,
                 "checkbox": 5, "radio": 3, "select": 3, "table": 3, "list": 3, "bold_sentence": 3,
                 "link_sentence": 3}
        if miniwob:
            kinds.update(text=16, alink=6, link=2, button=14, checkbox=7, radio=5)
        if y2 - y1 < 40:  # a header or footer bar: one line of texts, links and buttons
            kinds = {"text": 10, "link": 5, "alink": 2, "button": 4}
        budget = area * self.rng.uniform(0.6, 1.1)  # more than fits: the layout keeps what does
        used = 0.0
        names = list(kinds)
        while used < budget and len(self.widgets) < 80:
            kind = self.rng.choices(names, weights=[kinds[k] for k in names])[0]
            style = self._widget_style(base, miniwob)
            style.size = min(style.size, max(9, int((y2 - y1 - 2 * panel.pad - 2) / 1.25)))
            before = len(self.widgets)
            self._make(kind, p, style, width, miniwob)
            for w in self.widgets[before:]:
                used += (w.est[0] + 12) * (w.est[1] + 6)

    # --- widgets --------------------------------------------------------------------------------
    def _make(self, kind: str, p: int, s: _Style, width: int, miniwob: bool) -> None:
        if kind in ("text", "highlight"):
            self._plain(p, s, width, kind, bold_word=False)
        elif kind == "bold_sentence":
            self._plain(p, s, width, "text", bold_word=True)
        elif kind in ("link", "alink"):
            self._link(p, s, width, kind)
        elif kind == "link_sentence":
            self._link_sentence(p, s, width)
        elif kind == "button":
            self._button(p, s, width, miniwob)
        elif kind in ("input", "password"):
            self._input(p, s, width, kind, miniwob)
        elif kind in ("checkbox", "radio"):
            self._check(p, s, width, kind)
        elif kind == "select":
            self._select(p, s, width)
        elif kind == "table":
            self._table(p, s, width, miniwob)
        elif kind == "list":
            self._list(p, s, width, miniwob)

    def _plain(self, p: int, s: _Style, width: int, kind: str, bold_word: bool) -> None:
        rng = self.rng
        text = self._text("text", width, s)
        select = None
        if bold_word and " " in text:
            # A word in bold inside a line (MiniWoB's queries): one DOM run per part, one label for the line.
            words = text.split(" ")
            i = rng.randrange(len(words))
            pre, word, post = " ".join(words[:i]), words[i], " ".join(words[i + 1:])
            body = (f'<span style="{s.css()}">{_esc(pre + " ") if pre else ""}<b>{_esc(word)}</b>'
                    f'{_esc(" " + post) if post else ""}</span>')
            est = text_width(text, (s.family, s.size, True))
            self._add("bold_sentence", p, body, [Expected("text", text, highlighted=False)], (est, _line(s.size)))
            return
        css = s.css()
        cls = ""
        highlighted = False
        if kind == "highlight":
            # annotate.js marks text inside .highlight as highlighted: give it a visible background.
            bg = rng.choice(("#fffa90", "#ffff00", "#cce5ff", "#ffd6a5", "#c8f7c5"))
            css = f"{s.css(colour=False)}color:{fg_on(rng, bg, saturation=0.5)};background:{bg};padding:0 2px;"
            cls = ' class="highlight"'
            highlighted = True
        elif len(text) >= 3 and rng.random() < 0.12:
            a = rng.randrange(len(text) - 1)
            select = (a, rng.randint(a + 1, len(text)))
            highlighted = True
            cls = ' class="ssel"'
        body = f'<span{cls} style="{css}">{_esc(text)}</span>'
        self._add(kind, p, body, [Expected("text", text, highlighted=highlighted)],
                  (text_width(text, s) + 4, _line(s.size)), select=select)

    def _link(self, p: int, s: _Style, width: int, kind: str) -> None:
        text = self._text("link", width, s)
        colour = link_colour(self.rng, s.bg)
        underline = "" if self.rng.random() < 0.85 else "text-decoration:none;"
        miniwob_blue = contrast(_rgb(s.bg), (0, 0, 255)) >= 4.5
        if kind == "alink" and miniwob_blue and self.rng.random() < 0.6:
            body = f'<span class="alink" style="{s.css(colour=False)}">{_esc(text)}</span>'  # MiniWoB's own look
        elif kind == "alink":
            body = f'<span class="alink" style="{s.css(colour=False)}color:{colour};{underline}">{_esc(text)}</span>'
        else:
            body = f'<a href="#" style="{s.css(colour=False)}color:{colour};{underline}">{_esc(text)}</a>'
        self._add(kind, p, body, [Expected("hyperlink", text, highlighted=False)],
                  (text_width(text, s) + 2, _line(s.size)))

    def _link_sentence(self, p: int, s: _Style, width: int) -> None:
        """Text, a link, text on one line (MiniWoB's click-link): three labels."""
        pre = self.strings.text("text", max_len=self.rng.randint(3, 16))
        link = self.strings.text("link", max_len=self.rng.randint(2, 12))
        post = self.strings.text("text", max_len=self.rng.randint(1, 12))
        colour = link_colour(self.rng, s.bg)
        tag = ('<span class="alink" style="color:{c}">{t}</span>' if self.rng.random() < 0.6
               else '<a href="#" style="color:{c}">{t}</a>')
        body = (f'<span style="{s.css()}">{_esc(pre)} {tag.format(c=colour, t=_esc(link))} {_esc(post)}</span>')
        total = f"{pre} {link} {post}"
        self._add("link_sentence", p, body, [Expected("text", pre, highlighted=False),
                                             Expected("hyperlink", link, highlighted=False),
                                             Expected("text", post, highlighted=False)],
                  (text_width(total, s) + 4, _line(s.size)))

    def _button(self, p: int, s: _Style, width: int, miniwob: bool) -> None:
        rng = self.rng
        look = rng.choices(("default", "sized", "jquery", "flat", "outline", "secondary"),
                           weights=(5, 2, 2, 3, 1, 1) if not miniwob else (10, 2, 2, 1, 0.5, 2))[0]
        if look == "default":
            s = _Style("Arial", 13, False, False, "#000000", "#efefef")  # Chromium's own: 13.33px Arial
            css, pad = "", 14
        elif look == "sized":
            css, pad = f"font-family:{s.family};font-size:{s.size}px;", 14
        elif look == "jquery":
            css = (f"font-family:Arial,Helvetica,sans-serif;font-size:{s.size}px;border:1px solid #c5c5c5;"
                   "background:#f6f6f6;color:#454545;padding:.4em 1em;border-radius:3px;")
            pad = int(2 * s.size) + 4
        elif look == "flat":
            bg, fg = pair(rng, dark_bg=rng.random() < 0.6)
            py, px = rng.randint(2, 8), rng.randint(6, 16)
            css = (f"{s.css(colour=False)}color:{fg};background:{bg};border:none;border-radius:{rng.randint(0, 8)}px;"
                   f"padding:{py}px {px}px;")
            pad = 2 * px + 2
        elif look == "outline":
            py, px = rng.randint(2, 6), rng.randint(6, 14)
            css = (f"{s.css()}background:transparent;border:{rng.randint(1, 2)}px solid {s.fg};"
                   f"border-radius:{rng.randint(0, 10)}px;padding:{py}px {px}px;")
            pad = 2 * px + 6
        else:
            css, pad = "padding:6px 25px;", 54  # MiniWoB's secondary-action buttons
            s = _Style("Arial", 13, False, False, "#000000", "#efefef")
        text = self._text("button", width, s, extra=pad, cap=24)
        if rng.random() < 0.15:
            body = f'<input type="button" value="{_esc(text)}" style="{css}">'
        else:
            body = f'<button style="{css}">{_esc(text)}</button>'
        self._add("button", p, body, [Expected("button", text, focused=False)],
                  (text_width(text, s) + pad + 4, _line(s.size) + 10))

    def _input(self, p: int, s: _Style, width: int, kind: str, miniwob: bool) -> None:
        rng = self.rng
        if rng.random() < (0.7 if miniwob else 0.4):
            s = _Style("Arial", 13, False, False, "#000000", "#ffffff")  # Chromium's default field
            css = ""
        else:
            bg = rng.choice(("#ffffff", "#ffffff", "#f8f8f8", "#fdfdf0", _hex(_colour(rng, True, 0.15))))
            fg = fg_on(rng, bg, saturation=0.3)
            s = _Style(s.family, s.size, s.bold, False, fg, bg)
            css = (f"{s.css()}background:{bg};border:1px solid {_hex(_colour(rng, False, 0.2))};"
                   f"border-radius:{rng.randint(0, 5)}px;padding:{rng.randint(1, 5)}px {rng.randint(2, 6)}px;")
        slack = rng.randint(6, 50)
        text = self._text("field", width, s, extra=slack + 12, cap=30)
        shown = "•" * len(text) if kind == "password" else text
        est = text_width(shown, s) + 4
        body = (f'<input type="{"password" if kind == "password" else "text"}" value="{_esc(text)}" '
                f'data-fit="{slack}" style="{css}box-sizing:content-box;width:__FIT0__px;">')
        self._add(kind, p, body, [Expected("input_field", shown, focused=False)],
                  (est + slack + 10, _line(s.size) + 6), fits=[est + slack])

    def _check(self, p: int, s: _Style, width: int, kind: str) -> None:
        text = self._text("label", width, s, extra=22, cap=30)
        checked = self.rng.random() < 0.45
        body = (f'<label style="{s.css()}"><input type="{kind}" name="c{len(self.widgets)}"'
                f'{" checked" if checked else ""}>{_esc(text)}</label>')
        self._add(kind, p, body, [Expected(kind, text, checked=checked)],
                  (text_width(text, s) + 22, max(_line(s.size), 19)))

    def _select(self, p: int, s: _Style, width: int) -> None:
        options = [self._text("label", width, s, extra=30, cap=24) for _ in range(self.rng.randint(2, 5))]
        chosen = self.rng.randrange(len(options))
        default = self.rng.random() < 0.5
        css = "" if default else f"font-family:{s.family};font-size:{s.size}px;"
        est_s = s if not default else _Style("Arial", 13, False, False, "#000", "#fff")
        opts = "".join(f'<option{" selected" if i == chosen else ""}>{_esc(o)}</option>' for i, o in enumerate(options))
        body = f'<select style="{css}">{opts}</select>'
        self._add("select", p, body, [Expected("dropdown", options[chosen], focused=False)],
                  (max(text_width(o, est_s) for o in options) + 30, _line(est_s.size) + 6))

    def _table(self, p: int, s: _Style, width: int, miniwob: bool) -> None:
        rng = self.rng
        s = _Style(s.family, min(s.size, 14), s.bold, False, s.fg, s.bg)
        cols = rng.randint(2, max(2, min(4, width // 60)))
        rows = rng.randint(2, 5)
        cell_w = max(20, (width - cols * 12) // cols)
        header = rng.random() < 0.5
        border = rng.choice(("", f"border:1px solid {rng.choice(('#c0c0c0', '#808080', s.fg))};"))
        hl_row = rng.randrange(rows) if rng.random() < 0.25 else -1
        hl_bg = rng.choice(("#fffa90", "#cce5ff", "#ffe0b2"))
        expected: list[Expected] = []
        body_rows = []
        widths = [0] * cols
        for r in range(rows):
            cells = []
            is_head = header and r == 0
            highlighted = r == hl_row and not is_head
            for c in range(cols):
                text = self._text("cell", cell_w, s, extra=10, cap=16)
                widths[c] = max(widths[c], text_width(text, (s.family, s.size, s.bold or is_head)))
                tag = "th" if is_head else "td"
                cells.append(f'<{tag} style="{border}">{_esc(text)}</{tag}>')
                expected.append(Expected("tabled_text", text, highlighted=highlighted))
            style = f' class="highlight" style="background:{hl_bg};color:#000000"' if highlighted else ""
            body_rows.append(f"<tr{style}>{''.join(cells)}</tr>")
        body = f'<table class="st" style="{s.css()}">{"".join(body_rows)}</table>'
        self._add("table", p, body, expected, (sum(widths) + cols * 12, rows * (_line(s.size) + 4)))

    def _list(self, p: int, s: _Style, width: int, miniwob: bool) -> None:
        rng = self.rng
        n = rng.randint(2, 6)
        texts = [self._text("row", width, s, extra=24, cap=22) for _ in range(n)]
        active = rng.randrange(n) if rng.random() < 0.7 else -1
        jquery = miniwob or rng.random() < 0.5
        if jquery:  # jQuery UI's menu: white box, grey border, the active row blue
            box_css = "border:1px solid #c5c5c5;background:#ffffff;color:#333333;"
            fg, bg = "#333333", "#ffffff"
        else:
            bg, fg = pair(rng, dark_bg=rng.random() < 0.3)
            box_css = f"border:1px solid {fg};background:{bg};color:{fg};"
        rows = []
        for i, t in enumerate(texts):
            if i != active:
                rows.append(f'<li class="srow">{_esc(t)}</li>')
            elif jquery:
                rows.append(f'<li class="srow ui-state-active">{_esc(t)}</li>')
            else:
                abg, afg = pair(rng, dark_bg=_lum(_rgb(bg)) > 0.3)
                rows.append(f'<li class="srow ui-state-active" style="background:{abg};color:{afg};'
                            f'border-color:{afg}">{_esc(t)}</li>')
        body = f'<ul class="slist" style="{s.css(colour=False)}{box_css}">{"".join(rows)}</ul>'
        self._add("list", p, body, [Expected("tabled_text", t, highlighted=i == active) for i, t in enumerate(texts)],
                  (max(text_width(t, s) for t in texts) + s.size * 2 + 4, n * (_line(s.size) + 8) + 2))


def plan_page(seed: int, size: tuple[int, int] = (320, 240), extra_chars: str = "") -> PagePlan:
    """The widgets, strings and looks of page ``seed`` (deterministic)."""
    return _Planner(seed, size, extra_chars).plan()


# --- measuring and laying out ------------------------------------------------------------------------
@dataclass(frozen=True)
class Measured:
    w: int
    h: int
    fits: tuple[int, ...] = ()


def estimate_sizes(plan: PagePlan) -> list[Measured]:
    """Sizes without a browser: the planner's own (generous) estimates."""
    return [Measured(w.est[0], w.est[1], tuple(w.fits)) for w in plan.widgets]


def fill_fits(body: str, fits: Sequence[int]) -> str:
    return re.sub(r"__FIT(\d+)__", lambda m: str(fits[int(m.group(1))]) if int(m.group(1)) < len(fits) else "60",
                  body)


# Horizontal gap kept between widgets: more than merge_line_runs' 5 px, so neighbours on a line stay
# separate labels. Vertical gap: widgets never touch.
H_GAP, V_GAP = 8, 2


def _free(box: Box, taken: list[Box]) -> bool:
    x1, y1, x2, y2 = box
    return all(x2 + H_GAP <= a1 or a2 + H_GAP <= x1 or y2 + V_GAP <= b1 or b2 + V_GAP <= y1
               for a1, b1, a2, b2 in taken)


def layout(plan: PagePlan, sizes: Sequence[Measured]) -> Page:
    """Place the plan's widgets (``sizes`` as measured) in their panels; what does not fit is left out."""
    if len(sizes) != len(plan.widgets):
        raise ValueError(f"{len(sizes)} sizes for {len(plan.widgets)} widgets")
    rng = random.Random(f"synth-layout:{plan.seed}")
    placed: list[Placed] = []
    for p, panel in enumerate(plan.panels):
        items = [(w, sizes[w.id - 1]) for w in plan.widgets if w.panel == p]
        x1, y1, x2, y2 = panel.box
        ix1, iy1, ix2, iy2 = x1 + panel.pad, y1 + panel.pad, x2 - panel.pad, y2 - panel.pad
        taken: list[Box] = []
        if panel.mode == "scatter":
            for w, m in items:
                if m.w > ix2 - ix1 or m.h > iy2 - iy1:
                    continue
                for _ in range(30):
                    x, y = rng.randint(ix1, ix2 - m.w), rng.randint(iy1, iy2 - m.h)
                    box = (x, y, x + m.w, y + m.h)
                    if _free(box, taken):
                        taken.append(box)
                        placed.append(Placed(w, box))
                        break
            continue
        placed.extend(_rows(panel, items, rng, taken))
    return _page(plan, placed, sizes)


def _rows(panel: Panel, items: list[tuple[Widget, Measured]], rng: random.Random, taken: list[Box]) -> list[Placed]:
    """Rows (or, for "stack", one widget per line): left-aligned, random gaps, sometimes a widget
    on a row of its own; a widget taller than what is left is skipped, a smaller one may still fit."""
    x1, y1, x2, y2 = panel.box
    ix1, iy1, ix2, iy2 = x1 + panel.pad, y1 + panel.pad, x2 - panel.pad, y2 - panel.pad
    out: list[Placed] = []
    row: list[tuple[Widget, Measured, int]] = []
    indent = rng.choice((0, 0, 0, rng.randint(0, 30)))
    y, x = iy1, ix1

    def close(y: int) -> int:
        if not row:
            return y
        height = max(m.h for _, m, _ in row)
        align = rng.choice(("top", "middle", "middle", "bottom"))
        for w, m, wx in row:
            dy = 0 if align == "top" else (height - m.h) // 2 if align == "middle" else height - m.h
            box = (wx, y + dy, wx + m.w, y + dy + m.h)
            taken.append(box)
            out.append(Placed(w, box))
        row.clear()
        return y + height + (0 if panel.mode == "stack" else rng.choice((V_GAP, V_GAP + 1, 4, 6, 8, 12)))

    for w, m in items:
        if m.w > ix2 - ix1 - indent or m.h > iy2 - iy1:
            continue
        start = x + rng.randint(H_GAP, H_GAP + 24) if row else ix1 + indent
        if row and (start + m.w > ix2 or panel.mode == "stack" or rng.random() < 0.25):
            y = close(y)
            start = ix1 + indent
        if y + m.h > iy2:
            continue
        row.append((w, m, start))
        x = start + m.w
    close(y)
    return out


def _page(plan: PagePlan, placed: list[Placed], sizes: Sequence[Measured]) -> Page:
    w, h = plan.size
    parts = [f'<div id="region" style="width:{w}px;height:{h}px;">']
    for panel in plan.panels:
        x1, y1, x2, y2 = panel.box
        parts.append(f'<div class="sp" style="left:{x1}px;top:{y1}px;width:{x2 - x1}px;height:{y2 - y1}px;'
                     f'background:{panel.bg};color:{panel.fg};"></div>')
    for item in placed:
        x1, y1, _, _ = item.box
        inner = fill_fits(item.widget.html, sizes[item.widget.id - 1].fits)
        parts.append(f'<div class="sw" data-w="{item.widget.id}" style="left:{x1}px;top:{y1}px;">{inner}</div>')
    parts.append("</div>")
    selection = None
    for item in placed:
        if item.widget.select is not None:
            selection = (item.widget.id, *item.widget.select)
            break
    # Only one selection per page: other widgets planned with one are labelled unselected.
    for item in placed:
        if item.widget.select is not None and (selection is None or item.widget.id != selection[0]):
            item.widget.expected = [Expected(e.type, e.text, highlighted=False) for e in item.widget.expected]
            item.widget.select = None
    focus = plan.focus if any(item.widget.id == plan.focus for item in placed) else None
    return Page(plan.seed, plan.size, plan.theme, "".join(parts), placed, focus, selection)


def build_page(seed: int, size: tuple[int, int] = (320, 240), *, extra_chars: str = "",
               measure: Callable[[PagePlan], Sequence[Measured]] = estimate_sizes) -> Page:
    """Page ``seed``: planned, measured with ``measure`` (estimates by default) and laid out."""
    plan = plan_page(seed, size, extra_chars)
    return layout(plan, measure(plan))


def overlaps(boxes: Sequence[Box]) -> list[tuple[int, int]]:
    """Index pairs of boxes that intersect (for checks)."""
    out = []
    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                out.append((i, j))
    return out


def describe(page: Page) -> dict[str, Any]:
    """A short JSON-able summary (for notes and debugging)."""
    kinds: dict[str, int] = {}
    for p in page.placed:
        kinds[p.widget.kind] = kinds.get(p.widget.kind, 0) + 1
    return {"theme": page.theme, "widgets": len(page.placed), "kinds": kinds,
            "selection": page.selection is not None, "focus": page.focus is not None}
