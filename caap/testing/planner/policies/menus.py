"""Scripted policies: the menus group (nested hover menus, a multi-select scroll list, a spinner, a
resizable text area, scrolled text areas, a number to guess, a circle's centre, a two-field table form).

Like the planner's own policies, each decides from the current screen and the history alone, so a step
that did not take effect is simply tried again on the next screen.
"""

from __future__ import annotations

import re
from itertools import pairwise

from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    after_submit,
    click,
    click_point,
    ctrl_click,
    done,
    fail,
    fill_form,
    find,
    find_all,
    finish,
    hold,
    hover,
    key,
    move,
    norm,
    policy,
    release,
    rest_of_previous_plan,
    same_text,
    screen_text,
    scroll,
    select_all,
    submit_button,
    table_value,
    task_lines,
    then_finish,
    type_text,
    wait,
)

TASKS: tuple[str, ...] = (
    "circle-center", "click-menu", "click-menu-2", "click-scroll-list", "guess-number", "use-spinner",
    "resize-textarea", "scroll-text", "scroll-text-2", "read-table-2",
)


# --- helpers --------------------------------------------------------------


def last_step_is(p: Prompt, name: str, text: str | None = None) -> bool:
    """Whether the newest history entry is ``name`` (on an element whose text is ``text``)."""
    if not p.steps or p.steps[-1].name != name:
        return False
    e = p.steps[-1].element
    return text is None or (e is not None and same_text(e.text, text))


def on_row(a: El, b: El) -> bool:
    """Whether two elements share a line (their vertical extents overlap by more than a pixel)."""
    return min(a.box[3], b.box[3]) - max(a.box[1], b.box[1]) > 1


# --- circle-center ----------------------------------------------------------------------------------


@policy(r"^Find and click on the center of the circle, then press submit\.$")
def circle_center(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    # The drawn circle is the largest round shape; the dot a click leaves is a tiny "point".
    circles = sorted((e for e in find_all(p, "shape") if e.subtype == "circle"), key=lambda e: -e.area)
    on_circle = any(s.name == "click_element" and s.element is not None and s.element.type == "shape"
                    and s.changed for s in p.steps)
    if on_circle:
        return finish(submit_button(p))
    if not circles:
        return [fail("no circle on the screen")]
    # An element's click lands on its box centre, which is the circle's centre.
    return [click(circles[0]), *then_finish(submit_button(p))]


# --- click-menu, click-menu-2 -------------------------------------------------------------------------


def _menu_path(p: Prompt, path: list[str]) -> list[Action]:
    """Open the submenus along ``path`` by pointing at each entry (a jQuery UI menu opens a submenu on
    hover, after a short delay), then click the last entry."""
    rows = find_all(p, "tabled_text")

    def row(name: str) -> El | None:
        exact = next((e for e in rows if same_text(e.text, name)), None)
        if exact is not None:
            return exact
        # A long entry wraps in a narrow menu: its second line is a row of its own right below the first.
        for a in rows:
            b = next((e for e in rows if e.box[0] == a.box[0] and 0 <= e.box[1] - a.box[3] <= 1), None)
            if b is None:
                continue
            # A hyphenated name breaks after its hyphen: the two rows join without a space.
            joined = f"{a.text}{b.text}" if (a.text or "").endswith("-") else f"{a.text} {b.text}"
            if same_text(joined, name):
                return a
        return None

    leaf = row(path[-1])
    if leaf is not None:
        return [click(leaf), done()]
    # The deepest entry of the path on show: its submenu is the next thing to open.
    for name in reversed(path[:-1]):
        e = row(name)
        if e is None:
            continue
        if last_step_is(p, "point_element", name) or (last_step_is(p, "wait") and len(p.steps) > 1
                                                        and p.steps[-2].name == "point_element"
                                                        and p.steps[-2].element is not None
                                                        and same_text(p.steps[-2].element.text, name)):
            # Pointed at already: the submenu opens a moment later. Wait once, then point again.
            return [hover(e)] if last_step_is(p, "wait") else [wait(0.5)]
        return [hover(e)]
    return []


# Names start with a capital (checked case-sensitively: patterns are matched ignoring case), and the
# text has no closing full stop, unlike the other tasks whose text starts with "Select".
@policy(r"^Select (?P<path>(?-i:[A-Z])[^>.]*(?:>(?-i:[A-Z])[^>.]*)*)$")
def click_menu(p: Prompt, m: re.Match[str]) -> list[Action]:
    path = [s.strip() for s in m["path"].split(">")]
    return _menu_path(p, path) or [fail(f"no menu entry {path[0]!r} on the screen")]


# click-menu-2's fixed menu: what lies inside its one submenu, and the item each glyph stands for.
_PLAYBACK = ("Prev", "Stop", "Play", "Next")
_GLYPH_ITEMS = {"save": "Save", "zoom_in": "Zoom In", "zoom_out": "Zoom Out", "print": "Print...",
                "previous": "Prev", "stop": "Stop", "play": "Play", "next": "Next"}


def _instruction_glyph(p: Prompt) -> El | None:
    """The icon the instruction shows before its last word ("... with the [glyph] icon."): a named icon
    on the line of the text that reads "icon.", ending at most a few px before it."""
    word = next((e for e in p.elements if e.type == "text" and norm(e.text).endswith("icon.")), None)
    if word is None:
        return None
    icons = [e for e in find_all(p, "icon") if e.subtype in _GLYPH_ITEMS
             and e.box[1] < word.box[3] and word.box[1] < e.box[3] and e.box[2] <= word.box[0] + 3]
    return max(icons, key=lambda e: e.box[2], default=None)


@policy(r'^Click the "Menu" button, and then find and click on the item (?:labeled "(?P<label>.+)"|with the\s*icon)\.$')
def click_menu_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    label = m["label"]
    if label is None:
        # The icon variant names the entry by its glyph, shown in the instruction and beside the entry.
        shown = _instruction_glyph(p)
        if shown is None:
            return [fail("no named glyph in the instruction")]
        same = [e for e in find_all(p, "icon") if e.subtype == shown.subtype and e.id != shown.id]
        if same:
            return [click(same[0]), done()]
        label = _GLYPH_ITEMS[shown.subtype or ""]
    path = ["Playback", label] if label in _PLAYBACK else [label]
    actions = _menu_path(p, path)
    if actions:
        return actions
    menu = find(p, "button", "Menu")
    if menu is None:
        return [fail("no Menu button on the screen")]
    return [click(menu)]


# --- click-scroll-list --------------------------------------------------------------------------------


_CLIPPED_MIN = 8  # characters a row cut by the list's edge must show to stand for a longer name


def _names_row(text: str | None, name: str) -> bool:
    """Whether a list row showing ``text`` is the option ``name``: the same text, or the start of a
    name too long for the list, cut at its edge ("Heard Island and McD" for "Heard Island and
    McDonald Islands"; a cut letter may read as a dot or a dash)."""
    if same_text(text, name):
        return True
    shown = norm(text).rstrip(".…-— ")
    return len(shown) >= _CLIPPED_MIN and norm(name).startswith(shown)


def _selected_out_of_view(p: Prompt, name: str) -> bool:
    """Whether the history leaves ``name`` selected: control-clicks on it that changed the screen toggle
    it, a plain click selects it alone."""
    on = False
    for s in p.steps:
        if s.element is None or not s.changed:
            continue
        if s.name == "control_click_element" and _names_row(s.element.text, name):
            on = not on
        elif s.name == "click_element" and s.element.type == "tabled_text":
            on = _names_row(s.element.text, name)
    return on


@policy(r"^Select (?P<names>.+) from the scroll list and click Submit\.$")
def click_scroll_list(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    names = [n.strip() for n in m["names"].split(",") if n.strip()]
    submit = submit_button(p)
    rows = [e for e in find_all(p, "tabled_text") if submit is None or e.y < submit.box[1]]
    if not rows:
        return [fail("no scroll list on the screen")]

    def wanted(e: El) -> bool:
        return any(_names_row(e.text, n) for n in names)

    # Control-click toggles one option and leaves the others as they are: it adds the targets and removes
    # anything else that is selected.
    for e in rows:
        if bool(e.highlighted) != wanted(e):
            return [ctrl_click(e)]
    missing = [n for n in names if not any(_names_row(e.text, n) for e in rows) and not _selected_out_of_view(p, n)]
    if not missing:
        return finish(submit)
    # A target is out of view: scroll the list, down first; turn back when a scroll moved nothing. One wheel
    # click at a time: a row cut to a sliver at the list's edge cannot be read, and two clicks at once can
    # jump from the top to the bottom with a row that is never more than a sliver in between.
    scrolls = [s for s in p.steps if s.name == "scroll"]
    direction = "down"
    if scrolls:
        direction = str(scrolls[-1].args.get("direction", "down"))
        if not scrolls[-1].changed:
            direction = "up" if direction == "down" else "down"
    return [scroll(rows[len(rows) // 2], direction, 1)]


# --- guess-number ------------------------------------------------------------------------------------


@policy(r"^Guess the number between (?P<lo>\d+)-(?P<hi>\d+) and press Submit\. Use the feedback below to find the "
        r"right number\.$")
def guess_number(p: Prompt, m: re.Match[str]) -> list[Action]:
    lines = screen_text(p)
    if any(norm(e.text).startswith("correct") for e in lines):
        return [done()]
    f = find(p, "input_field")
    if f is None:
        return [fail("no field for the guess on the screen")]
    # The guesses made so far, in order (a guess typed twice in a row is one guess).
    guesses: list[int] = []
    for s in p.steps:
        typed = str(s.args.get("string_to_type", "")).strip() if s.name == "type_text" else ""
        if re.fullmatch(r"-?\d+", typed) and (not guesses or guesses[-1] != int(typed)):
            guesses.append(int(typed))
    # "The number is lower than 5." (the number is its own run of text: the line may read "than5.").
    found = [re.search(r"\b(lower|higher) than\s*(-?\d+)", e.text or "") for e in lines]
    feedback = next((f for f in found if f), None)
    shown = (f.text or "").strip()
    if re.fullmatch(r"-?\d+", shown) and (feedback is None or int(feedback[2]) != int(shown)):
        # The field holds a guess the page has not answered yet: submit it.
        return [key("enter")] if f.focused else finish(submit_button(p))[:1]
    lo, hi = int(m["lo"]), int(m["hi"])
    # Each guess was inside the range the answers so far allowed, so the next guess says what the page
    # answered to the one before it; the page's line answers the newest.
    for g, after in pairwise(guesses):
        if after < g:
            hi = min(hi, g - 1)
        else:
            lo = max(lo, g + 1)
    if feedback is not None:
        g = int(feedback[2])
        if feedback[1] == "lower":
            hi = min(hi, g - 1)
        else:
            lo = max(lo, g + 1)
    if lo > hi:
        return [fail("the answers so far contradict each other")]
    # The guess ends with a newline: Enter in the field submits the form and leaves the focus there for the
    # next guess. (Selecting the old guess shows on screen and so ends the answer; typing the guess and
    # the Enter in one go keeps a guess to two answers, four guesses within the step limit.) The field is
    # a narrow number box whose middle may be its step arrows: focus it by its left end.
    focus = [] if f.focused else [click_point(f.box[0] + 6, f.y)]
    return [*focus, select_all(), type_text(f"{(lo + hi) // 2}\n")]


# --- use-spinner -------------------------------------------------------------------------------------


@policy(r"^Select (?P<n>-?\d+) with the spinner and hit Submit\.$")
def use_spinner(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    f = find(p, "input_field")
    up, down = find(p, "button", "▲"), find(p, "button", "▼")
    if f is None or up is None or down is None:
        return [fail("no spinner on the screen")]
    try:
        value = int((f.text or "0").strip() or "0")
    except ValueError:
        return [fail(f"the spinner shows {f.text!r}, not a number")]
    want = int(m["n"])
    if value == want:
        return finish(submit_button(p))
    # The page ignores typing, but the spinner's own keys work once the field has the focus (an arrow
    # button gives it): page up/down step by ten, the arrows by one. Each press changes the screen, so
    # one press per answer.
    diff = want - value
    if not f.focused:
        return [click(up if diff > 0 else down)]
    if abs(diff) > 5:
        return [key("pageup" if diff > 0 else "pagedown")]
    return [key("up" if diff > 0 else "down")]


# --- resize-textarea ---------------------------------------------------------------------------------


@policy(r"^Resize the textarea so that the (?P<dim>width|height) is (?P<dir>larger|smaller) than its initial size "
        r"then press Submit\.$")
def resize_textarea(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    handle = find(p, "resize_handle")
    grabs = [s.point for s in p.steps if s.name == "drag_mouse_hold_down" and s.point]
    holding = bool(p.steps) and p.steps[-1].name in ("drag_mouse_hold_down", "drag_mouse_move")
    if holding:
        rest = rest_of_previous_plan(p)
        if rest and rest[0][0] in ("drag_mouse_move", "drag_mouse_release"):
            return rest
        return [release()]
    sign = 1 if m["dir"] == "larger" else -1
    horizontal = m["dim"] == "width"
    area = find(p, "text_area")
    if handle is None and grabs and area is not None:
        # The corner was dragged under another element (the Submit button), which hides the handle:
        # the text area's own edge says where the corner is now. It was grabbed a few pixels inside
        # that edge; now the edge lies well past that point the wanted way.
        gx, gy = grabs[-1]
        edge, grabbed = (area.box[2], gx) if horizontal else (area.box[3], gy)
        if (edge - grabbed) * sign >= (12 if sign > 0 else 0):
            return finish(submit_button(p))
    if handle is None:
        return [fail("no resize handle on the screen")]
    if grabs:
        # The handle moves with the corner: where it is now against where it was grabbed says whether
        # the textarea got its new size.
        gx, gy = grabs[-1]
        moved = (handle.x - gx) if horizontal else (handle.y - gy)
        if moved * sign >= 4:
            return finish(submit_button(p))
    # Drag the corner 30 pixels (less near the screen's edge) the wanted way, in two moves.
    x, y = handle.x, handle.y
    room = (155 - x if sign > 0 else x - 5) if horizontal else (205 - y if sign > 0 else y - 5)
    d = sign * max(6, min(30, room))
    tx, ty = (x + d, y) if horizontal else (x, y + d)
    return [hold(x, y), move((x + tx) // 2, (y + ty) // 2), move(tx, ty), release()]


# --- scroll-text, scroll-text-2 ------------------------------------------------------------------------


def _scrolls(p: Prompt, direction: str) -> list[bool]:
    """Whether each scroll the history makes in ``direction`` changed the screen."""
    return [s.changed for s in p.steps if s.name == "scroll" and s.args.get("direction") == direction]


@policy(r"^Find the last word in the text area, enter it into the text field and hit Submit\.$")
def scroll_text(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    area = find(p, "text_area")
    f = find(p, "input_field")
    if area is None or f is None:
        return [fail("no text area and answer field on the screen")]
    bar = next((e for e in find_all(p, "scrollbar") if e.inside(area, margin=2)), None)
    downs = _scrolls(p, "down")
    # The text area shows its end once a scroll down moves nothing more (or when it has no scrollbar).
    if bar is not None and (not downs or downs[-1]):
        return [scroll(area, "down", 25)]
    words = (area.text or "").split()
    if not words:
        return [fail("the text area shows no text")]
    answer = re.sub(r"[^A-Za-z0-9]", "", words[-1])
    return fill_form(p, [(f, answer, False)], submit_button(p))


@policy(r"^Scroll the textarea to the (?P<end>top|bottom) of the text hit submit\.$")
def scroll_text_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    area = find(p, "text_area")
    if area is None:
        return [fail("no text area on the screen")]
    direction = "up" if m["end"] == "top" else "down"
    # A scroll of 25 wheel clicks goes past either end of the text; one that still moved something may
    # have stopped short, so scroll again until one moves nothing.
    moves = _scrolls(p, direction)
    if not moves or moves[-1]:
        return [scroll(area, direction, 25)]
    return finish(submit_button(p))


# --- read-table-2 -------------------------------------------------------------------------------------


@policy(r"^Enter the value that corresponds with each label into the form and submit when done\.$")
def read_table_2(p: Prompt, m: re.Match[str]) -> list[Action]:
    if after_submit(p):
        return [done()]
    cells = find_all(p, "tabled_text")
    skip = {e.id for e in task_lines(p)}
    fields = find_all(p, "input_field")
    labels = [e for e in p.elements if e.type == "text" and e.id not in skip and (e.text or "").strip().endswith(":")]
    chosen: list[tuple[El, str, bool]] = []
    for f in fields:
        label = next((e for e in labels if on_row(e, f) and e.box[2] <= f.box[0] + 2), None)
        if label is None:
            return [fail("a field of the form has no label")]
        name = (label.text or "").strip().rstrip(":").strip()
        value = table_value(cells, name)
        if value is None:
            return [fail(f"no row {name!r} in the table")]
        if not value:
            return [fail(f"no value next to {name!r}")]
        chosen.append((f, value, False))
    if not chosen:
        return [fail("no form fields on the screen")]
    return fill_form(p, chosen, submit_button(p))
