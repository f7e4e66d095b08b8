"""The desktop benchmark's tasks: one table, grouped by toolkit.

Every instruction is written in one of a few sentence shapes (``caap.testing.planner.policies.
desktop_tasks`` reads them), naming the controls by the text a person sees on the screen. Tasks in
the applications reserved for evaluation (``caap.bench.desktop.apps.RESERVED_APPS``) are measured,
never tuned on.
"""

from __future__ import annotations

from pathlib import Path

from caap.bench.desktop.checks import Output
from caap.bench.desktop.task import DesktopTask

NAMES = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Ken Thompson",
         "Margaret Hamilton", "Donald Knuth")
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Margaret", "Donald", "Frances", "John")
LAST = ("Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Thompson", "Hamilton", "Knuth", "Allen", "Backus")
FILES = ("report-2023.odt", "notes.txt", "budget.csv")
WORDS = ("invoice", "holiday", "backup", "draft", "archive", "summary", "meeting", "budget", "contract", "photos")

# --- GTK 3: zenity dialogs (training) -------------------------------------------------------------

ZENITY_LIST = ("notes.txt", "holiday.png", "budget.csv", "report-2023.odt", "song.ogg")
ZENITY_PACKAGES = ("python3", "gimp", "inkscape", "vlc", "git")
ZENITY_TICKED = ("python3", "inkscape")  # ticked when the dialog opens


def _checklist(p: dict[str, str]) -> dict[str, str]:
    ticked = [name for name in ZENITY_PACKAGES if (name in ZENITY_TICKED or name == p["on"]) and name != p["off"]]
    return {"result": "|".join(ticked)}


GTK3: tuple[DesktopTask, ...] = (
    DesktopTask(
        "zenity-entry-rename", app="zenity-entry",
        argv=("zenity", "--entry", "--title=Rename file", "--text=New name:", "--entry-text=untitled.txt"),
        params={"value": tuple(f"{w}-{n}.txt" for w in WORDS for n in (1, 2, 3))},
        instruction='Type "{value}" into the "New name:" field, then press "OK".',
        checks=(Output(text="{value}"),), output=True, kinds=("form", "dialog")),
    DesktopTask(
        "zenity-question-answer", app="zenity-question",
        argv=("zenity", "--question", "--text=Delete {count} files permanently?"),
        params={"answer": ("Yes", "No"), "count": ("2", "3", "5", "12")},
        derive=lambda p: {"code": "0" if p["answer"] == "Yes" else "1"},
        instruction='Answer "{answer}" to the question.',
        checks=(Output(exit_code="{code}"),), output=True, kinds=("dialog",), max_steps=4),
    DesktopTask(
        "zenity-list-select", app="zenity-list",
        argv=("zenity", "--list", "--title=Open file", "--column=Name", "--column=Size", "notes.txt", "4 KB",
              "holiday.png", "2.1 MB", "budget.csv", "12 KB", "report-2023.odt", "88 KB", "song.ogg", "5.3 MB"),
        params={"item": ZENITY_LIST},
        instruction='Select "{item}" in the list, then press "OK".',
        checks=(Output(text="{item}"),), output=True, kinds=("list", "dialog")),
    DesktopTask(
        "zenity-checklist-tick", app="zenity-checklist",
        argv=("zenity", "--list", "--checklist", "--title=Install packages", "--column=Pick", "--column=Package",
              *(v for name in ZENITY_PACKAGES for v in ("TRUE" if name in ZENITY_TICKED else "FALSE", name))),
        params={"on": ("gimp", "vlc", "git"), "off": ZENITY_TICKED},
        derive=_checklist,
        instruction='Tick "{on}" and untick "{off}", then press "OK".',
        checks=(Output(text="{result}"),), output=True, size=(320, 300), kinds=("choice", "list")),
    DesktopTask(
        "zenity-radiolist-pick", app="zenity-radiolist",
        argv=("zenity", "--list", "--radiolist", "--title=Size", "--column=Pick", "--column=Size", "TRUE", "Small",
              "FALSE", "Medium", "FALSE", "Large", "FALSE", "Extra large"),
        params={"size": ("Medium", "Large", "Extra large")},
        instruction='Pick "{size}", then press "OK".',
        checks=(Output(text="{size}"),), output=True, kinds=("choice",)),
    DesktopTask(
        "zenity-forms-contact", app="zenity-forms",
        argv=("zenity", "--forms", "--title=Add contact", "--text=Contact details", "--add-entry=First name",
              "--add-entry=Last name", "--add-combo=Country", "--combo-values=France|Germany|Japan|Kenya|Peru"),
        params={"first": FIRST, "last": LAST, "country": ("France", "Germany", "Japan", "Kenya", "Peru")},
        instruction='Fill in the form: "First name" "{first}", "Last name" "{last}"; choose "{country}" from '
                    '"Country"; then press "OK".',
        checks=(Output(text="{first}|{last}|{country}"),), output=True, kinds=("form", "choice"), max_steps=12),
    DesktopTask(
        "zenity-scale-set", app="zenity-scale",
        argv=("zenity", "--scale", "--text=Volume", "--value=40", "--min-value=0", "--max-value=100"),
        params={"n": ("35", "38", "43", "45", "47", "50")},
        instruction='Set the slider to {n}, then press "OK".',
        checks=(Output(text="{n}"),), output=True, kinds=("range",)),
    DesktopTask(
        "zenity-password-login", app="zenity-password",
        argv=("zenity", "--password", "--username", "--title=Connect to server"),
        params={"user": ("ada", "grace", "alan", "edsger"), "password": ("tulip-42", "orbit-7", "maple-19")},
        instruction='Log in with the user name "{user}" and the password "{password}", then press "OK".',
        checks=(Output(text="{user}|{password}"),), output=True, kinds=("form", "dialog"), secrets=("password",)),
)

# The other toolkits' tasks, in modules of their own (imported here: one table).
from caap.bench.desktop import tasks_gtk, tasks_qt, tasks_tk  # noqa: E402

TASK_LIST: tuple[DesktopTask, ...] = (*GTK3, *tasks_gtk.TASKS, *tasks_qt.TASKS, *tasks_tk.TASKS)
TASKS: dict[str, DesktopTask] = {t.name: t for t in TASK_LIST}
assert len(TASKS) == len(TASK_LIST), "task names repeat"


SETS = ("all", "training", "reserved")


def parse_desktop_tasks(spec: str) -> list[str]:
    """``all``, ``training``, ``reserved``, ``A,B`` or a file with one task per line (``#`` comments)."""
    from caap.bench.harness import BenchError

    if spec in SETS:
        return [t.name for t in TASK_LIST if spec == "all" or t.split == spec]
    path = Path(spec)
    if "," not in spec and path.suffix in (".txt", ".lst") and path.is_file():
        names = [ln.split("#", 1)[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    else:
        names = [t.strip() for t in spec.split(",")]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in TASKS]
    if not names or unknown:
        raise BenchError(f"tasks: unknown desktop task(s) {', '.join(unknown) or spec!r} "
                         f"(caap bench desktop --list; or all, training, reserved)")
    return list(dict.fromkeys(names))
