"""What a desktop task is: an application, how it starts, seeded parameters, the instruction, and
the checks on the application's final state.

A task is declared once (``caap.bench.desktop.tasks``), as data: ``DesktopTask("zenity-entry-type",
app="zenity-entry", argv=(...), params={"value": (...)}, instruction='Type "{value}" ...',
checks=(Output(text="{value}"),))``. The seed draws one value of each parameter
(``DesktopTask.params_for``), and the same ``{fields}`` fill the command line, the files written
before the application starts, the instruction and the checks. Whether a task is reserved for
evaluation follows from its application (``caap.bench.desktop.apps.RESERVED_APPS``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from caap.bench.desktop.apps import APPS, App
from caap.bench.desktop.checks import Check

KINDS = ("form", "choice", "list", "tab", "menu", "range", "dialog", "file", "editor", "calculator", "tree",
         "multi-screen")


@dataclass(frozen=True)
class DesktopTask:
    """One task (see the module docstring). ``argv``: the command when it is not the application's
    own (``{home}`` and the parameters filled in); ``files``: text files written under the home
    folder before the start (path → text); ``tcl``: for a Tk demo, Tcl run once it is open (what the
    episode starts from); ``derive``: fields computed from the drawn ones (a sum, the text a file
    ends with); ``output``: the application's stdout is part of its result (zenity); ``size``: the main
    window's size, where the application's own is too small to show what the task needs at once;
    ``kinds``: what it covers (``KINDS``); ``secrets``: parameters that are secrets (a password): the
    agent is given them as ``caap.act.secrets`` named by the parameter in capitals, and the task it
    reads says ``{PASSWORD}`` where the value goes."""

    name: str
    app: str
    instruction: str
    checks: tuple[Check, ...]
    params: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    argv: tuple[str, ...] | None = None
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    tcl: tuple[str, ...] = ()
    derive: Callable[[dict[str, str]], dict[str, str]] | None = None
    output: bool = False
    size: tuple[int, int] | None = None  # the main window resized to this (a dialog too small for its list)
    kinds: tuple[str, ...] = ("form",)
    max_steps: int = 10
    secrets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.app not in APPS:
            raise ValueError(f"task {self.name}: no application {self.app!r} (caap.bench.desktop.apps)")
        bad = [k for k in self.kinds if k not in KINDS]
        if bad:
            raise ValueError(f"task {self.name}: unknown kinds {bad} (known: {', '.join(KINDS)})")
        if not self.checks:
            raise ValueError(f"task {self.name}: a task needs at least one check")

    @property
    def application(self) -> App:
        return APPS[self.app]

    @property
    def toolkit(self) -> str:
        return self.application.toolkit

    @property
    def reserved(self) -> bool:
        """Set in an application kept for evaluation: measured, never tuned on."""
        return self.application.reserved

    @property
    def split(self) -> str:
        return "reserved" if self.reserved else "training"

    def params_for(self, seed: int) -> dict[str, str]:
        """The parameters of episode ``seed``: one value of each, drawn by a generator seeded with
        the task and the seed, then the derived ones."""
        rng = random.Random(f"{self.name}/{seed}")
        values = {key: rng.choice(choices) for key, choices in sorted(self.params.items())}
        if self.derive is not None:
            values.update(self.derive(dict(values)))
        return values

    def instruction_for(self, params: dict[str, str]) -> str:
        return self.instruction.format(**params)

    def secrets_for(self, params: dict[str, str]) -> dict[str, str]:
        """The episode's secrets by name (``PASSWORD``): the values of the ``secrets`` parameters."""
        return {name.upper(): params[name] for name in self.secrets}

    def checks_for(self, params: dict[str, str]) -> tuple[Check, ...]:
        return tuple(c.filled(params) for c in self.checks)

    def command(self, params: dict[str, str], home: str) -> list[str]:
        """The command that starts the application for these parameters (Tk: the demo's name)."""
        argv = self.argv if self.argv is not None else self.application.argv
        return [a.format(home=home, **params) for a in argv]
