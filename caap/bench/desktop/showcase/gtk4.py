"""A GTK 4 window of real widgets in random states, for the desktop training and validation sets.

Run by the system Python (PyGObject and GTK 4's introspection data, Debian's ``python3-gi`` and
``gir1.2-gtk-4.0``), never imported by caap: ``python3 gtk4.py --page PAGE --seed N``. gtk4-demo's
pages each show a few widgets in the states their demo leaves them; this window shows GTK 4's
selections and toggles in states drawn from the seed, as GTK 4 draws them in the theme the
generator picks: list boxes in single and multiple selection (plain, boxed and as a sidebar), list
and column views with rows selected, flow boxes with children selected, stack sidebars, linked
toggle buttons held down, check and radio buttons, switches, drop-downs, scales, spin buttons and
bars. The keyboard focus is put on one control with its focus ring shown, so the labels AT-SPI gives
describe what is drawn.

Pages: ``lists`` (a sidebar beside lists, views and flow boxes), ``controls`` (a notebook of toggles
and form rows).
"""

from __future__ import annotations

import argparse
import random

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import GLib, Gtk  # noqa: E402
from words import ACTIONS, FORMATS, NAMES, OPTIONS, WORDS  # noqa: E402  (beside this file)

# Tabs on top twice as often as on each other side, as applications place them.
TAB_SIDES = (Gtk.PositionType.TOP, Gtk.PositionType.TOP, Gtk.PositionType.BOTTOM, Gtk.PositionType.LEFT,
             Gtk.PositionType.RIGHT)
SIZES = ("4 KB", "12 KB", "310 KB", "1.2 MB", "8 MB", "650 MB")


class Showcase:
    def __init__(self, page: str, seed: int, loop: GLib.MainLoop) -> None:
        self.rng = random.Random(seed)
        self.focusable: list[Gtk.Widget] = []
        self.window = Gtk.Window(title=f"{self.rng.choice(WORDS)} — caap showcase")
        self.window.set_default_size(self.rng.randint(700, 960), self.rng.randint(480, 680))
        self.window.connect("close-request", lambda _w: loop.quit() or False)
        body = {"lists": self.lists_page, "controls": self.controls_page}[page]()
        self.window.set_child(body)
        self.window.present()
        GLib.timeout_add(300, self.focus_one)
        # Keep the focus ring shown in every capture, as after a key press.
        GLib.timeout_add(150, self.keep_focus_visible)

    def words(self, pool: tuple[str, ...], n: int) -> list[str]:
        return self.rng.sample(pool, min(n, len(pool)))

    def picks(self, total: int, n: int) -> list[int]:
        """``n`` of the positions ``0 .. total - 1`` (all of them where ``n`` is larger)."""
        return self.rng.sample(range(total), min(n, total))

    @staticmethod
    def scrolled(child: Gtk.Widget, height: int) -> Gtk.ScrolledWindow:
        scroll = Gtk.ScrolledWindow()
        scroll.set_child(child)
        scroll.set_min_content_height(height)
        scroll.set_policy(Gtk.PolicyType.NEVER, Gtk.PolicyType.AUTOMATIC)
        return scroll

    # --- selections --------------------------------------------------------------------------------
    def listbox(self) -> Gtk.Widget:
        """Rows of a name and sometimes a control, in single or multiple selection, plain, boxed
        (``boxed-list``) or as a sidebar (``navigation-sidebar``)."""
        box = Gtk.ListBox()
        style = self.rng.choice(("", "boxed-list", "navigation-sidebar", "rich-list"))
        if style:
            box.add_css_class(style)
        multiple = self.rng.random() < 0.35
        box.set_selection_mode(Gtk.SelectionMode.MULTIPLE if multiple else Gtk.SelectionMode.SINGLE)
        names = self.words(NAMES + WORDS, self.rng.randint(3, 7))
        for name in names:
            row = Gtk.Box(spacing=12, margin_start=6, margin_end=6, margin_top=4, margin_bottom=4)
            label = Gtk.Label(label=name, xalign=0, hexpand=True)
            row.append(label)
            extra = self.rng.random()
            if extra < 0.2:
                switch = Gtk.Switch(active=self.rng.random() < 0.5, valign=Gtk.Align.CENTER)
                row.append(switch)
            elif extra < 0.4:
                row.append(Gtk.Label(label=self.rng.choice(SIZES)))
            elif extra < 0.5:
                row.append(Gtk.CheckButton(active=self.rng.random() < 0.5))
            box.append(row)
        chosen = self.picks(len(names), self.rng.randint(1, 3) if multiple else 1)
        for k in chosen:
            box.select_row(box.get_row_at_index(k))
        self.focusable.append(box)
        return box

    def string_factory(self, part: int = 0) -> Gtk.SignalListItemFactory:
        factory = Gtk.SignalListItemFactory()
        factory.connect("setup", lambda _f, item: item.set_child(Gtk.Label(xalign=0, margin_start=4)))
        factory.connect("bind", lambda _f, item: item.get_child().set_label(
            item.get_item().get_string().split("|")[part]))
        return factory

    def selection(self, rows: list[str]) -> Gtk.SelectionModel:
        model = Gtk.StringList.new(rows)
        if self.rng.random() < 0.35:
            multi = Gtk.MultiSelection.new(model)
            for k in self.picks(len(rows), self.rng.randint(1, 3)):
                multi.select_item(k, False)
            return multi
        single = Gtk.SingleSelection.new(model)
        single.set_autoselect(False)
        single.set_can_unselect(True)
        single.set_selected(self.rng.randrange(len(rows)) if self.rng.random() < 0.85 else Gtk.INVALID_LIST_POSITION)
        return single

    def listview(self) -> Gtk.Widget:
        rows = self.words(WORDS + NAMES, self.rng.randint(4, 9))
        view = Gtk.ListView(model=self.selection(rows), factory=self.string_factory())
        if self.rng.random() < 0.5:
            view.add_css_class(self.rng.choice(("navigation-sidebar", "rich-list", "data-table")))
        self.focusable.append(view)
        return self.scrolled(view, 30 * len(rows))

    def columnview(self) -> Gtk.Widget:
        rows = ["|".join((w, self.rng.choice(NAMES), self.rng.choice(SIZES)))
                for w in self.words(WORDS, self.rng.randint(4, 8))]
        view = Gtk.ColumnView(model=self.selection(rows))
        view.set_show_row_separators(self.rng.random() < 0.5)
        view.set_show_column_separators(self.rng.random() < 0.3)
        for part, title in enumerate(("Name", "Owner", "Size")[:self.rng.randint(2, 3)]):
            column = Gtk.ColumnViewColumn(title=title, factory=self.string_factory(part))
            column.set_expand(part == 0)
            view.append_column(column)
        self.focusable.append(view)
        return self.scrolled(view, 36 * len(rows) + 30)

    def flowbox(self) -> Gtk.Widget:
        flow = Gtk.FlowBox(max_children_per_line=self.rng.randint(3, 6), row_spacing=4, column_spacing=4)
        multiple = self.rng.random() < 0.4
        flow.set_selection_mode(Gtk.SelectionMode.MULTIPLE if multiple else Gtk.SelectionMode.SINGLE)
        items = self.words(WORDS, self.rng.randint(4, 10))
        for word in items:
            flow.append(Gtk.Label(label=word, margin_start=6, margin_end=6, margin_top=4, margin_bottom=4))
        for k in self.picks(len(items), self.rng.randint(1, 3) if multiple else 1):
            flow.select_child(flow.get_child_at_index(k))
        self.focusable.append(flow)
        return flow

    def sidebar(self) -> Gtk.Widget:
        """A stack sidebar, or a list box styled as one, beside what it chooses."""
        if self.rng.random() < 0.5:
            stack = Gtk.Stack()
            for title in self.words(WORDS, self.rng.randint(3, 6)):
                stack.add_titled(Gtk.Label(label=title), title, title)
            pages = [stack.get_pages().get_item(k).get_name() for k in range(stack.get_pages().get_n_items())]
            stack.set_visible_child_name(self.rng.choice(pages))
            side = Gtk.StackSidebar(stack=stack)
            side.set_size_request(self.rng.randint(140, 200), -1)
            return side
        box = self.listbox()
        box.remove_css_class("boxed-list")
        box.add_css_class("navigation-sidebar")
        return box

    # --- toggles and forms -------------------------------------------------------------------------
    def toggles(self) -> Gtk.Widget:
        """Toggle buttons: linked and exclusive (a group), or free, some held down."""
        box = Gtk.Box(spacing=0 if self.rng.random() < 0.7 else 6)
        if box.get_spacing() == 0:
            box.add_css_class("linked")
        exclusive = self.rng.random() < 0.6
        labels = self.words(FORMATS, self.rng.randint(2, 5))
        down = self.rng.randrange(len(labels))
        buttons = [Gtk.ToggleButton(label=label) for label in labels]
        for button in buttons:
            if exclusive and button is not buttons[0]:
                button.set_group(buttons[0])
            box.append(button)
            self.focusable.append(button)
        # Held down once the group is whole: joining a group lets a button go up.
        for k, button in enumerate(buttons):
            button.set_active(k == down if exclusive else self.rng.random() < 0.4)
        return box

    def checks(self, n: int) -> Gtk.Widget:
        grid = Gtk.Grid(row_spacing=6, column_spacing=12)
        radios: Gtk.CheckButton | None = None
        as_radios = self.rng.random() < 0.4
        for r, text in enumerate(self.words(OPTIONS, n)):
            kind = self.rng.random()
            if kind < 0.3 and not as_radios:
                grid.attach(Gtk.Label(label=text, xalign=0), 0, r, 1, 1)
                switch = Gtk.Switch(active=self.rng.random() < 0.5, halign=Gtk.Align.START)
                grid.attach(switch, 1, r, 1, 1)
                self.focusable.append(switch)
                continue
            check = Gtk.CheckButton(label=text)
            if as_radios:
                if radios is None:
                    radios = check
                else:
                    check.set_group(radios)
            check.set_active(self.rng.random() < 0.5)
            if not as_radios and self.rng.random() < 0.12:
                check.set_inconsistent(True)
            check.set_sensitive(self.rng.random() > 0.1)
            grid.attach(check, 0, r, 2, 1)
            self.focusable.append(check)
        return grid

    def fields(self, n: int) -> Gtk.Widget:
        grid = Gtk.Grid(row_spacing=6, column_spacing=12)
        for r in range(n):
            grid.attach(Gtk.Label(label=self.rng.choice(("Name", "Server", "Folder", "Title", "City", "Owner",
                                                         "Tag", "Port")), xalign=1), 0, r, 1, 1)
            kind = self.rng.random()
            if kind < 0.3:
                drop = Gtk.DropDown.new_from_strings(self.words(WORDS, 4))
                drop.set_selected(self.rng.randrange(4))
                widget: Gtk.Widget = drop
            elif kind < 0.45:
                spin = Gtk.SpinButton.new_with_range(0, 999, 1)
                spin.set_value(self.rng.randint(0, 999))
                widget = spin
            else:
                entry = Gtk.Entry()
                if self.rng.random() < 0.7:
                    entry.set_text(self.rng.choice(NAMES + WORDS))
                else:
                    entry.set_placeholder_text(self.rng.choice(("Type here", "Optional", "Search…")))
                widget = entry
            widget.set_sensitive(self.rng.random() > 0.1)
            grid.attach(widget, 1, r, 1, 1)
            self.focusable.append(widget)
        return grid

    def levels(self) -> Gtk.Widget:
        grid = Gtk.Grid(row_spacing=8, column_spacing=12)
        for row in range(self.rng.randint(1, 3)):
            grid.attach(Gtk.Label(label=self.rng.choice(WORDS), xalign=0), 0, row, 1, 1)
            kind = self.rng.choice(("scale", "progress", "level"))
            if kind == "scale":
                widget: Gtk.Widget = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1)
                widget.set_value(self.rng.randint(0, 100))
                widget.set_draw_value(self.rng.random() < 0.5)
                widget.set_size_request(180, -1)
                self.focusable.append(widget)
            elif kind == "progress":
                widget = Gtk.ProgressBar(fraction=self.rng.random(), show_text=self.rng.random() < 0.5)
            else:
                widget = Gtk.LevelBar(min_value=0, max_value=1, value=self.rng.random())
                widget.set_size_request(160, -1)
            grid.attach(widget, 1, row, 1, 1)
        return grid

    def buttons(self) -> Gtk.Widget:
        box = Gtk.Box(spacing=6)
        for label in self.words(ACTIONS, self.rng.randint(1, 3)):
            button = Gtk.Button(label=label)
            if self.rng.random() < 0.2:
                button.add_css_class(self.rng.choice(("suggested-action", "destructive-action", "flat")))
            button.set_sensitive(self.rng.random() > 0.15)
            box.append(button)
            self.focusable.append(button)
        return box

    def column(self, makers: list) -> Gtk.Widget:
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12, margin_start=12, margin_end=12,
                      margin_top=12, margin_bottom=12)
        self.rng.shuffle(makers)
        for make in makers:
            if self.rng.random() < 0.2:
                expander = Gtk.Expander(label=self.rng.choice(WORDS), expanded=self.rng.random() < 0.6)
                expander.set_child(make())
                box.append(expander)
                self.focusable.append(expander)
            else:
                box.append(make())
        return box

    # --- pages -------------------------------------------------------------------------------------
    def lists_page(self) -> Gtk.Widget:
        paned = Gtk.Paned(orientation=Gtk.Orientation.HORIZONTAL)
        paned.set_start_child(self.sidebar())
        paned.set_position(self.rng.randint(160, 240))
        views = [self.listview, self.columnview, self.listbox, self.flowbox]
        right = self.column(self.rng.sample(views, self.rng.randint(2, 3)))
        paned.set_end_child(self.scrolled(right, 300))
        return paned

    def controls_page(self) -> Gtk.Widget:
        notebook = Gtk.Notebook()
        for title in self.words(WORDS, self.rng.randint(2, 4)):
            page = self.column([self.toggles, lambda: self.checks(self.rng.randint(2, 4)),
                                lambda: self.fields(self.rng.randint(1, 3)), self.buttons, self.levels])
            notebook.append_page(page, Gtk.Label(label=title))
        notebook.set_current_page(self.rng.randrange(notebook.get_n_pages()))
        notebook.set_tab_pos(self.rng.choice(TAB_SIDES))
        box = Gtk.Box(spacing=12, margin_start=6, margin_end=6, margin_top=6, margin_bottom=6)
        notebook.set_hexpand(True)
        box.append(notebook)
        box.append(self.column([self.toggles, self.listbox]))
        return box

    def keep_focus_visible(self) -> bool:
        self.window.set_focus_visible(True)
        return True

    def focus_one(self) -> bool:
        """Focus one control that shows, and show focus rings as after a key press."""
        shown = [w for w in self.focusable if w.get_mapped() and w.is_sensitive()]
        if shown:
            self.rng.choice(shown).grab_focus()
        self.window.set_focus_visible(True)
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", choices=("lists", "controls"), default="lists")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    loop = GLib.MainLoop()
    Showcase(args.page, args.seed, loop)
    loop.run()


if __name__ == "__main__":
    main()
