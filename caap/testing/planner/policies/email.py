"""Scripted policies: the email-inbox tasks (MiniWoB++'s inbox page in all its variants).

The page is one app with four screens: the inbox (a scrolled list of threads, each a sender line, a
subject and a snippet, with a star and a trash icon), an open email (sender, body, back/star/trash icons
and Reply/Forward), the reply form (a text area and a send icon) and the forward form (a "to:" field,
the body already in a text area, a send icon). The policy reads which screen is on show from its
elements and does the next step toward the goal; a goal is read from the task text, whose wording
varies a lot in the -nl and -turk variants (see ``parse_goal``). A thread below the list's visible part
is found with the inbox's search box rather than by scrolling (no row can slip past unseen).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from caap.testing.planner.kit import (
    Action,
    El,
    Prompt,
    click,
    done,
    fail,
    find_all,
    norm,
    policy,
    select_all,
    type_text,
)

TASKS: tuple[str, ...] = (
    "email-inbox", "email-inbox-delete", "email-inbox-forward", "email-inbox-forward-nl",
    "email-inbox-forward-nl-turk", "email-inbox-important", "email-inbox-nl-turk", "email-inbox-noscroll",
    "email-inbox-reply", "email-inbox-star-reply",
)


# --- reading the task -----------------------------------------------------------------------------


@dataclass
class Goal:
    """What to do: ``action`` (reply, forward, delete or important) on the email from ``name``."""

    action: str
    name: str
    dest: str = ""  # forward: who gets it
    message: str = ""  # reply: the exact text to send


# The plain variants' fixed wording.
_FIXED = [
    (re.compile(r'^Find the email by (?P<name>.+?) and reply to them with the text "(?P<message>.*)"\.$', re.S),
     "reply"),
    (re.compile(r"^Find the email by (?P<name>.+?) and forward that email to (?P<dest>.+?)\.$", re.S), "forward"),
    (re.compile(r"^Find the email by (?P<name>.+?) and click the trash icon to delete it\.$", re.S), "delete"),
    (re.compile(r"^Find the email by (?P<name>.+?) and click the star icon to mark it as important\.$", re.S),
     "important"),
]

# Capitalised words of the free wordings that are not people. Verbs and openers count only at the start
# of a sentence or clause (mid-sentence, "Star" or "May" is a person); the rest never name one.
_OPENERS = frozenset((
    "a", "alexa", "an", "and", "answer", "ask", "automatically", "can", "change", "copy", "could", "create",
    "delete", "find", "first", "flag", "for", "forward", "foward", "give", "go", "get", "hi", "highlight", "if",
    "important", "in", "jend", "just", "let", "locate", "look", "make", "mark", "may", "navigate", "open",
    "please", "pull", "put", "remind", "replay", "reply", "resend", "respond", "save", "say", "search", "select",
    "send", "set", "show", "simply", "siri", "star", "tag", "take", "tell", "text", "thanks", "the", "there",
    "throw", "to", "trash", "will", "wiil", "would", "write", "you"
))
_NEVER_NAMES = frozenset((
    "i", "i'd", "i'll", "i'm", "email", "e-mail", "emails", "message", "messages", "primary", "tuesday", "name",
    "dest", "siri", "yesterday", "today"
))

_DELETE = re.compile(r"\b(?:delet\w*|trash|rid of|remove|recycling|throw away|don't want|out of my inbox)\b", re.I)
_IMPORTANT = re.compile(r"\b(?:imp\w*nt|importnat|star|flag\w*|mark\w*)\b", re.I)

# Words around a name that say it is the email's sender, or whom to send it to.
_FROM_BEFORE = re.compile(r"\b(?:from|by|author|contact)\s*$", re.I)
_FROM_AFTER = re.compile(r"^(?:'s\b|’s\b|\s+(?:sent|wrote|wants his)\b)", re.I)
_TO_BEFORE = re.compile(r"\bto\s*$", re.I)
_TO_AFTER = re.compile(r"^\s+(?:wants|must|needs|is waiting|recieve|receive)\b", re.I)


def _quoted(text: str) -> tuple[str, str]:
    """The reply message (the longest quoted run; a doubled quote counts as one) and the text without it."""
    runs = [m for m in re.finditer(r'"+([^"]+)"+', text) if m.group(1).strip()]
    if not runs:
        return "", text
    best = max(runs, key=lambda m: len(m.group(1).strip()))
    return best.group(1).strip(), text[:best.start()] + " _ " + text[best.end():]


def _names(text: str) -> list[tuple[str, int, int]]:
    """The capitalised words that read as people's names, with where each stands in ``text``. A word glued
    to a verb ("AnswerJane's") counts from its capital; a repeated word ("Dee Dee") or a short first part
    ("Jo Ann", "La Verne") joins the next word into one name."""
    out: list[tuple[str, int, int]] = []
    for m in re.finditer(r"[A-Z][A-Za-z]*(?:-[A-Z][A-Za-z]*)?", text):
        word, start = m.group(0), m.start()
        glued = re.match(r"^(Answer|Reply|Email|Forward)([A-Z][a-z]+)$", word)
        if glued:
            word, start = glued.group(2), start + len(glued.group(1))
        opening = re.search(r"(?:^|[.!?,;:]\s*|\s_\s*)$", text[:start]) is not None
        if word.lower() in _NEVER_NAMES or (opening and word.lower() in _OPENERS):
            continue
        if out and text[out[-1][2]:start] == " ":
            prev = out[-1][0]
            if prev == word or len(prev) <= 2:
                out[-1] = (f"{prev} {word}", out[-1][1], start + len(word))
                continue
        out.append((word, start, start + len(word)))
    return out


def _sender_score(text: str, start: int, end: int) -> int:
    """How strongly the words around a name say it is the sender (positive) or the recipient (negative)."""
    before, after = text[:start], text[end:]
    score = 0
    if _FROM_BEFORE.search(before):
        score += 3
    if _FROM_AFTER.match(after):
        score += 2
    if _TO_BEFORE.search(before) or _TO_AFTER.match(after):
        score -= 2
    return score


def parse_goal(task: str) -> Goal | None:
    """The goal a reader takes from the task text: the fixed wordings exactly, free ones by their words."""
    task = task.strip()
    for pattern, action in _FIXED:
        m = pattern.match(task)
        if m:
            d = m.groupdict()
            return Goal(action, d["name"].strip(), (d.get("dest") or "").strip(), d.get("message") or "")
    message, rest = _quoted(task)
    names = _names(rest)
    if not names:
        return None
    # Which action: judged on the words without the names (a person called "Marketa" is no "mark").
    words = rest
    for _, start, end in reversed(names):
        words = words[:start] + "_" * (end - start) + words[end:]
    if message:
        action = "reply"
    elif _DELETE.search(words):
        action = "delete"
    elif _IMPORTANT.search(words):
        action = "important"
    else:
        action = "forward"
    # The sender: the name the words mark most as one; ties go to the first.
    ranked = sorted(names, key=lambda n: -_sender_score(rest, n[1], n[2]))
    name = ranked[0][0]
    dest = ""
    if action == "forward":  # the recipient: the other name
        dest = next((n[0] for n in ranked[1:] if n[0] != name), "")
        if not dest:
            return None
    return Goal(action, name, dest, message)


# --- reading the screen ---------------------------------------------------------------------------


def _icons(p: Prompt, subtype: str) -> list[El]:
    return [e for e in p.elements if e.type == "icon" and e.subtype == subtype]


def _icon(p: Prompt, subtype: str) -> El | None:
    found = _icons(p, subtype)
    return found[0] if found else None


def _same_name(a: str | None, b: str) -> bool:
    """Whether a line shows the name ``b``; "Janes" (a possessive written without its apostrophe) also
    matches a line "Jane"."""
    return norm(a) == norm(b) or (len(b) > 3 and b.endswith("s") and norm(a) == norm(b[:-1]))


def _screen(p: Prompt) -> str:
    """Which screen of the app is on show: inbox, search, email, reply, forward (or unknown)."""
    if _icon(p, "send") is not None or find_all(p, "text_area"):
        return "forward" if find_all(p, "input_field") else "reply"
    if _icon(p, "reply") is not None or _icon(p, "forward") is not None:
        return "email"
    if find_all(p, "input_field"):
        return "search"
    if _icon(p, "search") is not None or find_all(p, "tabled_text"):
        return "inbox"
    return "unknown"


def _row_icons(p: Prompt, sender: El) -> dict[str, El]:
    """The star and trash icons on the row of the inbox whose sender line is ``sender``."""
    return {e.subtype: e for e in p.elements if e.type == "icon" and e.subtype in ("important", "delete")
            and sender.box[1] - 2 <= e.box[1] <= sender.box[3] + 4}


def _full(e: El, height: int = 10) -> bool:
    """Whether an element shows whole (one cut by the list's edge is shorter than it should be)."""
    return e.box[3] - e.box[1] >= height


def _last(p: Prompt) -> tuple[str, str | None]:
    """The last action's name and, for a click on an icon, the icon's subtype."""
    if not p.steps:
        return "", None
    s = p.steps[-1]
    return s.name, (s.element.subtype if s.element is not None and s.element.type == "icon" else None)


# --- the policy -----------------------------------------------------------------------------------


def _inbox(p: Prompt, goal: Goal) -> list[Action]:
    senders = [e for e in find_all(p, "tabled_text") if _same_name(e.text, goal.name) and _full(e)]
    for sender in senders:
        if goal.action in ("delete", "important"):
            icon = _row_icons(p, sender).get(goal.action)
            if icon is not None and _full(icon):
                return [click(icon), done()]
        # Reply and forward start from the open email; so does a row whose icons the list's edge cuts off.
        return [click(sender)]
    # Not on show (the list is taller than the screen): the search box finds it by name, where scrolling
    # the list would have to make sure no row slipped past between two screens.
    search = _icon(p, "search")
    return [click(search)] if search is not None else [fail(f"no email from {goal.name} on the screen")]


def _search(p: Prompt, goal: Goal) -> list[Action]:
    box = find_all(p, "input_field")[0]
    if norm(box.text) != norm(goal.name):
        return ([] if box.focused else [click(box)]) + [select_all(), type_text(goal.name)]
    # A result lies below the field: its middle does (a detected row may start where the field's box ends).
    found = [e for e in find_all(p, ("tabled_text", "text")) if _same_name(e.text, goal.name) and _full(e)
             and (e.box[1] + e.box[3]) / 2 > box.box[3]]
    if found:
        return [click(found[0])]
    last = p.steps[-1] if p.steps else None
    if last is not None and last.name == "wait":
        return [fail(f"the search finds no email from {goal.name}")]
    return [("wait", {"seconds": 0.5})]  # the results show as the keys come up


def _open_email(p: Prompt, goal: Goal) -> list[Action]:
    shown = [e for e in p.elements if e.type in ("text", "tabled_text") and _same_name(e.text, goal.name)]
    if not shown:  # another email is open: go back to the inbox
        back = _icon(p, "back")
        return [click(back)] if back is not None else [fail("no way back to the inbox")]
    if goal.action in ("delete", "important"):
        icon = _icon(p, goal.action)
        return [click(icon), done()] if icon is not None else [fail(f"no {goal.action} icon")]
    icon = _icon(p, goal.action)
    if icon is None:
        label = next((e for e in p.elements if norm(e.text) == goal.action), None)
        return [click(label)] if label is not None else [fail(f"no {goal.action} button")]
    return [click(icon)]


def _compose(p: Prompt, goal: Goal, screen: str) -> list[Action]:
    send = _icon(p, "send")
    back = _icon(p, "back")
    if screen != goal.action:  # the wrong form is open: leave it
        return [click(back)] if back is not None else [fail("no way back from the form")]
    if screen == "reply":
        # The form names the recipient: a reply to the wrong email goes back.
        names = [e for e in p.elements if e.type in ("text", "tabled_text")
                 and _same_name(re.sub(r"^\s*to:\s*", "", e.text or ""), goal.name)]
        if not names and back is not None:
            return [click(back)]
        box = next(iter(find_all(p, "text_area")), None)
        value = goal.message
    else:
        box = next(iter(find_all(p, "input_field")), None)
        value = goal.dest
    if box is None or send is None:
        return [fail("the form has no field or no send icon")]
    actions: list[Action] = []
    # A text area shows its text wrapped into lines (the element's text has a line break at each
    # wrap): the words and their case must match, not where the lines break.
    if (box.text or "").split() != value.split():
        actions += ([] if box.focused else [click(box)]) + [select_all(), type_text(value)]
    return [*actions, click(send), done()]


@policy(r"^(?:(?=.*\b(?:e-?mails?|mails?|messages?|inbox|trash|recycling|repl(?:y|ied)|respond|forward\w*|foward"
        r"|important|primary|information)\b)"
        r"|(?=.*\".+\")(?=.*\b(?:tell|text|say|send|write|I'll|know)\b)).*$")
def email_inbox(p: Prompt, m: re.Match[str]) -> list[Action]:
    goal = parse_goal(p.task)
    if goal is None:
        return [fail(f"cannot tell what to do from {p.task!r}")]
    name, subtype = _last(p)
    if name == "click_element" and subtype in ("send", "delete", "important"):
        return [done()]
    screen = _screen(p)
    if screen == "inbox":
        return _inbox(p, goal)
    if screen == "search":
        return _search(p, goal)
    if screen == "email":
        return _open_email(p, goal)
    if screen in ("reply", "forward"):
        return _compose(p, goal, screen)
    return [fail("the inbox is not on the screen")]
