"""Live-screen pieces shared by the commands that act on the real screen (``caap run``, ``caap
replay``): the screen from the ``[screen]`` config, and the OS input side (executor, stop hotkey,
confirmation gate) with its announcement — built in one place so every command has the same
safety."""

from __future__ import annotations

from typing import Any

from caap.cli.common import err, fail


def vision_observer(cfg: Any, hint: str) -> Any:
    """The detector + reader observer of the ``[observe]`` config, loaded once, or one clear error
    (exit 2) saying what is missing, followed by ``hint`` (the command's way around it)."""
    try:
        from caap.observe.detector import DetectorError
        from caap.observe.vision import VisionObserver
    except ImportError as exc:
        fail(f"the vision models need the vision extra: pip install 'caap[vision]' ({exc}) {hint}")
    try:
        return VisionObserver.from_config(cfg.observe)
    except DetectorError as exc:
        fail(f"{exc} {hint}")
    except ImportError as exc:
        fail(f"the vision models need the vision extra: pip install 'caap[vision]' ({exc}) {hint}")
    except Exception as exc:  # the reader's and OCR's error types live with the optional model code
        if type(exc).__name__ in ("ReaderError", "OcrError"):
            fail(f"{exc} {hint}")
        raise


def live_screen(cfg: Any) -> Any:
    """The live screen of the ``[screen]`` config (monitor, region or window, with its settle
    options), captured once so that a missing display fails now with a clear message. Raises
    ``ScreenError``."""
    from caap.observe.capture import CaptureTarget, LiveScreen, SettleOptions

    sc = cfg.screen
    target = CaptureTarget.parse(monitor=sc.monitor, region=sc.region, window=sc.window)
    settle = SettleOptions(sc.settle_min_s, sc.settle_interval_s, sc.settle_timeout_s)
    screen = LiveScreen(target, settle=settle)
    screen.capture()
    return screen


def live_input(cfg: Any, screen: Any, stop: Any) -> tuple[Any, Any, Any]:
    """(executor, started stop hotkey, confirmation gate or None) for acting on the live screen,
    announced on stderr; one clear error (exit 2) if the backend or the hotkey cannot start."""
    from caap.act.backends import ExecutorError, make_executor
    from caap.act.safety import ConfirmationGate, ConfirmRule, SafetyError, StopHotkey, describe_hotkey, terminal_ask

    try:
        executor = make_executor(cfg.executor.backend, lambda: screen.mapping, failsafe=cfg.executor.failsafe)
        hotkey = StopHotkey(stop, cfg.safety.stop_hotkey).start()
    except (ExecutorError, SafetyError) as exc:
        fail(str(exc))
    gate = None
    if cfg.safety.confirm:
        ask = terminal_ask(cfg.safety.confirm_timeout_s)
        if cfg.safety.rules is None:
            gate = ConfirmationGate(ask=ask)
        else:
            gate = ConfirmationGate([ConfirmRule(tuple(r.actions), r.target, r.reason)
                                     for r in cfg.safety.rules], ask=ask)
    err.print(f"caap: acting on the live screen with {cfg.executor.backend}. Press "
              f"{describe_hotkey(cfg.safety.stop_hotkey)} to stop"
              + ("; or move the mouse into a screen corner." if cfg.executor.failsafe
                 and cfg.executor.backend == "pyautogui" else "."), highlight=False)
    return executor, hotkey, gate
