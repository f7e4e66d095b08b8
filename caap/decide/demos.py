"""Demonstrations: recorded action trajectories of solved tasks, shown at the top of the prompt.

File format (UTF-8 JSON, ``schema_version`` 2; version 1 files — the same without the recorder's
fields — are read as they are)::

    {"schema_version": 2, "task": "Select EiTE and click Submit.", "source": "human",
     "screen": {"width": 160, "height": 210}, "complete": true,
     "steps": [{"action": "click_element", "args": {"element_id": 1},
                "element": {<element record as caap observe prints it>},
                "rationale": "The radio labelled EiTE ...",
                "before": [<elements>], "after": [<elements>],
                "point": [52, 80], "t": 1.25, "masked": false,
                "screenshots": {"before": "demo.assets/0001-before.png",
                                "after": "demo.assets/0001-after.png"}}]}

Step fields: ``action`` and ``args`` are a registry action (``caap.act.actions``) with its
arguments; ``element`` is the element the action targeted as it looked before the action (its
``element_id`` means something only within ``before``); ``before`` and ``after`` (optional) are the
element lists of the screens around the action, which rationale generation reads. Recorder fields,
all optional: ``point`` the pointer position of a mouse action (captured-image pixels), ``t``
seconds since the recording started, ``masked`` true when typed text was replaced by ``*`` (a
password-like field), ``screenshots`` paths relative to the demonstration file. A saved test
(``caap run --save-test``, ``caap bench desktop --save-tests``; ``caap.agent.regression``) adds
``expect``: the elements (type, text, states) the screen must show after the step, which
``caap replay`` checks.

Demonstration fields: ``screen`` the captured size the coordinates refer to; ``complete`` false
while a recording is still being written (or was cut off by a crash: every step in the file is
whole, the recording just ended early); ``source`` free text ("human", "scripted", "auto-context");
``family`` the task family when known (a MiniWoB task name, or one a user chooses): episodes of one
family share experience, and a demonstration of the family is the benchmark's reference trajectory;
``origin`` the benchmark episode a saved test came from (``{"benchmark", "task", "seed"}``), so that
the benchmark can start that episode again and replay it.
The recorder and the rationale generator write this format; the prompter, retrieval and replay
read it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from caap.act.actions import describe_action
from caap.elements import Element
from caap.files import read_json

DEMO_SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)


class DemoStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str
    args: dict[str, Any] = Field(default_factory=dict)
    element: Element | None = None
    rationale: str | None = None
    before: list[Element] | None = None
    after: list[Element] | None = None
    point: tuple[int, int] | None = None
    t: float | None = None
    masked: bool = False
    screenshots: dict[str, str] | None = None
    expect: list[Element] | None = None  # a saved test's checks: what the screen shows after this step

    def describe(self) -> str:
        """``name: click_element, arg: {type: radio, X: ..., text: "EiTE"}``: the element, not its
        id, because ids of another episode mean nothing here (``caap.act.actions.describe_action``)."""
        return describe_action(self.action, self.args, self.element, with_id=False)


class Demonstration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = DEMO_SCHEMA_VERSION
    task: str
    steps: list[DemoStep]
    source: str | None = None  # free text: "human", "scripted", "auto-context", ...
    family: str | None = None  # the task family (e.g. the MiniWoB task name) for retrieval and references
    screen: dict[str, int] | None = None  # {"width", "height"} of the captured screen
    complete: bool = True
    origin: dict[str, Any] | None = None  # a saved test's episode: {"benchmark", "task", "seed"}


class DemoFileError(ValueError):
    pass


def load_demo(path: str | Path) -> Demonstration:
    path = Path(path)
    data = read_json(path, DemoFileError, missing="no such demonstration file",
                     unreadable="not a readable JSON demonstration")
    if isinstance(data, dict) and data.get("schema_version", DEMO_SCHEMA_VERSION) not in READABLE_VERSIONS:
        raise DemoFileError(
            f"{path}: schema_version {data.get('schema_version')} is not supported "
            f"(this caap reads versions {', '.join(map(str, READABLE_VERSIONS))})"
        )
    try:
        return Demonstration.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise DemoFileError(f"{path}: {where}: {err['msg']}") from None


def save_demo(demo: Demonstration, path: str | Path) -> Path:
    """Write a demonstration atomically (a temporary file, then a rename): a reader, or a crash
    mid-write, never sees half a file."""
    from caap.files import write_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = demo.model_dump(mode="json", exclude_none=True)
    return write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def load_demos(paths: Sequence[str | Path]) -> list[Demonstration]:
    """Demonstration files, or directories of ``*.json`` demonstrations, in a stable order."""
    out: list[Demonstration] = []
    for p in map(Path, paths):
        files = sorted(p.glob("*.json")) if p.is_dir() else [p]
        out.extend(load_demo(f) for f in files)
    return out
