"""Run Tk's widget demo inside a Tcl interpreter we hold, and describe its widgets on request.

Tk 8.6 has no accessibility bridge, so caap asks Tk itself: this script (run by caap as a child
process under a Python with tkinter) sources the demo, then answers one JSON command per line on
stdin with one JSON line on stdout, while Tk's event loop keeps the windows drawn:

    {"cmd": "demo", "name": "button"}   open a sub-demo (and withdraw the main window)
    {"cmd": "tcl", "script": "..."}     evaluate Tcl (a theme, a scroll, opening a menu)
    {"cmd": "dump"}                     every viewable widget: class, screen box, X window, values
    {"cmd": "quit"}

It imports nothing from caap; the widget classes are mapped to caap's taxonomy in ``tk.py``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tkinter
from typing import Any

TEXT_LIMIT = 400


class Driver:
    def __init__(self, demos: str) -> None:
        self.root = tkinter.Tk()
        self.tk = self.root.tk
        self.demos = demos
        self.buffer = b""
        # The demo finds its folder from the script it is sourced from.
        self.tk.call("source", os.path.join(demos, "widget"))

    # --- Tcl helpers ------------------------------------------------------------------------------
    def call(self, *args: Any) -> str:
        result = self.tk.call(*args)
        if isinstance(result, tuple):
            # A Tcl list comes back as a tuple (a menubutton's variable set from a list: ``{Black}``);
            # Tk draws its string form, which Tcl gives back as a string.
            result = self.tk.call("format", "%s", result)
        return str(result)

    def opt(self, w: str, name: str) -> str | None:
        try:
            return self.call(w, "cget", name)
        except tkinter.TclError:
            return None

    def var(self, name: str | None) -> str | None:
        if not name:
            return None
        try:
            return self.call("set", name if name.startswith("::") else "::" + name)
        except tkinter.TclError:
            return None

    def flag(self, *args: Any) -> bool:
        """A Tcl boolean result (tkinter may hand it back as a Python bool, or as "1"/"yes")."""
        return self.call(*args).lower() in ("1", "true", "yes", "on")

    def strs(self, *args: Any) -> list[str]:
        """A Tcl list result as Python strings (tkinter hands back Tcl objects for some)."""
        return [str(v) for v in self.tk.splitlist(self.tk.call(*args))]

    def ints(self, *args: Any) -> list[int]:
        try:
            return [int(float(v)) for v in self.tk.splitlist(self.tk.call(*args))]
        except (tkinter.TclError, ValueError):
            return []

    # --- the dump ---------------------------------------------------------------------------------
    def widgets(self, w: str = ".") -> list[str]:
        out = [w]
        for child in self.strs("winfo", "children", w):
            out.extend(self.widgets(str(child)))
        return out

    def window_of(self, w: str) -> list[int]:
        """The screen box of the widget's toplevel: caap finds its X window by it (without a window
        manager ``wm frame`` names Tk's inner wrapper, not the window X stacks)."""
        top = self.call("winfo", "toplevel", w)
        return [int(self.call("winfo", "rootx", top)), int(self.call("winfo", "rooty", top)),
                int(self.call("winfo", "width", top)), int(self.call("winfo", "height", top))]

    def dump(self) -> dict[str, Any]:
        self.root.update_idletasks()
        focus = self.call("focus")
        out = []
        for w in self.widgets():
            try:
                if not self.flag("winfo", "viewable", w) or not self.flag("winfo", "ismapped", w):
                    continue
                record = self.describe(w, focus)
            except tkinter.TclError:
                continue  # destroyed while we looked
            if record is not None:
                out.append(record)
        return {"widgets": out}

    def describe(self, w: str, focus: str) -> dict[str, Any] | None:
        cls = self.call("winfo", "class", w)
        x, y = int(self.call("winfo", "rootx", w)), int(self.call("winfo", "rooty", w))
        width, height = int(self.call("winfo", "width", w)), int(self.call("winfo", "height", w))
        r: dict[str, Any] = {"path": w, "class": cls, "box": [x, y, width, height], "toplevel": self.window_of(w),
                             "focused": w == focus}
        text = self.opt(w, "-text")
        variable = self.var(self.opt(w, "-textvariable"))
        if variable is not None:
            text = variable
        if text is not None:
            r["text"] = text
        r["image"] = bool(self.opt(w, "-image") or self.opt(w, "-bitmap"))
        state = self.opt(w, "-state")
        if state is not None:
            r["state"] = state
        try:  # ttk keeps its state flags apart from -state
            r["disabled"] = self.flag(w, "instate", "disabled") if cls.startswith("T") else state == "disabled"
        except tkinter.TclError:
            r["disabled"] = state == "disabled"
        if cls in ("Scale", "TScale", "TProgressbar"):
            self.range_of(w, cls, r)
        if cls in ("Checkbutton", "Radiobutton"):
            value = self.var(self.opt(w, "-variable"))
            want = self.opt(w, "-onvalue" if cls == "Checkbutton" else "-value")
            r["checked"] = value is not None and value == want
            r["indicator"] = (self.opt(w, "-indicatoron") or "1").lower() not in ("0", "false", "no", "off")
        elif cls in ("TCheckbutton", "TRadiobutton"):
            r["checked"] = self.flag(w, "instate", "selected")
            r["alternate"] = self.flag(w, "instate", "alternate")
        elif cls in ("Entry", "TEntry", "Spinbox", "TSpinbox", "TCombobox"):
            content = self.call(w, "get")
            show = self.opt(w, "-show")
            r["content"] = (show[0] * len(content)) if show else content
        elif cls == "Text":
            self.text_lines(w, r)
        elif cls == "Listbox":
            self.listbox(w, r)
        elif cls == "Treeview":
            self.treeview(w, r)
        elif cls == "TNotebook":
            self.notebook(w, r)
        elif cls == "Menu":
            self.menu(w, r)
        elif cls in ("Label", "TLabel") and text:
            wrapped = self.wrapped(w, text)
            if wrapped is not None:
                r["wrapped"] = wrapped
        elif cls in ("Labelframe", "TLabelframe"):
            font = self.opt(w, "-font") or "TkDefaultFont"
            r["label_width"] = int(self.call("font", "measure", font, text or ""))
            r["label_height"] = int(self.call("font", "metrics", font, "-linespace"))
        return r

    def wrapped(self, w: str, text: str) -> list[str] | None:
        """The lines a label with a wrap length breaks its text into, as Tk breaks them: at the
        newlines, then after the last word that fits the wrap length (measured in the label's font);
        a word longer than a line has a line of its own. None for a label that does not wrap, or
        whose lines do not fit inside it."""
        try:
            length = float(self.call("winfo", "fpixels", w, self.opt(w, "-wraplength") or "0"))
        except (tkinter.TclError, ValueError):
            return None
        if length <= 0:
            return None
        font = self.opt(w, "-font") or ("TkDefaultFont" if self.call("winfo", "class", w).startswith("T") else "")
        if not font:
            return None
        lines: list[str] = []
        for paragraph in text.split("\n"):
            line, gap = "", ""
            # Measured with the spaces as written: Tk keeps two after a full stop.
            for word, space in re.findall(r"(\S+)(\s*)", paragraph):
                wider = line + gap + word
                if line and int(self.call("font", "measure", font, wider)) > length:
                    lines.append(line)
                    wider = word
                line, gap = wider, space
            lines.append(line)
        widths = [int(self.call("font", "measure", font, line)) for line in lines]
        try:
            inner = int(self.call("winfo", "width", w)) - 2 * sum(
                int(float(self.call("winfo", "fpixels", w, self.opt(w, option) or "0")))
                for option in ("-borderwidth", "-padx", "-highlightthickness"))
        except (tkinter.TclError, ValueError):
            return None
        # A label narrower than its wrap length clips its lines (a small window): what shows of
        # them is not known here.
        return lines if max(widths, default=0) <= inner else None

    def range_of(self, w: str, cls: str, r: dict[str, Any]) -> None:
        """A scale's or progress bar's [current, from, to]."""
        try:
            if cls == "TProgressbar":
                if (self.opt(w, "-mode") or "") == "indeterminate":
                    return  # a block bouncing to say "busy": no value to read
                r["range"] = [float(self.opt(w, "-value") or 0), 0.0, float(self.opt(w, "-maximum") or 100)]
            else:
                low, high = float(self.opt(w, "-from") or 0), float(self.opt(w, "-to") or 0)
                if (self.opt(w, "-orient") or "") == "vertical":
                    low, high = high, low  # -from is drawn at the top: count from the bottom
                r["range"] = [float(self.call(w, "get")), low, high]
        except (tkinter.TclError, ValueError):
            return  # no number to read: the value stays unknown

    def text_lines(self, w: str, r: dict[str, Any]) -> None:
        r["content"] = self.call(w, "get", "1.0", "end-1c")[:TEXT_LIMIT]
        links = [t for t in self.strs(w, "tag", "names") if self.strs(w, "tag", "bind", t)]
        lines = []
        index = self.call(w, "index", "@0,0")
        seen = set()
        while True:
            info = self.ints(w, "dlineinfo", index)
            if not info or index in seen:
                break
            seen.add(index)
            start = self.call(w, "index", f"{index} display linestart")
            end = self.call(w, "index", f"{index} display lineend")
            lines.append({"box": info[:4], "parts": self.parts(w, start, end, links)})
            nxt = self.call(w, "index", f"{index} +1 display lines")
            if nxt == index or self.flag(w, "compare", nxt, "<=", index):
                break
            index = nxt
        r["lines"] = lines

    def tags_at(self, w: str, index: str) -> set[str]:
        return set(self.strs(w, "tag", "names", index))

    def parts(self, w: str, start: str, end: str, links: list[str]) -> list[dict[str, Any]]:
        """Runs of one line: [{"text", "x1", "x2", "link"}], split where a clickable tag starts or ends."""
        out: list[dict[str, Any]] = []
        index = start
        clickable = set(links)
        while self.flag(w, "compare", index, "<", end):
            link = bool(self.tags_at(w, index) & clickable)
            stop = index
            while self.flag(w, "compare", stop, "<", end) and bool(self.tags_at(w, stop) & clickable) == link:
                stop = self.call(w, "index", f"{stop} +1 chars")
            first, last = self.ints(w, "bbox", index), self.ints(w, "bbox", f"{stop} -1 chars")
            if first and last:
                out.append({"text": self.call(w, "get", index, stop), "x1": first[0], "x2": last[0] + last[2],
                            "link": link})
            index = stop
        return out

    def listbox(self, w: str, r: dict[str, Any]) -> None:
        selected = {int(i) for i in self.strs(w, "curselection")}
        items: list[dict[str, Any]] = []
        size = int(self.call(w, "size"))
        first = int(self.call(w, "nearest", 0))
        for i in range(first, size):
            box = self.ints(w, "bbox", i)
            if not box:
                if items:
                    break
                continue
            items.append({"text": self.call(w, "get", i), "box": box, "selected": i in selected})
        r["items"] = items

    def treeview(self, w: str, r: dict[str, Any]) -> None:
        show = set(self.strs(w, "cget", "-show"))
        columns = self.strs(w, "cget", "-displaycolumns")
        if columns == ["#all"]:
            columns = self.strs(w, "cget", "-columns")
        selected = set(self.strs(w, "selection"))
        rows = []
        stack = self.strs(w, "children", "")
        stack.reverse()
        while stack:
            item = stack.pop()
            kids = self.strs(w, "children", item)
            is_open = self.call(w, "item", item, "-open").lower() in ("1", "true", "yes")
            box = self.ints(w, "bbox", item)
            if box:
                cells = []
                if "tree" in show:
                    cells.append({"column": "#0", "box": self.ints(w, "bbox", item, "#0"),
                                  "text": self.call(w, "item", item, "-text")})
                for col in columns:
                    cells.append({"column": col, "box": self.ints(w, "bbox", item, col),
                                  "text": self.call(w, "set", item, col)})
                rows.append({"box": box, "cells": cells, "selected": item in selected,
                             "expandable": bool(kids), "open": is_open})
            if is_open:
                stack.extend(reversed(kids))
        headings = []
        if "headings" in show:
            x = 0
            for col in (["#0"] if "tree" in show else []) + columns:
                width = int(self.call(w, "column", col, "-width"))
                headings.append({"text": self.call(w, "heading", col, "-text"), "x": x, "width": width})
                x += width
        r["rows"], r["headings"] = rows, headings

    def notebook(self, w: str, r: dict[str, Any]) -> None:
        count = int(self.call(w, "index", "end"))
        current = self.call(w, "index", "current") if count else "-1"
        width, height = int(self.call("winfo", "width", w)), int(self.call("winfo", "height", w))
        spans: dict[int, list[int]] = {}
        for y in range(0, min(height, 60), 2):
            for x in range(0, width, 2):
                hit = self.call(w, "identify", "tab", x, y)
                if hit != "":
                    s = spans.setdefault(int(hit), [x, y, x, y])
                    s[0], s[1], s[2], s[3] = min(s[0], x), min(s[1], y), max(s[2], x + 2), max(s[3], y + 2)
        r["tabs"] = [{"text": self.call(w, "tab", i, "-text"), "box": spans[i], "selected": str(i) == current}
                     for i in sorted(spans)]

    def menu(self, w: str, r: dict[str, Any]) -> None:
        last = self.call(w, "index", "end")
        active = self.call(w, "index", "active")
        kind = self.opt(w, "-type")
        width, height = int(self.call("winfo", "width", w)), int(self.call("winfo", "height", w))
        entries = []
        if last != "none":
            n = int(last) + 1
            for i in range(n):
                etype = self.call(w, "type", i)
                if etype in ("separator", "tearoff"):
                    continue
                label = self.call(w, "entrycget", i, "-label")
                if kind == "menubar":
                    x1 = int(self.call(w, "xposition", i))
                    x2 = int(self.call(w, "xposition", i + 1)) if i + 1 < n else x1 + int(
                        self.call("font", "measure", self.opt(w, "-font") or "TkMenuFont", label)) + 12
                    box = [x1, 0, x2 - x1, height]
                else:
                    y1 = int(self.call(w, "yposition", i))
                    y2 = int(self.call(w, "yposition", i + 1)) if i + 1 < n else height - 2
                    box = [2, y1, width - 4, y2 - y1]
                entries.append({"text": label, "box": box, "active": str(i) == active, "type": etype})
        r["entries"], r["menu_type"] = entries, kind

    # --- the command loop -------------------------------------------------------------------------
    def handle(self, command: dict[str, Any]) -> Any:
        cmd = command.get("cmd")
        if cmd == "demo":
            self.tk.call("wm", "withdraw", ".")
            self.tk.call("source", "-encoding", "utf-8", os.path.join(self.demos, f"{command['name']}.tcl"))
            self.root.update()
            return {"ok": True}
        if cmd == "tcl":
            result = self.call("eval", command["script"])
            self.root.update()
            return {"ok": True, "result": result}
        if cmd == "dump":
            return self.dump()
        if cmd == "quit":
            self.root.after(0, self.root.destroy)
            return {"ok": True}
        return {"error": f"unknown command {cmd!r}"}

    def readable(self, fd: int, _mask: int) -> None:
        chunk = os.read(fd, 65536)
        if not chunk:
            self.root.destroy()
            return
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            try:
                answer = self.handle(json.loads(line))
            except Exception as exc:  # a Tcl error in one command must not end the demo
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()

    def run(self) -> None:
        self.tk.createfilehandler(sys.stdin.fileno(), tkinter.READABLE, self.readable)
        sys.stdout.write(json.dumps({"ready": True}) + "\n")
        sys.stdout.flush()
        self.root.mainloop()


if __name__ == "__main__":
    Driver(sys.argv[1]).run()
