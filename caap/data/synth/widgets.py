"""Builders of the widgets a generated UI page is made of: forms, tables, lists, trees, menus and
menu bars, tabs, dialogs, toolbars with icon glyphs, date and time pickers, sliders, spinners,
progress bars, toggle switches, pagination, search boxes, cards and feeds, links and paragraphs.

Each builder returns HTML that the DOM labeller (``caap/bench/annotate.js`` under
``ui.rules_for_ui``) labels the way the taxonomy says:

- ``role=tab`` -> tab (``aria-selected`` -> highlighted); ``role=treeitem`` and ``<summary>`` ->
  tree_item (``aria-expanded`` / ``details.open`` -> expanded; leaves have none);
  ``input[type=range]`` and ``role=slider`` -> slider; ``<progress>`` and ``role=progressbar`` ->
  progress_bar; ``role=switch`` and switch-styled checkboxes -> checkbox;
- menu-bar titles and menu entries (``role=menuitem``) and list rows (``role=option``) ->
  tabled_text, the open or hovered one (class ``active``) highlighted;
- icon glyphs carry class ``ico``; those drawing a taxonomy icon subtype say which in ``data-sub``.

Icons are drawn with SVG ``<path>`` only: annotate.js takes every SVG circle, rect, polygon and
line for a shape. Nothing decorative carries text (tree toggles, submenu arrows, grips are CSS),
so no stray text label appears.

Classes that start ``u-fit`` mark what the page's fitting pass may drop when it does not fit its
box (``u-box``); ``u-trim`` marks rows that may go one by one from the end first.
"""

from __future__ import annotations

import html
import random
from collections.abc import Callable, Sequence

from caap.data.synth import toolkit
from caap.data.synth.strings import MONTHS, MONTHS_LONG, StringGen
from caap.data.synth.themes import Theme
from caap.taxonomy import ICON_SUBTYPES

# --- icons -------------------------------------------------------------------------------------------
# name -> (SVG path on a 24-px grid, stroked; the taxonomy subtype it draws, or None)
ICONS: dict[str, tuple[str, str | None]] = {
    "back": ("M19 12H5M11 5l-7 7 7 7", "back"),
    "chev-left": ("M15 5l-7 7 7 7", "back"),
    "chev-right": ("M9 5l7 7-7 7", "forward"),
    "forward": ("M5 12h14M13 5l7 7-7 7", "forward"),
    "delete": ("M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6", "delete"),
    "important": ("M12 3l2.8 5.8 6.2.9-4.5 4.4 1.1 6.2L12 17.3l-5.6 3 1.1-6.2L3 9.7l6.2-.9z", "important"),
    "reply": ("M10 8V4L3 11l7 7v-4c5 0 8 1.5 11 5-1-6-4-10-11-11z", "reply"),
    "retweet": ("M7 4L4 7l3 3M4 7h12a3 3 0 0 1 3 3v2M17 20l3-3-3-3M20 17H8a3 3 0 0 1-3-3v-2", "retweet"),
    "like": ("M12 20s-7-4.5-9-9a4.5 4.5 0 0 1 9-3 4.5 4.5 0 0 1 9 3c-2 4.5-9 9-9 9z", "like"),
    "share": ("M4 13v7h16v-7M12 3v12M7 8l5-5 5 5", "share"),
    "menu": ("M4 6h16M4 12h16M4 18h16", "menu"),
    "search": ("M10.5 4a6.5 6.5 0 1 0 0 13 6.5 6.5 0 1 0 0-13zM15.5 15.5L20 20", "search"),
    "send": ("M3 11L21 3l-8 18-2-8zM11 13L21 3", "send"),
    # Not in the taxonomy: labelled icons without a subtype.
    "settings": ("M12 9a3 3 0 1 0 0 6 3 3 0 1 0 0-6zM12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9l2.1 2.1M17 17l2.1 "
                 "2.1M4.9 19.1L7 17M17 7l2.1-2.1", None),
    "home": ("M3 11l9-8 9 8M5 10v10h5v-6h4v6h5V10", None),
    "bell": ("M6 16V11a6 6 0 0 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0", None),
    "user": ("M12 4a4 4 0 1 0 0 8 4 4 0 1 0 0-8zM4 21c0-4 4-6 8-6s8 2 8 6", None),
    "plus": ("M12 5v14M5 12h14", None),
    "close": ("M6 6l12 12M18 6L6 18", None),
    "edit": ("M4 20h4L19 9l-4-4L4 16zM13 7l4 4", None),
    "download": ("M12 4v12M7 11l5 5 5-5M4 20h16", None),
    "upload": ("M12 20V8M7 13l5-5 5 5M4 4h16", None),
    "refresh": ("M20 12a8 8 0 1 1-2.3-5.7M20 4v5h-5", None),
    "filter": ("M4 5h16l-6 8v6l-4-2v-4z", None),
    "more": ("M5 12h.01M12 12h.01M19 12h.01", None),
    "more-v": ("M12 5h.01M12 12h.01M12 19h.01", None),
    "folder": ("M3 6h6l2 2h10v11H3z", None),
    "file": ("M6 3h8l4 4v14H6zM14 3v4h4", None),
    "mail": ("M3 6h18v12H3zM3 6l9 7 9-7", None),
    "lock": ("M6 11h12v9H6zM8 11V8a4 4 0 0 1 8 0v3", None),
    "calendar": ("M4 6h16v14H4zM4 10h16M8 3v4M16 3v4", None),
    "check": ("M5 12l5 5 9-10", None),
    "copy": ("M8 8h12v12H8zM4 16V4h12", None),
    "info": ("M12 3a9 9 0 1 0 0 18 9 9 0 1 0 0-18zM12 11v6M12 7h.01", None),
    "bold": ("M7 4h6a4 4 0 0 1 0 8H7zM7 12h7a4 4 0 0 1 0 8H7z", None),
    "italic": ("M10 4h8M6 20h8M14 4l-4 16", None),
    "list": ("M9 6h11M9 12h11M9 18h11M4 6h.01M4 12h.01M4 18h.01", None),
    "grid": ("M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z", None),
    "star-o": ("M12 6l1.8 3.7 4 .6-2.9 2.8.7 4L12 15.2 8.4 17.1l.7-4-2.9-2.8 4-.6z", None),
    "print": ("M6 9V3h12v6M6 17H4v-8h16v8h-2M7 14h10v7H7z", None),
    "link": ("M10 14a4 4 0 0 0 6 0l3-3a4 4 0 0 0-6-6l-1 1M14 10a4 4 0 0 0-6 0l-3 3a4 4 0 0 0 6 6l1-1", None),
    "image": ("M4 5h16v14H4zM4 16l5-5 4 4 3-3 4 4", None),
}
# Unicode glyphs used as icons (the fonts here draw them all).
GLYPHS: dict[str, tuple[str, str | None]] = {
    "☰": ("menu", "menu"), "←": ("back", "back"), "→": ("forward", "forward"), "★": ("important", "important"),
    "♥": ("like", "like"), "↩": ("reply", "reply"), "⚙": ("settings", None), "✎": ("edit", None),
    "✉": ("mail", None), "⌂": ("home", None), "⋮": ("more-v", None), "✕": ("close", None), "↻": ("refresh", None),
    "☆": ("star-o", None), "♡": ("heart-o", None), "✓": ("check", None),
}
# How often a control is drawn greyed out, and a check box neither ticked nor clear.
DISABLED_SHARE, MIXED_SHARE = 0.08, 0.1
CHECKABLE = ("important", "like", "retweet")  # annotate.js reads checked from their 'clicked' class
assert all(sub in ICON_SUBTYPES for _, sub in ICONS.values() if sub) and all(
    sub in ICON_SUBTYPES for _, sub in GLYPHS.values() if sub)


def icon_rules() -> list[list[str | None]]:
    """annotate.js ``icons`` rules: each taxonomy subtype by its data-sub, every other icon without one."""
    rules: list[list[str | None]] = [[f".ico[data-sub={s}]", s] for s in ICON_SUBTYPES]
    return [*rules, [".ico:not([data-sub])", None]]


# --- words --------------------------------------------------------------------------------------------
MENU_TITLES = ("File", "Edit", "View", "Insert", "Format", "Tools", "Window", "Help", "Go", "Run", "Selection",
               "Image", "Layer", "Bookmarks", "History", "Account", "Project", "Debug", "Data", "Table")
MENU_ITEMS = ("New", "New Window", "Open…", "Open Recent", "Save", "Save As…", "Export", "Import", "Print…",
              "Close", "Undo", "Redo", "Cut", "Copy", "Paste", "Delete", "Select All", "Find…", "Replace…",
              "Zoom In", "Zoom Out", "Preferences", "Settings", "Sign out", "Rename", "Duplicate", "Move to…",
              "Share…", "Properties", "Refresh", "Full Screen", "Show Sidebar", "About", "Archive", "Pin",
              "Mark as read", "Download", "Open in new tab", "Copy link", "Reload", "Insert row", "Merge cells")
SHORTCUTS = ("Ctrl+N", "Ctrl+O", "Ctrl+S", "Ctrl+Shift+S", "Ctrl+P", "Ctrl+W", "Ctrl+Z", "Ctrl+Y", "Ctrl+X",
             "Ctrl+C", "Ctrl+V", "Del", "Ctrl+A", "Ctrl+F", "Ctrl+H", "F11", "F2", "F5", "Alt+F4", "Shift+Del")
FORM_LABELS = ("First name", "Last name", "Email", "Password", "Username", "Phone", "Address", "City",
               "Country", "Zip code", "Company", "Job title", "Website", "Subject", "Department", "Role",
               "Language", "Time zone", "Currency", "Amount", "Quantity", "Reference", "Card number",
               "Nickname", "Team", "Project", "Category", "Tags", "Priority", "Assignee")
NAV = ("Home", "Dashboard", "Projects", "Tasks", "Calendar", "Reports", "Messages", "Inbox", "Settings", "Team",
       "Files", "Analytics", "Customers", "Orders", "Products", "Invoices", "Help", "Explore", "Library",
       "Downloads", "Favorites", "Recent", "Shared", "Trash", "Contacts", "Billing", "Integrations")
TAB_NAMES = ("General", "Details", "Settings", "Security", "Notifications", "Overview", "Activity", "Files",
             "Comments", "History", "Billing", "Advanced", "Profile", "Members", "Preview", "Code", "Issues",
             "Summary", "Photos", "Reviews", "Specs", "Shipping", "Privacy", "Display", "Sound")
FOLDERS = ("src", "docs", "tests", "assets", "images", "build", "lib", "config", "scripts", "data", "public",
           "Documents", "Pictures", "Music", "Videos", "Desktop", "Projects", "Archive", "Reports 2024",
           "Clients", "Invoices", "Templates", "Backups", "Drafts", "Shared", "Photos", "Work", "Personal")
FILES = ("index.html", "main.py", "README.md", "setup.cfg", "app.js", "style.css", "notes.txt", "logo.png",
         "report.pdf", "budget.xlsx", "photo_001.jpg", "todo.md", "data.csv", "Makefile", "config.yaml",
         "LICENSE", "package.json", "invoice-0042.pdf", "draft.docx", "slides.pptx", "music.mp3")
OPTIONS = ("Daily", "Weekly", "Monthly", "Never", "Always", "Low", "Medium", "High", "Urgent", "English",
           "Deutsch", "Français", "Español", "日本語", "Small", "Large", "Automatic", "Manual", "Public",
           "Private", "Draft", "Published", "Open", "Closed", "Pending", "Approved", "Red", "Green", "Blue")
SWITCHES = ("Dark mode", "Notifications", "Auto-save", "Wi-Fi", "Bluetooth", "Location", "Sync", "Sound",
            "Two-factor login", "Show hidden files", "Email alerts", "Remember me", "Public profile",
            "Autoplay", "Compact view", "Spell check", "Offline mode")
# Toggle buttons' words: a view, a mode or a format that is on or off.
TOGGLES = ("Bold", "Italic", "Underline", "B", "I", "U", "Mute", "Wrap", "Grid", "List", "Map", "Day", "Week",
           "Month", "Year", "All", "Active", "Done", "Left", "Center", "Right", "Page 1", "Page 2", "Page 3", "Edit",
           "Preview", "Split", "Code", "Design", "Light", "Dark", "Auto", "On", "Off", "Pin", "Follow", "Shuffle",
           "Repeat", "Solo", "Lock")
BUTTONS = ("Save", "Cancel", "OK", "Apply", "Submit", "Delete", "Next", "Back", "Continue", "Done", "Add",
           "Edit", "Send", "Search", "Create", "Update", "Upload", "Close", "Confirm", "Reset", "Sign in",
           "Sign up", "Log out", "Export", "Share", "Follow", "Retry", "Skip", "Buy now", "Add to cart")
STATUS = ("Active", "Inactive", "Pending", "Done", "Failed", "Paid", "Overdue", "Draft", "Shipped", "Open",
          "Closed", "In review", "Blocked", "New")
WEEKDAYS = ("Mo", "Tu", "We", "Th", "Fr", "Sa", "Su")


def esc(text: str) -> str:
    return html.escape(text, quote=True)


class Builder:
    """Makes widget HTML for one page: its random state, strings and theme."""

    def __init__(self, rng: random.Random, strings: StringGen, theme: Theme) -> None:
        self.rng = rng
        self.s = strings
        self.t = theme
        self._ids = 0

    # --- helpers ------------------------------------------------------------------------------------
    def new_id(self, prefix: str = "w") -> str:
        self._ids += 1
        return f"{prefix}{self._ids}"

    def pick(self, words: Sequence[str], profile: str = "label", max_len: int = 24, generated: float = 0.3) -> str:
        """Mostly a realistic UI word, sometimes a generated string (every character comes round)."""
        if self.rng.random() < generated:
            return self.s.text(profile, max_len=max_len)
        return self.rng.choice(words)

    def words(self, n: int) -> list[str]:
        return [self.s.text("row", max_len=20) for _ in range(n)]

    def sentence(self, max_len: int = 60) -> str:
        return self.s.text(self.rng.choice(("text", "long", "long")), max_len=max_len)

    def paragraph(self, sentences: int) -> str:
        out = []
        for _ in range(sentences):
            text = esc(self.sentence(self.rng.choice((40, 60, 80))))
            r = self.rng.random()
            if r < 0.15:
                out.append(f'{text} <a href="#">{esc(self.s.text("link", max_len=20))}</a>')
            elif r < 0.25:
                out.append(f"<b>{esc(self.s.text('label', max_len=16))}</b> {text}")
            else:
                out.append(text)
        return " ".join(t if t.endswith((".", "!", "?", "…", ">")) else t + "." for t in out)

    def icon(self, name: str | None = None, size: int | None = None, *, checked: bool = False,
             colour: str | None = None, label: bool = True) -> str:
        """An SVG icon; ``label`` False draws it as decoration (no ico class: not labelled)."""
        name = name or self.rng.choice(list(ICONS))
        path, sub = ICONS[name]
        size = size or self.rng.choice((14, 16, 16, 18, 20, 20, 24))
        cls = "u-ico ico" if label else "u-ico"
        attrs = f' data-sub="{sub}"' if sub and label else ""
        fill = "none"
        style = f"color:{colour};" if colour else ""
        if checked and sub in CHECKABLE:
            cls += " clicked"
            fill = "currentColor" if sub != "retweet" else "none"
            on = {"like": "#e0245e", "important": "#f4b400", "retweet": "#17bf63"}[sub]
            style = f"color:{colour or on};"
        sw = self.rng.choice((1.5, 2, 2, 2.5))
        return (f'<svg class="{cls}"{attrs} width="{size}" height="{size}" viewBox="0 0 24 24" fill="{fill}" '
                f'stroke="currentColor" stroke-width="{sw}" stroke-linecap="round" stroke-linejoin="round" '
                f'style="{style}"><path d="{path}"/></svg>')

    def glyph(self, char: str | None = None, size: int | None = None) -> str:
        """A Unicode glyph drawn as an icon (a box of its own size, the glyph centred)."""
        char = char or self.rng.choice(list(GLYPHS))
        _, sub = GLYPHS[char]
        size = size or self.rng.choice((16, 18, 20, 22))
        attrs = f' data-sub="{sub}"' if sub else ""
        return (f'<span class="u-ico ico"{attrs} style="width:{size}px;height:{size}px;line-height:{size}px;'
                f'font-size:{round(size * 0.85)}px;text-align:center;">{char}</span>')

    def any_icon(self, names: Sequence[str] | None = None, size: int | None = None, *, checked: bool = False) -> str:
        if names is None and self.rng.random() < 0.2:
            return self.glyph(size=size)
        return self.icon(self.rng.choice(list(names or ICONS)), size, checked=checked)

    def button(self, text: str | None = None, *, primary: bool | None = None, cls: str = "",
               pressed: bool | None = None) -> str:
        """A push button, or with ``pressed`` a toggle button (aria-pressed; the theme draws it held down)."""
        text = text or self.pick(BUTTONS, "button", 18)
        primary = self.rng.random() < 0.35 if primary is None and pressed is None else bool(primary)
        classes = " ".join(c for c in (cls, "u-pri" if primary else "") if c)
        attr = f' class="{classes}"' if classes else ""
        if pressed is not None:
            attr += f' aria-pressed="{str(pressed).lower()}"'
        if self.rng.random() < DISABLED_SHARE:
            attr += " disabled"
        if pressed is None and self.rng.random() < 0.1:
            return f'<input type="button" value="{esc(text)}"{attr}>'
        return f"<button{attr}>{esc(text)}</button>"

    def card(self, inner: str, *, title: str | None = None, width: str | None = None, cls: str = "") -> str:
        head = f'<div class="u-h u-fit">{esc(title)}</div>' if title else ""
        style = f' style="width:{width}"' if width else ""
        return f'<div class="u-card u-box u-fit {cls}"{style}>{head}{inner}</div>'

    def title(self, words: Sequence[str] = NAV) -> str:
        return self.pick(words, "label", 22, generated=0.25)

    # --- form controls ------------------------------------------------------------------------------
    def field(self, label: str | None = None, kind: str | None = None) -> tuple[str, str]:
        """(label HTML, control HTML) of one form row."""
        rng = self.rng
        label = label or self.pick(FORM_LABELS, "label", 20)
        kind = kind or rng.choices(
            ("text", "email", "password", "number", "search", "date", "time", "select", "textarea", "datetime"),
            weights=(8, 2, 2, 3, 1, 3, 2, 4, 1, 0.5))[0]
        fid = self.new_id("f")
        width = f"width:{rng.choice((8, 10, 12, 14, 16, 20))}em;"
        empty = rng.random() < 0.2
        if kind in ("text", "email", "search"):
            value = "" if empty else self.s.text("field", max_len=24)
            if kind == "email" and not empty:
                value = self.s.email()
            ph = f' placeholder="{esc(self.pick(FORM_LABELS, "label", 16))}"' if empty and rng.random() < 0.7 else ""
            ctl = f'<input id="{fid}" type="{kind}" value="{esc(value)}"{ph} style="{width}">'
        elif kind == "password":
            ctl = f'<input id="{fid}" type="password" value="{esc(self.s.token())}" style="{width}">'
        elif kind == "number":
            lo = rng.choice((0, 0, 1, -10))
            value = "" if empty else str(rng.randint(lo, lo + rng.choice((10, 100, 1000))))
            ems = rng.choice((5, 6, 8))
            ctl = f'<input id="{fid}" type="number" value="{value}" min="{lo}" style="width:{ems}em;">'
        elif kind == "date":
            value = "" if empty else f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            ctl = f'<input id="{fid}" type="date" value="{value}">'
        elif kind == "time":
            hour, minute = rng.randint(0, 23), rng.choice((0, 5, 15, 30, 45, rng.randint(0, 59)))
            value = "" if empty else f"{hour:02d}:{minute:02d}"
            ctl = f'<input id="{fid}" type="time" value="{value}">'
        elif kind == "datetime":
            value = (f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                     f"T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}")
            ctl = f'<input id="{fid}" type="datetime-local" value="{value}">'
        elif kind == "select":
            opts = [self.pick(OPTIONS, "label", 18) for _ in range(rng.randint(2, 6))]
            chosen = rng.randrange(len(opts))
            ctl = (f'<select id="{fid}">' + "".join(
                f'<option{" selected" if i == chosen else ""}>{esc(o)}</option>' for i, o in enumerate(opts))
                + "</select>")
        else:
            rows = rng.randint(2, 4)
            text = " ".join(self.sentence(50) for _ in range(rng.randint(1, 6)))
            resize = rng.choice(("both", "both", "vertical", "none"))
            ctl = (f'<textarea id="{fid}" rows="{rows}" style="width:{rng.choice((14, 18, 22))}em;resize:{resize};">'
                   f'{esc(text)}</textarea>')
        if rng.random() < DISABLED_SHARE:
            ctl = ctl.replace(" id=", " disabled id=", 1)
        return f'<label for="{fid}">{esc(label)}</label>', ctl

    def checkbox(self, text: str | None = None, *, radio: str | None = None, checked: bool | None = None) -> str:
        text = text or self.pick(OPTIONS if radio else SWITCHES, "label", 22)
        checked = self.rng.random() < 0.45 if checked is None else checked
        kind = "radio" if radio else "checkbox"
        name = f' name="{radio}"' if radio else ""
        extra = " data-mixed" if not radio and self.rng.random() < MIXED_SHARE else ""
        if self.rng.random() < DISABLED_SHARE:
            extra += " disabled"
        return (f'<label class="u-row"><input type="{kind}"{name}{" checked" if checked else ""}{extra}> '
                f"{esc(text)}</label>")

    def switch(self, text: str | None = None, checked: bool | None = None) -> str:
        """A toggle switch: a role=switch span or a switch-styled checkbox, with its label."""
        text = text or self.pick(SWITCHES, "label", 22)
        checked = self.rng.random() < 0.5 if checked is None else checked
        left = self.rng.random() < 0.5
        if self.rng.random() < 0.5:
            ctl = f'<span class="u-sw" role="switch" aria-checked="{"true" if checked else "false"}"></span>'
        else:
            ctl = f'<input type="checkbox" class="u-swc"{" checked" if checked else ""}>'
        # The words are the label's own text node: a probe of the labeller that lands on them hits the label.
        words = esc(text)
        return f'<label class="u-row">{words + ctl if left else ctl + words}</label>'

    def slider(self, width: int | None = None) -> str:
        rng = self.rng
        width = width or rng.choice((100, 120, 150, 180, 220, 280))
        if rng.random() < 0.55:
            return (f'<input type="range" min="0" max="100" value="{rng.randint(0, 100)}" '
                    f'style="width:{width}px;margin:0;">')
        pos = rng.randint(0, 100)
        return (f'<span class="u-track" role="slider" aria-valuenow="{pos}" style="width:{width}px;">'
                f'<span class="u-rail"></span><span class="u-fill" style="width:{pos}%"></span>'
                f'<span class="u-thumb" style="left:{pos}%"></span></span>')

    def progress(self, width: int | None = None) -> str:
        rng = self.rng
        width = width or rng.choice((80, 120, 160, 200, 260, 320))
        value = rng.randint(0, 100)
        if rng.random() < 0.45:  # Chromium's own bar, at a height it fills (its default box is taller than the bar)
            return (f'<progress max="100" value="{value}" style="width:{width}px;height:{rng.choice((6, 8, 10, 12))}px;'
                    f'vertical-align:middle"></progress>')
        h = rng.choice((4, 6, 8, 10, 14))
        return (f'<span class="u-pb" role="progressbar" aria-valuenow="{value}" style="width:{width}px;height:{h}px;'
                f'border-radius:{rng.choice((0, h // 2, 2))}px;"><span class="u-pbf" style="width:{value}%"></span>'
                f"</span>")

    # --- blocks (cards in the main area) ------------------------------------------------------------
    def form_block(self) -> str:
        rng = self.rng
        rows = []
        grid = rng.random() < 0.5
        for _ in range(rng.randint(2, 6)):
            label, ctl = self.field()
            rows.append(f'<div class="u-fit u-trim" style="display:contents">{label}{ctl}</div>' if grid else
                        f'<div class="u-col u-fit u-trim">{label}{ctl}</div>')
        body = f'<div class="u-grid">{"".join(rows)}</div>' if grid else "".join(rows)
        extras = []
        if rng.random() < 0.6:
            extras.append(self.checkbox())
        if rng.random() < 0.4:
            name = self.new_id("r")
            extras.append('<div class="u-row">' + "".join(
                self.checkbox(radio=name, checked=i == 0) for i in range(rng.randint(2, 3))) + "</div>")
        if rng.random() < 0.4:
            extras.append(self.switch())
        extras_html = "".join(f'<div class="u-fit">{e}</div>' for e in extras)
        buttons = '<div class="u-row u-fit">' + "".join(
            self.button(primary=i == 0) for i in range(rng.randint(1, 3))) + "</div>"
        return self.card(body + extras_html + buttons, title=self.title(("Sign in", "Profile", "New account",
                                                                         "Contact us", "Settings", "Shipping",
                                                                         "Payment", "Filters", "Edit item")))

    def table_block(self) -> str:
        rng = self.rng
        cols = rng.randint(2, 6)
        heads = [self.pick(("Name", "Date", "Status", "Amount", "Owner", "Size", "Type", "Email", "ID",
                            "Modified", "Price", "Qty", "Country", "Score"), "cell", 12) for _ in range(cols)]
        kinds = [rng.choice(("name", "date", "status", "number", "text")) for _ in range(cols)]
        select_col = rng.random() < 0.3
        action_col = rng.random() < 0.3
        hl = rng.randrange(8) if rng.random() < 0.4 else -1
        head = "<tr>" + ("<th></th>" if select_col else "") + "".join(f"<th>{esc(h)}</th>" for h in heads) + (
            "<th></th>" if action_col else "") + "</tr>"
        body = []
        for r in range(rng.randint(3, 10)):
            cells = []
            if select_col:
                cells.append(f'<td><input type="checkbox"{" checked" if rng.random() < 0.3 else ""}></td>')
            for k in kinds:
                if k == "name":
                    v = self.s.full_name() if rng.random() < 0.7 else self.s.text("cell", max_len=16)
                elif k == "date":
                    v = self.s.date()
                elif k == "status":
                    v = rng.choice(STATUS)
                elif k == "number":
                    v = self.s.number()
                else:
                    v = self.s.text("cell", max_len=16)
                if k == "name" and rng.random() < 0.2:
                    cells.append(f'<td><a href="#">{esc(v)}</a></td>')
                elif k == "status" and rng.random() < 0.5:
                    cells.append(f'<td><span class="u-badge">{esc(v)}</span></td>')
                else:
                    cells.append(f"<td>{esc(v)}</td>")
            if action_col:
                cells.append("<td>" + (self.icon(rng.choice(("edit", "delete", "more", "more-v")), 16)
                                       if rng.random() < 0.6 else self.button(rng.choice(("Edit", "View", "Open")),
                                                                              primary=False)) + "</td>")
            cls = ' class="highlight u-trim"' if r == hl else ' class="u-trim"'
            body.append(f"<tr{cls}>{''.join(cells)}</tr>")
        style = rng.choice(("u-lined", "u-boxed", ""))
        table = f'<table class="{style}"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'
        return self.card(table, title=self.title(("Orders", "Users", "Files", "Invoices", "Results", "Members",
                                                  "Transactions", "Tickets")) if rng.random() < 0.7 else None)

    def list_block(self) -> str:
        rng = self.rng
        n = rng.randint(3, 9)
        variant = rng.choice(("rows", "rows", "links", "bullets", "icons", "listbox", "options", "scroll"))
        if variant == "rows":  # a selectable list: rows are tabled_text, the selected one highlighted
            active = rng.randrange(n) if rng.random() < 0.7 else -1
            items = "".join(f'<li role="option" class="u-trim{" active" if i == active else ""}">'
                            f'{esc(self.pick(NAV + FOLDERS, "row", 22))}</li>' for i in range(n))
            inner = f'<ul class="u-list" role="listbox">{items}</ul>'
        elif variant == "options":  # rows with an icon and a secondary text
            active = rng.randrange(n) if rng.random() < 0.5 else -1
            items = "".join(
                f'<li role="option" class="u-row u-trim{" active" if i == active else ""}">{self.icon(size=16)}'
                f'<span>{esc(self.pick(NAV + FOLDERS, "row", 20))}</span>'
                f'<span class="u-muted">{esc(self.s.text("cell", max_len=12))}</span></li>' for i in range(n))
            inner = f'<ul class="u-list" role="listbox">{items}</ul>'
        elif variant == "scroll":  # more rows than the box shows: a scrollbar, the rows cut by it unlabelled
            n += rng.randint(4, 12)
            active = rng.randrange(n) if rng.random() < 0.5 else -1
            items = "".join(f'<li role="option"{" class=active" if i == active else ""}>'
                            f'{esc(self.pick(NAV + FOLDERS + FILES, "row", 22))}</li>' for i in range(n))
            height = round(self.t.size * 1.3 * rng.uniform(3, 7) + 8)
            inner = (f'<ul class="u-list u-scroll u-fit" role="listbox" style="height:{height}px;'
                     f'width:{rng.randint(10, 18)}em;border:1px solid {self.t.border}">{items}</ul>')
        elif variant == "links":
            items = "".join(f'<li class="u-trim"><a href="#">{esc(self.s.text("link", max_len=28))}</a></li>'
                            for _ in range(n))
            inner = f'<ul class="u-list">{items}</ul>'
        elif variant == "bullets":
            tag = rng.choice(("ul", "ol"))
            items = "".join(f'<li class="u-trim">{esc(self.s.text("text", max_len=32))}</li>' for _ in range(n))
            inner = f'<{tag} class="u-blist">{items}</{tag}>'
        elif variant == "icons":
            items = "".join(f'<li class="u-row u-trim">{self.any_icon(size=18)}<span>{esc(self.pick(NAV, "row", 18))}'
                            f"</span></li>" for _ in range(n))
            inner = f'<ul class="u-list">{items}</ul>'
        else:  # a native list box: its options are tabled_text, a scrollbar when it holds more than it shows
            opts = "".join(f'<option{" selected" if rng.random() < 0.2 else ""}>{esc(self.pick(OPTIONS, "row", 18))}'
                           f"</option>" for _ in range(n + rng.randint(0, 6)))
            inner = f'<select multiple size="{rng.randint(3, min(8, n))}">{opts}</select>'
        return self.card(inner, title=self.title() if rng.random() < 0.6 else None)

    def tree_block(self) -> str:
        """A tree: role=tree rows (flat, aria-level) or nested <details>."""
        rng = self.rng
        if rng.random() < 0.3:
            return self.card(self.details_tree(rng.randint(1, 2)), title=self.title(("Topics", "FAQ", "Sections",
                                                                                   "Outline", "Chapters")))
        rows: list[str] = []
        selected = rng.random() < 0.7
        budget = rng.randint(6, 16)

        def add(level: int) -> None:
            nonlocal selected
            for _ in range(rng.randint(1, 4 if level > 1 else 5)):
                if len(rows) >= budget:
                    return
                folder = level < 4 and rng.random() < 0.5
                expanded = folder and rng.random() < 0.55
                name = self.pick(FOLDERS if folder else FILES, "row", 20, generated=0.2)
                sel = selected and rng.random() < 0.15
                selected = selected and not sel
                toggle = f'<span class="u-tg{" u-open" if expanded else ""}{"" if folder else " u-leaf"}"></span>'
                glyph = '<span class="u-fold"></span>' if folder and rng.random() < 0.6 else ""
                aria = f' aria-expanded="{"true" if expanded else "false"}"' if folder else ""
                rows.append(f'<div role="treeitem" class="u-ti u-trim" aria-level="{level}"{aria} '
                            f'aria-selected="{"true" if sel else "false"}" style="margin-left:{(level - 1) * 16}px">'
                            f"{toggle}{glyph}<span>{esc(name)}</span></div>")
                if expanded:
                    add(level + 1)

        add(1)
        return self.card(f'<div role="tree" class="u-tree">{"".join(rows)}</div>',
                         title=self.title(("Explorer", "Folders", "Project", "Categories", "Navigator")))

    def details_tree(self, depth: int) -> str:
        rng = self.rng
        parts = []
        for _ in range(rng.randint(2, 4)):
            opened = rng.random() < 0.5
            inner = (self.details_tree(depth - 1) if depth > 1 and rng.random() < 0.5 else
                     f'<p class="u-wrap" style="max-width:24em">{self.paragraph(rng.randint(1, 2))}</p>')
            parts.append(f'<details class="u-trim"{" open" if opened else ""}><summary>'
                         f'{esc(self.pick(TAB_NAMES + FOLDERS, "label", 24))}</summary>'
                         f'<div class="u-dpad">{inner}</div></details>')
        return "".join(parts)

    def tabs(self, n: int | None = None, *, vertical: bool = False) -> str:
        rng = self.rng
        n = n or rng.randint(2, 6)
        sel = rng.randrange(n)
        look = rng.choice(("u-line", "u-boxtab", "u-pill"))
        names = rng.sample(TAB_NAMES, n) if rng.random() < 0.7 else [self.s.text("button", max_len=14)
                                                                       for _ in range(n)]
        tabs = "".join(f'<span role="tab" class="u-tab" aria-selected="{"true" if i == sel else "false"}">'
                       f'{esc(t)}</span>' for i, t in enumerate(names))
        style = ' style="flex-direction:column;align-items:stretch;border-bottom:none"' if vertical else ""
        return f'<div role="tablist" class="u-tabs {look}"{style}>{tabs}</div>'

    def tabs_block(self) -> str:
        rng = self.rng
        content = rng.choice((
            lambda: (f'<p class="u-wrap" style="max-width:{rng.randint(18, 36)}em">'
                     f"{self.paragraph(rng.randint(1, 3))}</p>"),
            lambda: "".join(f'<div class="u-fit">{self.switch()}</div>' for _ in range(rng.randint(1, 3))),
            lambda: '<div class="u-grid">' + "".join(
                "".join(self.field(kind=rng.choice(("text", "select", "number")))) for _ in range(rng.randint(1, 3)))
            + "</div>",
        ))()
        return self.card(f'<div class="u-fit">{self.tabs()}</div><div class="u-col">{content}</div>')

    def menu(self, n: int | None = None, *, active: bool | None = None) -> str:
        """A menu of role=menuitem rows (shortcuts, separators, submenu arrows), maybe one active."""
        rng = self.rng
        n = n or rng.randint(3, 9)
        act = rng.randrange(n) if (rng.random() < 0.6 if active is None else active) else -1
        items = []
        shortcuts = rng.random() < 0.5
        for i in range(n):
            if i and rng.random() < 0.12:
                items.append(f'<div class="u-sep" style="height:1px;width:auto;margin:{self.t.pad(3)}px 0"></div>')
            text = self.pick(MENU_ITEMS, "row", 22, generated=0.2)
            side = ""
            if shortcuts and rng.random() < 0.5:
                side = f'<span class="u-muted">{esc(rng.choice(SHORTCUTS))}</span>'
            elif rng.random() < 0.1:  # a submenu arrow, drawn by CSS
                side = '<span class="u-tg" style="margin-left:8px"></span>'
            icon = self.icon(size=14) if rng.random() < 0.2 else ""
            items.append(f'<div role="menuitem" class="u-mi{" active" if i == act else ""}">'
                         f'<span class="u-row">{icon}<span>{esc(text)}</span></span>{side}</div>')
        return f'<div role="menu" class="u-menu">{"".join(items)}</div>'

    def menu_block(self) -> str:
        return self.card(self.menu(), cls="u-pad0") if self.rng.random() < 0.3 else (
            f'<div class="u-fit u-box" style="max-width:100%">{self.menu()}</div>')

    def calendar(self, style: str | None = None) -> str:
        """A month of days with its title and previous/next controls, in one of several looks:
        ``modern`` (a grid of day buttons), ``table`` (a jQuery-UI-like datepicker: a header bar,
        weekday row, bordered day cells that are links, today marked) or ``compact`` (a small inline
        table of plain day cells, 10-12 px)."""
        rng = self.rng
        style = style or rng.choices(("modern", "table", "compact"), weights=(2, 3, 2))[0]
        if style == "table":
            return self.table_calendar()
        if style == "compact":
            return self.compact_calendar()
        month = rng.randrange(12)
        year = rng.randint(1995, 2035)
        first = rng.randrange(7)
        days = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month]
        sel = rng.randint(1, days) if rng.random() < 0.8 else -1
        cells = [f'<span class="u-muted" style="text-align:center">{d}</span>' for d in WEEKDAYS]
        cells += ['<span></span>'] * first
        for d in range(1, days + 1):
            cls = "u-bare" if rng.random() < 0.5 and d != sel else ""
            if d == sel:
                cls = "u-pri"
            cells.append(f'<button{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}>{d}</button>')
        name = (MONTHS_LONG if rng.random() < 0.7 else MONTHS)[month]
        head = (f'<div class="u-row" style="justify-content:space-between"><button class="u-bare">‹</button>'
                f'<b>{name} {year}</b><button class="u-bare">›</button></div>')
        return f'<div class="u-col">{head}<div class="u-cal">{"".join(cells)}</div></div>'

    def _month_weeks(self) -> tuple[int, int, list[list[tuple[int, int]]], list[str]]:
        """(month, year, weeks of (day, -1 before / 0 in / 1 after the month), weekday names)."""
        rng = self.rng
        month, year = rng.randrange(12), rng.randint(1995, 2035)
        lengths = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
        days, before = lengths[month], lengths[(month - 1) % 12]
        first = rng.randrange(7)
        cells = [(before - first + 1 + i, -1) for i in range(first)] + [(d, 0) for d in range(1, days + 1)]
        n = 1
        while len(cells) % 7 or (len(cells) < 42 and rng.random() < 0.3):
            cells.append((n, 1))
            n += 1
        names = list(rng.choice((
            ("Su", "Mo", "Tu", "We", "Th", "Fr", "Sa"), WEEKDAYS, ("S", "M", "T", "W", "T", "F", "S"),
            ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"))))
        return month, year, [cells[i:i + 7] for i in range(0, len(cells), 7)], names

    def table_calendar(self) -> str:
        """A jQuery-UI-like datepicker: header bar (Prev/Next links, arrows or icons; "Month Year"),
        weekday header row, day cells with 1 px borders and a light fill; today and the selected day
        marked; days of the months around greyed or blank."""
        rng = self.rng
        month, year, weeks, names = self._month_weeks()
        fs = rng.choice((10, 11, 11, 12, 12, 13, 14))
        border, fill, fg = rng.choice((
            ("#c5c5c5", "#f6f6f6", "#454545"), ("#d3d3d3", "linear-gradient(#ffffff,#e6e6e6)", "#555555"),
            ("#cccccc", "#eeeeee", "#1c94c4"), ("#aaaaaa", "linear-gradient(#f8f8f8,#dcdcdc)", "#222222"),
            ("#b8c7d9", "#e8eef6", "#2e4c6d"), ("#dddddd", "#ffffff", "#333333")))
        hue = rng.randrange(360)
        if rng.random() < 0.4:
            border, fill = f"hsl({hue},25%,72%)", f"linear-gradient(hsl({hue},40%,98%),hsl({hue},30%,88%))"
        head_bg, head_fg = rng.choice((
            ("#e9e9e9", "#333333"), ("linear-gradient(#f0f0f0,#d8d8d8)", "#222222"), ("#cccccc", "#222222"),
            (f"hsl({hue},45%,40%)", "#ffffff"), ("linear-gradient(#6b6b6b,#444444)", "#ffffff"),
            (f"hsl({hue},30%,88%)", "#222")))
        today_style = rng.choice(("border-color:#dad55e;background:#fffa90;color:#777620",
                                  "border-color:#999;background:#ffffff;font-weight:bold",
                                  f"border-color:hsl({hue},50%,45%);background:hsl({hue},60%,85%)"))
        sel_style = f"border-color:{self.t.accent};background:{self.t.accent};color:{self.t.on_accent}"
        other = rng.choice(("blank", "grey", "grey-link"))
        days_in = [d for w in weeks for d, o in w if o == 0]
        today = rng.choice(days_in)
        sel = rng.choice(days_in) if rng.random() < 0.5 else -1
        right = rng.random() < 0.6
        pad = rng.choice((1, 2, 3, 4))
        cell = (f"display:block;border:1px solid {border};background:{fill};color:{fg};text-decoration:none;"
                f"padding:{pad}px {pad + 1}px;text-align:{'right' if right else 'center'};")
        rows = []
        for week in weeks:
            tds = []
            for d, o in week:
                if o and other == "blank":
                    tds.append('<td style="padding:1px"></td>')
                    continue
                st = cell
                if o:
                    st += "opacity:.55;"
                elif d == sel:
                    st += sel_style + ";"
                elif d == today:
                    st += today_style + ";"
                if o and other == "grey":
                    tds.append(f'<td style="padding:1px"><span style="{st}">{d}</span></td>')
                else:
                    tds.append(f'<td style="padding:1px"><a href="#" style="{st}">{d}</a></td>')
            rows.append(f"<tr>{''.join(tds)}</tr>")
        th = "".join(f'<th style="padding:{pad}px;text-align:center;background:none;font-weight:bold">{n}</th>'
                     for n in names)
        name = (MONTHS_LONG if rng.random() < 0.8 else MONTHS)[month]
        nav = rng.choice(("words", "arrows", "icons", "buttons"))
        link_st = f"color:{head_fg};text-decoration:{rng.choice(('none', 'underline'))};"
        if nav == "words":
            prev, nxt = rng.choice((("Prev", "Next"), ("<Prev", "Next>"), ("« Prev", "Next »"), ("Previous", "Next")))
            prev, nxt = (f'<a href="#" style="{link_st}">{esc(t)}</a>' for t in (prev, nxt))
        elif nav == "arrows":
            prev, nxt = rng.choice((("‹", "›"), ("«", "»"), ("◀", "▶"), ("<", ">")))
            prev, nxt = (f'<a href="#" style="{link_st}font-weight:bold;padding:0 4px">{esc(t)}</a>'
                         for t in (prev, nxt))
        elif nav == "icons":
            size = rng.choice((12, 14, 16))
            prev, nxt = self.icon("chev-left", size, colour=head_fg), self.icon("chev-right", size, colour=head_fg)
        else:
            prev, nxt = (f'<button style="font-size:{fs}px;padding:0 {pad + 2}px;border:1px solid {border};'
                         f'background:{fill};color:{fg};border-radius:{rng.choice((0, 2, 3))}px">{esc(t)}</button>'
                         for t in rng.choice((("‹", "›"), ("<", ">"), ("Prev", "Next"))))
        title = f'<span style="font-weight:bold;flex:1;text-align:center">{esc(name)} {year}</span>'
        head = (f'<div style="display:flex;align-items:center;gap:4px;padding:{pad + 2}px {pad + 3}px;'
                f'background:{head_bg};color:{head_fg};border:1px solid {border};'
                f'border-radius:{rng.choice((0, 3, 4))}px">{prev}{title}{nxt}</div>')
        table = (f'<table style="border-collapse:separate;border-spacing:{rng.choice((0, 1, 2))}px;margin-top:2px">'
                 f"<thead><tr>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        frame = rng.choice(("#ffffff", "#f4f4f4", "#eeeeee"))
        return (f'<div style="display:inline-block;font-size:{fs}px;line-height:1.2;font-family:'
                f'{rng.choice(("Verdana,sans-serif", "Arial,sans-serif", "inherit", "Trebuchet MS,sans-serif"))};'
                f'padding:{rng.choice((0, 2, 3))}px;background:{frame};color:#333;'
                f'border:1px solid {rng.choice(("#dddddd", "#aaaaaa", border))};border-radius:{rng.choice((0, 4))}px">'
                f"{head}{table}</div>")

    def compact_calendar(self) -> str:
        """A small inline month: plain day cells (text in a table), or small day buttons; 10-12 px."""
        rng = self.rng
        month, year, weeks, names = self._month_weeks()
        fs = rng.choice((10, 11, 11, 12))
        as_buttons = rng.random() < 0.4
        lines = rng.random() < 0.4
        days_in = [d for w in weeks for d, o in w if o == 0]
        today = rng.choice(days_in)
        hl = f"background:{self.t.accent};color:{self.t.on_accent};border-radius:{rng.choice((0, 2, 50))}%"
        edge = f"border:1px solid {self.t.border};" if lines else ""
        other = rng.choice(("blank", "grey"))
        rows = []
        for week in weeks:
            tds = []
            for d, o in week:
                st = f"padding:1px 3px;text-align:center;{edge}"
                if o and other == "blank":
                    tds.append(f'<td style="{st}"></td>')
                    continue
                if o:
                    st += f"color:{self.t.muted};"
                elif d == today:
                    st += hl + ";"
                if as_buttons:
                    tds.append(f'<td style="padding:0;{edge}"><button class="u-bare" style="font-size:{fs}px;'
                               f'padding:1px 3px;width:100%;{st}">{d}</button></td>')
                else:
                    tds.append(f'<td style="{st}">{d}</td>')
            rows.append(f"<tr>{''.join(tds)}</tr>")
        th = "".join(f'<th style="padding:1px 3px;text-align:center;font-weight:normal;color:{self.t.muted};'
                     f'background:none">{n[:2]}</th>' for n in names)
        name = (MONTHS_LONG if rng.random() < 0.6 else MONTHS)[month]
        prev, nxt = rng.choice((("‹", "›"), ("«", "»"), ("<", ">"), ("◄", "►")))
        head = (f'<div class="u-row" style="justify-content:space-between;gap:4px"><button class="u-bare" '
                f'style="font-size:{fs + 1}px;padding:0 4px">{prev}</button><b>{esc(name)} {year}</b>'
                f'<button class="u-bare" style="font-size:{fs + 1}px;padding:0 4px">{nxt}</button></div>')
        return (f'<div style="display:inline-block;font-size:{fs}px;line-height:1.2">{head}'
                f'<table style="border-collapse:collapse"><thead><tr>{th}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table></div>")

    def calendar_block(self) -> str:
        """One calendar in any of its looks, alone or in a card, sometimes with a date field above."""
        rng = self.rng
        cal = self.calendar(rng.choices(("modern", "table", "compact"), weights=(1, 3, 2))[0])
        field = ""
        if rng.random() < 0.3:
            label, ctl = self.field(self.pick(("Date", "Check-in", "Departure", "Due date"), "label", 14),
                                    kind=rng.choice(("date", "text")))
            field = f'<div class="u-row u-fit">{label}{ctl}</div>'
        if rng.random() < 0.5:
            title = self.title(("Pick a date", "Calendar", "Select date")) if rng.random() < 0.4 else None
            return self.card(f'{field}<div class="u-fit">{cal}</div>', title=title)
        return f'<div class="u-col u-box u-fit" style="max-width:100%">{field}<div class="u-fit">{cal}</div></div>'

    # --- plots, checkbox grids, flat (Tk-like) forms ----------------------------------------------------
    def plot_block(self) -> str:
        """A 2-D plot with axes, ticks and tick labels, small round points on it (SVG circles:
        shapes, ``point`` up to 6 px, ``circle`` above); axes, ticks and grid lines are paths (not
        labelled), tick labels are text."""
        rng = self.rng
        w, h = rng.choice(((120, 100), (160, 120), (200, 150), (240, 180), (280, 200), (300, 240), (180, 180),
                           (220, 220), (360, 260)))
        centred = rng.random() < 0.3  # axes crossing in the middle, negative values on the left and below
        left, bottom = rng.choice((22, 26, 30)), rng.choice((18, 20, 24))
        top, right = rng.choice((6, 8, 12)), rng.choice((6, 8, 12))
        if centred:
            left, bottom = rng.choice((6, 10)), rng.choice((6, 10))
        pw, ph = w - left - right, h - top - bottom
        nx, ny = rng.randint(3, 8), rng.randint(3, 6)
        x0, y0 = rng.choice((0, 0, 0, -5, 1)), rng.choice((0, 0, -3, 1))
        sx, sy = rng.choice((1, 1, 2, 5, 10)), rng.choice((1, 1, 2, 5, 10))
        if centred:
            nx, ny = 2 * rng.randint(2, 5), 2 * rng.randint(2, 4)
            x0, y0 = -nx // 2 * sx, -ny // 2 * sy
        fs = rng.choice((9, 10, 10, 11, 12))
        bg = rng.choice(("transparent", "#ffffff", "#fafafa", "#f4f6f8"))
        axis = rng.choice((self.t.text, self.t.muted) if bg == "transparent" else ("#000", "#333", "#555"))
        paths, labels = [], []
        if rng.random() < 0.5:  # grid lines
            g = [f"M{left + pw * i / nx:.1f} {top}V{top + ph}" for i in range(nx + 1)]
            g += [f"M{left} {top + ph - ph * j / ny:.1f}H{left + pw}" for j in range(ny + 1)]
            paths.append(f'<path d="{"".join(g)}" stroke="{rng.choice(("#ddd", "#e8e8e8", "#ccc"))}" fill="none" '
                         f'stroke-dasharray="{rng.choice(("", "2 2", "4 3"))}"/>')
        # where the axes run: the left and bottom edges, or through the middle
        ax, ay = (left + pw / 2, top + ph / 2) if centred else (left, top + ph)
        tx, ty = ("m0 -3v6", "m3 0h-6") if centred else ("v4", "h-4")  # ticks across the axis, or out of it
        ticks = [f"M{left + pw * i / nx:.1f} {ay:.1f}{tx}" for i in range(nx + 1)]
        ticks += [f"M{ax:.1f} {top + ph - ph * j / ny:.1f}{ty}" for j in range(ny + 1)]
        axes = (f"M{left} {ay:.1f}H{left + pw}M{ax:.1f} {top}V{top + ph}" if centred else
                f"M{left} {top}V{top + ph}H{left + pw}")
        paths.append(f'<path d="{axes}{"".join(ticks)}" stroke="{axis}" '
                     f'stroke-width="{rng.choice((1, 1, 1.5, 2))}" fill="none"/>')
        every = rng.choice((1, 1, 2)) if not centred or min(nx, ny) > 4 else 1
        # tick numbers: under the x axis, left of the y axis (none at a centred origin or its ends)
        for n, start, step, place in (
                (nx, x0, sx, lambda i: f"left:{left + pw * i / nx:.0f}px;top:{ay + 5:.0f}px;"
                                       "transform:translateX(-50%)"),
                (ny, y0, sy, lambda j: f"right:{w - ax + 6:.0f}px;top:{top + ph - ph * j / ny:.0f}px;"
                                       "transform:translateY(-50%)")):
            for i in range(0, n + 1, every):
                value = start + i * step
                if not (centred and (value == 0 or i in (0, n))):
                    labels.append(f'<span style="position:absolute;{place(i)}">{value}</span>')
        dots: list[str] = []
        placed: list[tuple[float, float]] = []
        r = rng.choice((2.5, 3, 3, 4, 4, 4, 5, 6))
        dark = bg == "transparent" and self.t.dark  # the points on the theme's dark background: bright ones
        colour = rng.choice((f"hsl({rng.randrange(360)},80%,65%)", "#ff6b6b", "#4fc3f7", "#ffd54f", "#fff") if dark else
                            ("#000", "#333", f"hsl({rng.randrange(360)},70%,45%)", "#d33", "#1565c0", "#2e7d32"))
        on_grid = rng.random() < 0.5
        for _ in range(rng.randint(2, 14)):
            for _try in range(10):
                if on_grid:
                    x, y = left + pw * rng.randint(0, nx) / nx, top + ph - ph * rng.randint(0, ny) / ny
                else:
                    x, y = rng.uniform(left + r + 2, left + pw - r), rng.uniform(top + r, top + ph - r - 2)
                clear = centred or (x - r > left + 1 and y + r < top + ph - 1)  # off the axes
                if clear and all((x - a) ** 2 + (y - b) ** 2 > (3 * r) ** 2 for a, b in placed):
                    placed.append((x, y))
                    c = colour if rng.random() < 0.8 else f"hsl({rng.randrange(360)},70%,{65 if dark else 45}%)"
                    ring = f' stroke="{rng.choice(("#000", "#fff"))}" stroke-width="1"' if rng.random() < 0.2 else ""
                    dots.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{c}"{ring}/>')
                    break
        svg = (f'<svg width="{w}" height="{h}" style="position:absolute;left:0;top:0">{"".join(paths)}'
               f'{"".join(dots)}</svg>')
        plot = (f'<div style="position:relative;width:{w}px;height:{h}px;font-size:{fs}px;line-height:1;'
                f'background:{bg};color:{axis};flex:none">{svg}{"".join(labels)}</div>')
        title = self.title(("Plot", "Points", "Scatter", "Chart", "Graph", "Coordinates")) if rng.random() < 0.5 \
            else None
        return self.card(f'<div class="u-fit">{plot}</div>', title=title) if rng.random() < 0.7 else \
            f'<div class="u-fit u-box" style="max-width:100%">{plot}</div>'

    def checkgrid_block(self) -> str:
        """A block of checkboxes in rows and columns (3x3 to 5x5 mostly), native or drawn as plain
        squares, tightly packed or spaced, bare or with a label (a number, a letter, a word) each."""
        rng = self.rng
        rows, cols = rng.randint(2, 6), rng.randint(2, 6)
        if rng.random() < 0.6:
            rows = cols = rng.randint(3, 5)
        size = rng.choice((10, 12, 13, 14, 16, 18, 20))
        gap = rng.choice((0, 1, 2, 3, 4, 6, 8, 12))
        custom = rng.random() < 0.55
        radius = rng.choice((0, 0, 2, 3, 4))
        edge = rng.choice(("#767676", "#333", "#999", self.t.border, "#000"))
        on_bg = rng.choice((self.t.accent, "#1a73e8", "#333", "#2e7d32"))
        labels = rng.choice(("none", "none", "number", "letter", "word"))
        start = rng.choice((0, 1))
        if rng.random() < 0.3:  # a table: a header row and column, a checkbox in each cell
            corner = '<th style="background:none"></th>'
            head = "<tr>" + corner + "".join(f'<th style="background:none;text-align:center;padding:2px 4px">'
                                             f"{esc(t)}</th>" for t in self._grid_heads(cols)) + "</tr>"
            body = ""
            for r_name in self._grid_heads(rows, rows=True):
                cells = "".join(f'<td style="padding:{gap // 2 + 1}px;text-align:center">'
                                f"{self._grid_box(size, custom, radius, edge, on_bg)}</td>" for _ in range(cols))
                body += f'<tr class="u-trim"><th style="background:none;padding:2px 4px">{esc(r_name)}</th>{cells}</tr>'
            inner = f'<table style="border-collapse:collapse">{head}{body}</table>'
        else:
            items = []
            for i in range(rows * cols):
                box = self._grid_box(size, custom, radius, edge, on_bg)
                if labels == "none":
                    items.append(f'<span style="display:inline-flex">{box}</span>')
                    continue
                text = (str(i + start) if labels == "number" else chr(65 + i % 26) if labels == "letter" else
                        self.pick(OPTIONS, "label", 10))
                items.append(f'<label class="u-row" style="gap:{rng.choice((2, 4))}px">{box}{esc(text)}</label>')
            inner = (f'<div style="display:grid;grid-template-columns:repeat({cols},auto);gap:{gap}px '
                     f'{gap if labels == "none" else gap + rng.choice((4, 8, 12))}px;width:max-content;'
                     f'justify-items:start">{"".join(items)}</div>')
        title = self.title(("Select all that apply", "Seats", "Options", "Days", "Grid", "Permissions")) \
            if rng.random() < 0.5 else None
        return self.card(f'<div class="u-fit">{inner}</div>', title=title)

    def _grid_heads(self, n: int, rows: bool = False) -> list[str]:
        rng = self.rng
        kind = rng.choice(("num", "letter", "word"))
        if kind == "num":
            return [str(i + 1) for i in range(n)]
        if kind == "letter":
            return [chr(65 + i) for i in range(n)]
        words = ("Read", "Write", "Run", "Edit", "Admin", "View") if rows else \
            ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
        return list(words[:n])

    def _grid_box(self, size: int, custom: bool, radius: int, edge: str, on_bg: str) -> str:
        on = self.rng.random() < 0.35
        if not custom:
            return f'<input type="checkbox"{" checked" if on else ""} style="width:{size}px;height:{size}px;margin:0">'
        check = ("background-image:url(&quot;data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' "
                 "viewBox='0 0 16 16'%3E%3Cpath d='M3 8l3.5 3.5L13 5' stroke='white' stroke-width='2.2' "
                 "fill='none'/%3E%3C/svg%3E&quot;);background-size:100% 100%;")
        fill = f"background-color:{on_bg};border-color:{on_bg};{check}" if on else "background-color:#fff;"
        return (f'<input type="checkbox"{" checked" if on else ""} style="appearance:none;-webkit-appearance:none;'
                f'width:{size}px;height:{size}px;margin:0;border:{self.rng.choice((1, 1, 2))}px solid {edge};'
                f'border-radius:{radius}px;{fill}flex:none">')

    def flatform_block(self) -> str:
        """A Tk-like form: a grey window panel, plain labels, flat or sunken 1-2 px entries with no
        rounding and no placeholder (mostly empty), raised buttons."""
        rng = self.rng
        bg = rng.choice(("#d9d9d9", "#d9d9d9", "#d4d0c8", "#ececec", "#e0e0e0", "#f0f0f0"))
        field_bg = rng.choice(("#ffffff", "#ffffff", "#ffffff", bg, "#f5f5f5"))
        relief = rng.choice(("sunken", "sunken", "flat", "solid"))
        bw = rng.choice((1, 2, 2)) if relief == "sunken" else rng.choice((1, 1, 2))
        edge = {"sunken": f"{bw}px inset {bg}", "flat": f"{bw}px solid #7a7a7a",
                "solid": f"{bw}px solid {rng.choice(('#000', '#444', '#a0a0a0'))}"}[relief]
        ring = f"outline:1px solid {rng.choice((bg, '#b0b0b0', '#000'))};" if rng.random() < 0.3 else ""
        fs = rng.choice((11, 12, 12, 13, 14))
        font = rng.choice(("DejaVu Sans,sans-serif", "Liberation Sans,Arial,sans-serif", "inherit",
                           "Helvetica,Arial,sans-serif"))
        colon = rng.random() < 0.5
        rows = []
        for _ in range(rng.randint(1, 5)):
            fid = self.new_id("f")
            label = self.pick(FORM_LABELS, "label", 16) + (":" if colon else "")
            value = "" if rng.random() < 0.75 else self.s.text("field", max_len=16)
            ch = rng.choice((12, 16, 20, 20, 24, 30))
            entry = (f'<input id="{fid}" type="text" value="{esc(value)}" style="width:{ch * 0.6:.1f}em;'
                     f'font:{fs}px {font};color:#000;background:{field_bg};border:{edge};border-radius:0;'
                     f'padding:{rng.choice((1, 2, 3))}px {rng.choice((1, 2, 3))}px;{ring}'
                     f'margin:{rng.choice((1, 2, 4))}px">')
            rows.append(f'<div class="u-fit u-trim" style="display:contents"><label for="{fid}">{esc(label)}</label>'
                        f"{entry}</div>")
        grid = (f'<div style="display:grid;grid-template-columns:auto auto;gap:{rng.choice((2, 4, 6))}px '
                f'{rng.choice((4, 6, 10))}px;align-items:center;justify-items:{rng.choice(("start", "end"))} start">'
                f'{"".join(rows)}</div>')
        buttons = ""
        if rng.random() < 0.6:
            buttons = '<div class="u-row u-fit" style="gap:6px">' + "".join(
                f'<button style="font:{fs}px {font};color:#000;background:{bg};border:2px outset {bg};border-radius:0;'
                f'padding:2px 10px">{esc(t)}</button>'
                for t in rng.sample(("OK", "Cancel", "Apply", "Submit", "Clear", "Search", "Add", "Quit"),
                                    rng.randint(1, 3))) + "</div>"
        extra = ""
        if rng.random() < 0.3:
            extra = f'<div class="u-fit">{self.checkbox()}</div>'
        title = ""
        if rng.random() < 0.3:
            words = esc(self.title(("Settings", "Login", "Entry", "Search", "Details")))
            title = f'<div class="u-fit" style="font-weight:bold">{words}</div>'
        return (f'<div class="u-box u-fit" style="display:flex;flex-direction:column;gap:6px;max-width:100%;'
                f'overflow:hidden;background:{bg};color:#000;font:{fs}px {font};padding:{rng.choice((4, 8, 10))}px;'
                f'border:{rng.choice(("0", "1px solid #a0a0a0", f"2px ridge {bg}"))};border-radius:0">'
                f"{title}{grid}{extra}{buttons}</div>")

    def datetime_block(self) -> str:
        rng = self.rng
        if rng.random() < 0.5:
            return self.card(self.calendar(), title=self.title(("Pick a date", "Check-in", "Schedule", "Due date"))
                             if rng.random() < 0.5 else None)
        rows = "".join("".join(self.field(self.pick(("Start date", "End date", "Due", "Time", "Arrival",
                                                     "Departure", "Meeting", "Birthday"), "label", 16),
                                          kind=rng.choice(("date", "date", "time", "datetime"))))
                       for _ in range(rng.randint(1, 3)))
        return self.card(f'<div class="u-grid">{rows}</div>', title=self.title(("When", "Booking", "Event")))

    def sliders_block(self) -> str:
        rng = self.rng
        rows = []
        for _ in range(rng.randint(1, 4)):
            label = self.pick(("Volume", "Brightness", "Zoom", "Price", "Opacity", "Speed", "Balance", "Size",
                               "Contrast", "Quality"), "label", 14)
            value = f'<span class="u-muted">{rng.randint(0, 100)}{rng.choice(("", "%", " px", " dB"))}</span>'
            rows.append(f'<div class="u-row u-fit u-trim"><span>{esc(label)}</span>{self.slider()}'
                        f'{value if rng.random() < 0.6 else ""}</div>')
        return self.card("".join(rows), title=self.title(("Adjust", "Audio", "Display", "Filters")) if
                         rng.random() < 0.5 else None)

    def spinners_block(self) -> str:
        rng = self.rng
        rows = []
        for _ in range(rng.randint(1, 3)):
            label = self.pick(("Quantity", "Adults", "Children", "Rooms", "Copies", "Width", "Height", "Age",
                               "Count", "Margin"), "label", 14)
            v = rng.randint(0, 99)
            if rng.random() < 0.5:
                ctl = f'<input type="number" value="{v}" style="width:{rng.choice((4, 5, 6))}em">'
            else:
                ctl = (f'<span class="u-row" style="gap:2px">{self.button("−", primary=False)}'
                       f'<input type="text" value="{v}" style="width:3.5em;text-align:center">'
                       f'{self.button("+", primary=False)}</span>')
            rows.append(f'<div class="u-row u-fit u-trim"><span>{esc(label)}</span>{ctl}</div>')
        return self.card("".join(rows))

    def progress_block(self) -> str:
        rng = self.rng
        rows = []
        for _ in range(rng.randint(1, 4)):
            label = self.pick(("Uploading", "Storage", "Progress", "Download", "Battery", "Installing",
                               "Completed", "CPU", "Memory"), "label", 16)
            pct = f'<span class="u-muted">{rng.randint(0, 100)}%</span>' if rng.random() < 0.6 else ""
            if rng.random() < 0.5:
                rows.append(f'<div class="u-col u-fit u-trim"><div class="u-row" style="justify-content:space-between">'
                            f"<span>{esc(label)}</span>{pct}</div>{self.progress()}</div>")
            else:
                rows.append(f'<div class="u-row u-fit u-trim"><span>{esc(label)}</span>{self.progress()}{pct}</div>')
        return self.card("".join(rows), title=self.title(("Status", "Usage", "Transfers", "Tasks")) if
                         rng.random() < 0.5 else None)

    def switches_block(self) -> str:
        rows = "".join(f'<div class="u-fit u-trim">{self.switch()}</div>' for _ in range(self.rng.randint(2, 5)))
        return self.card(rows, title=self.title(("Preferences", "Notifications", "Privacy", "Network")))

    def choices_block(self) -> str:
        rng = self.rng
        name = self.new_id("r")
        radio = rng.random() < 0.5
        n = rng.randint(2, 5)
        on = rng.randrange(n)
        rows = "".join(f'<div class="u-fit u-trim">'
                       f'{self.checkbox(radio=name if radio else None, checked=(i == on) if radio else None)}</div>'
                       for i in range(n))
        return self.card(rows, title=self.title(("Options", "Size", "Plan", "Delivery", "Interests", "Toppings")))

    def pagination(self) -> str:
        rng = self.rng
        total = rng.randint(3, 40)
        cur = rng.randint(1, total)
        pages = sorted({1, total, cur, max(1, cur - 1), min(total, cur + 1)})
        parts = []
        links = rng.random() < 0.4
        prev_text, next_text = rng.choice((("‹", "›"), ("«", "»"), ("Prev", "Next"), ("Previous", "Next"),
                                           ("←", "→")))
        parts.append(self.button(prev_text, primary=False) if not links else f'<a href="#">{prev_text}</a>')
        last = 0
        for p in pages:
            if p - last > 1:
                parts.append("<span>…</span>")
            if links:
                parts.append(f"<b>{p}</b>" if p == cur else f'<a href="#">{p}</a>')
            else:
                parts.append(self.button(str(p), primary=p == cur))
            last = p
        parts.append(self.button(next_text, primary=False) if not links else f'<a href="#">{next_text}</a>')
        return f'<div class="u-row" style="gap:{self.t.pad(4)}px">{"".join(parts)}</div>'

    def pagination_block(self) -> str:
        rng = self.rng
        words = self.s.sentence() if rng.random() < 0.3 else f"Page {rng.randint(1, 9)} of {rng.randint(9, 40)}"
        info = f'<span class="u-muted">{esc(words)}</span>'
        return f'<div class="u-fit u-col">{info if rng.random() < 0.5 else ""}{self.pagination()}</div>'

    def search_box(self) -> str:
        rng = self.rng
        empty = rng.random() < 0.5
        value = "" if empty else self.s.text("field", max_len=20)
        ph = esc(rng.choice(("Search", "Search…", "Find", "Type to search", "Search files", "Filter")))
        width = rng.choice((10, 12, 14, 18))
        if rng.random() < 0.5:  # the magnifier drawn inside the field
            return (f'<span style="position:relative;display:inline-flex;align-items:center">'
                    f'<span style="position:absolute;left:6px;display:inline-flex;z-index:1">'
                    f'{self.icon("search", 14)}</span>'
                    f'<input type="search" value="{esc(value)}" placeholder="{ph}" '
                    f'style="width:{width}em;padding-left:24px"></span>')
        button = (self.button("Search", primary=True) if rng.random() < 0.5 else
                  f'<span class="u-ibtn">{self.icon("search", 16)}</span>')
        return (f'<span class="u-row" style="gap:4px"><input type="search" value="{esc(value)}" placeholder="{ph}" '
                f'style="width:{width}em">{button}</span>')

    def search_block(self) -> str:
        rng = self.rng
        extra = ""
        if rng.random() < 0.5:
            extra = '<div class="u-row u-fit">' + "".join(
                f'<span class="u-badge">{esc(self.pick(OPTIONS, "label", 12))}</span>' for _ in range(rng.randint(1, 4))
            ) + "</div>"
        return self.card(f'<div class="u-fit">{self.search_box()}</div>{extra}')

    def post(self) -> str:
        rng = self.rng
        av = rng.choice((24, 32, 40))
        colour = f"hsl({rng.randrange(360)},50%,55%)"
        head = (f'<div class="u-row"><span class="u-av" style="width:{av}px;height:{av}px;background:{colour}"></span>'
                f'<span class="u-col" style="gap:0"><b>{esc(self.s.full_name())}</b>'
                f'<span class="u-muted">@{esc(self.s.token().lower())} · <a href="#">{rng.randint(1, 59)}'
                f'{rng.choice(("m", "h", "d"))}</a></span></span></div>')
        body = f'<p class="u-wrap" style="max-width:{rng.randint(18, 34)}em">{self.paragraph(rng.randint(1, 2))}</p>'
        image = ""
        if rng.random() < 0.3:
            image = (f'<div class="u-img" style="width:{rng.randint(120, 260)}px;height:{rng.randint(60, 140)}px;'
                     f'background:linear-gradient(135deg,hsl({rng.randrange(360)},40%,60%),hsl({rng.randrange(360)},'
                     f'40%,40%))"></div>')
        acts = []
        for name in rng.sample(("reply", "retweet", "like", "share", "more"), rng.randint(2, 5)):
            counted = name in ("reply", "retweet", "like") and rng.random() < 0.6
            count = f"<span>{rng.randint(0, 999)}</span>" if counted else ""
            acts.append(f'<span class="u-row" style="gap:4px">{self.icon(name, 16, checked=rng.random() < 0.3)}'
                        f"{count}</span>")
        actions = f'<div class="u-row" style="gap:{self.t.pad(18)}px">{"".join(acts)}</div>'
        return f'<div class="u-col u-fit u-trim" style="gap:{self.t.pad(5)}px">{head}{body}{image}{actions}</div>'

    def feed_block(self) -> str:
        posts = "".join(self.post() for _ in range(self.rng.randint(1, 3)))
        return self.card(posts)

    def email_row(self) -> str:
        rng = self.rng
        star = self.icon("important", 16, checked=rng.random() < 0.3)
        return (f'<div class="u-row u-fit u-trim">{star}<b>{esc(self.s.full_name())}</b>'
                f'<span>{esc(self.s.text("text", max_len=30))}</span><span class="u-muted">{esc(self.s.date())}</span>'
                f'{self.icon("delete", 16)}</div>')

    def inbox_block(self) -> str:
        rows = "".join(self.email_row() for _ in range(self.rng.randint(2, 6)))
        return self.card(rows, title=self.title(("Inbox", "Messages", "Starred", "Sent")))

    def text_block(self) -> str:
        rng = self.rng
        heading = f'<div class="u-h u-fit">{esc(self.s.text("text", max_len=36))}</div>' if rng.random() < 0.6 else ""
        paras = "".join(f'<p class="u-wrap u-fit u-trim" style="max-width:{rng.randint(16, 44)}em">'
                        f"{self.paragraph(rng.randint(1, 4))}</p>" for _ in range(rng.randint(1, 3)))
        link = esc(rng.choice(("Read more", "Learn more", "Details", "See all")))
        more = f'<div class="u-fit"><a href="#">{link}</a></div>' if rng.random() < 0.4 else ""
        return (self.card(heading + paras + more) if rng.random() < 0.6 else
                f'<div class="u-col u-box u-fit" style="max-width:100%">{heading}{paras}{more}</div>')

    def links_block(self) -> str:
        rng = self.rng
        sep = rng.choice((" · ", " | ", " / ", " › ", "  "))
        links = [f'<a href="#">{esc(self.pick(NAV, "link", 18))}</a>' for _ in range(rng.randint(2, 6))]
        return f'<div class="u-fit u-row" style="gap:{self.t.pad(4)}px">{sep.join(links)}</div>'

    def shapes_block(self) -> str:
        """A small drawing or chart: SVG circles, rectangles, triangles and lines are shapes."""
        rng = self.rng
        w, h = rng.choice(((160, 100), (200, 120), (240, 140), (120, 120)))
        items = []
        if rng.random() < 0.5:  # bars
            n = rng.randint(3, 8)
            bw = (w - 10) // n - 4
            for i in range(n):
                bh = rng.randint(10, h - 10)
                items.append(f'<rect x="{5 + i * (bw + 4)}" y="{h - 5 - bh}" width="{bw}" height="{bh}" '
                             f'fill="hsl({rng.randrange(360)},55%,55%)"/>')
        else:
            for _ in range(rng.randint(2, 5)):
                kind = rng.choice(("circle", "rect", "tri", "line"))
                c = f"hsl({rng.randrange(360)},60%,50%)"
                x, y = rng.randint(15, w - 15), rng.randint(15, h - 15)
                s = rng.randint(6, 14)
                if kind == "circle":
                    items.append(f'<circle cx="{x}" cy="{y}" r="{s}" fill="{c}"/>')
                elif kind == "rect":
                    items.append(f'<rect x="{x - s}" y="{y - s}" width="{2 * s}" height="{s + 4}" fill="{c}"/>')
                elif kind == "tri":
                    items.append(f'<polygon points="{x},{y - s} {x - s},{y + s} {x + s},{y + s}" fill="{c}"/>')
                else:
                    items.append(f'<line x1="{x - s}" y1="{y - s}" x2="{x + s}" y2="{y + s // 2}" stroke="{c}" '
                                 f'stroke-width="3"/>')
        svg = f'<svg width="{w}" height="{h}" style="display:block">{"".join(items)}</svg>'
        title = self.title(("Chart", "Sales", "Canvas", "Diagram")) if rng.random() < 0.5 else None
        return self.card(f'<div class="u-fit">{svg}</div>', title=title)

    def drag_block(self) -> str:
        """A sortable list: the items' text is draggable_text."""
        items = "".join(f'<div class="u-drag u-fit u-trim"><span class="u-grip"></span>'
                        f'<span>{esc(self.s.text("row", max_len=22))}</span></div>'
                        for _ in range(self.rng.randint(2, 5)))
        return self.card(f'<div class="u-col">{items}</div>', title=self.title(("Drag to reorder", "Backlog", "To do",
                                                                              "Queue", "Playlist")))

    def textarea_block(self) -> str:
        rng = self.rng
        label, ctl = self.field(self.pick(("Comment", "Message", "Notes", "Description", "Feedback", "Bio"),
                                          "label", 14), kind="textarea")
        return self.card(f'<div class="u-col u-fit">{label}{ctl}</div>' +
                         (f'<div class="u-row u-fit">{self.button(primary=True)}</div>' if rng.random() < 0.5 else ""))

    def buttons_block(self) -> str:
        rng = self.rng
        variant = rng.random()
        if variant < 0.3:
            inner = "".join(self.button() for _ in range(rng.randint(2, 4)))
        elif variant < 0.55:  # a segmented control: one segment held down (a stack switcher, a view picker)
            n = rng.randint(2, 5)
            on = rng.randrange(n)
            inner = "".join(self.button(self.pick(TOGGLES, "button", 14), pressed=i == on) for i in range(n))
            inner = f'<span class="u-row" style="gap:0">{inner}</span>'
        elif variant < 0.75:  # toggle buttons, each on or off (Bold, Mute, Wrap)
            inner = "".join(self.button(self.pick(TOGGLES, "button", 14), pressed=rng.random() < 0.45)
                            for _ in range(rng.randint(1, 4)))
        else:  # icon buttons
            inner = "".join(f'<span class="u-ibtn">{self.any_icon(size=rng.choice((16, 18, 20)))}</span>'
                            for _ in range(rng.randint(2, 6)))
        return f'<div class="u-row u-fit">{inner}</div>'

    def keypad_block(self) -> str:
        """A calculator-like pad: a grid of big buttons (28-84 px) with one to four characters each,
        some spanning two columns, flat, raised, rounded or shaded, often under a right-aligned
        display field. Short labels in big frames: the frame is the button, not the glyph."""
        rng = self.rng
        cols, rows = rng.randint(3, 6), rng.randint(2, 5)
        bw, bh = rng.randint(28, 84), rng.randint(24, 64)
        gap = rng.choice((0, 1, 2, 4, 6, 6, 8))
        fs = rng.choice((11, 12, 13, 14, 16, 18, 20))
        radius = rng.choice((0, 0, 2, 3, 4, 6, bh // 2))
        face = rng.choice((self.t.surface, self.t.bg, "#f0f0f0", "#e8e8e8", "#fafafa", "#3a3a3a", "#2b2b2b",
                           self.t.accent))
        dark = face in ("#3a3a3a", "#2b2b2b") or face == self.t.accent
        ink = "#fff" if dark else self.t.text
        look = rng.choice(("gradient", "flat", "outset", "border", "border"))
        if look == "gradient":  # a light shaded face (Qt's Fusion, old Windows): dark glyphs on it
            face, dark, ink = rng.choice(("#fdfdfd", "#f4f4f4", "#ffffff")), False, "#202020"
        edge = rng.choice(("#a0a0a0", "#767676", "#c0c0c0", self.t.border, "#555"))
        shade = {"gradient": f"background:linear-gradient({face},{rng.choice(('#d8d8d8', '#c8c8c8', '#e4e4e4'))});"
                             f"border:1px solid {edge};",
                 "flat": f"background:{face};border:0;",
                 "outset": f"background:{face};border:2px outset {face};",
                 "border": f"background:{face};border:1px solid {edge};"}[look]
        keys = [*"0123456789", "+", "-", "×", "÷", "=", ".", "±", "%", "C", "CE", "MC", "MR", "MS",
                "M+", "x²", "√", "1/x", "Sqrt", "⌫", "(", ")", "AC", "Del", "Ans",
                "sin", "cos", "tan", "ln", "log", "π", "xʸ", "Mod", "Exp", "#", "*"]
        cells, left = [], rows * cols
        while left > 0:
            span = 2 if left >= 2 and rng.random() < 0.12 else 1
            label = rng.choice(("Backspace", "Clear", "Clear All", "Enter", "Space", "0")) if span == 2 else \
                rng.choice(keys)
            colour = rng.choice((ink, ink, ink, "#c00000", "#0050c0")) if not dark else ink
            cells.append(f'<button style="grid-column:span {span};height:{bh}px;{shade}border-radius:{radius}px;'
                         f'color:{colour};font-size:{fs}px;padding:0 2px;margin:0;min-width:0;box-shadow:none">'
                         f"{esc(label)}</button>")
            left -= span
        grid = (f'<div style="display:grid;grid-template-columns:repeat({cols},{bw}px);gap:{gap}px;'
                f'width:max-content">{"".join(cells)}</div>')
        display = ""
        if rng.random() < 0.6:
            value = rng.choice(("0", "0", str(rng.randint(1, 99999)), f"{rng.uniform(0, 1000):.{rng.randint(1, 4)}f}"))
            big = fs + rng.choice((2, 6, 10))
            display = (f'<input type="text" readonly value="{esc(value)}" style="box-sizing:border-box;'
                       f'width:{cols * bw + (cols - 1) * gap}px;text-align:right;font-size:{big}px;'
                       f'margin:0 0 {max(gap, 4)}px 0">')
        pad = rng.choice((0, 4, 8, 12))
        return (f'<div class="u-fit" style="display:inline-block;padding:{pad}px;'
                f'background:{rng.choice(("transparent", self.t.bg, "#e0e0e0", "#202020"))}">{display}{grid}</div>')

    def levels_block(self) -> str:
        """Desktop-toolkit levels: stacked thin bars (3-8 px), sliders drawn as a thin trough under a
        round knob (with tick marks at times), and vertical bars and sliders side by side. Each is
        boxed whole: a slider from knob edge to knob edge, a bar by its trough."""
        rng = self.rng
        trough = rng.choice((self.t.surface2, self.t.border, "#d6d6d6", "#e4e4e4", "#c0c0c0", "#3c3c3c"))
        fill = rng.choice((self.t.accent, "#3584e4", "#2a76c6", "#4a90d9", "#26a269", "#e66100"))
        knob = rng.choice(("#ffffff", "#f6f6f6", self.t.surface, fill))
        edge = rng.choice(("#b6b6b6", "#919191", self.t.border, "#5e5e5e"))

        def bar(length: int, thick: int, vertical: bool) -> str:
            value, r = rng.randint(0, 100), rng.choice((0, 1, 2, thick // 2))
            size = f"width:{thick}px;height:{length}px" if vertical else f"width:{length}px;height:{thick}px"
            part = f"left:0;right:0;bottom:0;height:{value}%" if vertical else f"left:0;top:0;bottom:0;width:{value}%"
            return (f'<span role="progressbar" aria-valuenow="{value}" style="position:relative;display:inline-block;'
                    f'flex:none;{size};border-radius:{r}px;background:{trough};overflow:hidden">'
                    f'<span style="position:absolute;{part};background:{fill}"></span></span>')

        def slider(length: int, vertical: bool) -> str:
            k, rail, pos = rng.choice((12, 14, 16, 18, 20, 22)), rng.choice((2, 3, 4, 6)), rng.randint(0, 100)
            marks = rng.random() < 0.3
            across = k + (6 if marks else 0)
            size = f"width:{across}px;height:{length}px" if vertical else f"width:{length}px;height:{across}px"
            off = (k - rail) // 2
            rail_css = (f"left:{off}px;top:{k // 2}px;bottom:{k // 2}px;width:{rail}px" if vertical else
                        f"top:{off}px;left:{k // 2}px;right:{k // 2}px;height:{rail}px")
            at = f"calc({100 - pos}% - {(100 - pos) * k / 100:.1f}px)"
            knob_css = f"left:0;top:{at}" if vertical else f"top:0;left:calc({pos}% - {pos * k / 100:.1f}px)"
            ticks = ""
            if marks:
                n = rng.choice((3, 5, 11))
                for i in range(n):
                    q = f"calc({k // 2}px + (100% - {k}px) * {i / (n - 1):.3f})"
                    tick = "height:1px;width:5px" if vertical else "width:1px;height:5px"
                    ticks += (f'<span style="position:absolute;{"left" if vertical else "top"}:{k + 1}px;'
                              f'{"top" if vertical else "left"}:{q};{tick};background:{edge}"></span>')
            return (f'<span role="slider" aria-valuenow="{pos}" style="position:relative;display:inline-block;'
                    f'flex:none;{size}"><span style="position:absolute;{rail_css};border-radius:{rail // 2}px;'
                    f'background:{trough}"></span>{ticks}<span style="position:absolute;{knob_css};width:{k}px;'
                    f'height:{k}px;box-sizing:border-box;border-radius:50%;background:{knob};border:1px solid {edge}">'
                    "</span></span>")

        kind = rng.choice(("bars", "sliders", "vertical", "mixed"))
        gap = rng.choice((2, 4, 6, 8, 12))
        items = []
        if kind in ("bars", "mixed"):
            length, thick = rng.choice((120, 160, 220, 280, 320)), rng.choice((3, 4, 5, 6, 8))
            items += [f'<div class="u-fit u-trim">{bar(length, thick, False)}</div>' for _ in range(rng.randint(2, 5))]
        if kind in ("sliders", "mixed"):
            length = rng.choice((120, 160, 220, 280, 320))
            items += [f'<div class="u-fit u-trim">{slider(length, False)}</div>' for _ in range(rng.randint(1, 3))]
        if kind in ("vertical", "mixed") or rng.random() < 0.3:
            length = rng.choice((80, 120, 160, 200, 240))
            parts = [bar(length, rng.choice((4, 6, 8)), True) if rng.random() < 0.5 else slider(length, True)
                     for _ in range(rng.randint(1, 4))]
            items.append(f'<div class="u-fit u-row" style="gap:{rng.choice((8, 12, 20, 30))}px;align-items:flex-start">'
                         f'{"".join(parts)}</div>')
        return self.card(f'<div style="display:flex;flex-direction:column;gap:{gap}px">{"".join(items)}</div>',
                         title=self.title(("Levels", "Volume", "Progress", "Scales", "Balance")) if rng.random() < 0.4
                         else None)

    def stats_block(self) -> str:
        rng = self.rng
        items = []
        for _ in range(rng.randint(1, 3)):
            items.append(f'<div class="u-col u-fit"><span class="u-muted">{esc(self.pick(NAV, "label", 16))}</span>'
                         f'<span style="font-size:1.8em;font-weight:bold">{esc(self.s.number())}</span>'
                         + (self.progress(120) if rng.random() < 0.4 else "") + "</div>")
        gap = self.t.pad(20)
        return self.card(f'<div class="u-row" style="gap:{gap}px;align-items:flex-start">{"".join(items)}</div>')

    def dialog(self) -> str:
        """The inside of a dialog: title with a close button, text, maybe a field, buttons."""
        rng = self.rng
        title = self.pick(("Delete file?", "Confirm", "Save changes?", "Sign in", "Rename", "Warning",
                           "Unsaved changes", "New folder", "Share", "Error"), "label", 24)
        close = f'<button class="u-bare">{rng.choice(("×", "✕"))}</button>' if rng.random() < 0.8 else ""
        head = f'<div class="u-row" style="justify-content:space-between"><b>{esc(title)}</b>{close}</div>'
        body = f'<p class="u-wrap" style="max-width:{rng.randint(16, 28)}em">{self.paragraph(rng.randint(1, 2))}</p>'
        field = ""
        if rng.random() < 0.4:
            label, ctl = self.field(kind=rng.choice(("text", "password", "select")))
            field = f'<div class="u-col">{label}{ctl}</div>'
        if rng.random() < 0.3:
            field += self.checkbox()
        buttons = "".join(self.button(b, primary=i == 0) for i, b in enumerate(
            rng.sample(("OK", "Cancel", "Delete", "Save", "Don't save", "Yes", "No", "Continue", "Close"),
                       rng.randint(1, 3))))
        foot = f'<div class="u-row" style="justify-content:flex-end">{buttons}</div>'
        return f'<div class="u-dlg">{head}{body}{field}{foot}</div>'

    # --- bars ---------------------------------------------------------------------------------------------
    def menubar(self) -> tuple[str, list[str]]:
        """A menu bar of role=menuitem titles; returns (html, the titles' element ids)."""
        rng = self.rng
        n = rng.randint(3, 8)
        titles = rng.sample(MENU_TITLES, n)
        ids = [self.new_id("m") for _ in titles]
        items = "".join(f'<span role="menuitem" id="{i}" class="u-mb u-fit">{esc(t)}</span>'
                        for i, t in zip(ids, titles, strict=True))
        return f'<div role="menubar" class="u-bar u-box" style="gap:{self.t.pad(2)}px">{items}</div>', ids

    def header(self) -> str:
        rng = self.rng
        parts = []
        if rng.random() < 0.4:
            parts.append(f'<span class="u-ibtn u-fit">{self.icon("menu", 20)}</span>')
        brand = esc(self.s.text("button", max_len=14) if rng.random() < 0.5 else rng.choice(
            ("Acme", "Dashboard", "MyApp", "Northwind", "Mailbox", "Studio", "Console", "Admin")))
        parts.append(f'<b class="u-fit" style="font-size:1.2em">{brand}</b>')
        nav = rng.random()
        if nav < 0.35:
            parts += [f'<a class="u-fit" href="#">{esc(self.pick(NAV, "link", 14))}</a>'
                      for _ in range(rng.randint(2, 5))]
        elif nav < 0.6:
            parts.append(f'<div class="u-fit">{self.tabs()}</div>')
        parts.append('<span style="flex:1"></span>')
        if rng.random() < 0.5:
            parts.append(f'<span class="u-fit">{self.search_box()}</span>')
        for name in rng.sample(("bell", "settings", "user", "mail", "help"), rng.randint(0, 3)):
            if name == "help":
                parts.append(f'<span class="u-fit">{self.glyph(rng.choice("⚙✉⋮"), 18)}</span>')
            else:
                parts.append(f'<span class="u-ibtn u-fit">{self.icon(name, 18)}</span>')
        if rng.random() < 0.3:
            button = self.button(rng.choice(("Sign in", "Log out", "New", "Upgrade")))
            parts.append(f'<span class="u-fit">{button}</span>')
        return f'<div class="u-bar u-box">{"".join(parts)}</div>'

    def toolbar(self) -> str:
        rng = self.rng
        parts = []
        for _ in range(rng.randint(3, 14)):
            r = rng.random()
            if r < 0.12:
                parts.append('<span class="u-sep u-fit"></span>')
            elif r < 0.2:
                _, ctl = self.field(kind="select")
                parts.append(f'<span class="u-fit">{ctl}</span>')
            elif r < 0.25:
                parts.append(f'<span class="u-fit">{self.button(primary=False)}</span>')
            else:
                parts.append(f'<span class="u-ibtn u-fit">{self.any_icon(size=rng.choice((16, 18, 20)))}</span>')
        if rng.random() < 0.3:
            parts.append('<span style="flex:1"></span>')
            parts.append(f'<span class="u-fit">{self.search_box()}</span>')
        return f'<div class="u-tools u-box">{"".join(parts)}</div>'

    def footer(self) -> str:
        rng = self.rng
        parts = [f'<span class="u-muted u-fit">{esc(self.s.text("text", max_len=36))}</span>']
        r = rng.random()
        if r < 0.3:
            parts.append(f'<span class="u-fit">{self.pagination()}</span>')
        elif r < 0.6:
            words = ("Privacy", "Terms", "Help", "Contact", "About")
            parts += [f'<a class="u-fit" href="#">{esc(self.pick(words, "link", 12))}</a>'
                      for _ in range(rng.randint(1, 4))]
        else:
            parts.append(f'<span class="u-fit">{self.progress(rng.choice((80, 120)))}</span>')
        return f'<div class="u-foot u-box">{"".join(parts)}</div>'

    def sidebar_content(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.35:  # navigation rows with icons, one active
            n = rng.randint(3, 10)
            act = rng.randrange(n)
            rows = "".join(f'<div role="option" class="u-row u-mi u-fit u-trim{" active" if i == act else ""}" '
                           f'style="justify-content:flex-start">{self.icon(size=16)}'
                           f'<span>{esc(self.pick(NAV, "row", 16))}</span></div>' for i in range(n))
            return rows
        if r < 0.6:
            return self.tree_block()
        if r < 0.75:
            return f'<div class="u-fit">{self.tabs(vertical=True)}</div>'
        if r < 0.87:
            return self.switches_block() + self.sliders_block()
        return "".join(f'<div class="u-fit u-trim"><a href="#">{esc(self.pick(NAV, "link", 16))}</a></div>'
                       for _ in range(rng.randint(3, 8)))


# The blocks of the main area, with how often each is picked.
BLOCKS: dict[str, tuple[Callable[[Builder], str], float]] = {
    "form": (Builder.form_block, 5), "table": (Builder.table_block, 4), "list": (Builder.list_block, 4),
    "tree": (Builder.tree_block, 4), "tabs": (Builder.tabs_block, 4), "menu": (Builder.menu_block, 2),
    "datetime": (Builder.datetime_block, 3), "sliders": (Builder.sliders_block, 3),
    "spinners": (Builder.spinners_block, 2), "progress": (Builder.progress_block, 3),
    "switches": (Builder.switches_block, 3), "choices": (Builder.choices_block, 2),
    "pagination": (Builder.pagination_block, 2), "search": (Builder.search_block, 2),
    "feed": (Builder.feed_block, 3), "inbox": (Builder.inbox_block, 1.5), "text": (Builder.text_block, 4),
    "links": (Builder.links_block, 1.5), "shapes": (Builder.shapes_block, 1), "drag": (Builder.drag_block, 1),
    "textarea": (Builder.textarea_block, 1), "buttons": (Builder.buttons_block, 2.5),
    "stats": (Builder.stats_block, 1.5), "calendar": (Builder.calendar_block, 1.5),
    "dots": (Builder.plot_block, 1.5), "checkgrid": (Builder.checkgrid_block, 1.5),
    "flatform": (Builder.flatform_block, 1.5), "keypad": (Builder.keypad_block, 1.5),
    "levels": (Builder.levels_block, 1.5),
    "gauges": (toolkit.gauges_block, 1), "scrollpane": (toolkit.scrollpane_block, 1),
    "textview": (toolkit.textview_block, 1), "notebook": (toolkit.notebook_block, 1),
    "swatches": (toolkit.swatches_block, 1),
}
