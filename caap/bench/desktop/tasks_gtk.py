"""Desktop benchmark tasks in GTK applications (see ``caap.bench.desktop.tasks``): the GTK 3 and GTK 4
widget factories and GTK 3's demo (reserved for evaluation), GTK 4 demo pages and GTK 3's file
chooser (training).

Instructions use the sentence shapes of ``caap.testing.planner.policies.desktop_tasks`` where they
fit and those of ``desktop_gtk`` otherwise; every check reads the application's own state (AT-SPI
nodes, or zenity's answer). Where a widget can only be told from its neighbours by its place in the
tree (GTK 4 names many nodes after their class, "GtkScale", "Tab"), the check names it by index and
the seeded parameters fill in, per index, the state or value it must end in.
"""

from __future__ import annotations

from caap.bench.desktop.checks import Node, Output
from caap.bench.desktop.task import DesktopTask

NAMES = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Ken Thompson",
         "Margaret Hamilton", "Donald Knuth")
WORDS = ("invoice", "holiday", "backup", "draft", "archive", "summary", "meeting", "budget", "contract", "photos")


def _split(keys: str, value: str) -> dict[str, str]:
    """A combined parameter ``a|b|c`` as the fields ``keys`` (space-separated) name."""
    return dict(zip(keys.split(), value.split("|"), strict=True))


# --- the GTK 3 widget factory (reserved) -----------------------------------------------------------

GTK3_FACTORY_COMBOS = ("Left", "Middle", "Right")  # three drop-downs, each showing one of these


def _factory_toggle(p: dict[str, str]) -> dict[str, str]:
    # Page 2's "Row 1" switch has no name of its own: it is the page's first nameless switch.
    return _split("page control node", p["which"])


def _factory_menu(p: dict[str, str]) -> dict[str, str]:
    # What the menu entry hides: the toolbar (its "Insert" button) or the status bar.
    return {"Toolbar": {"role": "push button", "gone": "Insert"},
            "Statusbar": {"role": "status bar", "gone": "All systems are operating normally."}}[p["item"]]


GTK3_FACTORY: tuple[DesktopTask, ...] = (
    DesktopTask(
        "gtk3-factory-tree-collapse", app="gtk3-widget-factory",
        params={"name": ("Pepin the Short", "Charles Martel", "Pepin of Herstal", "Rotrude", "Liévin de Trèves")},
        instruction='On the "Page 3" page, collapse "{name}" in the tree.',
        checks=(Node("radio button", "Page 3", states=("checked",)),
                Node("tree item", "{name}", states=("!expanded",))),
        kinds=("tree", "multi-screen")),
    DesktopTask(
        "gtk3-factory-toggle-on", app="gtk3-widget-factory",
        params={"which": ("Page 2|Row 1|", "Page 3|Record|Record")},
        derive=_factory_toggle,
        instruction='On the "{page}" page, turn on "{control}".',
        checks=(Node("radio button", "{page}", states=("checked",)),
                Node("switch", "{node}", states=("checked",))),
        kinds=("choice", "multi-screen")),
    DesktopTask(
        "gtk3-factory-menu-hide", app="gtk3-widget-factory",
        params={"item": ("Toolbar", "Statusbar")},
        derive=_factory_menu,
        instruction='On the "Page 2" page, choose "View > {item}" from the menu bar.',
        checks=(Node("radio button", "Page 2", states=("checked",)),
                Node("{role}", "{gone}", exists=False)),
        kinds=("menu", "multi-screen")),
    DesktopTask(
        "gtk3-factory-combo-choose", app="gtk3-widget-factory",
        params={"pair": tuple(f"{a}|{b}" for a in GTK3_FACTORY_COMBOS for b in GTK3_FACTORY_COMBOS if a != b)},
        derive=lambda p: _split("combo choice", p["pair"]),
        instruction='Choose "{choice}" from the "{combo}" drop-down.',
        # The drop-down that showed {combo} shows {choice}: none shows {combo} any more, two show {choice}.
        checks=(Node("combo box", "{combo}", exists=False),
                Node("combo box", "{choice}", index=1)),
        kinds=("list",)),
)

# --- GTK 3's demo (reserved) -----------------------------------------------------------------------

GTK3_DEMO: tuple[DesktopTask, ...] = (
    DesktopTask(
        "gtk3-demo-tree-select", app="gtk3-demo",
        params={"pair": ("Entry|Search Entry", "Entry|Entry Completion", "Entry|Entry Buffer",
                         "Benchmark|Fishbox", "Benchmark|Themes", "Icon View|Icon View Basics")},
        derive=lambda p: _split("parent child", p["pair"]),
        instruction='Expand "{parent}" in the tree, then select "{child}".',
        checks=(Node("tree item", "{parent}", states=("expanded",)),
                Node("tree item", "{child}", states=("selected",))),
        kinds=("tree",)),
)

# --- the GTK 4 widget factory (reserved) -----------------------------------------------------------

GTK4_FACTORY_TABS = ("Sunset", "NYC", "Beach")  # the first notebook's tabs, all named "Tab" on AT-SPI


def _factory4_tab(p: dict[str, str]) -> dict[str, str]:
    return {f"tab{i}": "selected" if name == p["tab"] else "!selected" for i, name in enumerate(GTK4_FACTORY_TABS)}


GTK4_FACTORY: tuple[DesktopTask, ...] = (
    DesktopTask(
        "gtk4-factory-page", app="gtk4-widget-factory",
        params={"page": ("2", "3")},
        instruction='Open the "Page {page}" tab.',
        checks=(Node("tab", "Page _{page}", states=("selected",)),),
        kinds=("tab",), max_steps=4),
    DesktopTask(
        "gtk4-factory-notebook", app="gtk4-widget-factory",
        params={"tab": GTK4_FACTORY_TABS[1:]},
        derive=_factory4_tab,
        instruction='Open the "{tab}" tab.',
        checks=tuple(Node("tab", "Tab", index=i, states=(f"{{tab{i}}}",)) for i in range(len(GTK4_FACTORY_TABS))),
        kinds=("tab",), max_steps=4),
)

# --- GTK 4 demo pages (training) -------------------------------------------------------------------

SCALES = ("Plain", "Marks", "Discrete")  # gtk4-demo's scales, 0 to 4, each at 2 when it opens


def _scale(p: dict[str, str]) -> dict[str, str]:
    label, n = p["setting"].split("|")
    return {"label": label, "n": n, **{f"v{i}": n if name == label else "2" for i, name in enumerate(SCALES)}}


def _toggles(p: dict[str, str]) -> dict[str, str]:
    sw, ck = p["setting"].split("|")
    return {"sw": sw, "ck": ck, "sw_state": "checked" if sw == "on" else "!checked",
            "ck_state": "checked" if ck == "on" else "!checked"}


GTK4_DEMOS: tuple[DesktopTask, ...] = (
    DesktopTask(
        "gtk4-spinbutton-set", app="gtk4-demo-spinbutton",
        params={"setting": ("Numeric|12|12", "Numeric|-7.5|-7.5", "Numeric|250|250", "Hexadecimal|0x1f|31",
                            "Hexadecimal|0x80|128", "Month|March|3", "Month|July|7", "Month|November|11")},
        derive=lambda p: _split("label text value", p["setting"]),
        instruction='Set the "{label}" spin box to "{text}".',
        checks=(Node("spin button", "{label}", value="{value}"),),
        kinds=("range", "form"), max_steps=6),
    DesktopTask(
        "gtk4-scale-set", app="gtk4-demo-scale",
        params={"setting": tuple(f"{s}|{n}" for s in SCALES for n in ("0", "1", "3", "4"))},
        derive=_scale,
        instruction='Set the "{label}" slider to {n}.',
        checks=tuple(Node("slider", "GtkScale", index=i, value=f"{{v{i}}}") for i in range(len(SCALES))),
        kinds=("range",), max_steps=6),
    DesktopTask(
        "gtk4-listbox-toggles", app="gtk4-demo-listbox-controls",
        # "Switch" starts off and "Check" on: every setting changes at least one of them.
        params={"setting": ("on|on", "on|off", "off|off")},
        derive=_toggles,
        instruction='Turn {sw} "Switch" and turn {ck} "Check".',
        checks=(Node("check box", "GtkSwitch", states=("{sw_state}",)),
                Node("check box", "GtkCheckButton", states=("{ck_state}",))),
        kinds=("choice", "list"), max_steps=6),
    DesktopTask(
        "gtk4-dialog-entry", app="gtk4-demo-dialog",
        params={"value": NAMES},
        instruction='Press "Interactive Dialog", type "{value}" into the "Entry 1" field, then press "OK".',
        checks=(Node("text", "Entry 1", text="{value}"),),
        kinds=("dialog", "form"), max_steps=8),
)

# --- GTK 3's file chooser, through zenity (training) -----------------------------------------------

FILE_CHOOSER: tuple[DesktopTask, ...] = (
    DesktopTask(
        "zenity-file-save-as", app="zenity-file-selection",
        argv=("zenity", "--file-selection", "--save", "--title=Save report", "--filename={home}/untitled.txt"),
        params={"name": tuple(f"{w}-{n}.txt" for w in WORDS for n in (1, 2))},
        instruction='Type "{name}" into the "Name" field, then press "Save".',
        checks=(Output(text="re:/.*/{name}"),), output=True, kinds=("file", "dialog")),
    DesktopTask(
        "zenity-file-open-path", app="zenity-file-selection",
        argv=("zenity", "--file-selection", "--title=Open a document"),
        params={"folder": ("Documents", "Music", "Projects"), "file": ("notes.txt", "budget.csv", "letter.odt")},
        files={"{folder}/{file}": "hello\n", "{folder}/other.txt": "other\n", "Desktop/readme.txt": "readme\n"},
        instruction='Open the file "~/{folder}/{file}" by typing its location, then press "OK".',
        checks=(Output(text="re:/.*/{folder}/{file}"),), output=True, kinds=("file", "dialog")),
)

TASKS: tuple[DesktopTask, ...] = (*GTK3_FACTORY, *GTK3_DEMO, *GTK4_FACTORY, *GTK4_DEMOS, *FILE_CHOOSER)
