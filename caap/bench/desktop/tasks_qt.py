"""Desktop benchmark tasks in qt applications (see ``caap.bench.desktop.tasks``).

Qt 5 reports its widgets on the accessibility bus, so the checks read the final state there
(``Node``: a check box's state, a spin box's value, a table cell's or a label's text), or the file
an application saved or generated (``FileText``). Several Qt examples end when their dialog is
answered (the tab dialog, the basic layouts' OK): their tasks stop short of that button, since an
application that has ended shows nothing to check.
"""

from __future__ import annotations

from caap.bench.desktop.checks import FileText, Node
from caap.bench.desktop.task import DesktopTask

WORDS = ("invoice", "holiday", "backup", "draft", "archive", "summary", "meeting", "budget", "contract", "photos")
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Margaret", "Donald", "Frances", "John")

# --- the calculator -----------------------------------------------------------------------------------

OPS = ("+", "-", "×", "÷")


def _calc(p: dict[str, str]) -> dict[str, str]:
    x, y, op = int(p["x"]), int(p["y"]), p["op"]
    if op == "÷":  # whole quotients only: a = x·y
        return {"a": str(x * y), "b": str(y), "result": str(x)}
    result = {"+": x + y, "-": x - y, "×": x * y}[op]
    return {"a": str(x), "b": str(y), "result": str(result)}


# --- the spreadsheet: a price changed, the total follows ------------------------------------------------

SHEET_TOTAL = 21883
SHEET_PRICES = {"980": 8, "1240": 7, "300": 7, "120": 7}  # price → its row's exchange rate


def _sheet(p: dict[str, str]) -> dict[str, str]:
    rate = SHEET_PRICES[p["old"]]
    return {"total": str(SHEET_TOTAL - int(p["old"]) * rate + int(p["new"]) * rate)}


# --- trees: a parent and one of its children (the Qt examples' default.txt) ---------------------------

TREE = ("Getting Started|Launching Designer", "Getting Started|The User Interface",
        "Designing a Component|Creating a Dialog", "Designing a Component|Creating a Layout",
        "Designing a Component|Signal and Slot Connections",
        "Using a Component in Your Application|The Direct Approach",
        "Form Editing Mode|Managing Forms", "Form Editing Mode|The Property Editor",
        "Using Containers|Group Boxes", "Using Containers|Tab Widgets", "Using Containers|Stacked Widgets",
        "Connection Editing Mode|Editing Connections")


def _tree(p: dict[str, str]) -> dict[str, str]:
    parent, child = p["pair"].split("|")
    return {"parent": parent, "child": child}


# --- the class wizard ----------------------------------------------------------------------------------

CLASSES = ("Invoice", "Meeting", "Budget", "Contract", "Archive", "Summary", "Holiday", "Backup")
BASES = ("QObject", "QWidget", "QDialog", "QFrame")


def _wizard(p: dict[str, str]) -> dict[str, str]:
    return {"header": p["cls"].lower() + ".h"}


SENTENCES = ("Remember to water the plants.", "The meeting moved to Thursday.", "Pack the blue suitcase.",
             "Call the garage about the brakes.", "Buy flour, eggs and milk.", "Send the invoice by Friday.")

def _expand_select(name: str, app: str) -> DesktopTask:
    """Expand a parent row of the Qt examples' tree and select one of its children."""
    return DesktopTask(
        name, app=app, params={"pair": TREE}, derive=_tree,
        instruction='Make these changes: expand "{parent}"; select "{child}".',
        checks=(Node("table cell", "{parent}", states=("expanded",)),
                Node("table cell", "{child}", states=("selected",))),
        kinds=("tree",), max_steps=6)


TASKS: tuple[DesktopTask, ...] = (
    # --- reserved (evaluation) apps ------------------------------------------------------------------
    DesktopTask(
        "qt5-calculator-compute", app="qt5-widgets-calculator",
        params={"x": tuple(str(n) for n in range(12, 99, 7)), "y": tuple(str(n) for n in range(2, 10)), "op": OPS},
        derive=_calc,
        instruction='Compute {a} {op} {b} with the calculator\'s keys, then press "=".',
        checks=(Node("text", None, text="{result}"),), kinds=("calculator",), max_steps=14),
    DesktopTask(
        "qt5-tabdialog-permissions", app="qt5-dialogs-tabdialog",
        params={"off": ("Readable", "Writable", "Executable")},
        instruction='Make these changes: open the "Permissions" tab; untick "{off}".',
        checks=(Node("page tab list", "Permissions"), Node("check box", "{off}", states=("!checked",))),
        kinds=("tab", "choice"), max_steps=6),
    DesktopTask(
        "qt5-tabdialog-open-with", app="qt5-dialogs-tabdialog",
        params={"n": tuple(str(n) for n in range(2, 12))},
        instruction='Make these changes: open the "Applications" tab; select "Application {n}"; tick '
                    '"Always use this application to open this type of file".',
        checks=(Node("page tab list", "Applications"), Node("list item", "Application {n}", states=("selected",)),
                Node("check box", "Always use this application to open this type of file", states=("checked",))),
        kinds=("tab", "list", "choice", "multi-screen"), max_steps=8),
    DesktopTask(
        "qt5-stylesheet-form", app="qt5-widgets-stylesheet",
        params={"name": FIRST, "age": tuple(str(n) for n in range(23, 70, 4)),
                "country": ("Egypt", "France", "Germany", "India", "Italy", "Norway")},
        instruction='Make these changes: type "{name}" into "Name"; set "Age" to {age}; choose "{country}" '
                    'from "Country".',
        checks=(Node("text", None, text="{name}", index=1), Node("spin button", "Age:", value="{age}"),
                Node("combo box", "{country}")),
        kinds=("form", "choice"), max_steps=10),
    DesktopTask(
        "qt5-stylesheet-profile", app="qt5-widgets-stylesheet",
        params={"gender": ("Male", "Female"), "job": ("Student", "Fisherman")},
        instruction='Make these changes: pick "{gender}"; select "{job}"; tick "I accept the terms and conditions".',
        checks=(Node("radio button", "{gender}", states=("checked",)), Node("list item", "{job}", states=("selected",)),
                Node("check box", "I accept the terms and conditions", states=("checked",))),
        kinds=("choice", "list"), max_steps=6),
    DesktopTask(
        "qt5-basiclayouts-grid", app="qt5-layouts-basiclayouts",
        params={"a": WORDS, "b": FIRST, "c": tuple(str(n) for n in range(100, 1000, 37))},
        instruction='Make these changes: type "{a}" into "Line 1"; type "{b}" into "Line 2"; type "{c}" into "Line 3".',
        checks=(Node("text", "Grid layout", text="{a}"), Node("text", "Grid layout", text="{b}", index=1),
                Node("text", "Grid layout", text="{c}", index=2)),
        kinds=("form",), max_steps=6),
    DesktopTask(
        "qt5-spreadsheet-price", app="qt5-itemviews-spreadsheet",
        params={"old": tuple(SHEET_PRICES), "new": ("45", "160", "275", "410", "505", "730", "860")},
        derive=_sheet,
        instruction='In the table, change the cell "{old}" to "{new}".',
        checks=(Node("table cell", "{new}"), Node("table cell", "{total}")),
        kinds=("form", "list"), max_steps=6),
    _expand_select("qt5-editabletree-expand", "qt5-itemviews-editabletreemodel"),
    DesktopTask(
        "qt5-dockwidgets-view-menu", app="qt5-mainwindows-dockwidgets",
        params={"dock": ("Customers", "Paragraphs")},
        derive=lambda p: {"other": "Paragraphs" if p["dock"] == "Customers" else "Customers"},
        instruction='In the menu bar, choose "View" > "{dock}".',
        checks=(Node("frame", "{dock}", exists=False), Node("frame", "{other}")),
        kinds=("menu",), max_steps=6),
    DesktopTask(
        "qt5-gallery-controls", app="qt5-gallery",
        params={"radio": ("Radio button 2", "Radio button 3"), "n": ("3", "8", "12", "17", "21", "26", "30")},
        instruction='Make these changes: pick "{radio}"; untick "Toggle Push Button"; set the slider to {n}.',
        checks=(Node("radio button", "{radio}", states=("checked",)),
                Node("check box", "Toggle Push Button", states=("!checked",)),
                Node("slider", "Simple Input Widgets", value="{n}")),
        kinds=("choice", "range"), max_steps=10),
    # --- training apps ---------------------------------------------------------------------------------
    DesktopTask(
        "qt5-sliders-current-value", app="qt5-widgets-sliders",
        params={"n": tuple(str(n) for n in range(0, 21) if n != 5)},
        instruction='Make these changes: set "Current value" to {n}.',
        checks=(Node("slider", "Horizontal", value="{n}"),),
        kinds=("range",), max_steps=5),
    DesktopTask(
        "qt5-spinboxes-values", app="qt5-widgets-spinboxes",
        params={"v": tuple(str(n) for n in range(-18, 19, 3) if n), "zoom": ("150", "200", "250", "400", "750")},
        instruction='Make these changes: set "Enter a value between -20 and 20" to {v}; set "Enter a zoom value '
                    'between 0 and 1000" to {zoom}.',
        checks=(Node("spin button", "Spinboxes", value="{v}"),
                Node("spin button", "Spinboxes", value="{zoom}", index=1)),
        kinds=("range", "form"), max_steps=6),
    DesktopTask(
        "qt5-application-save-as", app="qt5-mainwindows-application",
        params={"text": SENTENCES, "name": WORDS},
        files={"Documents/README": "Keep your notes here.\n"},
        instruction='Type "{text}" into the document, then save it as "Documents/{name}.txt" with "File" > '
                    '"Save As...".',
        checks=(FileText("Documents/{name}.txt", equals="{text}"),),
        kinds=("editor", "file", "menu", "dialog"), max_steps=10),
    DesktopTask(
        "qt5-classwizard-generate", app="qt5-dialogs-classwizard",
        params={"cls": CLASSES, "base": BASES}, derive=_wizard,
        files={"projects/README": "Generated classes go here.\n"},
        instruction='Go through the wizard: "Class name" "{cls}", "Base class" "{base}", "Output directory" '
                    '"projects"; press "Next >" on each page and "Finish" on the last.',
        checks=(FileText("projects/{header}", contains="class {cls} : public {base}"),),
        kinds=("multi-screen", "form", "dialog"), max_steps=10),
    DesktopTask(
        "qt5-standarddialogs-question", app="qt5-dialogs-standarddialogs",
        params={"answer": ("Yes", "No", "Cancel")},
        instruction='Make these changes: press "Message Boxes"; press "QMessageBox::question()"; press "{answer}".',
        checks=(Node("label", "{answer}"),),
        kinds=("dialog", "multi-screen"), max_steps=6),
    _expand_select("qt5-simpletree-expand", "qt5-itemviews-simpletreemodel"),
    DesktopTask(
        "qt5-menus-menu-bar", app="qt5-mainwindows-menus",
        params={"path": ("File|Open...", "File|Save", "Edit|Undo", "Edit|Redo", "Edit|Copy")},
        derive=lambda p: dict(zip(("menu", "entry"), p["path"].split("|"), strict=True)),
        instruction='In the menu bar, choose "{menu}" > "{entry}".',
        checks=(Node("label", "re:Invoked .*{menu}\\|{entry}.*"),),
        kinds=("menu",), max_steps=5),
)
