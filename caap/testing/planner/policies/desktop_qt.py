"""Policies for the desktop benchmark's sentence shapes first met in qt tasks (the shared ones are
in ``desktop_tasks``). ``Make these changes: ...`` and ``In the menu bar, choose ...`` serve the Tk
tasks too.

Like the other desktop policies they read only the prompt: the task, the element list and the
history. Where the element list cannot say whether a step took (a tree row's expander, a slider's
position, a tab a toolkit does not mark as current), the history of what was done does."""

from __future__ import annotations

import re
from collections.abc import Callable

from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    click,
    done,
    fail,
    holds,
    key,
    norm,
    policy,
    same_text,
    select_all,
    type_text,
)
from caap.testing.planner.kit import (
    find_all_like as find_all,
)
from caap.testing.planner.kit import (
    find_like as find,
)
from caap.testing.planner.policies.desktop import LABEL_TYPES, NAMED, steps_since_home, typed

ROWS = ("tabled_text", "tree_item")
MENU_TYPES = ("tabled_text", "text", "button", "dropdown")
TRIES = 3  # clicks on one control before a step counts as not taking
BESIDE_PX = 150  # a field this near right of its label's line is the label's, whatever lies below


def times_clicked(p: Prompt, text: str, types: tuple[str, ...] | None = None) -> int:
    return sum(1 for s in p.steps if s.name == "click_element" and s.element is not None
               and same_text(s.element.text, text, like=True) and (types is None or s.element.type in types))


# --- one step of "Make these changes: A; B; C." -----------------------------------------------------
# Each step says what it still needs: [] when it is done (by what the screen shows, or, where the
# screen no longer shows its control, by the history), else the actions that do it.

Step = Callable[[Prompt, re.Match[str]], list[Action]]
STEPS: list[tuple[re.Pattern[str], Step, bool]] = []  # (pattern, step, local: acts inside its control only)


def step(pattern: str, *, local: bool = False) -> Callable[[Step], Step]:
    def register(fn: Step) -> Step:
        STEPS.append((re.compile(pattern + r"$", re.I | re.S), fn, local))
        return fn

    return register


def _button_like(p: Prompt, label: str, kind: str) -> El | None:
    """The control named ``label``: of the ``kind`` wanted first, then whatever carries the name (a
    reader of the element list takes the name over the type: a radio button listed as a check box
    is still the one to click)."""
    return (find(p, kind, label) or find(p, "button", label) or find(p, LABEL_TYPES, label)
            or find(p, NAMED, label))


def _toggle(p: Prompt, label: str, want: bool) -> list[Action]:
    box = _button_like(p, label, "checkbox")
    if box is None:
        return [] if times_clicked(p, label) else [fail(f'no "{label}" check box on the screen')]
    if box.type != "checkbox" or box.checked is None:  # a state the screen does not show: one click
        return [] if times_clicked(p, label) else [click(box)]
    if bool(box.checked) == want:
        return []
    return [click(box)] if times_clicked(p, label) < TRIES else [fail(f'"{label}" does not change')]


@step(r'tick "(?P<label>[^"]+)"', local=True)
def _tick(p: Prompt, m: re.Match[str]) -> list[Action]:
    return _toggle(p, m["label"], True)


@step(r'untick "(?P<label>[^"]+)"', local=True)
def _untick(p: Prompt, m: re.Match[str]) -> list[Action]:
    return _toggle(p, m["label"], False)


@step(r'pick "(?P<label>[^"]+)"', local=True)
def _pick(p: Prompt, m: re.Match[str]) -> list[Action]:
    radio = _button_like(p, m["label"], "radio")
    if radio is None:
        return [] if times_clicked(p, m["label"]) else [fail(f'no "{m["label"]}" option on the screen')]
    if radio.type == "radio" and radio.checked:
        return []
    if radio.type != "radio" and times_clicked(p, m["label"]):
        return []
    return [click(radio)] if times_clicked(p, m["label"]) < TRIES else [fail(f'"{m["label"]}" does not take')]


def field_near(p: Prompt, label: str) -> El | None:
    """The input a label names: the nearest of those on its row to its right and those below it
    (a wide label's row may reach a field of the next column: beside means centred on the label's
    line, and a field below counts its vertical gap twice)."""
    lab = (find(p, LABEL_TYPES, label) or find(p, LABEL_TYPES, label.rstrip(":") + ":")
           or find(p, NAMED, label.rstrip(":") + ":"))  # a label is its text, whatever its listed type
    if lab is None:
        return None
    beside: list[tuple[int, El]] = []
    below: list[tuple[int, El]] = []
    for f in find_all(p, ("input_field", "text_area", "dropdown")):
        if f.box[0] >= lab.box[2] - 2 and abs(f.y - lab.y) <= 6:  # centred on the label's line
            beside.append((f.box[0] - lab.box[2], f))
        elif f.box[1] >= lab.box[3] - 2:
            below.append((2 * (f.box[1] - lab.box[3]) + abs(f.box[0] - lab.box[0]), f))
    # A field on the label's own line is the one it names, unless it lies a column away.
    near = [c for c in beside if c[0] <= BESIDE_PX]
    pool = near or beside + below
    return min(pool, key=lambda c: c[0])[1] if pool else None


def _field(p: Prompt, label: str | None) -> El | None:
    if label is None:  # "the text": the one multi-line text
        areas = find_all(p, "text_area")
        return max(areas, key=lambda e: e.area, default=None)
    return field_near(p, label)


def _fill(p: Prompt, label: str | None, value: str) -> list[Action]:
    field = _field(p, label)
    if typed(p, value):
        return []
    if field is None:
        return [fail(f'no field "{label or "text"}" on the screen')]
    if holds(field, value):
        return []
    # Select-all only where there is something to replace (Control+A is "line start" in Tk's entries).
    return [click(field), *([select_all()] if (field.text or "").strip() and field.type != "text_area" else []),
            type_text(value)]


@step(r'type "(?P<value>[^"]*)" into (?:"(?P<label>[^"]+)"|the text)', local=True)
def _type_into(p: Prompt, m: re.Match[str]) -> list[Action]:
    return _fill(p, m["label"], m["value"])


@step(r'set "(?P<label>[^"]+)" to (?P<value>-?[\d.]+)', local=True)
def _set_value(p: Prompt, m: re.Match[str]) -> list[Action]:
    field = _field(p, m["label"])
    if field is not None and norm(field.text) and re.sub(r"[^\d.-]", "", field.text or "") == m["value"]:
        return []
    return _fill(p, m["label"], m["value"])


@step(r'set the slider to (?P<n>\d+)')
def _slider(p: Prompt, m: re.Match[str]) -> list[Action]:
    """To its minimum (Home), then one step right per unit: the element list does not show where a
    slider stands, the history says how many steps were taken since Home."""
    since_home = steps_since_home(p)
    if since_home is None:
        slider = find(p, "slider")
        if slider is None:
            return [fail("no slider on the screen")]
        return [click(slider), key("home"), *[key("right")] * int(m["n"])]
    return [key("right")] * max(0, int(m["n"]) - since_home)


@step(r'open the "(?P<tab>[^"]+)" tab')
def _tab(p: Prompt, m: re.Match[str]) -> list[Action]:
    tab = find(p, "tab", m["tab"])
    if tab is not None and tab.highlighted:
        return []
    if times_clicked(p, m["tab"], ("tab",)):
        return []
    if tab is None:
        return [fail(f'no "{m["tab"]}" tab on the screen')]
    return [click(tab)]


@step(r'select "(?P<item>[^"]+)"')
def _select(p: Prompt, m: re.Match[str]) -> list[Action]:
    row = find(p, ROWS, m["item"]) or find(p, "text", m["item"])  # a list's row listed as a plain text
    if row is not None and row.highlighted:
        return []
    if times_clicked(p, m["item"]):
        return []
    if row is None:
        return [fail(f'no "{m["item"]}" on the screen')]
    return [click(row)]


@step(r'expand "(?P<item>[^"]+)"')
def _expand(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Select the row, then Right (a tree's key to open a row): the history says it was done."""
    selected = False
    for s in p.steps:
        if s.name == "click_element" and s.element is not None:
            selected = same_text(s.element.text, m["item"], like=True)
        elif selected and s.name == "press_key" and norm(str(s.args.get("key"))) == "right":
            return []
    row = find(p, ("tree_item", "tabled_text"), m["item"])
    if row is None:
        return [fail(f'no "{m["item"]}" row on the screen')]
    if row.highlighted:  # selected already: a second click would start editing it in an editable tree
        return [key("right")]
    return [click(row), key("right")] if times_clicked(p, m["item"]) < TRIES else [fail(f'"{m["item"]}" does not open')]


@step(r'press "(?P<button>[^"]+)"')
def _press(p: Prompt, m: re.Match[str]) -> list[Action]:
    if times_clicked(p, m["button"]):
        return []
    button = (find(p, "button", m["button"]) or find(p, ("text", "hyperlink", "tabled_text"), m["button"])
              or find(p, NAMED, m["button"]))
    return [click(button)] if button is not None else [fail(f'no "{m["button"]}" button on the screen')]


@step(r'choose "(?P<option>[^"]+)" from "(?P<combo>[^"]+)"')
def _choose(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Open the drop-down, then click the option in its list (or, where its list shows no texts,
    type the option: a list searches as it is typed, and Enter takes it); done once it shows it."""
    combo = field_near(p, m["combo"])
    if combo is not None and norm(combo.text) == norm(m["option"]):
        return []
    last = p.steps[-1] if p.steps else None
    if last is not None and last.name == "type_text" and last.args.get("string_to_type") == m["option"]:
        return [key("enter")]  # typed into the open list: Enter takes it
    if combo is None and (times_clicked(p, m["option"]) or typed(p, m["option"])):
        return []
    if typed(p, m["option"]):
        return [fail(f'"{m["option"]}" is not in "{m["combo"]}"')]
    listed = [e for e in find_all(p, ("tabled_text", "text", "button", "tree_item"), m["option"])
              if combo is None or e.id != combo.id]
    opened = last is not None and last.name == "click_element" and last.element is not None and (
        last.element.type == "dropdown")
    if listed and (opened or combo is None):
        return [click(listed[-1])]
    if opened:
        return [type_text(m["option"]), key("enter")]
    if combo is None:
        return [fail(f'no "{m["combo"]}" drop-down on the screen')]
    return [click(combo)]


def _steps(text: str) -> list[tuple[re.Match[str], Step, bool]] | None:
    out = []
    for part in (s.strip() for s in text.split("; ")):
        for pattern, fn, local in STEPS:
            hit = pattern.match(part)
            if hit:
                out.append((hit, fn, local))
                break
        else:
            return None
    return out


@policy(r'^Make these changes: (?P<steps>.+)\.$')
def make_changes(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Steps in order: the actions of the first that is not done yet, and of those after it while
    each acts inside its own control (ticking, typing); a step that opens something ends the batch
    (what it opens is read on the next screen)."""
    steps = _steps(m["steps"])
    if steps is None:
        return [fail("a step of the task is not understood")]
    actions: list[Action] = []
    for hit, fn, local in steps:
        todo = fn(p, hit)
        if not todo:
            continue
        if todo[0][0] == "fail":
            return actions or todo
        actions += todo
        if not local:
            return actions
    return actions or [done()]


# --- the calculator ---------------------------------------------------------------------------------


@policy(r'^Compute (?P<a>[\d.]+) (?P<op>\S) (?P<b>[\d.]+) with the calculator\'s keys, then press "(?P<eq>[^"]+)"\.$')
def calculate(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Click the keys one by one (each click changes the display: the rest is planned again); the
    history after the last "Clear All" says how far it got, and a wrong key starts it over."""
    keys = [*m["a"], m["op"], *m["b"], m["eq"]]
    pressed_keys: list[str] = []
    for s in p.steps:
        if s.name == "click_element" and s.element is not None:
            text = (s.element.text or "").strip()
            pressed_keys = [] if text in ("Clear All", "C", "AC") else [*pressed_keys, text]
    if pressed_keys == keys:
        return [done()]
    if pressed_keys != keys[:len(pressed_keys)]:
        reset = find(p, "button", "Clear All") or find(p, "button", "C") or find(p, "button", "AC")
        return [click(reset)] if reset is not None else [fail("a wrong key was pressed")]
    actions: list[Action] = []
    for k in keys[len(pressed_keys):]:
        button = find(p, "button", k)
        if button is None:
            return actions or [fail(f'no "{k}" key on the calculator')]
        actions.append(click(button))
    return [*actions, done()]


# --- menus ------------------------------------------------------------------------------------------


def _menu_entry(p: Prompt, name: str, first: bool) -> El | None:
    """A menu bar's title (the first of the path) or an entry of an open menu (the last shown)."""
    found = find_all(p, MENU_TYPES, name)
    entries = [e for e in found if e.type == "tabled_text"] or found
    if not entries:
        return None
    return entries[0] if first else entries[-1]


@policy(r'^In the menu bar, choose "(?P<path>[^"]+(?:" > "[^"]+)*)"\.$')
def menu_bar(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Click the menu's title, then each entry of the path as its menu opens; a path interrupted
    (a menu that closed) starts over from the title."""
    path = m["path"].split('" > "')
    at = 0
    for s in p.steps:
        if s.name != "click_element" or s.element is None:
            continue
        if at < len(path) and same_text(s.element.text, path[at], like=True):
            at += 1
        elif same_text(s.element.text, path[0], like=True):
            at = 1
    if at == len(path):
        return [done()]
    entry = _menu_entry(p, path[at], at == 0)
    if entry is None:
        if at > 0 and times_clicked(p, path[0]) < TRIES:
            title = _menu_entry(p, path[0], True)
            if title is not None:
                return [click(title)]
        return [fail(f'no "{path[at]}" in the menu')]
    return [click(entry)] + ([done()] if at == len(path) - 1 else [])


# --- a table's cell ---------------------------------------------------------------------------------


@policy(r'^In the table, change the cell "(?P<old>[^"]+)" to "(?P<new>[^"]+)"\.$')
def edit_cell(p: Prompt, m: re.Match[str]) -> list[Action]:
    """Select the cell, open its editor (F2), replace what it holds and confirm (Enter)."""
    if typed(p, m["new"]):
        # Typed: confirmed once Enter followed (it may have been held back when the screen changed).
        after = [s.name == "press_key" and norm(str(s.args.get("key"))) == "enter" for s in p.steps]
        return [done()] if any(after[max(i for i, s in enumerate(p.steps) if s.name == "type_text"):]) \
            else [key("enter"), done()]
    cell = find(p, "tabled_text", m["old"])
    if cell is None:
        return [fail(f'no cell "{m["old"]}" in the table')]
    return [click(cell), key("f2"), select_all(), type_text(m["new"]), key("enter"), done()]


# --- a wizard ---------------------------------------------------------------------------------------

_PAIR = re.compile(r'"(?P<label>[^"]+)"\s+"(?P<value>[^"]*)"')


@policy(r'^Go through the wizard: (?P<fields>.+?); press "(?P<next>[^"]+)" on each page and '
        r'"(?P<finish>[^"]+)" on the last\.$')
def wizard(p: Prompt, m: re.Match[str]) -> list[Action]:
    """On each page: fill the fields of the task it shows, then Next; Finish once it is shown."""
    if times_clicked(p, m["finish"]):
        return [done()]
    actions: list[Action] = []
    for f in _PAIR.finditer(m["fields"]):
        field = field_near(p, f["label"])
        if field is None or holds(field, f["value"]):
            continue
        actions += [click(field), *([select_all()] if (field.text or "").strip() else []), type_text(f["value"])]
    finish = find(p, "button", m["finish"])
    if finish is not None:
        return [*actions, click(finish), done()]
    nxt = find(p, "button", m["next"])
    if nxt is None:
        return actions or [fail(f'no "{m["next"]}" button on the screen')]
    if times_clicked(p, m["next"]) >= 12:
        return [fail("the wizard does not reach its last page")]
    return [*actions, click(nxt)]


# --- an editor: type, then save through the menu and the file dialog --------------------------------


@policy(r'^Type "(?P<text>[^"]+)" into the document, then save it as "(?P<file>[^"]+)" with '
        r'"(?P<menu>[^"]+)" > "(?P<item>[^"]+)"\.$')
def type_and_save(p: Prompt, m: re.Match[str]) -> list[Action]:
    if times_clicked(p, "Save", ("button",)) and typed(p, m["file"]):
        return [done()]
    if not typed(p, m["text"]):
        area = _field(p, None)
        if area is None:
            return [fail("no document on the screen")]
        return [click(area), type_text(m["text"])]
    name = field_near(p, "File name")
    if name is not None:  # the file dialog
        save = find(p, "button", "Save")
        if save is None:
            return [fail('no "Save" button in the dialog')]
        fill = [] if holds(name, m["file"]) else [click(name), *([select_all()] if (name.text or "").strip() else []),
                                                  type_text(m["file"])]
        return [*fill, click(save), done()]
    item = _menu_entry(p, m["item"], False)
    if item is not None and times_clicked(p, m["menu"]):
        return [click(item)]
    menu = _menu_entry(p, m["menu"], True)
    if menu is None or times_clicked(p, m["menu"]) >= TRIES:
        return [fail(f'no "{m["menu"]}" menu')]
    return [click(menu)]
