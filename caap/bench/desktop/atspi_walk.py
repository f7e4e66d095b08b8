"""Dump the accessibility tree of one application as JSON on stdout (AT-SPI, through pyatspi).

Run by caap under the system Python (``/usr/bin/python3``), which has Debian's pyatspi and
PyGObject; caap's own interpreter usually has neither. This file therefore imports nothing from
caap and only prints: every node that is on screen, with its role, name, states, screen box, the
window it belongs to, and its text or value where it has one. Mapping the nodes to caap elements
happens in caap (``caap.bench.desktop.atspi``).

    /usr/bin/python3 atspi_walk.py --pid PID [--max-nodes N] [--max-seconds S]
"""

import argparse
import json
import sys
import time

# States worth carrying to caap: everything the mapping reads.
STATES = ("showing", "visible", "focused", "checked", "pressed", "selected", "expanded", "expandable",
          "editable", "multi_line", "single_line", "sensitive", "active", "indeterminate", "modal")
# Roles whose children are cells/rows: only the showing ones are walked, since such views may hold
# thousands of off-screen rows.
VIEW_ROLES = ("table", "tree table", "tree", "list", "list box", "table row", "tree item", "tool bar")
TEXT_LIMIT = 400
# Texts that may wrap onto several lines: the walker says where each line is, since caap labels text
# line by line. Longer texts are left to caap's pixel line finder (a character costs a D-Bus call).
LINE_ROLES = ("label", "static", "text", "paragraph", "heading", "caption", "description value")
LINE_CHARS = 600


def line_boxes(text, count):
    """[[text, x, y, w, h], ...] per drawn line, from the characters' boxes (characters on one line
    share their top); [] when the toolkit does not tell where characters are."""
    import pyatspi

    lines = []  # [text, x1, y1, x2, y2, top of the line's first character]
    for i in range(count):
        try:
            x, y, w, h = text.getCharacterExtents(i, pyatspi.DESKTOP_COORDS)
        except Exception:
            return []
        char = text.getText(i, i + 1)
        if char == "\n":
            lines.append(["", None, None, None, None, None])
            continue
        if not lines or (lines[-1][5] is not None and abs(lines[-1][5] - y) > max(1, h // 3)):
            lines.append(["", None, None, None, None, None])
        line = lines[-1]
        line[0] += char
        if w > 0 and h > 0:
            if line[1] is None:
                line[1:6] = [x, y, x + w, y + h, y]
            else:
                line[1:5] = [min(line[1], x), min(line[2], y), max(line[3], x + w), max(line[4], y + h)]
    return [[t.strip(), x1, y1, x2 - x1, y2 - y1] for t, x1, y1, x2, y2, _ in lines if t.strip() and x1 is not None]


ACTION_ROLES = ("table cell", "tree item", "list item")


def shown_choice(combo):
    """The name of a combo box's chosen item (what it shows while closed), or None."""
    try:
        selection = combo.querySelection()
        if selection.nSelectedChildren > 0:
            return selection.getSelectedChild(0).name
    except Exception:
        pass
    try:  # GTK 3 keeps the items in a menu child, with the chosen one selected
        for i in range(combo.childCount):
            menu = combo.getChildAtIndex(i)
            selection = menu.querySelection()
            if selection.nSelectedChildren > 0:
                return selection.getSelectedChild(0).name
    except Exception:
        pass
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--max-nodes", type=int, default=4000)
    parser.add_argument("--max-seconds", type=float, default=20.0)
    args = parser.parse_args()
    try:
        import pyatspi
    except ImportError as exc:
        print(json.dumps({"error": f"pyatspi is not importable here ({exc})"}))
        return 2
    deadline = time.monotonic() + args.max_seconds
    state_ids = {name: getattr(pyatspi, "STATE_" + name.upper()) for name in STATES}
    desktop = pyatspi.Registry.getDesktop(0)
    apps = []
    for i in range(desktop.childCount):
        try:
            app = desktop.getChildAtIndex(i)
            if app is not None and app.get_process_id() == args.pid:
                apps.append(app)
        except Exception:  # an application that went away while we looked
            continue
    nodes: list = []
    truncated = False

    def box_of(acc):
        try:
            ext = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        except Exception:
            return None
        return [ext.x, ext.y, ext.width, ext.height]

    def visit(acc, parent, depth, window, needs_showing):
        nonlocal truncated
        if len(nodes) >= args.max_nodes or time.monotonic() > deadline:
            truncated = True
            return
        try:
            role = acc.getRoleName()
            state_set = acc.getState()
            states = [name for name, sid in state_ids.items() if state_set.contains(sid)]
            name = acc.name or ""
            count = acc.childCount
        except Exception:
            return
        box = box_of(acc)
        if depth > 1:
            # GTK 4 sets no "showing" below the window, only "visible", and gives the pages of a
            # stack that are not shown an empty box: both toolkits' hidden things are cut here.
            if ("showing" if needs_showing else "visible") not in states:
                return
            if box is not None and (box[2] <= 0 or box[3] <= 0):
                return
        node = {"id": len(nodes), "parent": parent, "depth": depth, "role": role, "name": name,
                "states": states, "box": box, "children": count}
        if role in ("frame", "window", "dialog", "alert", "file chooser", "menu", "popup menu", "tool tip"):
            window = node["id"]
        node["window"] = window
        try:
            text = acc.queryText()
            node["text"] = text.getText(0, min(text.characterCount, TEXT_LIMIT))
            if role in LINE_ROLES and box is not None and 0 < text.characterCount <= LINE_CHARS:
                lines = line_boxes(text, text.characterCount)
                if len(lines) > 1:
                    node["lines"] = lines
        except Exception:
            pass
        try:
            value = acc.queryValue()
            node["value"] = [value.currentValue, value.minimumValue, value.maximumValue]
        except Exception:
            pass
        if role in ACTION_ROLES:
            try:
                action = acc.queryAction()
                node["actions"] = [action.getName(i) for i in range(action.nActions)]
            except Exception:
                pass
        if role == "combo box":
            node["shown"] = shown_choice(acc)
        try:
            desc = acc.description
            if desc:
                node["description"] = desc
        except Exception:
            pass
        nodes.append(node)
        for index in range(count):
            try:
                child = acc.getChildAtIndex(index)
            except Exception:
                continue
            if child is not None:
                visit(child, node["id"], depth + 1, window, needs_showing)

    toolkits = []
    for app in apps:
        try:
            toolkit, version = app.toolkitName or "", app.toolkitVersion or ""
        except Exception:
            toolkit = version = ""
        toolkits.append(f"{toolkit} {version}".strip())
        visit(app, None, 0, None, not (toolkit.lower() == "gtk" and version.startswith("4")))
    json.dump({"nodes": nodes, "truncated": truncated, "toolkits": toolkits}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
