"""Look at a desktop task (or an application) the way the benchmark starts it, for writing tasks:
the instruction, the oracle's element list, the accessibility tree's nodes (role, name, states,
text, value) and the checks' verdict on the untouched application, which must fail (a check that
holds before anything was done checks nothing). Saves a screenshot.

    .venv/bin/python tools/desktop_task_probe.py TASK [--seed N] [--out probe.png] [--nodes]
    .venv/bin/python tools/desktop_task_probe.py --app qt5-widgets-calculator --nodes

With ``--app`` the application starts as ``caap dataset desktop`` starts it (no task).
``--tcl SCRIPT`` (Tk) and ``--xdotool ARGS`` (repeatable, run in order) act on it first, to see a
state the task leads to.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", nargs="?")
    parser.add_argument("--app", help="an application of caap.bench.desktop.apps, started without a task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("probe.png"))
    parser.add_argument("--nodes", action="store_true", help="print every accessibility node")
    parser.add_argument("--xdotool", action="append", default=[], help="xdotool arguments, run before looking")
    parser.add_argument("--tcl", action="append", default=[], help="Tcl run in a Tk demo before looking")
    args = parser.parse_args(argv)

    from caap.bench.desktop.checks import verify_all
    from caap.bench.desktop.env import DesktopEnv
    from caap.bench.desktop.oracle import AccessibilityOracle
    from caap.bench.desktop.task import DesktopTask
    from caap.bench.desktop.tasks import TASKS

    if args.app:
        from caap.bench.desktop.checks import NoWindow

        task = DesktopTask("probe", app=args.app, instruction="(no task)", checks=(NoWindow("re:.*"),))
        TASKS["probe"] = task
        name = "probe"
    elif args.task in TASKS:
        name = args.task
    else:
        print(f"no task {args.task!r}; tasks: {', '.join(TASKS)}", file=sys.stderr)
        return 2
    with DesktopEnv() as env:
        env.open(name)
        env.reset(args.seed)
        print("instruction:", env.utterance())
        print("params:", json.dumps(env.params))
        for cmd in args.xdotool:
            env.session.xdotool(*shlex.split(cmd))
            time.sleep(0.5)
        for script in args.tcl:
            print("tcl:", env.tk.tcl(script) if env.tk else "(not a Tk task)")
        time.sleep(0.5)
        image = env.session.settle((0, 0, *env.size), timeout=3.0)
        image.save(args.out)
        print(f"screenshot: {args.out}")
        print("oracle elements:")
        for e in AccessibilityOracle(env).observe(image).elements:
            states = {k: v for k, v in e.to_json().items() if k in ("checked", "focused", "highlighted", "expanded")
                      and v is not None}
            print(f"  {e.type.value:<13} {list(e.bbox)} {e.text!r} {states or ''}")
        state = env.final_state()
        if args.nodes:
            print("accessibility nodes (role | name | states | text | value):")
            for n in state.nodes:
                print("  " + " | ".join(str(x) for x in (n.get("role"), n.get("name"), ",".join(n.get("states", [])),
                                                          n.get("text", ""), n.get("value", ""))))
        print("windows:", state.windows)
        if name != "probe":
            failed = verify_all(env.current.checks_for(env.params), state)
            print("checks on the untouched application:", failed or "ALL HOLD (a check that checks nothing?)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
