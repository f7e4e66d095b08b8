"""Looks of the generated widget UIs: a theme (light or dark, an accent colour, a font family and
size, borders, radii, shadows, a density) and the stylesheet it gives the page.

Every colour a text is drawn in is checked against what it is drawn on (WCAG contrast from
``page.contrast``), so a labelled text is always legible; muted texts get at least 3:1.
"""

from __future__ import annotations

import colorsys
import random
from dataclasses import dataclass

from caap.data.synth.page import _hex, _rgb, contrast

# Families Chromium resolves to the fonts installed here (fc-list): Liberation, DejaVu (also its
# Condensed faces) and the generic names, which fontconfig maps onto the same files.
UI_FAMILIES: dict[str, float] = {
    "'Liberation Sans'": 4, "Arial": 3, "Helvetica": 1, "'DejaVu Sans'": 4, "sans-serif": 2, "system-ui": 1,
    "'DejaVu Sans Condensed'": 1.5, "'Liberation Sans Narrow'": 1, "'Liberation Serif'": 1, "'DejaVu Serif'": 1,
    "serif": 0.5, "'DejaVu Sans Mono'": 0.7, "'Liberation Mono'": 0.5, "monospace": 0.3,
}


@dataclass(frozen=True)
class Theme:
    dark: bool
    bg: str  # the page
    surface: str  # cards, dialogs, menus
    surface2: str  # bars, sidebars, default buttons, table headers
    text: str
    muted: str
    border: str
    accent: str
    on_accent: str  # text on the accent colour
    link: str
    sel_bg: str  # selected or hovered rows
    sel_fg: str
    input_bg: str
    family: str
    size: int  # base font size, px
    radius: int
    border_w: int
    shadow: str  # a CSS box-shadow, or "none"
    density: float  # multiplies paddings and gaps
    native: bool  # controls keep Chromium's own look (still dark in dark themes)
    accent_native: bool  # accent-color on native checkboxes, radios, ranges and progress bars

    @property
    def name(self) -> str:
        return f"{'dark' if self.dark else 'light'}-{self.accent.lstrip('#')}-{self.size}px"

    def pad(self, base: float) -> int:
        return max(1, round(base * self.density))


def _hsv(h: float, s: float, v: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, max(0.0, min(1.0, s)), max(0.0, min(1.0, v)))
    return round(r * 255), round(g * 255), round(b * 255)


def _best_on(bg: tuple[int, int, int]) -> str:
    return "#ffffff" if contrast(bg, (255, 255, 255)) >= contrast(bg, (0, 0, 0)) else "#000000"


def _legible(rng: random.Random, bg: str, hue: float, dark_text: bool, min_contrast: float,
             sat: float = 0.15) -> str:
    """A text colour of about ``hue`` on ``bg`` with at least ``min_contrast``."""
    for _ in range(40):
        v = rng.uniform(0.0, 0.35) if dark_text else rng.uniform(0.78, 1.0)
        c = _hsv(hue, rng.uniform(0, sat), v)
        if contrast(c, _rgb(bg)) >= min_contrast:
            return _hex(c)
    return "#000000" if dark_text else "#ffffff"


def make_theme(rng: random.Random) -> Theme:
    """A random theme (deterministic for the generator's state)."""
    dark = rng.random() < 0.4
    hue = rng.random()  # the neutrals' tint
    tint = rng.choice((0.0, 0.0, 0.03, 0.06, 0.12))
    if dark:
        v = rng.uniform(0.07, 0.2)
        bg = _hsv(hue, tint, v)
        surface = _hsv(hue, tint, min(0.32, v + rng.uniform(0.02, 0.08)))
        surface2 = _hsv(hue, tint, min(0.36, v + rng.uniform(0.04, 0.12)))
        border = _hsv(hue, tint, v + rng.uniform(0.15, 0.3))
    else:
        v = rng.uniform(0.9, 1.0)
        bg = _hsv(hue, tint, v)
        surface = _hsv(hue, tint * 0.5, rng.uniform(max(v, 0.96), 1.0)) if rng.random() < 0.7 else bg
        surface2 = _hsv(hue, tint, v - rng.uniform(0.03, 0.09))
        border = _hsv(hue, tint, v - rng.uniform(0.15, 0.35))
    accent_hue = rng.random()
    for _ in range(30):
        accent = _hsv(accent_hue, rng.uniform(0.45, 0.95), rng.uniform(0.45, 0.95))
        on = _best_on(accent)
        # The accent carries text (primary buttons, selected rows) and stands out from the page.
        if contrast(accent, _rgb(on)) >= 4.5 and contrast(accent, bg) >= 1.6:
            break
        accent_hue = rng.random()
    else:
        accent, on = (66, 133, 244), "#000000"
    hexes = [_hex(c) for c in (bg, surface, surface2)]
    darkest = min(hexes, key=lambda c: contrast(_rgb(c), (255, 255, 255)) if dark else -contrast(_rgb(c), (0, 0, 0)))
    text = _legible(rng, darkest, hue, not dark, 7.0)
    muted = _legible(rng, darkest, hue, not dark, 3.2, sat=0.1)
    for c in hexes:  # against every surface it may sit on
        if contrast(_rgb(text), _rgb(c)) < 4.5:
            text = "#ffffff" if dark else "#000000"
        if contrast(_rgb(muted), _rgb(c)) < 3.0:
            muted = text
    link_hue = rng.choice((0.6, 0.62, 0.58, 0.75, accent_hue))
    link = _legible(rng, darkest, link_hue, not dark, 4.5, sat=0.9)
    if any(contrast(_rgb(link), _rgb(c)) < 4.5 for c in hexes):
        link = text
    if rng.random() < 0.6:
        sel_bg, sel_fg = _hex(accent), on
    else:
        sel = _hsv(accent_hue, rng.uniform(0.15, 0.4), 0.35 if dark else 0.93)
        sel_bg, sel_fg = _hex(sel), _best_on(sel)
    size = rng.choice((10, 11, 12, 12, 13, 13, 14, 14, 14, 15, 16, 16, 17, 18, 19, 20))
    shadow = "none"
    if rng.random() < 0.5:
        blur = rng.choice((2, 4, 6, 10, 16))
        shadow = f"0 {max(1, blur // 3)}px {blur}px rgba(0,0,0,{0.5 if dark else rng.choice((0.1, 0.15, 0.25))})"
    names = list(UI_FAMILIES)
    family = rng.choices(names, weights=[UI_FAMILIES[n] for n in names])[0]
    return Theme(
        dark=dark, bg=hexes[0], surface=hexes[1], surface2=hexes[2], text=text, muted=muted, border=_hex(border),
        accent=_hex(accent), on_accent=on, link=link, sel_bg=sel_bg, sel_fg=sel_fg,
        input_bg=_hex(_hsv(hue, tint * 0.5, 0.12 if dark else 1.0)) if rng.random() < 0.8 else hexes[1],
        family=family, size=size, radius=rng.choice((0, 0, 2, 3, 4, 4, 6, 8, 12)),
        border_w=rng.choice((0, 1, 1, 1, 1, 2)), shadow=shadow, density=rng.choice((0.6, 0.8, 1.0, 1.0, 1.2, 1.5)),
        native=rng.random() < 0.3, accent_native=rng.random() < 0.6,
    )


def pressed_look(t: Theme) -> str:
    """How the theme draws a toggle button held down, as the toolkits do: a darker (dark: lighter)
    fill, sunk by an inner shadow or flat (GTK, Qt's Fusion), the selection's colours (a segmented
    control), or an accent edge over a faint accent tint. Never the primary button's accent fill
    alone, which a push button wears too. Chosen from the theme's colours, so the theme's random
    draws (and every page drawn before this look existed) stay as they were."""
    style = ("sunk", "sunk", "flat", "selected", "edge")[int(t.accent[1:3], 16) % 5]
    base = _rgb(t.surface2)
    h, s, v = colorsys.rgb_to_hsv(*(c / 255 for c in base))
    step = 0.1 + 0.12 * (int(t.bg[3:5], 16) % 7) / 6
    shade = _hsv(h, s, v + (step if t.dark else -step))
    if style in ("sunk", "flat"):
        offset, blur = 1 + int(t.border[1:3], 16) % 2, 2 + int(t.border[3:5], 16) % 3
        depth = f"0 {offset}px {blur}px rgba(0,0,0,{0.5 if t.dark else 0.3})"
        inset = f"box-shadow:inset {depth};" if style == "sunk" else "box-shadow:none;"
        return f"background:{_hex(shade)};color:{_best_on(shade)};{inset}"
    if style == "selected":
        return f"background:{t.sel_bg};color:{t.sel_fg};border-color:{t.sel_bg};box-shadow:none;"
    (r, g, b), (ar, ag, ab) = base, _rgb(t.accent)
    tinted = (round(0.8 * r + 0.2 * ar), round(0.8 * g + 0.2 * ag), round(0.8 * b + 0.2 * ab))
    return f"background:{_hex(tinted)};color:{_best_on(tinted)};border:2px solid {t.accent};box-shadow:none;"


def stylesheet(t: Theme, size: tuple[int, int]) -> str:
    """The page's CSS: the region (#ur) and the u-* classes the widget builders use."""
    w, h = size
    p, g = t.pad(8), t.pad(8)
    bw, r = t.border_w, t.radius
    edge = f"{max(1, bw)}px solid {t.border}"
    scheme = "dark" if t.dark else "light"
    accent_css = f"accent-color:{t.accent};" if t.accent_native else ""
    if t.native:  # Chromium's own controls (in the scheme's colours)
        btn = inp = ""
    else:
        btn = (f"font:inherit;color:{t.text};background:{t.surface2};border:{edge};border-radius:{r}px;"
               f"padding:{t.pad(4)}px {t.pad(10)}px;")
        inp = (f"font:inherit;color:{t.text};background:{t.input_bg};border:{edge};border-radius:{min(r, 6)}px;"
               f"padding:{t.pad(3)}px {t.pad(5)}px;")
    return f"""
#ur{{position:absolute;left:0;top:0;width:{w}px;height:{h}px;overflow:hidden;display:flex;flex-direction:column;
 background:{t.bg};color:{t.text};font-family:{t.family};font-size:{t.size}px;line-height:1.3;color-scheme:{scheme};
 {accent_css}}}
#ur *{{box-sizing:border-box;white-space:nowrap;}}
#ur p, #ur .u-wrap, #ur .u-wrap *{{white-space:normal;}}
#ur textarea{{white-space:pre-wrap;}}
#ur ::placeholder{{color:{t.muted};opacity:1;}}
#ur button, #ur input, #ur select, #ur textarea{{font-family:inherit;font-size:{max(10, t.size - 1)}px;}}
#ur button:not(.u-bare):not(.u-sw), #ur input[type=button]{{{btn}}}
#ur input:not([type=checkbox]):not([type=radio]):not([type=range]):not([type=button]), #ur select, #ur textarea{{{inp}}}
#ur .u-pri{{background:{t.accent};color:{t.on_accent};border-color:{t.accent};}}
#ur button[aria-pressed=true]:not(.u-bare):not(.u-sw){{{pressed_look(t)}}}
#ur :disabled, #ur label:has(> :disabled){{opacity:{0.36 + 0.04 * (int(t.bg[1:3], 16) % 5):.2f};cursor:default;}}
#ur a{{color:{t.link};}}
#ur p{{margin:0;}}
.u-bar{{display:flex;align-items:center;gap:{g}px;padding:{t.pad(4)}px {p}px;background:{t.surface2};flex:none;
 border-bottom:{edge};}}
.u-tools{{display:flex;align-items:center;gap:{t.pad(3)}px;padding:{t.pad(3)}px {p}px;flex:none;border-bottom:{edge};}}
.u-body{{display:flex;flex:1;min-height:0;}}
.u-side{{flex:none;display:flex;flex-direction:column;gap:{g}px;padding:{p}px;background:{t.surface2};
 overflow:hidden;border-right:{edge};}}
.u-main{{flex:1;min-width:0;display:flex;flex-wrap:wrap;align-content:flex-start;align-items:flex-start;gap:{g}px;
 padding:{p}px;overflow:hidden;}}
.u-foot{{display:flex;align-items:center;gap:{g}px;padding:{t.pad(3)}px {p}px;flex:none;border-top:{edge};
 background:{t.surface2};}}
.u-card{{background:{t.surface};border:{bw}px solid {t.border};border-radius:{r}px;box-shadow:{t.shadow};
 padding:{p}px;display:flex;flex-direction:column;gap:{t.pad(6)}px;max-width:100%;overflow:hidden;}}
.u-row{{display:flex;align-items:center;gap:{t.pad(6)}px;}}
.u-col{{display:flex;flex-direction:column;gap:{t.pad(4)}px;}}
.u-grid{{display:grid;grid-template-columns:auto auto;gap:{t.pad(5)}px {t.pad(10)}px;align-items:center;}}
.u-h{{font-weight:bold;font-size:1.15em;}}
.u-muted{{color:{t.muted};font-size:.9em;}}
.u-ico{{display:inline-block;flex:none;vertical-align:middle;}}
.u-ibtn{{display:inline-flex;padding:{t.pad(4)}px;border-radius:{r}px;}}
.u-sep{{width:1px;align-self:stretch;background:{t.border};}}
.u-menu{{display:flex;flex-direction:column;background:{t.surface};border:1px solid {t.border};
 border-radius:{min(r, 6)}px;
 box-shadow:{t.shadow if t.shadow != 'none' else '0 2px 6px rgba(0,0,0,.3)'};padding:{t.pad(3)}px 0;}}
.u-mi{{display:flex;gap:{t.pad(16)}px;justify-content:space-between;padding:{t.pad(3)}px {t.pad(12)}px;}}
.u-mb{{padding:{t.pad(3)}px {t.pad(8)}px;border-radius:{min(r, 4)}px;}}
#ur .active{{background:{t.sel_bg};color:{t.sel_fg};}}
#ur .active .u-muted, #ur tr.highlight .u-muted{{color:inherit;opacity:.85;}}
.u-pop{{position:absolute;z-index:10;}}
.u-dlg{{background:{t.surface};border:1px solid {t.border};border-radius:{r}px;padding:{p}px;display:flex;
 flex-direction:column;
 gap:{t.pad(8)}px;box-shadow:0 4px 18px rgba(0,0,0,.45);}}
.u-back{{position:absolute;left:0;top:0;width:{w}px;height:{h}px;z-index:9;
 background:rgba(0,0,0,{0.55 if t.dark else 0.4});}}
.u-tabs{{display:flex;align-items:flex-end;gap:{t.pad(2)}px;border-bottom:{edge};}}
.u-tab{{padding:{t.pad(4)}px {t.pad(12)}px;color:{t.muted};}}
.u-tab[aria-selected=true]{{color:{t.text};}}
.u-tabs.u-line .u-tab[aria-selected=true]{{border-bottom:3px solid {t.accent};}}
.u-tabs.u-boxtab .u-tab{{border:1px solid transparent;border-radius:{min(r, 6)}px {min(r, 6)}px 0 0;}}
.u-tabs.u-boxtab .u-tab[aria-selected=true]{{border-color:{t.border};border-bottom-color:{t.surface};
 background:{t.surface};
 margin-bottom:-1px;}}
.u-tabs.u-pill{{border-bottom:none;}}
.u-tabs.u-pill .u-tab{{border-radius:999px;}}
.u-tabs.u-pill .u-tab[aria-selected=true]{{background:{t.accent};color:{t.on_accent};}}
.u-tree{{display:flex;flex-direction:column;gap:{t.pad(1)}px;}}
.u-ti{{display:flex;align-items:center;gap:{t.pad(4)}px;width:max-content;padding:{t.pad(1)}px {t.pad(4)}px;
 border-radius:{min(r, 4)}px;}}
.u-ti[aria-selected=true]{{background:{t.sel_bg};color:{t.sel_fg};}}
.u-tg{{width:0;height:0;border:5px solid transparent;border-left:6px solid currentColor;border-right:0;margin:0 2px;}}
.u-tg.u-open{{border:5px solid transparent;border-top:6px solid currentColor;border-bottom:0;}}
.u-tg.u-leaf{{border-color:transparent;}}
.u-fold{{width:{round(t.size * 0.9)}px;height:{round(t.size * 0.7)}px;border-radius:2px;background:{t.muted};}}
#ur details{{}}
#ur summary{{width:fit-content;padding:{t.pad(2)}px {t.pad(4)}px;cursor:pointer;}}
.u-dpad{{padding:{t.pad(2)}px 0 {t.pad(2)}px {t.pad(18)}px;}}
.u-track{{position:relative;display:inline-block;height:18px;flex:none;}}
.u-rail{{position:absolute;left:0;right:0;top:7px;height:4px;border-radius:2px;background:{t.border};}}
.u-fill{{position:absolute;left:0;top:7px;height:4px;border-radius:2px;background:{t.accent};}}
.u-thumb{{position:absolute;top:0;width:18px;height:18px;margin-left:-9px;border-radius:50%;background:{t.accent};
 border:2px solid {t.surface};}}
.u-pb{{position:relative;display:inline-block;flex:none;overflow:hidden;background:{t.surface2};
 border:1px solid {t.border};}}
.u-pbf{{position:absolute;left:0;top:0;bottom:0;background:{t.accent};}}
.u-sw{{position:relative;display:inline-block;flex:none;width:34px;height:18px;border-radius:9px;background:{t.border};
 vertical-align:middle;padding:0;border:none;}}
.u-sw::after{{content:"";position:absolute;left:2px;top:2px;width:14px;height:14px;border-radius:50%;background:#fff;}}
.u-sw[aria-checked=true]{{background:{t.accent};}}
.u-sw[aria-checked=true]::after{{left:18px;}}
#ur input.u-swc{{appearance:none;width:34px;height:18px;border-radius:9px;background:{t.border};position:relative;
 margin:0;
 flex:none;}}
#ur input.u-swc::after{{content:"";position:absolute;left:2px;top:2px;width:14px;height:14px;border-radius:50%;
 background:#fff;}}
#ur input.u-swc:checked{{background:{t.accent};}}
#ur input.u-swc:checked::after{{left:18px;}}
.u-cal{{display:grid;grid-template-columns:repeat(7,auto);gap:{t.pad(2)}px;}}
#ur .u-cal button{{min-width:2.1em;padding:{t.pad(3)}px {t.pad(2)}px;text-align:center;}}
#ur .u-cal .u-out{{color:{t.muted};}}
#ur button.u-bare{{font:inherit;color:inherit;background:none;border:none;padding:{t.pad(2)}px {t.pad(4)}px;}}
.u-av{{flex:none;border-radius:50%;}}
.u-img{{flex:none;border-radius:{r}px;}}
.u-badge{{padding:0 {t.pad(6)}px;border-radius:999px;background:{t.surface2};border:1px solid {t.border};}}
#ur table{{border-collapse:collapse;}}
#ur td, #ur th{{padding:{t.pad(3)}px {t.pad(8)}px;text-align:left;}}
#ur table.u-lined td, #ur table.u-lined th{{border-bottom:1px solid {t.border};}}
#ur table.u-boxed td, #ur table.u-boxed th{{border:1px solid {t.border};}}
#ur th{{background:{t.surface2};}}
#ur tr.highlight{{background:{t.sel_bg};color:{t.sel_fg};}}
.u-list{{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;}}
.u-list > li{{padding:{t.pad(3)}px {t.pad(8)}px;}}
.u-blist{{margin:0;padding-left:1.4em;}}
.u-drag{{display:flex;align-items:center;gap:{t.pad(6)}px;padding:{t.pad(4)}px {t.pad(8)}px;border:1px solid {t.border};
 border-radius:{min(r, 4)}px;background:{t.surface};}}
.u-grip{{width:6px;height:12px;flex:none;
 background:radial-gradient(circle,{t.muted} 1px,transparent 1.5px) 0 0/3px 3px;}}
.u-scroll{{overflow-y:auto;}}
"""
