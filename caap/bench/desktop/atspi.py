"""GTK and Qt applications labelled from their accessibility tree (AT-SPI).

The walker (``atspi_walk.py``, run under the system Python by ``DesktopSession.walk``) prints the
application's on-screen nodes; ``candidates`` maps them to caap's taxonomy with ``ROLE_TYPES``
and the few rules a role alone does not settle (an icon-only button, a switch, a tree's rows, a
read-only text view). Geometry and visibility are finished in ``labels.finish``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from caap.bench.desktop.labels import Candidate, range_fraction, text_width
from caap.bench.desktop.session import XWindow
from caap.geometry import Box, intersect, iou

# AT-SPI role → caap element type (DESIGN §2; ElementType values). Roles not listed are containers
# (panels, fillers, frames, scroll panes, tool and menu bars, lists and tables themselves) or
# decoration (separators, spinners): not elements, but their children are looked at.
ROLE_TYPES: dict[str, str] = {
    "push button": "button",
    "toggle button": "button",  # a GTK 3 switch is one too: see _switch
    "button": "button",
    "check box": "checkbox",
    "switch": "checkbox",
    "radio button": "radio",
    "entry": "input_field",
    "password text": "input_field",
    "spin button": "input_field",
    "text": "input_field",  # multi-line: text_area when editable, lines of text when not (_text_node)
    "combo box": "dropdown",
    "label": "text",
    "static": "text",
    "heading": "text",
    "caption": "text",
    "paragraph": "text",
    "status bar": "text",
    "tool tip": "text",
    "link": "hyperlink",
    "table cell": "tabled_text",  # a toggle cell is a checkbox, a cell with only a picture an icon
    "list item": "tabled_text",
    "menu item": "tabled_text",
    "check menu item": "tabled_text",
    "radio menu item": "tabled_text",
    "tear off menu item": "tabled_text",
    "menu": "tabled_text",  # a menu's title in a menu bar, or a submenu's item in a menu
    "table column header": "tabled_text",
    "column header": "tabled_text",
    "table row header": "tabled_text",
    "row header": "tabled_text",
    "page tab": "tab",
    "tree item": "tree_item",
    "slider": "slider",
    "progress bar": "progress_bar",
    "level bar": "progress_bar",
    "scroll bar": "scrollbar",
    "icon": "icon",
    "image": "icon",
}
# Types whose widget draws its own children (a button's label, a row's cells): what lies inside
# their box is part of them, not an element of its own.
COMPOUND = frozenset({"button", "icon", "checkbox", "radio", "input_field", "text_area", "dropdown", "hyperlink",
                      "tabled_text", "tab", "tree_item", "slider", "progress_bar", "scrollbar"})
# Things that open in a window of their own (menus, a combo box's list, tooltips).
POPUP_PARENTS = frozenset({"menu", "popup menu", "combo box", "window", "tool tip", "menu item"})
# GTK 4 names a widget without a label after its class ("GtkDropDown", "GtkImage"): not drawn.
GENERIC_NAME = re.compile(r"Gtk[A-Z]\w*")
GTK4_POPOVERS = frozenset({"GtkPopover", "GtkPopoverMenu"})  # the names GTK 4 gives them
ROW_ROLES = frozenset({"table cell", "list item", "tree item"})
TOP_ROLES = frozenset({"frame", "window", "dialog", "alert", "file chooser"})
HIGHLIGHT_STATES = ("selected",)
MENU_HIGHLIGHT_STATES = ("selected", "focused", "armed")
# GTK 4 reports a widget's content box; these types draw a frame round it (ink tells where).
GROWN = frozenset({"button", "dropdown", "input_field", "text_area", "slider"})  # a slider: to its knob
BUTTON_ROLES = frozenset({"push button", "toggle button"})  # a button showing a picture is grown too
ICON_BUTTON_SIDE = 56  # px: a button no wider than this whose name does not fit in it shows a picture
# px: a GTK 3 radio button at least this high is drawn as a button, without its dot (a stack
# switcher's pages, a linked group's choice); one with its dot is 18-22 px high.
RADIO_AS_BUTTON_HEIGHT = 28
EXPANDER_ARROW = 22  # px: a GTK expander's arrow and the gap before its title


@dataclass
class Node:
    id: int
    parent: int | None
    role: str
    name: str
    states: frozenset[str]
    box: Box | None
    text: str | None
    value: list[float] | None
    lines: list[list[Any]] | None
    actions: list[str]
    shown: str | None
    depth: int
    children: list[int] = field(default_factory=list)


def parse_nodes(data: dict[str, Any]) -> list[Node]:
    nodes: list[Node] = []
    for raw in data.get("nodes", []):
        b = raw.get("box")
        # GTK 3 gives cells it does not draw a box at -2**31: nowhere.
        box = (b[0], b[1], b[0] + b[2], b[1] + b[3]) if b and b[2] > 0 and b[3] > 0 and min(b[0], b[1]) > -10_000 \
            else None
        nodes.append(Node(raw["id"], raw.get("parent"), raw.get("role", ""), raw.get("name") or "",
                          frozenset(raw.get("states", ())), box, raw.get("text"), raw.get("value"), raw.get("lines"),
                          list(raw.get("actions") or ()), raw.get("shown"), raw.get("depth", 0)))
    for n in nodes:
        if n.parent is not None and 0 <= n.parent < len(nodes):
            nodes[n.parent].children.append(n.id)
    return nodes


def _inside(inner: Box, outer: Box, slack: int = 2) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack and inner[2] <= outer[2] + slack
            and inner[3] <= outer[3] + slack)


def _shift(box: Box, dx: int, dy: int) -> Box:
    return (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)


class _Tree:
    """One application's nodes with the per-window facts the mapping needs."""

    def __init__(self, nodes: list[Node], windows: Sequence[XWindow], surface_relative: bool, qt: bool) -> None:
        self.nodes = nodes
        self.qt = qt
        self.windows = windows
        self.out: list[Candidate] = []
        self.offset: dict[int, tuple[int, int]] = {}  # top-level node → (dx, dy) to screen pixels
        self.xwin: dict[int, int | None] = {}  # top-level node → X window id
        regular = [w for w in windows if not w.override_redirect] or list(windows)
        for top in (n for n in nodes if n.depth == 1 and n.box is not None):
            self.xwin[top.id], self.offset[top.id] = self._match(top, regular, surface_relative)
        # GTK 4 popovers (drop-down lists, menus) are windows of their own whose boxes are
        # reported with a wrong origin: placed by matching their size to a popup window.
        self.popovers: dict[int, tuple[int, int, int]] = {}  # node → (dx, dy, X window id)
        if surface_relative:
            popups = [w for w in windows if w.override_redirect]
            for n in nodes:
                if n.depth > 1 and n.name in GTK4_POPOVERS and n.box is not None and popups:
                    self._place_popover(n, popups)

    def _place_popover(self, node: Node, popups: list[XWindow]) -> None:
        assert node.box is not None
        w, h = node.box[2] - node.box[0], node.box[3] - node.box[1]

        def slack(x: XWindow) -> int:
            dw, dh = (x.box[2] - x.box[0]) - w, (x.box[3] - x.box[1]) - h
            return dw + dh if 0 <= dw <= 14 and 0 <= dh <= 14 else 10_000

        best = min(popups, key=slack)
        if slack(best) >= 10_000:
            return
        opener = self.nodes[node.parent] if node.parent is not None else None
        top = self.top_of(node)
        ox, oy = self.offset.get(top.id, (0, 0)) if top is not None else (0, 0)
        below = right = False
        if opener is not None and opener.box is not None:
            below = best.box[1] >= (opener.box[1] + opener.box[3]) // 2 + oy
            right = best.box[0] >= (opener.box[0] + opener.box[2]) // 2 + ox
        # The popover's arrow takes the extra px on the side facing its opener.
        dx = best.box[2] - node.box[2] if right and best.box[2] - best.box[0] > w else best.box[0] - node.box[0]
        dy = best.box[3] - node.box[3] if below and best.box[3] - best.box[1] > h else best.box[1] - node.box[1]
        popups.remove(best)
        self.popovers[node.id] = (dx, dy, best.id)

    @staticmethod
    def _match(top: Node, windows: Sequence[XWindow], surface_relative: bool) -> tuple[int | None, tuple[int, int]]:
        assert top.box is not None
        if not windows:
            return None, (0, 0)
        if not surface_relative:
            best = max(windows, key=lambda w: iou(w.box, top.box or w.box))
            return (best.id if iou(best.box, top.box) > 0.3 else None), (0, 0)
        # GTK 4 reports boxes relative to the window's surface, which leaves an equal margin round
        # the window's content (its resize border): match by title, else by size.
        w, h = top.box[2] - top.box[0], top.box[3] - top.box[1]
        titled = [x for x in windows if x.name == top.name and top.name]
        by_size = sorted(windows, key=lambda x: abs((x.box[2] - x.box[0]) - w) + abs((x.box[3] - x.box[1]) - h))
        best = (titled or by_size)[0]
        bw, bh = best.box[2] - best.box[0], best.box[3] - best.box[1]
        return best.id, (best.box[0] + max(0, bw - w) // 2, best.box[1] + max(0, bh - h) // 2)

    def top_of(self, node: Node) -> Node | None:
        n: Node | None = node
        while n is not None and n.depth > 1:
            n = self.nodes[n.parent] if n.parent is not None else None
        return n

    def ancestors(self, node: Node) -> list[Node]:
        out = []
        n = node
        while n.parent is not None:
            n = self.nodes[n.parent]
            out.append(n)
        return out

    def descendants(self, node: Node) -> list[Node]:
        out: list[Node] = []
        stack = list(node.children)
        while stack:
            n = self.nodes[stack.pop()]
            out.append(n)
            stack.extend(n.children)
        return out


# GTK 4.8 widgets that draw rows and cells without telling AT-SPI about any of them: their cells
# are found in the pixels (text unknown).
OPAQUE_VIEWS = frozenset({"GtkTreeView", "GtkIconView"})


def candidates(data: dict[str, Any], windows: Sequence[XWindow]) -> list[Candidate]:
    """The elements the tree describes, in screen pixels (not yet clipped or checked)."""
    toolkits = " ".join(data.get("toolkits", [])).lower()
    surface_relative = "gtk 4" in toolkits
    nodes = parse_nodes(data)
    tree = _Tree(nodes, windows, surface_relative, "qt" in toolkits)
    trees = _tree_columns(tree)
    for top in (n for n in nodes if n.depth == 1):
        _visit(tree, top, [], None, trees, surface_relative)
    return tree.out


VIEW_ROLES = frozenset({"tree table", "table", "tree", "list", "list box", "layered pane"})


def _view_of(tree: _Tree, node: Node) -> int | None:
    """The list, table or tree view a row belongs to (GTK 3 nests a row's cells in a row cell)."""
    return next((a.id for a in tree.ancestors(node) if a.role in VIEW_ROLES), None)


TreeColumns = dict[int, set[tuple[int, int]]]  # a tree view's id → the (left, right) edges of its tree column's rows


def _tree_columns(tree: _Tree) -> TreeColumns:
    """Views that are trees (some row can expand) → the left and right edges of their tree column's
    expandable rows."""
    out: TreeColumns = {}
    for n in tree.nodes:
        if "expandable" in n.states and n.box is not None:
            row = next((a for a in [n, *tree.ancestors(n)] if a.role in ROW_ROLES), None)
            view = _view_of(tree, row) if row is not None else None
            if row is None or view is None or row.box is None:
                continue
            out.setdefault(view, set()).add((row.box[0], row.box[2]))
    return out


def _in_tree_column(box: Box, edges: tuple[int, int], named: bool) -> bool:
    """Whether a cell lies in a tree's tree column, whose expandable rows span ``edges``. The cells
    of that column start where their depth puts them (GTK 3 reports each level a step further right)
    and all end at the column's right edge: a named row deeper than every expandable one starts
    nowhere an expandable row does. (Qt leaves a child's cell in that column empty where another
    column holds its text: an empty cell, not a row.)"""
    left, right = edges
    return abs(box[0] - left) <= 2 or (named and box[0] >= left - 2 and abs(box[2] - right) <= 2)


def _is_a_label(tree: _Tree, node: Node, name: str) -> bool:
    """Whether ``name`` is the text of a label elsewhere in ``node``'s window (the label naming it)."""
    top = tree.top_of(node)
    return any(n is not node and n.role == "label" and (n.text or n.name or "").strip() == name
               and tree.top_of(n) is top for n in tree.nodes)


def _texts_inside(tree: _Tree, node: Node) -> list[str]:
    assert node.box is not None
    found = []
    for d in tree.descendants(node):
        if d.box is not None and _inside(d.box, node.box) and d.role in ("label", "static", "text"):
            text = without_mnemonic_mark((d.text if d.text is not None else d.name).strip())
            if text and text not in found and not GENERIC_NAME.fullmatch(text):
                found.append(text)
    return found


def _states_inside(tree: _Tree, node: Node) -> frozenset[str]:
    """States of the node and of what is drawn inside it (GTK 4 keeps a row's on an inner panel)."""
    states = set(node.states)
    if node.box is not None:
        for d in tree.descendants(node):
            if d.box is not None and _inside(d.box, node.box):
                states |= d.states
    return frozenset(states)


@dataclass(frozen=True)
class _Place:
    """Where a subtree's boxes land: the shift to screen pixels and the X window it is drawn in
    (None: work it out per node; ``popup``: a GTK 4 popover, its own window)."""

    dx: int
    dy: int
    window: int | None
    popup: bool = False


def _visit(tree: _Tree, node: Node, clips: list[Box], consumed_by: Box | None, trees: TreeColumns,
           surface_relative: bool, place: _Place | None = None) -> None:
    top = tree.top_of(node)
    if node.id in tree.popovers:
        dx, dy, xid = tree.popovers[node.id]
        place, clips, consumed_by = _Place(dx, dy, xid, popup=True), [], None
    elif place is None:
        dx, dy = tree.offset.get(top.id, (0, 0)) if top is not None else (0, 0)
        place = _Place(dx, dy, tree.xwin.get(top.id) if top is not None else None)
    box = _shift(node.box, place.dx, place.dy) if node.box is not None else None
    inside_owner = consumed_by is not None and (box is None or _inside(box, consumed_by))
    kind = None if inside_owner or box is None else _kind(tree, node, trees, surface_relative, box)
    window = place.window if place.popup else _window(tree, node, box, place) if box is not None else None
    if surface_relative and node.name in OPAQUE_VIEWS and box is not None:
        headers = [_shift(tree.nodes[c].box or box, place.dx, place.dy) for c in node.children
                   if tree.nodes[c].role == "push button"]
        rows = (box[0], max([box[1], *(h[3] for h in headers)]), box[2], box[3])
        if rows[3] > rows[1]:
            tree.out.append(Candidate(type="tabled_text", box=rows, window=window, clips=list(clips),
                                      source=node.name, cells=True))
    if kind in ("checkbox", "radio") and tree.qt and box is not None and node.children and box[3] - box[1] > 40:
        # A checkable Qt group box: the check box is its title; the widgets inside are its own.
        box = (box[0], box[1], min(box[2], box[0] + int(text_width(node.name)) + 34), min(box[3], box[1] + 22))
        _emit(tree, node, kind, box, clips, window, place, surface_relative)
        kind = None
    elif kind is not None and box is not None:
        if kind == "tree_item" and node.role == "toggle button":
            box = _expander_title(tree, node, box, place)
        _emit(tree, node, kind, box, clips, window, place, surface_relative)
    elif tree.qt and box is not None and not inside_owner and node.children and node.name and (
            node.role == "panel" or (node.role == "frame" and node.depth > 1)):
        # A Qt group box or dock widget: its title is drawn at its top-left corner (on or above the
        # frame line, or in the dock's title bar); "[*]" is Qt's placeholder for a modified mark.
        text = node.name.replace("[*]", "").strip()
        width = int(text_width(text)) + 14
        title = (box[0], box[1], min(box[2], box[0] + width), min(box[3], box[1] + 22))
        tree.out.append(Candidate(type="text", box=title, text=text, window=window, clips=list(clips),
                                  source="title", name=text))
    own_clips = clips
    if box is not None and node.depth > 1 and node.role in ("scroll pane", "viewport", "layered pane", "table",
                                                            "tree table", "list", "list box", "tree"):
        own_clips = [*clips, box]
    # What a compound widget draws inside its box belongs to it; what lies outside (a notebook
    # tab's page, a combo box's open list) is visited on its own.
    owner = box if kind in COMPOUND else consumed_by if inside_owner else None
    for child_id in node.children:
        child = tree.nodes[child_id]
        child_clips = own_clips
        if node.role in POPUP_PARENTS and child.box is not None and box is not None and not _inside(
                _shift(child.box, place.dx, place.dy), box):
            child_clips = []  # a popup is not clipped by the widget that opened it
        _visit(tree, child, child_clips, owner, trees, surface_relative, place)


def _kind(tree: _Tree, node: Node, trees: TreeColumns, surface_relative: bool, box: Box) -> str | None:
    role = node.role
    kind = ROLE_TYPES.get(role)
    if kind is None:
        return None
    parent = tree.nodes[node.parent] if node.parent is not None else None
    if role == "menu" and parent is not None and parent.role not in ("menu bar", "menu", "popup menu"):
        return None  # a combo box's list: a container
    if role in ("text", "entry", "password text") and "multi_line" in node.states:
        return "text_area" if "editable" in node.states else "text"
    if role == "text" and "editable" not in node.states:
        return "text"
    if role in ROW_ROLES or (role == "icon" and (node.name or node.text)):
        if role == "table cell" and any(tree.nodes[c].role == "table cell" for c in node.children):
            return None  # GTK 3's row of cells: the cells inside are the elements
        if role == "table cell" and any(a == "toggle" for a in node.actions):
            return "checkbox"
        view = _view_of(tree, node)
        columns = trees.get(view) if view is not None else None
        if columns and node.box is not None and any(_in_tree_column(node.box, edges, bool(node.name or node.text))
                                                    for edges in columns):
            return "tree_item"
        if role == "tree item":
            return "tree_item"
        if _composite_row(tree, node):
            return None  # a row laid out like a small form: its parts are the elements
        if not (node.name or node.text or _texts_inside(tree, node)):
            return "icon"  # a picture or a swatch to pick: no text of its own
        return "tabled_text"
    if role in ("check box", "toggle button") and tree.qt and any(a.role == "tool bar" for a in tree.ancestors(node)):
        return "icon"  # a checkable tool button (bold, align left): a picture that stays pressed
    if role == "toggle button" and _switch(node, box):
        return "checkbox"
    if role == "toggle button" and "expandable" in node.states:
        return "tree_item"  # a GTK expander: an arrow and a title that show or hide what is below
    if role == "radio button" and not tree.qt and not surface_relative and box[3] - box[1] >= RADIO_AS_BUTTON_HEIGHT:
        kind = "button"  # drawn without its dot: a button held down while chosen
    if kind == "button" and _icon_button(tree, node, box, surface_relative):
        return "icon"
    return kind


INTERACTIVE_ROLES = frozenset({"push button", "toggle button", "check box", "radio button", "link", "entry",
                               "combo box", "slider", "spin button", "password text"})


def _composite_row(tree: _Tree, node: Node) -> bool:
    """A list row that holds several texts or a control of its own (a message with its author,
    links and buttons): not one cell of text."""
    if node.box is None:
        return False
    inside = [d for d in tree.descendants(node) if d.box is not None and _inside(d.box, node.box)]
    if any(d.role in INTERACTIVE_ROLES or (d.role == "text" and "editable" in d.states) for d in inside):
        return True
    return len(_texts_inside(tree, node)) >= 2


def _expander_title(tree: _Tree, node: Node, box: Box, place: _Place) -> Box:
    """A GTK expander's title row: its box holds what it shows when open, below the title."""
    tops = [b[1] for d in tree.descendants(node) if d.box is not None
            for b in [_shift(d.box, place.dx, place.dy)] if _inside(b, box) and b[1] > box[1] + 4]
    bottom = min(tops) - 1 if "expanded" in node.states and tops else box[3]
    right = box[0] + EXPANDER_ARROW + int(text_width(node.name)) + 6 if node.name else box[2]
    return box[0], box[1], min(box[2], right), max(box[1] + 4, bottom)


def _switch(node: Node, box: Box) -> bool:
    """A GTK 3 switch: a toggle button without a name, about twice as wide as it is high."""
    w, h = box[2] - box[0], box[3] - box[1]
    return not node.name and 1.5 * h <= w <= 3 * h


def _icon_button(tree: _Tree, node: Node, box: Box, surface_relative: bool) -> bool:
    """A button that shows a picture, not its name."""
    if surface_relative:  # GTK 4 shows a button's text as a label inside it
        return not _texts_inside(tree, node)
    if any(a.role == "tool bar" for a in tree.ancestors(node)) and node.role in ("push button", "toggle button"):
        return True  # Qt's tool buttons show their icon only by default
    w = box[2] - box[0]
    if not node.name:
        return w <= ICON_BUTTON_SIDE
    return w <= ICON_BUTTON_SIDE and text_width(node.name) > w - 4


# An underscore opening a word, before a letter: GTK's mnemonic mark (``_Spinner``, ``Save _As``).
MNEMONIC_MARK = re.compile(r"(?<!\S)_(?=[^\W_])")
# GTK 4 also names a control by its label's markup, mark included; texts, cells and rows keep an
# underscore of their own name (a file called ``_draft.txt``).
MNEMONIC_TYPES = frozenset({"button", "checkbox", "radio", "tab"})


def without_mnemonic_mark(text: str) -> str:
    """A GTK 4 label's text or control's name without the underscore that marks its mnemonic
    (``_Spinner``, ``_Enable grouping``): the underline is drawn only while Alt is held. Only a
    text's one underscore, opening a word before a letter (``Use AA_Pixmaps`` keeps its own)."""
    return MNEMONIC_MARK.sub("", text) if text.count("_") == 1 else text


# Qt's item views tell a date-time cell's value in ISO 8601 (``2006-12-25T11:39:00.000``) and draw it
# in the locale's format (``25 Dec 2006 11:39:00``): what such a cell shows is not known.
QT_DATE_TIME_VALUE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?")


def without_mnemonic_copy(name: str) -> str:
    """A name GTK 4 writes twice, first with its mnemonic (``_Next Next``, ``Add _contact Add
    contact``): the label as drawn, once."""
    words = name.split()
    half = len(words) // 2
    if half and len(words) % 2 == 0 and "_" in " ".join(words[:half]) and \
            " ".join(words[:half]).replace("_", "") == " ".join(words[half:]):
        return " ".join(words[half:])
    return name


def _emit(tree: _Tree, node: Node, kind: str, box: Box, clips: list[Box], window: int | None, place: _Place,
          surface_relative: bool) -> None:
    states = _states_inside(tree, node) if surface_relative else node.states
    # A tree view's header buttons have no frame of their own to grow to.
    grow = surface_relative and (kind in GROWN or (kind == "icon" and node.role in BUTTON_ROLES)) and \
        not any(a.name in OPAQUE_VIEWS for a in tree.ancestors(node))
    c = Candidate(type=kind, box=box, window=window, clips=list(clips), source=node.role, name=node.name, grow=grow)
    inner = _texts_inside(tree, node) if kind in COMPOUND else []
    name = "" if GENERIC_NAME.fullmatch(node.name) else without_mnemonic_copy(node.name)
    if surface_relative and kind in MNEMONIC_TYPES:
        name = without_mnemonic_mark(name)
    if kind in ("button", "checkbox", "radio", "tab", "tabled_text", "tree_item", "hyperlink"):
        if node.role == "page tab" and inner:
            c.text = " ".join(inner)  # GTK 4 names every tab "Tab"; its label says what it shows
        else:
            c.text = name or (node.text or "").strip() or " ".join(inner) or None
        if tree.qt and c.text and QT_DATE_TIME_VALUE.fullmatch(c.text):
            c.text = None  # drawn in the locale's format, not known here
    elif kind == "dropdown":
        c.text = node.shown or name or " ".join(inner) or None
        editable = [d for d in tree.descendants(node) if d.role == "text" and "editable" in d.states]
        if editable:
            c.text = editable[0].text or ""
        elif not node.shown and name and _is_a_label(tree, node, name):
            # GTK 4's combo box takes its label's text for its name and shows its choice in a cell
            # view whose text it keeps to itself: what it draws is not known here.
            c.text = None
    elif kind in ("input_field", "text_area"):
        c.text = node.text if node.text is not None else ""
        if node.role == "password text":
            # Qt keeps a password to itself (an empty text over drawn dots): unknown, not empty.
            c.text = "●" * len(c.text) if c.text else None  # what GTK and Qt draw
    elif kind == "text":
        c.text = (node.text if node.text else node.name) or None
        if node.lines:
            c.lines = [(str(t), _shift((x, y, x + w, y + h), place.dx, place.dy)) for t, x, y, w, h in node.lines]
    # A toggle button is held down while on. GTK 4 reports its toggle buttons as push buttons that
    # are pressed while on; a plain push button is pressed only under a mouse button held down.
    if kind == "icon" and (node.role in ("check box", "toggle button") or "pressed" in states):
        c.checked = "checked" in states or "pressed" in states
    if kind == "button":
        c.checked = "pressed" in states or (node.role in ("toggle button", "radio button") and "checked" in states)
    if kind in ("checkbox", "radio"):
        c.checked = None if "indeterminate" in states else "checked" in states or (
            node.role == "toggle button" and "pressed" in states)
        # A Qt one may be a checkable button (labels.drawn_kind), which says whether it has the focus.
        c.qt_checkable = tree.qt and node.role in ("check box", "radio button")
    if kind in ("button", "dropdown", "input_field", "text_area") or c.qt_checkable:
        c.focused = "focused" in states
    if kind in ("tabled_text", "tab", "tree_item", "text", "hyperlink"):
        menu = node.role in ("menu item", "check menu item", "radio menu item", "menu")
        c.highlighted = any(s in states for s in (MENU_HIGHLIGHT_STATES if menu else HIGHLIGHT_STATES))
        if kind in ("tabled_text", "text", "hyperlink") and not c.highlighted:
            # A text inside a selected row is part of what is selected (GTK 4's list box rows hold
            # their texts as children), as a web page's text in its active row is (annotate.js).
            c.highlighted = any(a.role in ROW_ROLES and "selected" in a.states for a in tree.ancestors(node))
    if kind == "tree_item":
        c.expanded = ("expanded" in states) if "expandable" in states else None
    if kind in ("checkbox", "radio"):
        c.indeterminate = "indeterminate" in states
    # Insensitive: greyed out. Judged on the node itself (GTK 4's inner label has its own).
    c.enabled = "sensitive" in node.states
    if kind in ("slider", "progress_bar") and node.value and len(node.value) == 3:
        c.value = range_fraction(*node.value)
        if c.value is not None and kind == "slider" and not tree.qt and box[3] - box[1] > box[2] - box[0]:
            c.value = round(1.0 - c.value, 4)  # a vertical GTK scale has its minimum at the top
    tree.out.append(c)


def _window(tree: _Tree, node: Node, box: Box, place: _Place) -> int | None:
    """The X window the node is drawn in: its top-level's, unless it sits in a popup (a menu, a
    combo box's list) outside the widget that opened it; then None, the topmost window under it."""
    for a in tree.ancestors(node):
        if a.depth <= 1:
            break
        if a.role in POPUP_PARENTS and a.box is not None and intersect(box, _shift(a.box, place.dx, place.dy)) is None:
            return None
    return place.window
