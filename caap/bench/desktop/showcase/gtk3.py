"""A GTK 3 window of real widgets in random states, for the desktop training sets.

Run by the system Python (PyGObject and GTK 3's introspection data, Debian's ``python3-gi`` and
``gir1.2-gtk-3.0``), never imported by caap: ``python3 gtk3.py --page PAGE --seed N``. The
training apps of ``caap.bench.desktop.apps`` draw few of GTK 3's widgets (zenity's dialogs, an icon
browser, a calculator); this window draws the rest, as GTK draws them in the theme the generator
picks: tree views with expanders and toggle cells, toggle buttons held down, linked button groups,
stack switchers, switches, mixed check boxes, spin buttons, scales, level and progress bars, notebooks,
list boxes, expanders, entries, combo boxes and tool bars. Every label, state and arrangement is
drawn from the seed, and the keyboard focus is put on one control with its focus ring shown, so
the labels AT-SPI gives describe what is drawn.

Pages: ``tree`` (a sidebar tree beside a content pane), ``controls`` (toggles, switches, scales),
``forms`` (a notebook of form pages and a list box).
"""

from __future__ import annotations

import argparse
import random

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402
from words import ACTIONS, FORMATS, NAMES, OPTIONS, WORDS  # noqa: E402  (beside this file)

ICONS = ("document-open", "document-save", "edit-copy", "edit-paste", "edit-undo", "edit-redo", "edit-find",
         "go-previous", "go-next", "go-home", "view-refresh", "list-add", "list-remove", "media-playback-start",
         "format-text-bold", "format-text-italic", "format-justify-left", "format-justify-center")
# Tabs on top twice as often as on each other side, as applications place them.
TAB_SIDES = (Gtk.PositionType.TOP, Gtk.PositionType.TOP, Gtk.PositionType.BOTTOM, Gtk.PositionType.LEFT,
             Gtk.PositionType.RIGHT)


class Showcase:
    def __init__(self, page: str, seed: int) -> None:
        self.rng = random.Random(seed)
        self.focusable: list[Gtk.Widget] = []
        self.window = Gtk.Window(title=f"{self.rng.choice(WORDS)} — caap showcase")
        self.window.set_default_size(self.rng.randint(640, 900), self.rng.randint(440, 640))
        self.window.connect("destroy", Gtk.main_quit)
        outer = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
        if self.rng.random() < 0.6:
            outer.pack_start(self.toolbar(), False, False, 0)
        body = {"tree": self.tree_page, "controls": self.controls_page, "forms": self.forms_page}[page]()
        outer.pack_start(body, True, True, 0)
        self.window.add(outer)
        self.window.show_all()
        GLib.idle_add(self.focus_one)
        # A click hides GTK 3's focus rings until the next key press; keep them shown, so the
        # focused control looks focused in every capture.
        GLib.timeout_add(150, self.keep_focus_visible)

    # --- pieces ------------------------------------------------------------------------------------
    def words(self, pool: tuple[str, ...], n: int) -> list[str]:
        return self.rng.sample(pool, min(n, len(pool)))

    def toolbar(self) -> Gtk.Toolbar:
        bar = Gtk.Toolbar()
        bar.set_style(self.rng.choice((Gtk.ToolbarStyle.ICONS, Gtk.ToolbarStyle.BOTH_HORIZ)))
        for icon in self.words(ICONS, self.rng.randint(3, 7)):
            if self.rng.random() < 0.35:
                item: Gtk.ToolItem = Gtk.ToggleToolButton()
                item.set_icon_name(icon)
                item.set_active(self.rng.random() < 0.5)
            else:
                item = Gtk.ToolButton()
                item.set_icon_name(icon)
            item.set_label(self.rng.choice(ACTIONS))
            item.set_tooltip_text(item.get_label())
            bar.insert(item, -1)
            if self.rng.random() < 0.15:
                bar.insert(Gtk.SeparatorToolItem(), -1)
        return bar

    def tree(self) -> Gtk.ScrolledWindow:
        columns: list[type] = [str, bool, str] if self.rng.random() < 0.5 else [str]
        store = Gtk.TreeStore(*columns)
        for top in self.words(WORDS, self.rng.randint(4, 8)):
            parent = store.append(None, self.row(top, columns))
            for child in self.words(WORDS + NAMES, self.rng.randint(0, 4)):
                mid = store.append(parent, self.row(child, columns))
                for leaf in self.words(NAMES, self.rng.randint(0, 2)):
                    store.append(mid, self.row(leaf, columns))
        view = Gtk.TreeView(model=store)
        view.set_headers_visible(self.rng.random() < 0.6)
        view.append_column(Gtk.TreeViewColumn(self.rng.choice(("Name", "Item", "Section")), Gtk.CellRendererText(),
                                              text=0))
        if len(columns) > 1:
            toggle = Gtk.CellRendererToggle()
            toggle.connect("toggled", lambda _r, path: store.set_value(store.get_iter(path), 1,
                                                                         not store[path][1]))
            view.append_column(Gtk.TreeViewColumn("On", toggle, active=1))
            view.append_column(Gtk.TreeViewColumn("Owner", Gtk.CellRendererText(), text=2))
        it = store.get_iter_first()
        while it is not None:  # some branches open, as a user left them
            if self.rng.random() < 0.5:
                view.expand_row(store.get_path(it), self.rng.random() < 0.5)
            it = store.iter_next(it)
        if self.rng.random() < 0.7:
            view.get_selection().select_path(Gtk.TreePath.new_first())
        self.focusable.append(view)
        scroll = Gtk.ScrolledWindow()
        scroll.add(view)
        return scroll

    def row(self, text: str, columns: list[type]) -> list[object]:
        return [text] if len(columns) == 1 else [text, self.rng.random() < 0.4, self.rng.choice(NAMES)]

    def toggles(self) -> Gtk.Widget:
        """Toggle buttons: free ones, or a segmented group with one held down (toggle buttons kept
        exclusive by hand, not radio buttons drawn without their dot, which AT-SPI calls radios)."""
        box = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=0 if self.rng.random() < 0.7 else 4)
        if box.get_spacing() == 0:
            box.get_style_context().add_class("linked")
        exclusive = self.rng.random() < 0.5
        labels = self.words(FORMATS, self.rng.randint(2, 4))
        down = self.rng.randrange(len(labels))
        buttons = []
        for k, label in enumerate(labels):
            button = Gtk.ToggleButton(label=label)
            button.set_active(k == down if exclusive else self.rng.random() < 0.4)
            box.pack_start(button, False, False, 0)
            buttons.append(button)
            self.focusable.append(button)
        if exclusive:
            def only(pressed: Gtk.ToggleButton) -> None:
                if pressed.get_active():
                    for other in buttons:
                        if other is not pressed:
                            other.set_active(False)
            for button in buttons:
                button.connect("toggled", only)
        return box

    def stack(self) -> Gtk.Widget:
        stack = Gtk.Stack()
        for title in self.words(WORDS, self.rng.randint(2, 4)):
            stack.add_titled(Gtk.Label(label=f"{title}: {self.rng.choice(OPTIONS).lower()}"), title, title)
        switcher = Gtk.StackSwitcher(stack=stack)
        children = stack.get_children()
        stack.set_visible_child(self.rng.choice(children))
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
        box.pack_start(switcher, False, False, 0)
        box.pack_start(stack, False, False, 0)
        return box

    def option_rows(self, n: int) -> Gtk.Widget:
        grid = Gtk.Grid(row_spacing=6, column_spacing=12)
        for r, text in enumerate(self.words(OPTIONS, n)):
            kind = self.rng.random()
            if kind < 0.35:
                grid.attach(Gtk.Label(label=text, xalign=0), 0, r, 1, 1)
                switch = Gtk.Switch(active=self.rng.random() < 0.5, halign=Gtk.Align.START)
                grid.attach(switch, 1, r, 1, 1)
                self.focusable.append(switch)
            else:
                check = Gtk.CheckButton(label=text, active=self.rng.random() < 0.5)
                if self.rng.random() < 0.12:
                    check.set_inconsistent(True)
                check.set_sensitive(self.rng.random() > 0.1)
                grid.attach(check, 0, r, 2, 1)
                self.focusable.append(check)
        return grid

    def radios(self) -> Gtk.Widget:
        box = Gtk.Box(orientation=self.rng.choice((Gtk.Orientation.VERTICAL, Gtk.Orientation.HORIZONTAL)),
                      spacing=6)
        group = None
        labels = self.words(FORMATS, self.rng.randint(2, 4))
        on = self.rng.randrange(len(labels))
        for k, label in enumerate(labels):
            radio = Gtk.RadioButton.new_with_label_from_widget(group, label)
            group = group or radio
            radio.set_active(k == on)
            box.pack_start(radio, False, False, 0)
            self.focusable.append(radio)
        return box

    def levels(self) -> Gtk.Widget:
        grid = Gtk.Grid(row_spacing=8, column_spacing=12)
        for row in range(self.rng.randint(1, 3)):
            kind = self.rng.choice(("scale", "spin", "progress", "level"))
            grid.attach(Gtk.Label(label=self.rng.choice(WORDS), xalign=0), 0, row, 1, 1)
            if kind == "scale":
                widget: Gtk.Widget = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1)
                widget.set_value(self.rng.randint(0, 100))
                widget.set_draw_value(self.rng.random() < 0.5)
                widget.set_size_request(180, -1)
                self.focusable.append(widget)
            elif kind == "spin":
                widget = Gtk.SpinButton.new_with_range(0, 999, 1)
                widget.set_value(self.rng.randint(0, 999))
                self.focusable.append(widget)
            elif kind == "progress":
                widget = Gtk.ProgressBar(fraction=self.rng.random(), show_text=self.rng.random() < 0.5)
            else:
                widget = Gtk.LevelBar(min_value=0, max_value=1, value=self.rng.random())
                widget.set_size_request(160, -1)
            grid.attach(widget, 1, row, 1, 1)
        return grid

    def fields(self, n: int) -> Gtk.Widget:
        grid = Gtk.Grid(row_spacing=6, column_spacing=12)
        for r in range(n):
            grid.attach(Gtk.Label(label=self.rng.choice(("Name", "Server", "Folder", "Title", "E-mail", "City",
                                                         "Owner", "Tag", "Port")), xalign=1), 0, r, 1, 1)
            if self.rng.random() < 0.3:
                combo = Gtk.ComboBoxText()
                for w in self.words(WORDS, 4):
                    combo.append_text(w)
                combo.set_active(self.rng.randrange(4))
                grid.attach(combo, 1, r, 1, 1)
                self.focusable.append(combo)
            else:
                entry = Gtk.Entry()
                if self.rng.random() < 0.7:
                    entry.set_text(self.rng.choice(NAMES + WORDS))
                else:
                    entry.set_placeholder_text(self.rng.choice(("Type here", "Optional", "Search…")))
                entry.set_sensitive(self.rng.random() > 0.1)
                grid.attach(entry, 1, r, 1, 1)
                self.focusable.append(entry)
        return grid

    def listbox(self) -> Gtk.Widget:
        box = Gtk.ListBox()
        for name in self.words(NAMES, self.rng.randint(3, 6)):
            row = Gtk.Box(spacing=12)
            row.pack_start(Gtk.Label(label=name, xalign=0), True, True, 6)
            if self.rng.random() < 0.5:
                row.pack_end(Gtk.Label(label=self.rng.choice(WORDS)), False, False, 6)
            box.add(row)
        box.select_row(box.get_row_at_index(self.rng.randrange(3)))
        frame = Gtk.Frame()
        frame.add(box)
        return frame

    def buttons(self) -> Gtk.Widget:
        box = Gtk.Box(spacing=6)
        for label in self.words(ACTIONS, self.rng.randint(1, 3)):
            button = Gtk.Button(label=label)
            button.set_sensitive(self.rng.random() > 0.15)
            box.pack_start(button, False, False, 0)
            self.focusable.append(button)
        return box

    def column(self, makers: list) -> Gtk.Widget:
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12, margin=12)
        self.rng.shuffle(makers)
        for make in makers:
            if self.rng.random() < 0.25:
                expander = Gtk.Expander(label=self.rng.choice(WORDS), expanded=self.rng.random() < 0.6)
                expander.add(make())
                box.pack_start(expander, False, False, 0)
                self.focusable.append(expander)
            else:
                box.pack_start(make(), False, False, 0)
        return box

    # --- pages -------------------------------------------------------------------------------------
    def tree_page(self) -> Gtk.Widget:
        paned = Gtk.Paned(orientation=Gtk.Orientation.HORIZONTAL)
        paned.pack1(self.tree(), False, False)
        paned.set_position(self.rng.randint(180, 280))
        side = [lambda: self.option_rows(3), self.buttons, self.fields, self.toggles]
        paned.pack2(self.column([m if m != self.fields else (lambda: self.fields(2)) for m in side]), True, False)
        return paned

    def controls_page(self) -> Gtk.Widget:
        grid = Gtk.Box(spacing=12)
        grid.pack_start(self.column([self.toggles, self.toggles, self.stack, self.radios]), True, True, 0)
        grid.pack_start(self.column([lambda: self.option_rows(4), self.levels, self.buttons]), True, True, 0)
        return grid

    def forms_page(self) -> Gtk.Widget:
        notebook = Gtk.Notebook()
        for title in self.words(WORDS, self.rng.randint(2, 4)):
            page = self.column([lambda: self.fields(self.rng.randint(2, 4)), lambda: self.option_rows(2),
                                self.buttons, self.radios])
            notebook.append_page(page, Gtk.Label(label=title))
        notebook.set_current_page(self.rng.randrange(notebook.get_n_pages()))
        notebook.set_tab_pos(self.rng.choice(TAB_SIDES))
        box = Gtk.Box(spacing=12, margin=6)
        box.pack_start(notebook, True, True, 0)
        box.pack_start(self.column([self.listbox, self.levels]), False, False, 0)
        return box

    def keep_focus_visible(self) -> bool:
        self.window.set_focus_visible(True)
        return True

    def focus_one(self) -> bool:
        """Focus one control that shows, and show focus rings as after a key press."""
        shown = [w for w in self.focusable if w.is_visible() and w.get_mapped() and w.get_sensitive()]
        if shown:
            self.rng.choice(shown).grab_focus()
        self.window.set_focus_visible(True)
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", choices=("tree", "controls", "forms"), default="controls")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    Showcase(args.page, args.seed)
    Gtk.main()


if __name__ == "__main__":
    main()
