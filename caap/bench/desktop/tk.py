"""Tk's widget demo labelled from Tk's own introspection (Tk 8.6 has no AT-SPI bridge).

``TkDemo`` runs ``tk_driver.py`` (Tk's ``widget`` demo inside an interpreter caap holds) on the
private desktop and talks to it one JSON line at a time; ``candidates`` maps what it reports to
caap's taxonomy with ``CLASS_TYPES`` and a few rules for the widgets that hold many elements
(listbox rows, tree rows and headings, notebook tabs, menu entries, the lines and links of a text).
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caap.bench.desktop.labels import Candidate, range_fraction
from caap.bench.desktop.session import DesktopError, DesktopSession, XWindow
from caap.geometry import Box, iou

DRIVER = Path(__file__).with_name("tk_driver.py")
DEMO_DIRS = ("/usr/share/doc/tk8.6-doc/demos", "/usr/share/doc/tk8.6/demos", "/usr/share/doc/tk8.6/examples",
             "/usr/lib/tk8.6/demos")

# Tk widget class → caap element type. Classes not listed are containers or decoration (frames,
# toplevels, panes, canvases, separators); the many-element widgets are expanded in ``candidates``.
CLASS_TYPES: dict[str, str] = {
    "Button": "button",
    "TButton": "button",
    "Checkbutton": "checkbox",
    "TCheckbutton": "checkbox",
    "Radiobutton": "radio",
    "TRadiobutton": "radio",
    "Entry": "input_field",
    "TEntry": "input_field",
    "Spinbox": "input_field",
    "TSpinbox": "input_field",
    "TCombobox": "dropdown",
    "Menubutton": "dropdown",
    "TMenubutton": "dropdown",
    "Label": "text",
    "TLabel": "text",
    "Message": "text",
    "Scale": "slider",
    "TScale": "slider",
    "TProgressbar": "progress_bar",
    "Scrollbar": "scrollbar",
    "TScrollbar": "scrollbar",
    "TSizegrip": "resize_handle",
    "Text": "text_area",  # a disabled text is a page of lines and links instead
    "Listbox": "tabled_text",  # per row
    "Treeview": "tree_item",  # per row; plain tabled_text when no row can open
    "TNotebook": "tab",  # per tab
    "Menu": "tabled_text",  # per entry
    "Labelframe": "text",  # its title
    "TLabelframe": "text",
}


def demo_dir() -> Path | None:
    """Where Debian's tk8.6-doc put the demos (the folder holding ``widget``)."""
    for d in DEMO_DIRS:
        if (Path(d) / "widget").is_file():
            return Path(d)
    return None


class TkDemo:
    """The widget demo running on ``session``'s display, driven through ``tk_driver.py``."""

    def __init__(self, session: DesktopSession, python: str | None = None, timeout: float = 20.0) -> None:
        demos = demo_dir()
        if demos is None:
            raise DesktopError("Tk's demos are missing (Debian package tk8.6-doc)")
        self.session = session
        self.timeout = timeout
        self.proc = session.launch([python or sys.executable, str(DRIVER), str(demos)], stdin_pipe=True)
        ready = self._read()
        if not ready.get("ready"):
            raise DesktopError(f"the Tk demo did not start: {ready}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            tail = self.session.log_of(self.proc.args[0] if isinstance(self.proc.args, list) else "")
            raise DesktopError(f"the Tk demo stopped answering (exit {self.proc.poll()}): "
                               f"{tail or 'it printed nothing'}")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            # Something else on the demo's stdout (a blank line, a Tk warning): the episode cannot trust it.
            raise DesktopError(f"the Tk demo answered with a line that is not JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise DesktopError(f"the Tk demo answered {answer!r}")
        return answer

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(command) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise DesktopError(f"the Tk demo has exited (code {self.proc.poll()})") from None
        answer = self._read()
        if "error" in answer:
            raise DesktopError(f"the Tk demo: {command.get('cmd')}: {answer['error']}")
        return answer

    def tcl(self, script: str) -> str:
        return str(self.ask({"cmd": "tcl", "script": script}).get("result", ""))

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.ask({"cmd": "quit"})
                self.proc.wait(3)
        except (DesktopError, subprocess.TimeoutExpired, OSError, ValueError):
            pass
        DesktopSession.stop(self.proc)
        time.sleep(0.05)


def _box(x: int, y: int, w: int, h: int) -> Box:
    return (x, y, x + w, y + h)


def _window_for(top: Sequence[int] | None, windows: Sequence[XWindow]) -> int | None:
    if not top or not windows:
        return None
    box = _box(*top[:4])
    best = max(windows, key=lambda w: iou(w.box, box))
    return best.id if iou(best.box, box) > 0.3 else None


def candidates(dump: dict[str, Any], windows: Sequence[XWindow]) -> list[Candidate]:
    """The elements the demo's widgets make, in screen pixels (not yet clipped or checked)."""
    out: list[Candidate] = []
    for w in dump.get("widgets", []):
        cls = w.get("class", "")
        kind = CLASS_TYPES.get(cls)
        if kind is None:
            continue
        x, y, width, height = w["box"]
        box = _box(x, y, width, height)
        window = _window_for(w.get("toplevel"), windows)

        add = _Adder(out, box, window, cls, enabled=not w.get("disabled"))
        text = w.get("text")
        focused = bool(w.get("focused"))
        if cls in ("Label", "TLabel", "Message"):
            if text and text.strip():
                add("text", box, text=text, wrapped=w.get("wrapped"))
            elif w.get("image"):
                add("icon", box)
        elif cls in ("Button", "TButton"):
            if text and text.strip():
                add("button", box, text=text, focused=focused, checked=False)  # a push button never stays down
            elif w.get("image"):
                add("icon", box)
        elif cls in ("Checkbutton", "TCheckbutton", "Radiobutton", "TRadiobutton"):
            if cls in ("Checkbutton", "Radiobutton") and not w.get("indicator", True):
                # Drawn as a toggle button: held down while on.
                add("button", box, text=text or None, focused=focused, checked=bool(w.get("checked")))
            else:
                checked = None if w.get("alternate") else bool(w.get("checked"))
                add(kind, box, text=text or None, checked=checked)
        elif cls in ("Entry", "TEntry", "Spinbox", "TSpinbox", "TCombobox"):
            add(kind, box, text=w.get("content", ""), focused=focused)
        elif cls in ("Menubutton", "TMenubutton"):
            add("dropdown", box, text=text or None, focused=focused)
        elif cls == "Text":
            _text(w, box, add, focused)
        elif cls == "Listbox":
            for item in w.get("items", []):
                _, iy, _, ih = item["box"]
                # A row spans the list's width (its selection band does), less the border.
                add("tabled_text", (x + 2, y + iy, x + width - 2, y + iy + ih), text=item["text"],
                    highlighted=item["selected"])
        elif cls == "Treeview":
            _tree(w, box, add)
        elif cls == "TNotebook":
            for tab in w.get("tabs", []):
                x1, y1, x2, y2 = tab["box"]
                add("tab", (x + x1, y + y1, x + x2, y + y2), text=tab["text"], highlighted=tab["selected"])
        elif cls == "Menu":
            for entry in w.get("entries", []):
                ex, ey, ew, eh = entry["box"]
                if entry["text"]:
                    add("tabled_text", (x + ex, y + ey, x + ex + ew, y + ey + eh), text=entry["text"],
                        highlighted=entry["active"])
        elif cls in ("Labelframe", "TLabelframe"):
            if text and text.strip():
                # The title sits on the frame's top edge, a few px in from the left.
                lw, lh = w.get("label_width", 0), w.get("label_height", 0)
                add("text", (x + 2, y, min(x + width, x + lw + 16), y + lh + 2), text=text)
        elif kind in ("slider", "progress_bar") and len(w.get("range") or ()) == 3:
            add(kind, box, value=range_fraction(*w["range"]))
        else:
            add(kind, box)
    return out


class _Adder:
    """Adds the candidates of one widget: its own box, or boxes of its parts clipped to it."""

    def __init__(self, out: list[Candidate], box: Box, window: int | None, cls: str, *, enabled: bool = True) -> None:
        self.out, self.box, self.window, self.cls, self.enabled = out, box, window, cls, enabled

    def __call__(self, kind: str, b: Box, *, source: str | None = None, **attrs: Any) -> None:
        attrs.setdefault("enabled", self.enabled)
        self.out.append(Candidate(type=kind, box=b, window=self.window, clips=[self.box] if b != self.box else [],
                                  source=source or self.cls, name=str(attrs.get("text") or ""), **attrs))


def _text(w: dict[str, Any], box: Box, add: _Adder, focused: bool) -> None:
    if w.get("state") != "disabled":
        add("text_area", box, text=w.get("content", ""), focused=focused)
        return
    x, y = box[0], box[1]
    for line in w.get("lines", []):
        _, ly, _, lh = line["box"]
        for part in line.get("parts", []):
            if not part["text"].strip():
                continue
            kind = "hyperlink" if part["link"] else "text"
            add(kind, (x + part["x1"], y + ly, x + part["x2"], y + ly + lh), text=part["text"], source="Text")


def _tree(w: dict[str, Any], box: Box, add: _Adder) -> None:
    x, y = box[0], box[1]
    rows = w.get("rows", [])
    tree = any(r["expandable"] for r in rows)
    for row in rows:
        for cell in row["cells"]:
            if not cell["box"]:
                continue
            cx, cy, cw, ch = cell["box"]
            b = (x + cx, y + cy, x + cx + cw, y + cy + ch)
            if cell["column"] == "#0" and tree:
                add("tree_item", b, text=cell["text"], highlighted=row["selected"],
                    expanded=row["open"] if row["expandable"] else None)
            elif cell["text"]:
                add("tabled_text", b, text=cell["text"], highlighted=row["selected"])
    if rows and w.get("headings"):
        top = rows[0]["box"][1] if rows else 0
        for h in w["headings"]:
            if h["text"] and top > 4:
                add("tabled_text", (x + h["x"] + 1, y + 1, x + h["x"] + h["width"], y + top), text=h["text"])
