"""The toolkit of the scripted MiniWoB++ planner (caap.testing.planner): reading a CAAP prompt
into elements, history and previous plan; building actions; the helpers policies share; and the
policy registry. Policy modules import from here and register with ``@policy``; the planner imports
them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from caap.decide.parser import Proposal, parse_text

# --- reading the prompt -------------------------------------------------------------------------------


@dataclass
class El:
    """One element line of the prompt's current screen (or the element an action of the history acted on)."""

    id: int
    type: str
    x: int
    y: int
    box: tuple[int, int, int, int]
    text: str | None = None
    checked: bool | None = None
    focused: bool | None = None
    highlighted: bool | None = None
    expanded: bool | None = None
    subtype: str | None = None
    visible: bool = True

    def inside(self, other: El, margin: int = 0) -> bool:
        x1, y1, x2, y2 = self.box
        a1, b1, a2, b2 = other.box
        return x1 >= a1 - margin and y1 >= b1 - margin and x2 <= a2 + margin and y2 <= b2 + margin

    @property
    def area(self) -> int:
        return max(0, self.box[2] - self.box[0]) * max(0, self.box[3] - self.box[1])


@dataclass
class Step:
    """One entry of the history: ``action_N: {name: NAME, arg: {...}} -> OUTCOME``."""

    number: int
    name: str
    args: dict[str, Any] = field(default_factory=dict)  # the arguments besides the element
    element: El | None = None
    outcome: str = ""

    @property
    def changed(self) -> bool:
        return self.outcome.startswith("the screen changed")

    @property
    def point(self) -> tuple[int, int] | None:
        if "x" in self.args and "y" in self.args:
            return int(self.args["x"]), int(self.args["y"])
        return None


@dataclass
class Prompt:
    task: str
    elements: list[El]
    history: list[str] = field(default_factory=list)  # "action_2: {name: ..., arg: {...}} -> outcome"
    steps: list[Step] = field(default_factory=list)  # the same, read
    previous: list[Proposal] = field(default_factory=list)  # the numbered actions of the previous answer

    @property
    def next_number(self) -> int:
        # action_1 is the start; older entries may have been folded into an "omitted" line.
        return (self.steps[-1].number if self.steps else 1) + 1


_LINE = re.compile(r"^- ID: element_(\d+), data: \{(.*)\}$")
_DATA = re.compile(r"^type: (\w+), X: (-?\d+) \[(-?\d+)-(-?\d+)\], Y: (-?\d+) \[(-?\d+)-(-?\d+)\](.*)$", re.S)
_TEXT = re.compile(r'\btext: ("(?:[^"\\]|\\.)*")')
_FLAG = re.compile(r"\b(checked|focused|highlighted|expanded|visible): (True|False)")
_SUBTYPE = re.compile(r"\bsubtype: (\w+)")
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_HISTORY = re.compile(r"^action_(\d+): \{name: (\w+)(?:, arg: \{(.*)\})?\}(?: -> (.*))?$", re.S)
_ARG = re.compile(rf"(\w+): ({_QUOTED}|[^,\"]*)")


def _section(text: str, title: str) -> str:
    """The body of the *last* ``### title ###`` section (demonstrations come before the current one)."""
    parts = re.split(r"^### (.+?) ###$", text, flags=re.M)
    body = None
    for i in range(1, len(parts) - 1, 2):
        if parts[i].strip() == title:
            body = parts[i + 1]
    return body or ""


def _element(element_id: int, data: str) -> El | None:
    """An element from the inside of its ``{type: ..., X: ..., Y: ..., text: ...}`` description."""
    m = _DATA.match(data.strip())
    if not m:
        return None
    rest = m.group(8)
    t = _TEXT.search(rest)
    # Flags and subtype are read outside the quoted text, so a text that says "checked: True" cannot fool them.
    bare = _TEXT.sub("", rest)
    flags = {k: v == "True" for k, v in _FLAG.findall(bare)}
    st = _SUBTYPE.search(bare)
    return El(
        id=element_id, type=m.group(1), x=int(m.group(2)), y=int(m.group(5)),
        box=(int(m.group(3)), int(m.group(6)), int(m.group(4)), int(m.group(7))),
        text=json.loads(t.group(1)) if t else None, checked=flags.get("checked"),
        focused=flags.get("focused"), highlighted=flags.get("highlighted"), expanded=flags.get("expanded"),
        subtype=st.group(1) if st else None, visible=flags.get("visible", True))


def _value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith('"'):
        return json.loads(raw)
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?\d+\.\d*", raw):
        return float(raw)
    return {"True": True, "False": False, "true": True, "false": False, "None": None, "null": None}.get(raw, raw)


_ELEMENT_KEYS = {"element_id", "type", "X", "Y", "text", "checked", "focused", "highlighted", "subtype", "visible"}


def _step(line: str) -> Step | None:
    m = _HISTORY.match(line.strip())
    if not m:
        return None
    number, name, body, outcome = int(m.group(1)), m.group(2), m.group(3) or "", m.group(4) or ""
    # An action on an element shows the element as the model saw it, then the action's other arguments.
    em = re.match(r"^element_id: (\d+), (type: .*)$", body, re.S)
    element = _element(int(em.group(1)), em.group(2)) if em else None
    args = {k: _value(v) for k, v in _ARG.findall(body) if not (em and k in _ELEMENT_KEYS)}
    return Step(number, name, args, element, outcome.strip())


def _planned(text: str) -> list[Proposal]:
    """The numbered actions of the previous answer, read as the agent reads an answer."""
    return [p for p in parse_text(text).proposals if p.number is not None]


def parse_prompt(text: str) -> Prompt:
    elements = []
    for line in _section(text, "Elements On The Current Screen").splitlines():
        m = _LINE.match(line.strip())
        if m:
            e = _element(int(m.group(1)), m.group(2))
            if e is not None:
                elements.append(e)
    history = [ln.strip() for ln in _section(text, "Actions So Far").splitlines()
               if ln.strip().startswith("action_") and "{name: start}" not in ln]
    steps = [s for s in (_step(h) for h in history) if s is not None]
    return Prompt(task=_section(text, "Task").strip(), elements=[e for e in elements if e.visible], history=history,
                  steps=steps, previous=_planned(_section(text, "Your Previous Answer")))


# --- acting -----------------------------------------------------------------------------------------

Action = tuple[str, dict[str, Any]]


def click(e: El) -> Action:
    return ("click_element", {"element_id": e.id})


def click_point(x: int, y: int) -> Action:
    return ("click_new_point", {"x": int(x), "y": int(y)})


def type_text(s: str) -> Action:
    return ("type_text", {"string_to_type": s})


def key(k: str) -> Action:
    return ("press_key", {"key": k})


def select_all() -> Action:
    return ("press_control_A", {})


def hold(x: int, y: int) -> Action:
    return ("drag_mouse_hold_down", {"x": int(x), "y": int(y)})


def move(x: int, y: int) -> Action:
    return ("drag_mouse_move", {"x": int(x), "y": int(y)})


def release() -> Action:
    return ("drag_mouse_release", {})


def hover(e: El) -> Action:
    return ("point_element", {"element_id": e.id})


def ctrl_click(e: El) -> Action:
    return ("control_click_element", {"element_id": e.id})


def scroll(e: El | None, direction: str, amount: int = 3) -> Action:
    args: dict[str, object] = {"direction": direction, "amount": amount}
    if e is not None:
        args["element_id"] = e.id
    return ("scroll", args)


def wait(seconds: float = 0.5) -> Action:
    return ("wait", {"seconds": seconds})


def copy() -> Action:
    return ("press_control_C", {})


def paste() -> Action:
    return ("press_control_V", {})


def done(reason: str = "the task is complete") -> Action:
    return ("done", {"reason": reason})


def fail(reason: str) -> Action:
    return ("fail", {"reason": reason})


def norm(s: str | None) -> str:
    return re.sub(r"\s+", " ", (s or "")).strip().lower()


def find_all(p: Prompt, types: tuple[str, ...] | str, text: str | None = None, *, exact: bool = True) -> list[El]:
    """Elements (reading order) of one of ``types`` whose text is ``text``: the exact text if any
    element has it, else the text up to case and spacing (``exact=False``: containing it)."""
    types = (types,) if isinstance(types, str) else types
    pool = [e for e in p.elements if e.type in types]
    if text is None:
        return pool
    same = [e for e in pool if (e.text or "").strip() == text.strip()]
    if same:
        return same
    if exact:
        return [e for e in pool if norm(e.text) == norm(text)]
    return [e for e in pool if norm(text) in norm(e.text)]


def find(p: Prompt, types: tuple[str, ...] | str, text: str | None = None, *, exact: bool = True) -> El | None:
    """The first element (reading order) of one of ``types`` whose text is ``text`` (see ``find_all``)."""
    found = find_all(p, types, text, exact=exact)
    return found[0] if found else None


# How a reader who knows that screen text comes from OCR (the CAAP prompt says it may hold typos)
# matches a name it is looking for: ellipsis-cut labels, a stray glyph before or after (an icon read
# as a letter, a frame line read as a dash), a letter misread.
LIKE = 0.8  # least similarity (difflib's ratio of the plain texts) of a text read like the wanted one
_ELLIPSIS = ("…", "...")
_EDGE_NOISE = re.compile(r"^[^\w(\[]+|[^\w)\]!?.:]+$")


def _plain(s: str | None) -> str:
    return _EDGE_NOISE.sub("", norm(s)).strip()


def read_as(seen: str | None, wanted: str) -> float:
    """How sure one can be that a text read ``seen`` on the screen is ``wanted``: 1 for the same text
    (case, spacing and stray edge glyphs aside), 0.95 for a label the screen cut short with an
    ellipsis, 0 where their numbers differ or where their lengths differ by more than a letter in four
    and the name is not a whole word of what was read, else the similarity of the two (difflib's ratio)."""
    import difflib

    a, b = _plain(seen), _plain(wanted)
    if not a or not b:
        return 0.0
    if a == b or a.rstrip(":") == b.rstrip(":"):
        return 1.0
    if re.findall(r"\d+", a) != re.findall(r"\d+", b):
        return 0.0  # numbers name things ("Application 7", "Page 2"): another number is another thing
    shown = norm(seen)
    for cut in _ELLIPSIS:
        head = shown[: -len(cut)].rstrip()
        if shown.endswith(cut) and len(head) >= 4 and norm(wanted).startswith(head):
            return 0.95
    if abs(len(a) - len(b)) > max(1, len(b) // 4) and not re.search(rf"\b{re.escape(b)}\b", a):
        # OCR slips a letter or so: "Female" is not "Male" misread. A box that took in a stray word
        # beside the name ("tra Check buttons", a menu entry over the page's text) still shows it.
        return 0.0
    return difflib.SequenceMatcher(None, a, b).ratio()


def find_all_like(p: Prompt, types: tuple[str, ...] | str, text: str | None = None,
                  *, least: float = LIKE) -> list[El]:
    """``find_all``, and where no element reads ``text`` exactly, those read like it (``read_as``),
    best first."""
    exact = find_all(p, types, text)
    if exact or text is None:
        return exact
    types = (types,) if isinstance(types, str) else types
    scored = [(read_as(e.text, text), i, e) for i, e in enumerate(p.elements) if e.type in types]
    return [e for score, _, e in sorted(scored, key=lambda t: (-t[0], t[1])) if score >= least]


def find_like(p: Prompt, types: tuple[str, ...] | str, text: str | None = None, *, least: float = LIKE) -> El | None:
    """``find``, or the element read most like ``text`` (``find_all_like``)."""
    found = find_all_like(p, types, text, least=least)
    return found[0] if found else None


def find_covered(p: Prompt, types: tuple[str, ...] | str, name: str, others: Iterable[str]) -> El | None:
    """The element named ``name`` among stacked ones that cover each other (click-test-2's ONE and TWO):
    the exact name if one has it, else the one element whose visible text holds the name (the box
    takes in a letter of its neighbour: ``WONE``), else the one whose text (two letters or more) is
    part of ``name`` and of none of the ``others`` (the rest is hidden behind its neighbour: ``ON``),
    else, with every one of the ``others`` on show, the one element that shows no name (all of it
    but a sliver lies under its neighbour). A model that is told of buttons ``TWO`` and ``ON`` (or
    a button with no name) and asked for ONE reads it the same way."""
    found = find(p, types, name)
    if found is not None:
        return found
    pool = find_all(p, types)
    holding = [e for e in pool if norm(name) in norm(e.text)]
    if len(holding) == 1:
        return holding[0]
    part = [e for e in pool if len(norm(e.text)) >= 2 and norm(e.text) in norm(name)
            and not any(norm(e.text) in norm(o) for o in others)]
    if len(part) == 1:
        return part[0]
    # All of its name hidden: the one element of the kind that shows no name is the covered one.
    nameless = [e for e in pool if not norm(e.text)]
    return nameless[0] if len(nameless) == 1 and not any(find(p, types, o) is None for o in others) else None


def same_text(a: str | None, b: str | None, *, like: bool = False) -> bool:
    """The same text up to case and spacing; ``like``: or read like it (``read_as``: the screen's text
    may hold OCR typos, an ellipsis, a stray glyph)."""
    return (a or "").strip() == (b or "").strip() or norm(a) == norm(b) or (like and read_as(a, b or "") >= LIKE)


def did(p: Prompt, name: str, text: str | None = None) -> bool:
    """Whether the history holds an action ``name`` (on an element whose text is ``text``)."""
    return any(s.name == name and (text is None or (s.element is not None and same_text(s.element.text, text)))
               for s in p.steps)


def clicked(p: Prompt, e: El | None = None, *, text: str | None = None, types: Iterable[str] | None = None,
            like: bool = False) -> bool:
    """Whether the history clicks element ``e`` (same id and type), or one with ``text`` (of ``types``;
    ``like``: read like it, see ``same_text``)."""
    for s in p.steps:
        if s.name != "click_element" or s.element is None:
            continue
        if e is not None and s.element.id == e.id and s.element.type == e.type:
            return True
        if text is not None and same_text(s.element.text, text, like=like) and (types is None
                                                                                 or s.element.type in types):
            return True
    return False


def submit_button(p: Prompt, *names: str) -> El | None:
    """The button that ends the task: one labelled ``names`` (default Submit), else any of them as text."""
    for name in names or ("Submit",):
        e = find(p, "button", name)
        if e:
            return e
    for name in names or ("Submit",):
        e = find(p, ("text", "hyperlink"), name)
        if e:
            return e
    return None


def finish(e: El | None, what: str = "Submit") -> list[Action]:
    if e is None:
        return [fail(f"no {what} button on the screen")]
    return [click(e), done()]


def then_finish(e: El | None) -> list[Action]:
    """Click the final button and finish, if it is on the screen now (else the next screen will tell)."""
    return [click(e), done()] if e is not None else []


BULLETS = set("•●*·∙")


def holds(e: El, value: str, *, secret: bool = False) -> bool:
    """Whether an input shows ``value`` (a password field shows one bullet per character)."""
    text = (e.text or "").strip()
    if secret:
        return len(text) == len(value) and (set(text) <= BULLETS or text == value)
    return text == value.strip()


def fill(e: El, value: str) -> list[Action]:
    """Put ``value`` in field ``e``, replacing whatever it holds."""
    return ([] if e.focused else [click(e)]) + [select_all(), type_text(value)]


def fill_form(p: Prompt, fields: list[tuple[El, str, bool]], submit: El | None, what: str = "Submit") -> list[Action]:
    """Fill each (field, value, secret) that does not hold its value yet, in order, then submit."""
    actions: list[Action] = []
    for e, value, secret in fields:
        if not holds(e, value, secret=secret):
            actions += fill(e, value) if not actions else [click(e), select_all(), type_text(value)]
    return actions + finish(submit, what)


def after_submit(p: Prompt, *names: str, like: bool = False) -> bool:
    """Whether the history clicks the task's final button (Submit unless ``names``; ``like``: see ``same_text``)."""
    return any(clicked(p, text=n, types=("button", "text", "hyperlink"), like=like) for n in (names or ("Submit",)))


def drag_state(p: Prompt) -> str:
    """'none' (no drag yet), 'holding' (the button is down) or 'released' (a drag was finished)."""
    state = "none"
    for s in p.steps:
        if s.name == "drag_mouse_hold_down":
            state = "holding"
        elif s.name == "drag_mouse_release" and state == "holding":
            state = "released"
    return state


def rest_of_previous_plan(p: Prompt) -> list[Action]:
    """The actions of the previous answer that were dropped after a screen change (numbered after the
    last executed one)."""
    last = p.steps[-1].number if p.steps else 1
    return [(a.name, a.args) for a in p.previous if a.number is not None and a.number > last]


# --- words inside lines of text -----------------------------------------------------------------------
# Arial advance widths (1/1000 em, the metrics Liberation Sans shares), to find where a word lies inside
# a line of text whose box is known.
_WIDTHS = dict(zip(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
    [278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, *[556] * 10, 278, 278, 584,
     584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722,
     667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556,
     222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584],
    strict=True))


def text_width(s: str) -> int:
    return sum(_WIDTHS.get(c, 556) for c in s)


# Lorem-ipsum filler words (the text of MiniWoB's link tasks): to tell where two words were run together.
_LOREM_WORDS = (
    "a ac accumsan adipiscing aenean aliquam aliquet amet ante arcu at auctor augue bibendum blandit commodo "
    "condimentum congue consectetur consequat convallis cras cum curabitur cursus dapibus diam dictum dictumst "
    "dignissim dis dolor donec dui duis egestas eget eleifend elementum elit enim erat eros est et etiam eu "
    "euismod facilisi facilisis fames faucibus felis fermentum feugiat fringilla fusce gravida habitant habitasse "
    "hac hendrerit iaculis id imperdiet in integer interdum ipsum justo lacinia lacus laoreet lectus leo libero "
    "ligula lobortis lorem luctus maecenas magna magnis malesuada massa mattis mauris metus mi molestie mollis "
    "montes morbi mus nam nascetur natoque nec neque netus nibh nisi nisl non nulla nullam nunc odio orci ornare "
    "parturient pellentesque penatibus pharetra phasellus placerat platea porta porttitor posuere potenti "
    "praesent pretium proin pulvinar purus quam quis quisque rhoncus ridiculus risus rutrum sagittis sapien "
    "scelerisque sed sem semper senectus sit sociis sodales sollicitudin suscipit suspendisse tellus tempor "
    "tempus tincidunt tortor tristique turpis ullamcorper ultrices ultricies urna ut varius vehicula vel velit "
    "venenatis vestibulum vitae vivamus viverra volutpat vulputate"
)
LOREM = frozenset(_LOREM_WORDS.split())


def _words_only(s: str) -> bool:
    """Whether ``s`` is filler words run together (each may end in punctuation)."""
    if not s:
        return True
    low = s.lower()
    for end in range(len(low), 0, -1):
        head = low[:end]
        if head.rstrip(".,;:!?") in LOREM and head.rstrip(".,;:!?") and _words_only(s[end:]):
            return True
    return False


def task_lines(p: Prompt) -> list[El]:
    """The lines of text at the top of the screen that show the task itself (compared without spaces: a line
    reader may drop the space around a bold word)."""
    task = re.sub(r"\s+", "", p.task)
    out: list[El] = []
    for e in p.elements:
        if e.type != "text" or not e.text or re.sub(r"\s+", "", e.text) not in task:
            break
        if (out and e.box[1] > out[-1].box[3] + 3) or (not out and e.box[1] > 20):
            break  # not the block of lines at the top
        out.append(e)
    return out


def word_points(p: Prompt, word: str, types: tuple[str, ...] = ("text", "tabled_text", "draggable_text")) -> list[
        tuple[int, int]]:
    """Where the word ``word`` appears inside lines of text (not the task's own lines): first where it is a
    whole whitespace-separated token, then inside a token where a line reader ran it together with its
    neighbours (when the space between two runs of text is narrow), as long as the rest of the token reads
    as other whole words."""
    exact: list[tuple[int, int]] = []
    loose: list[tuple[int, int]] = []
    skip = {e.id for e in task_lines(p)}
    for e in p.elements:
        if e.type not in types or not e.text or e.id in skip:
            continue
        text = e.text
        total = text_width(text)
        if total <= 0:
            continue
        for m in re.finditer(r"\S+", text):
            token = m.group(0)
            spots = []
            if token == word:
                spots.append((m.start(), exact))
            elif word in token:
                for i in (k.start() for k in re.finditer(re.escape(word), token)):
                    left, right = token[:i], token[i + len(word):]
                    # Punctuation right after it would belong to the word: "est,ut" holds "est," not "est".
                    if (not right or right[0] not in ".,;:!?") and _words_only(left) and _words_only(right):
                        spots.append((m.start() + i, loose))
            for at, out in spots:
                mid = text_width(text[:at]) + text_width(word) / 2
                out.append((round(e.box[0] + (e.box[2] - e.box[0]) * mid / total), e.y))
    return exact + loose


def clicked_points(p: Prompt, since: int = 0) -> list[tuple[int, int]]:
    return [s.point for s in p.steps[since:] if s.name == "click_new_point" and s.point]


def click_word(p: Prompt, word: str, since: int = 0) -> list[Action] | None:
    """Click the link ``word``: its hyperlink element if perception gives one, else (links that read as
    plain text) the next place in the text where the word appears and that was not clicked yet since
    history entry ``since``. None when there is nothing left to try."""
    last = p.steps[-1] if len(p.steps) > since else None
    if last is not None and last.changed and (last.name == "click_new_point" or (
            last.name == "click_element" and last.element is not None and last.element.type == "hyperlink"
            and same_text(last.element.text, word))):
        return [done()]  # the link was found: clicking it ended the task
    link = find_all(p, "hyperlink", word)
    link = [e for e in link if (e.text or "").strip() == word.strip()] or link
    tried = clicked_points(p, since)
    for e in link:
        if not any(s.element is not None and s.element.id == e.id for s in p.steps[since:]):
            return [click(e)]
    for x, y in word_points(p, word):
        if not any(abs(x - tx) <= 3 and abs(y - ty) <= 3 for tx, ty in tried):
            return [click_point(x, y)]
    return None


# --- policies ---------------------------------------------------------------------------------------

Policy = Callable[[Prompt, re.Match[str]], list[Action]]
POLICIES: list[tuple[re.Pattern[str], Policy]] = []


def policy(pattern: str) -> Callable[[Policy], Policy]:
    """Register a policy for the tasks whose text matches ``pattern`` (tried in registration order)."""
    def register(fn: Policy) -> Policy:
        POLICIES.append((re.compile(pattern, re.S | re.I), fn))
        return fn

    return register


def tick(p: Prompt, want: Callable[[El], bool]) -> list[Action]:
    """Set every checkbox to ``want`` (clicks on those that differ), then submit."""
    clicks = [click(e) for e in find_all(p, "checkbox") if bool(e.checked) != want(e)]
    return clicks + finish(submit_button(p))


def answer_field(p: Prompt, value: str) -> list[Action]:
    """Type ``value`` into the (one) text field and submit."""
    if after_submit(p):
        return [done()]
    f = find(p, ("input_field", "text_area"))
    if f is None:
        return [fail("no text field on the screen")]
    return fill_form(p, [(f, value, False)], submit_button(p))


def screen_text(p: Prompt) -> list[El]:
    """The lines of text on the screen below the task's own lines."""
    skip = {e.id for e in task_lines(p)}
    return [e for e in p.elements if e.type == "text" and e.id not in skip and e.text]


# --- tables -----------------------------------------------------------------------------------------

# A cell's wrapped lines sit one under the other with the same left edge and (almost) no gap; a row
# of one column starts a few pixels (padding and border) under the row above.
_CELL_LINE_GAP = 4


def _cell_runs(lines: list[El], start: El) -> list[list[El]]:
    """The runs of lines of ``start``'s column that hold ``start``: lines with its left edge, each
    right under the one before."""
    column = sorted((e for e in lines if abs(e.box[0] - start.box[0]) <= 2), key=lambda e: e.box[1])
    i = column.index(start)
    lo = i
    while lo > 0 and -2 <= column[lo].box[1] - column[lo - 1].box[3] <= _CELL_LINE_GAP:
        lo -= 1
    hi = i
    while hi + 1 < len(column) and -2 <= column[hi + 1].box[1] - column[hi].box[3] <= _CELL_LINE_GAP:
        hi += 1
    return [column[a:b + 1] for a in range(lo, i + 1) for b in range(i, hi + 1)]


def _middle(run: list[El]) -> float:
    return (run[0].box[1] + run[-1].box[3]) / 2


def table_value(cells: list[El], key: str) -> str | None:
    """The text of the cell right of the cell that reads ``key`` in a table of label and value cells
    shown as lines (a cell whose text wraps is several lines; a row's cells are centred on one
    another). None where no cell reads ``key``; "" where the key's cell has nothing to its right."""
    want = norm(key)
    best: tuple[float, list[El]] | None = None
    for e in cells:
        if not want.startswith(norm(e.text).split(" ")[0]):
            continue
        for run in _cell_runs(cells, e):
            if norm(" ".join(x.text or "" for x in run)) == want and run[0] is e:
                spread = run[-1].box[3] - run[0].box[1]
                if best is None or spread < best[0]:
                    best = (spread, run)
    if best is None:
        # A short row's two cells may sit close enough to read as one line: "Last name Dominguez".
        both = next((e for e in cells if norm(e.text).startswith(want + " ")), None)
        return None if both is None else (both.text or "").strip()[len(key.strip()):].strip()
    keyrun = best[1]
    top, bottom, right = keyrun[0].box[1], keyrun[-1].box[3], max(e.box[2] for e in keyrun)
    middle = _middle(keyrun)
    beside = [e for e in cells if e not in keyrun and e.box[0] >= right - 2 and e.box[1] < bottom and e.box[3] > top]
    if not beside:
        return ""
    # A line of the value's column that shares a line with another row's label belongs to that row.
    others = [e for e in cells if e not in keyrun and abs(e.box[0] - keyrun[0].box[0]) <= 2]
    first = min(e.box[0] for e in beside)
    column = [e for e in cells if abs(e.box[0] - first) <= 2 and e.box[0] >= right - 2
              and not any(min(e.box[3], o.box[3]) - max(e.box[1], o.box[1]) > 1 for o in others)]
    starts = [e for e in beside if e in column]
    if not starts:
        return ""
    runs = [run for e in starts for run in _cell_runs(column, e)]
    value = min(runs, key=lambda run: (abs(_middle(run) - middle), len(run)))
    return " ".join((e.text or "").strip() for e in value)
