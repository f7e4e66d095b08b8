"""Capture a full 1920x1080 desktop with several real applications open on a private Xvfb: the
screen `caap bench observe` times the observer on (issue 16's "observe a 1080p desktop").

The applications are ones reserved for evaluation (DESIGN.md §6): measured on, never trained on.

    .venv/bin/python tools/desktop_screen.py --out results/any-application/screens/desktop-1080p.png
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from caap.bench.desktop.apps import APPS
from caap.bench.desktop.session import DesktopSession

# Application and where its window's top-left corner goes (no window manager: placed by hand).
LAYOUT = (("gtk3-widget-factory", (0, 0)), ("qt5-gallery", (1000, 0)), ("qt5-widgets-calculator", (1000, 620)),
          ("qt5-layouts-basiclayouts", (1400, 560)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    with DesktopSession(1920, 1080, atspi=False) as session:
        for name, (x, y) in LAYOUT:
            app = APPS[name]
            if (why := app.missing()) is not None:
                raise SystemExit(why)
            before = {w.id for w in session.windows()}
            session.launch(list(app.argv))
            deadline = time.monotonic() + 20
            new: list = []
            while time.monotonic() < deadline and not new:
                new = [w for w in session.wait_for_windows(5) if w.id not in before and not w.override_redirect]
            if not new:
                raise SystemExit(f"{name}: no window within 20 s")
            session.xdotool("windowmove", str(new[-1].id), str(x), str(y))
        time.sleep(1.5)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        session.capture((0, 0, 1920, 1080)).save(args.out)
    print(args.out)


if __name__ == "__main__":
    main()
