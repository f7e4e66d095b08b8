"""Desktop benchmark tasks in tk applications (see ``caap.bench.desktop.tasks``).

Tk 8.6 has no accessibility bridge: the checks ask the demo's own interpreter (``Tcl``) for the
variables its widgets are tied to, an entry's or a text's content, a notebook's current tab or the
ranges a search highlighted. ``tcl`` sets the state an episode starts from (a text's content, the
check buttons' variables).
"""

from __future__ import annotations

from caap.bench.desktop.checks import Tcl
from caap.bench.desktop.task import DesktopTask

WORDS = ("invoice", "holiday", "backup", "draft", "archive", "summary", "meeting", "budget", "contract", "photos")
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Margaret", "Donald", "Frances", "John")
NAMES = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Ken Thompson",
         "Margaret Hamilton", "Donald Knuth")

# --- the check buttons: one to tick, another (ticked at the start) to untick ---------------------------

CHECKS = {"Wipers OK": "wipers", "Brakes OK": "brakes", "Driver Sober": "sober"}
CHECK_PAIRS = tuple(f"{on}|{off}" for on in CHECKS for off in CHECKS if on != off)


def _checks(p: dict[str, str]) -> dict[str, str]:
    on, off = p["pair"].split("|")
    return {"on": on, "off": off, "onvar": CHECKS[on], "offvar": CHECKS[off]}


# --- a text to edit ------------------------------------------------------------------------------------

PARAGRAPHS = (
    "Dear team,\\nThe quarterly report is ready for review.\\nPlease send comments before Friday.",
    "Shopping list:\\nfresh bread, green apples and cheese.\\nRemember the coffee filters.",
    "Meeting notes:\\nThe garden project starts in April.\\nBring the blue folder next time.",
    "Travel plan:\\nThe train leaves at seven.\\nPack the small suitcase tonight.",
)
# Per paragraph: words that occur once, to be replaced.
REPLACEABLE = {
    0: ("quarterly", "ready", "Friday", "comments"),
    1: ("bread", "apples", "cheese", "coffee"),
    2: ("garden", "April", "blue", "folder"),
    3: ("train", "seven", "small", "tonight"),
}
NEW_WORDS = ("yearly", "pending", "Monday", "orange", "silver", "morning", "large", "notes")


def _replace(p: dict[str, str]) -> dict[str, str]:
    i = int(p["para"])
    text = PARAGRAPHS[i]
    old = REPLACEABLE[i][int(p["word"])]
    return {"text": text, "old": old, "result": text.replace("\\n", "\n").replace(old, p["new"], 1)}


def _append(p: dict[str, str]) -> dict[str, str]:
    text = PARAGRAPHS[int(p["para"])]
    return {"text": text, "result": text.replace("\\n", "\n") + "\n" + p["line"]}


# --- the search demo: a file whose word count varies ---------------------------------------------------

SEARCH_WORDS = ("invoice", "holiday", "backup", "meeting", "budget", "contract")
FILLER = ("Nothing else is planned for today.", "The weather stays mild this week.",
          "Lunch is at noon in the small room.", "Call the office after three.")


def _search(p: dict[str, str]) -> dict[str, str]:
    n, w = int(p["n"]), p["word"]
    lines = []
    for i in range(6):
        lines.append(f"Line {i + 1}: the {w} is on the list." if i < n else FILLER[i % len(FILLER)])
    return {"content": "\n".join(lines) + "\n", "ranges": str(2 * n)}


LINES = ("Call the bank on Monday.", "Water the plants twice a week.", "Book the tickets for June.",
         "Ask Grace about the budget.", "Buy stamps at the post office.")

TASKS: tuple[DesktopTask, ...] = (
    DesktopTask(
        "tk-check-safety", app="tk-check",
        params={"pair": CHECK_PAIRS}, derive=_checks,
        tcl=("set wipers 0; set brakes 0; set sober 0; set {offvar} 1",),
        instruction='Make these changes: tick "{on}"; untick "{off}".',
        checks=(Tcl("set {onvar}", "1"), Tcl("set {offvar}", "0")),
        kinds=("choice",), max_steps=5),
    DesktopTask(
        "tk-radio-settings", app="tk-radio",
        params={"size": ("10", "12", "14", "18", "24"), "color": ("Red", "Green", "Blue", "Yellow", "Orange", "Purple"),
                "align": ("Top", "Left", "Right", "Bottom")},
        derive=lambda p: {"colorvar": p["color"].lower(), "alignvar": p["align"].lower()},
        instruction='Make these changes: pick "Point Size {size}"; pick "{color}"; pick "{align}".',
        checks=(Tcl("set size", "{size}"), Tcl("set color", "{colorvar}"), Tcl("set align", "{alignvar}")),
        kinds=("choice",), max_steps=6),
    DesktopTask(
        "tk-combo-city", app="tk-combo",
        params={"city": ("Canberra", "Melbourne", "Perth", "Adelaide", "Brisbane", "Hobart", "Darwin"),
                "word": WORDS},
        instruction='Make these changes: choose "{city}" from "Defined List Only"; type "{word}" into '
                    '"Fully Editable".',
        checks=(Tcl("set ozCity", "{city}"), Tcl("set firstValue", "{word}")),
        kinds=("choice", "form"), max_steps=8),
    DesktopTask(
        "tk-form-contact", app="tk-form",
        params={"name": NAMES, "street": ("12 Lakeside", "23 Watersedge", "38 Sea Views", "48 Ocean Way",
                                          "53 New Springs", "67 Long River"),
                "phone": ("555-0142", "555-0187", "555-0119", "555-0163", "555-0175")},
        instruction='Make these changes: type "{name}" into "Name"; type "{street}" into "Address"; type "{phone}" '
                    'into "Phone".',
        checks=(Tcl(".form.f1.entry get", "{name}"), Tcl(".form.f2.entry get", "{street}"),
                Tcl(".form.f5.entry get", "{phone}")),
        kinds=("form",), max_steps=6),
    DesktopTask(
        "tk-menu-cascade-check", app="tk-menu",
        params={"item": ("Oil checked", "Transmission checked", "Brakes checked", "Lights checked")},
        derive=lambda p: {"var": {"Oil": "oil", "Transmission": "trans", "Brakes": "brakes",
                                  "Lights": "lights"}[p["item"].split()[0]]},
        tcl=("set oil 0; set trans 0; set brakes 0; set lights 0",),
        instruction='In the menu bar, choose "Cascades" > "Check buttons" > "{item}".',
        checks=(Tcl("set {var}", "1"),),
        kinds=("menu",), max_steps=8),
    DesktopTask(
        "tk-text-replace-word", app="tk-text",
        params={"para": ("0", "1", "2", "3"), "word": ("0", "1", "2", "3"), "new": NEW_WORDS},
        derive=_replace,
        tcl=('.text.text delete 1.0 end; .text.text insert 1.0 "{text}"; .text.text mark set insert 1.0',),
        instruction='In the text, replace "{old}" with "{new}".',
        checks=(Tcl(".text.text get 1.0 end-1c", "{result}"),),
        kinds=("editor",), max_steps=4),
    DesktopTask(
        "tk-text-add-line", app="tk-text",
        params={"para": ("0", "1", "2", "3"), "line": LINES},
        derive=_append,
        tcl=('.text.text delete 1.0 end; .text.text insert 1.0 "{text}"; .text.text mark set insert 1.0',),
        instruction='Add the line "{line}" at the end of the text.',
        checks=(Tcl(".text.text get 1.0 end-1c", "{result}"),),
        kinds=("editor",), max_steps=4),
    DesktopTask(
        "tk-search-highlight", app="tk-search",
        params={"word": SEARCH_WORDS, "n": ("2", "3", "4", "5")}, derive=_search,
        files={"notes.txt": "{content}"},
        instruction='Make these changes: type "notes.txt" into "File name"; press "Load File"; type "{word}" into '
                    '"Search string"; press "Highlight".',
        checks=(Tcl("llength [.search.text tag ranges search]", "{ranges}"),
                Tcl(".search.text get 1.0 1.end", "Line 1: the {word} is on the list.")),
        kinds=("editor", "file", "form"), max_steps=8),
    DesktopTask(
        "tk-notebook-editor", app="tk-ttknote",
        params={"line": LINES},
        instruction='Make these changes: open the "Text Editor" tab; type "{line}" into the text.',
        checks=(Tcl(".ttknote.f.note index current", "2"), Tcl(".ttknote.f.note.editor.t get 1.0 end-1c", "{line}")),
        kinds=("tab", "editor"), max_steps=5),
)
