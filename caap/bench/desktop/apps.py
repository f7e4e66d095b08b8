"""The desktop applications the dataset is made of: how to start each, what it needs from Debian,
and which of them are kept for evaluation.

An ``App`` is one screen family: a program (a Qt example, a zenity dialog, a GTK 4 demo page, a Tk
sub-demo) with its command line. ``{word}``-style fields in the command are filled per episode
from small word lists, so dialogs show different texts from one episode to the next; ``{home}``
is the private desktop's home folder.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

# Never trained on: the evaluation apps of ../shared/DESIGN.md §6. This is the one list; the
# generator refuses to write any of them into a dataset that is not an evaluation set.
RESERVED_APPS: frozenset[str] = frozenset({
    "gtk3-widget-factory",
    "gtk4-widget-factory",
    "gtk3-demo",
    "qt5-gallery",
    "qt5-dialogs-tabdialog",
    "qt5-itemviews-spreadsheet",
    "qt5-itemviews-editabletreemodel",
    "qt5-layouts-basiclayouts",
    "qt5-widgets-stylesheet",
    "qt5-widgets-calculator",
    "qt5-mainwindows-dockwidgets",
})

QT_EXAMPLES = Path("/usr/lib/x86_64-linux-gnu/qt5/examples/widgets")
SHOWCASE = Path(__file__).resolve().parent / "showcase"
GTK3_TYPELIB = Path("/usr/lib/x86_64-linux-gnu/girepository-1.0/Gtk-3.0.typelib")
GTK4_TYPELIB = Path("/usr/lib/x86_64-linux-gnu/girepository-1.0/Gtk-4.0.typelib")
PYQT5_WIDGETS = Path("/usr/lib/python3/dist-packages/PyQt5/QtWidgets.abi3.so")

TOOLKIT_THEMES: dict[str, tuple[str, ...]] = {
    # GTK_THEME values (GTK's built-in themes; "" is the default Adwaita).
    "gtk3": ("", "Adwaita:dark", "HighContrast", "HighContrastInverse"),
    "gtk4": ("", "Adwaita:dark", "HighContrast"),
    # Qt styles shipped in qtbase.
    "qt5": ("fusion", "windows"),
    # ttk themes.
    "tk": ("default", "clam", "alt", "classic"),
}


@dataclass(frozen=True)
class App:
    name: str  # the group and Source.task of its screens
    toolkit: str  # gtk3 | gtk4 | qt5 | tk
    argv: tuple[str, ...]  # the command; for Tk, the demo's name ("widget": the main window)
    package: str  # the Debian package that ships it
    resizable: bool = True  # False: dialogs that look wrong stretched
    requires: Path | None = None  # a file the app cannot start without, from ``package``

    @property
    def reserved(self) -> bool:
        return self.name in RESERVED_APPS

    def binary(self) -> str:
        return self.argv[0] if self.toolkit != "tk" else "tk-demo"

    def missing(self) -> str | None:
        """Why this app cannot run here (naming the Debian package), or None."""
        if self.toolkit == "tk":
            from caap.bench.desktop.tk import demo_dir

            if demo_dir() is None:
                return f"{self.name}: Tk's demos are missing (Debian package {self.package})"
            return None
        found = shutil.which(self.argv[0]) if "/" not in self.argv[0] else (
            self.argv[0] if Path(self.argv[0]).is_file() else None)
        if found is None:
            return f"{self.name}: {self.argv[0]} is missing (Debian package {self.package})"
        if self.requires is not None and not self.requires.is_file():
            return f"{self.name}: {self.requires} is missing (Debian package {self.package})"
        return None


def _qt(path: str, *args: str, resizable: bool = True) -> App:
    name = "qt5-" + path.replace("/", "-")
    return App(name, "qt5", (str(QT_EXAMPLES / path / Path(path).name), *args), "qtbase5-examples", resizable)


def _gtk4_demo(page: str) -> App:
    return App(f"gtk4-demo-{page.replace('_', '-')}", "gtk4", ("gtk4-demo", f"--run={page}"), "gtk-4-examples")


def _showcase(page: str) -> App:
    """caap's own GTK 3 window of real widgets in states drawn from ``{seed}`` (``showcase/gtk3.py``)."""
    return App(f"caap-gtk3-{page}", "gtk3", ("/usr/bin/python3", str(SHOWCASE / "gtk3.py"), "--page", page,
                                             "--seed", "{seed}"), "gir1.2-gtk-3.0", requires=GTK3_TYPELIB)


def _gtk4_showcase(page: str) -> App:
    """caap's own GTK 4 window of selections and toggles in states drawn from ``{seed}`` (``showcase/gtk4.py``)."""
    return App(f"caap-gtk4-{page}", "gtk4", ("/usr/bin/python3", str(SHOWCASE / "gtk4.py"), "--page", page,
                                             "--seed", "{seed}"), "gir1.2-gtk-4.0", requires=GTK4_TYPELIB)


def _qt_showcase(page: str) -> App:
    """caap's own Qt 5 window of real widgets in states drawn from ``{seed}`` (``showcase/qt5.py``)."""
    return App(f"caap-qt5-{page}", "qt5", ("/usr/bin/python3", str(SHOWCASE / "qt5.py"), "--page", page,
                                           "--seed", "{seed}"), "python3-pyqt5", requires=PYQT5_WIDGETS)


def _zenity(name: str, *args: str, resizable: bool = False) -> App:
    return App(f"zenity-{name}", "gtk3", ("zenity", *args), "zenity", resizable)


def _tk(demo: str) -> App:
    return App(f"tk-{demo}", "tk", (demo,), "tk8.6-doc", resizable=False)


# Words for the {fields} of dialogs' command lines.
FIELDS: dict[str, tuple[str, ...]] = {
    "title": ("Rename file", "New folder", "Connect to server", "Export", "Settings", "Add contact", "Search"),
    "prompt": ("New name:", "Folder name:", "Server address:", "Your name", "Enter a value", "Search for:"),
    "value": ("report-2023.odt", "holiday photos", "192.168.1.20", "Ada Lovelace", "42", "", "notes.txt"),
    "question": ("Do you want to save the changes?", "Delete 3 files permanently?", "Overwrite the existing file?",
                 "Install the update now?", "Quit without saving?"),
    "message": ("The file was saved.", "Connection lost. Retrying in 5 seconds.", "Disk is almost full (92%).",
                "Backup finished: 1,204 files copied.", "Printer is out of paper."),
    "percent": ("0", "12", "37", "64", "90"),
}

TRAINING_APPS: tuple[App, ...] = (
    # GTK 3
    App("gtk3-icon-browser", "gtk3", ("gtk3-icon-browser",), "gtk-3-examples"),
    _zenity("entry", "--entry", "--title={title}", "--text={prompt}", "--entry-text={value}"),
    _zenity("password", "--password", "--username", "--title={title}"),
    _zenity("question", "--question", "--text={question}"),
    _zenity("info", "--info", "--text={message}"),
    _zenity("warning", "--warning", "--text={message}"),
    _zenity("error", "--error", "--text={message}"),
    _zenity("list", "--list", "--title={title}", "--column=Name", "--column=Size", "--column=Type",
            "notes.txt", "4 KB", "Text", "holiday.png", "2.1 MB", "Image", "budget.csv", "12 KB", "Spreadsheet",
            "report-2023.odt", "88 KB", "Document", "song.ogg", "5.3 MB", "Audio", resizable=True),
    _zenity("checklist", "--list", "--checklist", "--column=Pick", "--column=Package", "--column=Version",
            "TRUE", "python3", "3.11.2", "FALSE", "gimp", "2.10.34", "TRUE", "inkscape", "1.2.2", "FALSE",
            "vlc", "3.0.20", "FALSE", "git", "2.39.2", resizable=True),
    _zenity("radiolist", "--list", "--radiolist", "--column=Pick", "--column=Size", "TRUE", "Small", "FALSE",
            "Medium", "FALSE", "Large", "FALSE", "Extra large"),
    _zenity("forms", "--forms", "--title={title}", "--text=Contact details", "--add-entry=First name",
            "--add-entry=Last name", "--add-password=Password", "--add-combo=Country",
            "--combo-values=France|Germany|Japan|Kenya|Peru"),
    # No --calendar: GTK 3's calendar tells AT-SPI nothing about its days, which would be drawn
    # text without labels.
    _zenity("scale", "--scale", "--text={prompt}", "--value=40", "--min-value=0", "--max-value=100"),
    _zenity("progress", "--progress", "--text=Copying files...", "--percentage={percent}", "--auto-kill"),
    _zenity("file-selection", "--file-selection", "--title={title}", resizable=True),
    _zenity("directory-selection", "--file-selection", "--directory", resizable=True),
    _zenity("color-selection", "--color-selection"),
    # A calculator of the training side: the calculator kind's keys (÷ × − ± √ x² MC M+) developed on
    # it, never on the reserved Qt calculator.
    App("galculator", "gtk3", ("galculator",), "galculator"),
    # GTK 3's other widgets (trees with expanders, held-down toggles, switches, stack switchers,
    # notebooks, scales), in caap's own window: the GTK 3 apps above draw few of them.
    *(_showcase(page) for page in ("tree", "controls", "forms")),
    # GTK 4
    App("gtk4-demo", "gtk4", ("gtk4-demo",), "gtk-4-examples"),
    # Not the pages built on GtkTreeView or GtkIconView (builder, editable_cells, list_store,
    # tree_store, iconview) or custom entries (dropdown): GTK 4.8 shows AT-SPI none of their rows.
    *(_gtk4_demo(p) for p in (
        "assistant", "clipboard", "combobox", "dialog", "entry_completion", "entry_undo",
        "password_entry", "search_entry", "tagged_entry", "errorstates", "expander", "flowbox", "headerbar",
        "infobar", "links", "listbox", "listbox_controls", "listview_filebrowser",
        "listview_settings", "listview_words", "panes", "pickers", "scale", "sizegroup", "spinbutton", "stack",
        "sidebar", "hypertext", "tabs", "textview", "theming_style_classes", "font_features")),
    App("gtk4-demo-application", "gtk4", ("gtk4-demo-application",), "gtk-4-examples"),
    App("gtk4-print-editor", "gtk4", ("gtk4-print-editor",), "gtk-4-examples"),
    *(_gtk4_showcase(page) for page in ("lists", "controls")),
    # Qt 5
    *(_qt(p) for p in (
        "dialogs/classwizard", "dialogs/extension", "dialogs/findfiles", "dialogs/licensewizard",
        "dialogs/standarddialogs", "dialogs/trivialwizard", "itemviews/addressbook",
        "itemviews/basicsortfiltermodel", "itemviews/coloreditorfactory", "itemviews/combowidgetmapper",
        "itemviews/customsortfiltermodel", "itemviews/fetchmore", "itemviews/frozencolumn",
        "itemviews/interview", "itemviews/simpletreemodel", "itemviews/simplewidgetmapper",
        "itemviews/spinboxdelegate", "itemviews/stardelegate", "itemviews/storageview", "layouts/dynamiclayouts",
        "mainwindows/application", "mainwindows/mainwindow", "mainwindows/mdi", "mainwindows/menus",
        "mainwindows/sdi", "richtext/orderform", "richtext/syntaxhighlighter", "richtext/textedit", "tools/codecs",
        "tools/completer", "tools/i18n", "tools/regularexpression", "tools/settingseditor",
        "tools/treemodelcompleter", "tools/undoframework", "tutorials/addressbook/part7", "tutorials/notepad",
        "widgets/calendarwidget", "widgets/charactermap", "widgets/codeeditor", "widgets/groupbox",
        "widgets/icons", "widgets/lineedits", "widgets/sliders", "widgets/spinboxes", "widgets/styles",
        "widgets/tooltips", "widgets/validators", "widgets/windowflags")),
    # The file-system views show the session's own small home folder, not this machine's.
    _qt("itemviews/dirview", "{home}"),
    # Qt's checkable controls (tool buttons and push buttons held down, tree rows with check boxes,
    # checkable group boxes), in caap's own window: the examples above hold few of them.
    *(_qt_showcase(page) for page in ("tools", "forms")),
    # Tk
    *(_tk(d) for d in (
        "widget", "button", "check", "radio", "entry1", "entry2", "entry3", "spin", "combo", "label",
        "labelframe", "menu", "menubu", "mclist", "tree", "ttkbut", "ttknote", "ttkprogress", "ttkscale",
        "hscale", "vscale", "form", "states", "ttkmenu", "ttkpane", "paned1", "paned2", "text", "search")),
)

EVALUATION_APPS: tuple[App, ...] = (
    App("gtk3-widget-factory", "gtk3", ("gtk3-widget-factory",), "gtk-3-examples"),
    App("gtk4-widget-factory", "gtk4", ("gtk4-widget-factory",), "gtk-4-examples"),
    App("gtk3-demo", "gtk3", ("gtk3-demo",), "gtk-3-examples"),
    _qt("gallery"),
    _qt("dialogs/tabdialog"),
    _qt("itemviews/spreadsheet"),
    _qt("itemviews/editabletreemodel"),
    _qt("layouts/basiclayouts"),
    _qt("widgets/stylesheet"),
    _qt("widgets/calculator"),
    _qt("mainwindows/dockwidgets"),
)

APPS: dict[str, App] = {a.name: a for a in (*TRAINING_APPS, *EVALUATION_APPS)}
assert not any(a.reserved for a in TRAINING_APPS), "a reserved app is listed for training"
assert {a.name for a in EVALUATION_APPS} == RESERVED_APPS, "every reserved app needs its launcher"
