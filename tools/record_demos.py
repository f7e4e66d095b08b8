"""Record MiniWoB++ demonstrations through `caap record` while the scripted planner drives the screen.

For each task and seed: the task page on its own Xvfb, `caap record` started on the task's region
(as a person would start it), the agent with the scripted planner (caap.testing.planner) and
the DOM oracle observer acting through xdotool, then Ctrl-C (SIGINT) to the recorder. The
recording keeps only what the recorder saw: OS input events, screenshots and its own vision
observation of each before-screen. A demonstration is kept only if the episode earned a reward; it
gets ``family`` = the task name and ``source`` = "scripted". Existing files are skipped (resume).

    .venv/bin/python tools/record_demos.py --seeds 3000 --out demos/miniwob            # all scripted tasks
    .venv/bin/python tools/record_demos.py --tasks click-test,focus-text --seeds 3000-3001

Rationales need an LLM: afterwards run `caap rationalize demos/miniwob/*/*.json` against one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from caap.act.backends import XdotoolExecutor
from caap.act.device import Device
from caap.agent.loop import Agent
from caap.bench.miniwob import MiniWoBEnv
from caap.bench.oracle import OracleObserver
from caap.config import AgentConfig, CaapConfig, LLMConfig, PromptConfig
from caap.decide.demos import load_demo, save_demo
from caap.observe.capture.live import CaptureTarget, LiveScreen
from caap.record.recorder import assets_dir
from caap.seeds import parse_seed_ranges
from caap.testing.planner import TASKS, serve

ROOT = Path(__file__).resolve().parents[1]


class HumanPacedExecutor(XdotoolExecutor):
    """xdotool input with a person's pause before each action. The recorder samples the screen at
    5 Hz and takes an action's before-screenshot from the latest sample; the agent acts within
    milliseconds of its own settle, so on a busy CPU the latest sample could still show the screen
    before the previous action's effect (a tab's old content), and the step was bound to an element
    of that stale screen. A person never clicks that fast after a change; neither does this driver."""

    def __init__(self, *args, pause_s: float = 0.6, **kw) -> None:
        super().__init__(*args, **kw)
        self.pause_s = pause_s
        self._dragging = False

    def _pause(self) -> None:
        if not self._dragging:
            time.sleep(self.pause_s)

    def move(self, x, y):
        self._pause()
        super().move(x, y)

    def click(self, x, y, **kw):
        self._pause()
        super().click(x, y, **kw)

    def mouse_down(self, x, y, **kw):
        self._pause()
        super().mouse_down(x, y, **kw)
        self._dragging = True

    def mouse_up(self, **kw):
        super().mouse_up(**kw)
        self._dragging = False

    def type_text(self, text):
        self._pause()
        super().type_text(text)

    def press_keys(self, keys):
        self._pause()
        super().press_keys(keys)

    def scroll(self, x, y, **kw):
        self._pause()
        super().scroll(x, y, **kw)


def _start_recorder(env: MiniWoBEnv, task_text: str, out: Path, observe: bool) -> subprocess.Popen[str]:
    r = env.region
    cmd = [sys.executable, "-m", "caap.cli", "record", "--task", task_text,
           "--out", str(out), "--region", f"{r.left},{r.top},{r.width},{r.height}", "--force"]
    if not observe:
        cmd.append("--no-observe")
    # SIGINT at its default in the child: started from a background job it would inherit it ignored,
    # and the Ctrl-C that ends the recording would never arrive.
    proc = subprocess.Popen(cmd, env={**os.environ, "DISPLAY": env.display}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ready = threading.Event()
    lines: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Recording "):
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    proc.lines = lines  # type: ignore[attr-defined]
    deadline = time.monotonic() + 180
    while not ready.wait(0.2):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("caap record did not start:\n" + "".join(lines[-20:]))
    time.sleep(0.3)  # the listeners and the first background frame
    return proc


def record_one(env: MiniWoBEnv, task: str, seed: int, out: Path, base_url: str, observe: bool) -> tuple[int, float]:
    env.reset(seed)
    text = env.utterance()
    proc = _start_recorder(env, text, out, observe)
    r = env.region
    screen = LiveScreen(CaptureTarget(kind="region", region=(r.left, r.top, r.width, r.height)), display=env.display)
    cfg = CaapConfig(llm=LLMConfig(base_url=base_url, model="scripted", api_key="none"),
                     agent=AgentConfig(max_steps=15), prompt=PromptConfig(demonstrations=False))
    try:
        device = Device(screen, HumanPacedExecutor(lambda: screen.mapping, display=env.display))
        agent = Agent.from_config(cfg, device, observer=OracleObserver(env), is_finished=env.done)
        agent.run(text)
        reward = env.reward() if env.done() else 0.0
        time.sleep(1.0)  # the recorder writes a lone click after its double-click window
    finally:
        screen.close()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"caap record exited {proc.returncode}:\n" + "".join(proc.lines[-20:]))  # type: ignore[attr-defined]
    demo = load_demo(out)
    if reward <= 0:  # nothing of a recording without a reward stays: its file nor its screenshots
        out.unlink()
        shutil.rmtree(assets_dir(out), ignore_errors=True)
        return len(demo.steps), reward
    save_demo(demo.model_copy(update={"family": task, "source": "scripted"}), out)
    return len(demo.steps), reward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all", help="comma-separated, or 'all' (every scripted task)")
    parser.add_argument("--seeds", default="3000", help="demonstration seeds (3000-3999), e.g. 3000-3001")
    parser.add_argument("--out", type=Path, default=ROOT / "demos" / "miniwob")
    parser.add_argument("--no-observe", action="store_true", help="record points only (no vision models)")
    args = parser.parse_args()
    tasks = sorted(TASKS) if args.tasks == "all" else [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        parser.error(f"no scripted policy for: {', '.join(unknown)}")
    seeds = parse_seed_ranges(args.seeds)
    server = serve()
    failed = []
    try:
        with MiniWoBEnv() as env:
            for task in tasks:
                env.open(task)
                for seed in seeds:
                    out = args.out / task / f"seed-{seed}.json"
                    if out.exists():
                        print(f"{task} {seed}: exists, skipped", flush=True)
                        continue
                    out.parent.mkdir(parents=True, exist_ok=True)
                    t0 = time.monotonic()
                    try:
                        steps, reward = record_one(env, task, seed, out, server.base_url, not args.no_observe)
                    except Exception as exc:  # one task's trouble must not lose the others
                        failed.append(f"{task} {seed}: {exc}")
                        print(f"{task} {seed}: FAILED {exc}", flush=True)
                        continue
                    kept = "kept" if reward > 0 else "dropped (no reward)"
                    print(f"{task} {seed}: {steps} steps, reward {reward:.2f}, {kept} "
                          f"({time.monotonic() - t0:.1f}s)", flush=True)
                    if reward <= 0:
                        failed.append(f"{task} {seed}: no reward")
    finally:
        server.stop()
    if failed:
        print(f"{len(failed)} not recorded:\n  " + "\n  ".join(failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
