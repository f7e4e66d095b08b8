"""Desktop benchmark tasks in GTK applications (see ``caap.bench.desktop.tasks``): the GTK 3 and GTK 4
widget factories and GTK 3's demo (reserved for evaluation), GTK 4 demo pages, and GTK 3's file
chooser and message dialog through zenity (training).

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
                         "Entry|Delayed Search Entry", "Benchmark|Fishbowl", "Icon View|Icon View Basics",
                         "Icon View|Editing and Drag-and-Drop")},
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
# (The planner cannot read a GTK 4 scale's value, nor its step: "Plain" moves by 0.1 a key, and
# "Discrete" rounds that away. Its ends are what Home and End reach on every one of them.)


def _scale(p: dict[str, str]) -> dict[str, str]:
    label, end = p["setting"].split("|")
    n = "0" if end == "minimum" else "4"
    return {"label": label, "end": end, **{f"v{i}": n if name == label else "2" for i, name in enumerate(SCALES)}}


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
        params={"setting": tuple(f"{s}|{end}" for s in SCALES for end in ("minimum", "maximum"))},
        derive=_scale,
        instruction='Move the "{label}" slider to its {end}.',
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
        "gtk4-assistant-next", app="gtk4-demo-assistant",
        params={"value": NAMES},
        instruction='Type "{value}" into the "You must fill out this entry to continue" field and go on with "Next".',
        # The assistant's title is its page's: "Page 2" once the first page is filled in and left.
        checks=(Node("frame", "Page 2"),),
        kinds=("form", "multi-screen"), max_steps=4),
)

# --- GTK 3's file chooser, through zenity (training) -----------------------------------------------

FILE_CHOOSER: tuple[DesktopTask, ...] = (
    DesktopTask(
        "zenity-file-save-as", app="zenity-file-selection",
        argv=("zenity", "--file-selection", "--save", "--title=Save report", "--filename={home}/untitled.txt"),
        params={"name": tuple(f"{w}-{n}.txt" for w in WORDS for n in (1, 2))},
        instruction='Type "{name}" into the "Name" field, then press "OK".',
        checks=(Output(text="re:/.*/{name}"),), output=True, size=(800, 560), kinds=("file", "dialog")),
    DesktopTask(
        "zenity-file-open-path", app="zenity-file-selection",
        argv=("zenity", "--file-selection", "--title=Open a document"),
        params={"folder": ("Documents", "Music", "Projects"), "file": ("notes.txt", "budget.csv", "letter.odt")},
        files={"{folder}/{file}": "hello\n", "{folder}/other.txt": "other\n", "Desktop/readme.txt": "readme\n"},
        instruction='Open the file "~/{folder}/{file}" by typing its location, then press "OK".',
        checks=(Output(text="re:/.*/{folder}/{file}"),), output=True, size=(800, 560), kinds=("file", "dialog")),
)

# --- GTK 3's message dialog, through zenity (training) --------------------------------------------

QUESTIONS = (  # a question, then the labels of its two buttons (zenity's OK and Cancel)
    "Overwrite the existing file report.odt?|Overwrite|Keep both",
    "Discard the changes to notes.txt?|Discard|Keep editing",
    "Send the message without a subject?|Send anyway|Add a subject",
    "Empty the trash (12 items)?|Empty trash|Not now",
)


def _question(p: dict[str, str]) -> dict[str, str]:
    question, ok, cancel = p["dialog"].split("|")
    confirm = p["pick"] == "confirm"
    return {"question": question, "ok": ok, "cancel": cancel, "answer": ok if confirm else cancel,
            "code": "0" if confirm else "1"}


DIALOGS: tuple[DesktopTask, ...] = (
    DesktopTask(
        "zenity-question-labels", app="zenity-question",
        argv=("zenity", "--question", "--title=Confirm", "--text={question}", "--ok-label={ok}",
              "--cancel-label={cancel}"),
        params={"dialog": QUESTIONS, "pick": ("confirm", "cancel")},
        derive=_question,
        instruction='Answer "{answer}" to the question.',
        checks=(Output(exit_code="{code}"),), output=True, kinds=("dialog",), max_steps=4),
)

# --- galculator (training): the calculator kind on the training side ----------------------------------

CALC_OPS = ("+", "-", "*", "/")  # as galculator draws them


def _galculator(p: dict[str, str]) -> dict[str, str]:
    x, y, op = int(p["x"]), int(p["y"]), p["op"]
    if op == "/":  # whole quotients only: a = x·y
        return {"a": str(x * y), "b": str(y), "result": str(x)}
    return {"a": str(x), "b": str(y), "result": str({"+": x + y, "-": x - y, "*": x * y}[op])}


CALCULATOR: tuple[DesktopTask, ...] = (
    DesktopTask(
        "galculator-compute", app="galculator",
        params={"x": tuple(str(n) for n in range(13, 99, 6)), "y": tuple(str(n) for n in range(2, 10)),
                "op": CALC_OPS},
        derive=_galculator,
        instruction='Compute {a} {op} {b} with the calculator\'s keys, then press "=".',
        checks=(Node("text", None, text="{result}"),), kinds=("calculator",), max_steps=14),
)

TASKS: tuple[DesktopTask, ...] = (*GTK3_FACTORY, *GTK3_DEMO, *GTK4_FACTORY, *GTK4_DEMOS, *FILE_CHOOSER, *DIALOGS,
                                  *CALCULATOR)
