"""Demonstrations: recorded action trajectories of solved tasks, shown at the top of the prompt.

File format (UTF-8 JSON, ``schema_version`` 1)::

    {"schema_version": 1, "task": "Select EiTE and click Submit.",
     "steps": [{"action": "click_element", "args": {"element_id": 1},
                "element": {<element record as caap observe prints it>},
                "rationale": "The radio labelled EiTE ...",
                "before": [<elements>], "after": [<elements>]}]}

``element`` is the element the action targeted as it looked before the action; ``before`` and
``after`` (optional) are the screens around the action, which rationale generation reads.
The recorder and the rationale generator write this format; the prompter reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from caap.elements import Element, quote

DEMO_SCHEMA_VERSION = 1


class DemoStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str
    args: dict[str, Any] = Field(default_factory=dict)
    element: Element | None = None
    rationale: str | None = None
    before: list[Element] | None = None
    after: list[Element] | None = None

    def describe(self) -> str:
        """``{name: click_element, arg: {type: radio, X: ..., text: "EiTE"}}``: the element, not its
        id, because ids of another episode mean nothing here."""
        parts = [f"name: {self.action}"]
        args = {k: v for k, v in self.args.items() if k != "element_id"}
        inner: list[str] = []
        if self.element is not None:
            inner.append(self.element.describe()[1:-1])
        inner.extend(f"{k}: {quote(v) if isinstance(v, str) else v}" for k, v in args.items())
        if inner:
            parts.append("arg: {" + ", ".join(inner) + "}")
        return ", ".join(parts)


class Demonstration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = DEMO_SCHEMA_VERSION
    task: str
    steps: list[DemoStep]
    source: str | None = None  # free text: "human", "auto-context", a recorder id, ...


class DemoFileError(ValueError):
    pass


def load_demo(path: str | Path) -> Demonstration:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DemoFileError(f"{path}: no such demonstration file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DemoFileError(f"{path}: not a readable JSON demonstration ({exc})") from None
    if isinstance(data, dict) and data.get("schema_version", DEMO_SCHEMA_VERSION) != DEMO_SCHEMA_VERSION:
        raise DemoFileError(
            f"{path}: schema_version {data.get('schema_version')} is not supported "
            f"(this caap reads version {DEMO_SCHEMA_VERSION})"
        )
    try:
        return Demonstration.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise DemoFileError(f"{path}: {where}: {err['msg']}") from None


def load_demos(paths: list[str | Path]) -> list[Demonstration]:
    """Demonstration files, or directories of ``*.json`` demonstrations, in a stable order."""
    out: list[Demonstration] = []
    for p in map(Path, paths):
        files = sorted(p.glob("*.json")) if p.is_dir() else [p]
        out.extend(load_demo(f) for f in files)
    return out
