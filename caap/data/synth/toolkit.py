"""Generated look-alikes of desktop-toolkit widgets the detector misses on real desktops.

Measured on the desktop training apps' conventions (AT-SPI boxes, ``caap.bench.desktop.labels``):
a GTK scale is boxed with the value it draws beside its trough, long vertical scales and bars run
300-400 px, scrollbars are classic (arrows), flat (a rounded thumb in a 15 px trough) or overlay
indicators 5 px thin, text views are large frameless or framed areas holding a few lines, and a
notebook tab is boxed on its label with the tab's height, not the drawn tab, and a colour button is
boxed as the whole framed button, not the patch it shows. Each block draws those with ARIA roles
the DOM annotator labels (``annotate.js``: slider, progressbar, scrollbar, tab) or, for the
palettes' swatches, as icons (the ``ico`` class).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from caap.data.synth.page import _hex
from caap.data.synth.themes import _hsv

if TYPE_CHECKING:
    from caap.data.synth.widgets import Builder

TAB_WORDS = ("page 1", "page 2", "page 3", "Page 1", "Page 2", "General", "Advanced", "Sunset", "Beach", "NYC",
             "Tab 1", "Tab 2", "Tab 3", "Options", "Colors", "Layout", "Files", "Preview", "About", "Details")


def _colours(b: Builder) -> tuple[str, str, str, str]:
    """Trough, fill, knob and edge colours of one block, in the theme's light or dark."""
    rng = b.rng
    if b.t.dark:
        trough = rng.choice(("#1e1e1e", "#2a2a2a", "#454545", "#3c3c3c", b.t.surface2))
        knob = rng.choice(("#e0e0e0", "#5a5a5a", "#3d3d3d", b.t.surface))
        edge = rng.choice(("#1b1b1b", "#111111", "#6a6a6a", b.t.border))
    else:
        trough = rng.choice(("#d6d6d6", "#e1dedb", "#cdc7c2", "#c0c0c0", b.t.surface2, b.t.border))
        knob = rng.choice(("#ffffff", "#f6f5f4", "#fafafa", b.t.surface))
        edge = rng.choice(("#b6b6b3", "#919191", "#cdc7c2", b.t.border))
    fill = rng.choice((b.t.accent, "#3584e4", "#4a90d9", "#1c71d8", "#308cc6", "#26a269", "#2a76c6"))
    return trough, fill, knob, edge


def _value_text(b: Builder, value: int) -> str:
    return b.rng.choice((f"{value}.0", f"{value}", f"{value}%", f"{value / 100:.2f}"))


def scale(b: Builder, length: int, vertical: bool, colours: tuple[str, str, str, str]) -> str:
    """A toolkit scale: a thin trough filled up to a round (or no) knob, its value drawn before the
    trough at times (inside the box, as GTK reports it), tick marks at times."""
    rng = b.rng
    trough, fill, knob, edge = colours
    value = rng.randint(0, 100)
    k = rng.choice((0, 14, 16, 18, 20, 20, 22))  # 0: GTK 4's knobless look
    rail = rng.choice((3, 4, 4, 6))
    across = max(k, rail + 8)
    shown = rng.random() < 0.5
    label_px = round(b.t.size * 1.35) if shown else 0
    text = (f'<span style="position:absolute;{"left:0;right:0;top:0;text-align:center" if vertical else "top:0;"}'
            f'{"" if vertical else f"left:calc({value}% - 1em)"};font-size:{b.t.size}px;line-height:{label_px}px;'
            f'color:{b.t.muted};white-space:nowrap">{_value_text(b, value)}</span>') if shown else ""
    marks = "" if rng.random() < 0.75 else "".join(
        f'<span style="position:absolute;{"right" if vertical else "bottom"}:0;'
        f'{"top" if vertical else "left"}:calc({label_px if vertical else 0}px + {across // 2}px + '
        f'(100% - {across + (label_px if vertical else 0)}px) * {i / 4:.2f});'
        f'{"height:1px;width:4px" if vertical else "width:1px;height:4px"};background:{edge}"></span>'
        for i in range(5))
    extra = 6 if marks else 0
    if vertical:
        size = f"width:{max(across + extra, 28 if shown else 0)}px;height:{length}px"
        mid = f"left:calc(50% - {(across + extra) // 2}px + {across // 2}px)"
        track = f"{mid};margin-left:-{rail // 2}px;width:{rail}px;top:{label_px + across // 2}px;"
        rail_css = f"{track}bottom:{across // 2}px"
        fill_css = f"{track}height:calc((100% - {label_px + across}px) * {value / 100:.2f})"
        at = f"calc({label_px}px + (100% - {label_px + across}px) * {value / 100:.2f})"
        knob_css = f"{mid};margin-left:-{k // 2}px;top:{at}"
    else:
        size = f"width:{length}px;height:{label_px + across + extra}px"
        track = f"left:{across // 2}px;top:{label_px + (across - rail) // 2}px;height:{rail}px;"
        rail_css = f"{track}right:{across // 2}px"
        fill_css = f"{track}width:calc((100% - {across}px) * {value / 100:.2f})"
        knob_css = f"top:{label_px + (across - k) // 2}px;left:calc((100% - {across}px) * {value / 100:.2f})"
    knob_html = (f'<span style="position:absolute;{knob_css};width:{k}px;height:{k}px;box-sizing:border-box;'
                 f'border-radius:50%;background:{knob};border:1px solid {edge}"></span>') if k else ""
    return (f'<span role="slider" aria-valuenow="{value}" style="position:relative;display:inline-block;flex:none;'
            f'{size}">{text}<span style="position:absolute;{rail_css};border-radius:{rail // 2}px;'
            f'background:{trough}"></span><span style="position:absolute;{fill_css};border-radius:{rail // 2}px;'
            f'background:{fill}"></span>{marks}{knob_html}</span>')


def bar(b: Builder, length: int, vertical: bool, colours: tuple[str, str, str, str]) -> str:
    """A toolkit progress bar: GTK's thin rounded trough (its percentage drawn above it at times,
    inside the box) or Qt's framed bar with the percentage beside the chunk."""
    rng = b.rng
    trough, fill, _, edge = colours
    value = rng.randint(0, 100)
    if not vertical and rng.random() < 0.3:  # Qt (Fusion): a framed box, the text inside at its end
        h = rng.choice((18, 20, 22, 24, 25))
        return (f'<span role="progressbar" aria-valuenow="{value}" style="position:relative;display:inline-block;'
                f'flex:none;width:{length}px;height:{h}px;box-sizing:border-box;border:1px solid {edge};'
                f'border-radius:{rng.choice((0, 2, 3))}px;background:{b.t.input_bg}">'
                f'<span style="position:absolute;left:1px;top:1px;bottom:1px;width:calc((100% - 2px - 3em) * '
                f'{value / 100:.2f});background:{fill}"></span><span style="position:absolute;right:4px;top:0;'
                f'line-height:{h - 2}px;font-size:{min(b.t.size, h - 6)}px;color:{b.t.text}">{value}%</span></span>')
    thick = rng.choice((3, 4, 4, 5, 6, 8))
    shown = not vertical and rng.random() < 0.35
    label_px = round(b.t.size * 1.3) if shown else 0
    text = (f'<span style="position:absolute;left:0;right:0;top:0;text-align:center;font-size:{b.t.size}px;'
            f'line-height:{label_px}px;color:{b.t.muted}">{value}%</span>') if shown else ""
    r = rng.choice((0, thick // 2, thick // 2, 2))
    if vertical:
        size, track = f"width:{thick}px;height:{length}px", "left:0;right:0;top:0;bottom:0"
        part = f"left:0;right:0;{rng.choice(('top', 'bottom'))}:0;height:{value}%"
    else:
        size, track = f"width:{length}px;height:{label_px + thick}px", f"left:0;right:0;bottom:0;height:{thick}px"
        part = f"left:0;bottom:0;height:{thick}px;width:{value}%"
    return (f'<span role="progressbar" aria-valuenow="{value}" style="position:relative;display:inline-block;'
            f'flex:none;{size}">{text}<span style="position:absolute;{track};border-radius:{r}px;background:{trough};'
            f'overflow:hidden"></span><span style="position:absolute;{part};border-radius:{r}px;background:{fill}">'
            "</span></span>")


def level(b: Builder, length: int, vertical: bool, colours: tuple[str, str, str, str]) -> str:
    """A scale or a bar, as often."""
    return scale(b, length, vertical, colours) if b.rng.random() < 0.5 else bar(b, length, vertical, colours)


def gauges_block(b: Builder) -> str:
    """A column of long scales and bars as a widget gallery shows them: vertical ones side by side,
    300-400 px, horizontal ones stacked."""
    rng = b.rng
    colours = _colours(b)
    long = rng.choice((160, 220, 280, 320, 360, 400))
    vertical = "".join(scale(b, long, True, colours) if rng.random() < 0.55 else bar(b, long, True, colours)
                       for _ in range(rng.randint(1, 4)))
    across = "".join(f'<div class="u-fit u-trim">{level(b, long, False, colours)}</div>'
                     for _ in range(rng.randint(1, 4)))
    gap = rng.choice((10, 16, 24, 32))
    parts = [f'<div class="u-fit u-row" style="gap:{gap}px;align-items:flex-start">{vertical}</div>',
             f'<div style="display:flex;flex-direction:column;gap:{rng.choice((6, 10, 14))}px">{across}</div>']
    rng.shuffle(parts)
    return b.card(f'<div style="display:flex;flex-direction:{rng.choice(("row", "column"))};gap:{gap}px">'
                  f'{"".join(parts)}</div>')


def scrollbar(b: Builder, length: int, vertical: bool, style: str) -> str:
    """A toolkit scrollbar boxed along its whole track: ``classic`` (arrow buttons and a square
    thumb), ``flat`` (a rounded thumb inset in a trough) or ``overlay`` (a thin indicator)."""
    rng = b.rng
    dark = b.t.dark
    start, span = rng.uniform(0, 0.6), rng.uniform(0.12, 0.4)
    thumb_c = rng.choice(("#3f3f3f", "#8a8a8a", "#b0b0b0") if dark else ("#7e8087", "#a8a8a8", "#c1c1c1", "#8b8e8f"))
    if style == "overlay":
        thick, inset, trough = rng.choice((5, 6, 7, 8)), 1, "transparent"
        radius = 99
    elif style == "flat":
        thick, inset = rng.choice((13, 14, 15, 16)), rng.choice((3, 4))
        trough, radius = ("#2b2b2b" if dark else rng.choice(("#cecece", "#dcdcdc", "#e6e6e6"))), 99
    else:
        thick, inset = rng.choice((14, 15, 16, 17)), 1
        trough, radius = ("#353535" if dark else rng.choice(("#e8e8e8", "#f0f0f0", "#dedede"))), rng.choice((0, 2))
    arrow = thick if style == "classic" else 0
    side = f"width:{thick}px;height:{length}px" if vertical else f"width:{length}px;height:{thick}px"
    along = ("top", "bottom") if vertical else ("left", "right")
    cross = ("left", "right") if vertical else ("top", "bottom")
    thumb = (f"{along[0]}:calc({arrow}px + (100% - {2 * arrow}px) * {start:.2f});"
             f"{'height' if vertical else 'width'}:calc((100% - {2 * arrow}px) * {span:.2f});"
             f"{cross[0]}:{inset}px;{cross[1]}:{inset}px")
    arrows = ""
    if arrow:
        glyphs = ("▲", "▼") if vertical else ("◀", "▶")
        for end, glyph in zip(along, glyphs, strict=True):
            arrows += (f'<span style="position:absolute;{end}:0;{cross[0]}:0;width:{thick}px;height:{thick}px;'
                       f'font-size:{thick // 2}px;line-height:{thick}px;text-align:center;color:{b.t.muted};'
                       f'background:{trough}">{glyph}</span>')
    edge = "" if style == "overlay" else f"border-{cross[0]}:1px solid {b.t.border};box-sizing:border-box;"
    return (f'<span role="scrollbar" style="position:relative;display:inline-block;flex:none;{side};'
            f'background:{trough};{edge}">{arrows}<span style="position:absolute;{thumb};border-radius:{radius}px;'
            f'background:{thumb_c}"></span></span>')


def scrollpane_block(b: Builder) -> str:
    """A scrolled view (lines of text or rows) with its toolkit scrollbar along the right side,
    and along the bottom at times."""
    rng = b.rng
    style = rng.choice(("classic", "flat", "overlay"))
    width, height = rng.choice((180, 240, 300, 380, 460)), rng.choice((120, 160, 220, 280, 360))
    rows = "".join(f'<div class="u-fit" style="white-space:nowrap">{html.escape(b.s.text("row", max_len=28))}</div>'
                   for _ in range(max(2, height // (b.t.size * 2) - 1)))
    v = scrollbar(b, height, True, style)
    h = scrollbar(b, width, False, style) if rng.random() < 0.35 else ""
    frame = rng.choice((f"1px solid {b.t.border}", "none"))
    return b.card(f'<div style="display:flex;flex-direction:column;border:{frame};width:max-content">'
                  f'<div style="display:flex"><div style="width:{width}px;height:{height}px;overflow:hidden;'
                  f'padding:4px;box-sizing:border-box;background:{b.t.input_bg}">{rows}</div>{v}</div>{h}</div>')


def textview_block(b: Builder) -> str:
    """A text view: a large editable area, frameless or framed, a few lines at its top (the lines
    are its text, not elements of their own)."""
    rng = b.rng
    lines = "\n".join(html.escape(b.sentence(rng.choice((30, 45, 60)))) for _ in range(rng.randint(1, 6)))
    width, height = rng.choice((200, 260, 320, 420, 560)), rng.choice((90, 140, 200, 260, 320))
    frame = rng.choice(("none", "none", f"1px solid {b.t.border}", f"1px solid {b.t.muted}"))
    bg = rng.choice((b.t.input_bg, b.t.surface, "#ffffff" if not b.t.dark else "#1e1e1e"))
    align = rng.choice(("left", "left", "left", "center"))
    style = rng.choice(("normal", "normal", "italic"))
    area = (f'<textarea rows="2" spellcheck="false" style="width:{width}px;height:{height}px;box-sizing:border-box;'
            f'border:{frame};border-radius:{rng.choice((0, 0, 3))}px;outline:none;resize:none;overflow:hidden;'
            f'background:{bg};color:{b.t.text};text-align:{align};font-style:{style};padding:{rng.choice((2, 4, 6))}px;'
            f'font:inherit;font-style:{style}">{lines}</textarea>')
    side = scrollbar(b, height, True, rng.choice(("flat", "overlay", "classic"))) if rng.random() < 0.3 else ""
    return b.card(f'<div style="display:flex;width:max-content">{area}{side}</div>',
                  title=b.title(("Text Edit", "Notes", "Editor", "Description", "Log")) if rng.random() < 0.4 else None)


def notebook(b: Builder, vertical: bool) -> str:
    """Toolkit notebook tabs: each drawn tab pads its label sideways, and the element is the label
    with the tab's height (as GTK reports a page tab); vertical notebooks are flat columns."""
    rng = b.rng
    n = rng.randint(2, 5)
    sel = rng.randrange(n)
    names = rng.sample(TAB_WORDS, n) if rng.random() < 0.7 else [b.s.text("button", max_len=12) for _ in range(n)]
    tall = rng.choice((26, 28, 30, 32, 34))
    pad = rng.choice((8, 10, 12, 16))
    framed = not vertical and rng.random() < 0.6
    mark = rng.choice(("#3584e4", b.t.accent, "#1c71d8"))
    tabs = []
    for i, name in enumerate(names):
        on = i == sel
        edge = f"border:1px solid {b.t.border};border-bottom:none;" if framed else ""
        if vertical:
            under = f"border-right:3px solid {mark if on else 'transparent'};"
        else:
            under = f"border-bottom:3px solid {mark if on else 'transparent'};"
        bg = b.t.surface if on else rng.choice(("transparent", b.t.surface2))
        selected = "true" if on else "false"
        tabs.append(f'<span style="display:inline-block;padding:0 {pad}px;{edge}{under}background:{bg};'
                    f'color:{b.t.text if on else b.t.muted}"><span role="tab" aria-selected="{selected}"'
                    f' style="display:inline-block;line-height:{tall}px;white-space:nowrap">{html.escape(name)}'
                    "</span></span>")
    direction = "column" if vertical else "row"
    return (f'<div role="tablist" style="display:flex;flex-direction:{direction};align-items:stretch;'
            f'border-{"right" if vertical else "bottom"}:1px solid {b.t.border};width:max-content">'
            f'{"".join(tabs)}</div>')


def notebook_block(b: Builder) -> str:
    """A notebook: its tabs along the top or down the left side, a page of text beside them."""
    rng = b.rng
    vertical = rng.random() < 0.45
    page = (f'<div class="u-col" style="padding:8px;min-width:{rng.choice((120, 200, 280))}px;'
            f'min-height:{rng.choice((60, 120, 200))}px"><p class="u-wrap" style="max-width:22em">'
            f'{b.paragraph(rng.randint(1, 2))}</p></div>')
    tabs = notebook(b, vertical)
    return b.card(f'<div style="display:flex;flex-direction:{"row" if vertical else "column"};width:max-content">'
                  f'{tabs}{page}</div>')


def _swatch_colour(b: Builder) -> str:
    rng = b.rng
    h, s, v = rng.random(), rng.choice((0.15, 0.4, 0.6, 0.8, 1.0)), rng.choice((0.3, 0.5, 0.7, 0.85, 1.0))
    return _hex(_hsv(h, s, v))


def swatches_block(b: Builder) -> str:
    """A colour palette: swatch buttons in a grid, each a colour patch inside the button's frame, and
    the element is the whole framed button (as a toolkit reports a colour button), not the patch.
    Looks: GTK-like rounded buttons with a bevelled edge, flat square frames, bare patches (the patch
    is the button), and GNOME's round swatches with the chosen one ticked."""
    rng = b.rng
    look = rng.choice(("button", "button", "flat", "bare", "round"))
    cols, rows = rng.randint(3, 9), rng.randint(1, 5)
    w = rng.choice((24, 28, 32, 40, 48, 56)) if look != "round" else rng.choice((24, 28, 32, 36))
    h = w if look == "round" else max(18, round(w * rng.choice((0.6, 0.7, 0.8, 1.0))))
    pad = 0 if look == "bare" else rng.choice((3, 4, 5, 6, 8)) if look != "round" else 0
    gap = rng.choice((0, 2, 4, 6, 8)) if look != "bare" else rng.choice((1, 2, 3, 4))
    if b.t.dark:
        face, edge = rng.choice(("#353535", "#2d2d2d", b.t.surface2)), rng.choice(("#1b1b1b", "#111", b.t.border))
    else:
        face, edge = rng.choice(("#f6f5f4", "#ededed", "#e8e8e7", b.t.surface2)), rng.choice(
            ("#cdc7c2", "#b6b6b3", "#a0a0a0", b.t.border))
    chosen = rng.randrange(cols * rows) if rng.random() < 0.5 else -1
    cells = []
    for i in range(cols * rows):
        colour = _swatch_colour(b)
        tick = (f'<span style="position:absolute;left:0;right:0;top:0;bottom:0;display:flex;align-items:center;'
                f'justify-content:center;color:#fff;font-size:{max(10, h // 2)}px;text-shadow:0 0 2px #000">'
                "&#10003;</span>") if i == chosen else ""
        if look == "round":
            style = (f"border-radius:50%;background:{colour};border:1px solid rgba(0,0,0,0.25);"
                     f"{'box-shadow:0 0 0 2px ' + b.t.accent + ';' if i == chosen else ''}")
            cells.append(f'<span class="ico" style="position:relative;display:inline-block;width:{w}px;'
                         f'height:{h}px;box-sizing:border-box;{style}">{tick}</span>')
            continue
        if look == "bare":
            cells.append(f'<span class="ico" style="position:relative;display:inline-block;width:{w}px;'
                         f'height:{h}px;background:{colour};border:1px solid rgba(0,0,0,0.2);'
                         f'box-sizing:border-box">{tick}</span>')
            continue
        radius = rng.choice((4, 5, 6)) if look == "button" else rng.choice((0, 2))
        shade = ";box-shadow:inset 0 -1px rgba(0,0,0,0.08),0 1px 1px rgba(0,0,0,0.07)" if look == "button" else ""
        focus = f"border-color:{b.t.accent};" if i == chosen and look == "flat" else ""
        cells.append(f'<span class="ico" style="position:relative;display:inline-block;width:{w + 2 * pad}px;'
                     f'height:{h + 2 * pad}px;padding:{pad}px;box-sizing:border-box;background:{face};'
                     f'border:1px solid {edge};border-radius:{radius}px{shade};{focus}">'
                     f'<span style="position:relative;display:block;width:100%;height:100%;background:{colour};'
                     f'border-radius:{rng.choice((0, 0, 2))}px">{tick}</span></span>')
    grid = (f'<div style="display:grid;grid-template-columns:repeat({cols},max-content);gap:{gap}px;'
            f'width:max-content">{"".join(cells)}</div>')
    title = b.title(("Colors", "Palette", "Custom", "Theme", "Background", "Highlight")) if rng.random() < 0.5 else None
    return b.card(grid, title=title)
