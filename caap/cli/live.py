"""Live-screen pieces shared by the commands that act on the real screen (``caap run``, ``caap
replay``): the device (screen and OS input) from the config, and the safety around it (stop hotkey,
confirmation gate) with its announcement — built in one place so every command has the same
safety."""

from __future__ import annotations

from typing import Any

from caap.cli.common import err, fail


def vision_observer(cfg: Any, hint: str) -> Any:
    """The detector + reader observer of the ``[observe]`` config, loaded once, or one clear error
    (exit 2) saying what is missing, followed by ``hint`` (the command's way around it)."""
    try:
        from caap.observe.detect.detector import DetectorError
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


def live_device(cfg: Any, *, dry_run: bool = False) -> Any:
    """The live screen of the ``[screen]`` config with the ``[executor]`` config's input on it
    (``caap.act.device.Device``; ``dry_run``: input recorded, not sent), captured once so that a
    missing display or a backend that cannot start is one clear error (exit 2) now."""
    from caap.act.backends import ExecutorError
    from caap.act.device import Device
    from caap.observe.capture.screen import ScreenError

    try:
        return Device.live(cfg.screen, cfg.executor, dry_run=dry_run)
    except (ScreenError, ExecutorError) as exc:
        fail(str(exc))


def popup_guard(cfg: Any) -> Any:
    """With ``[safety] popups = "confirm"``: the guard that asks on the terminal before an action on
    something that appeared by itself (``caap.act.safety.PopupGuard``); else None."""
    from caap.act.safety import PopupGuard, terminal_ask

    return PopupGuard(terminal_ask(cfg.safety.confirm_timeout_s)) if cfg.safety.popups == "confirm" else None


def live_safety(cfg: Any, stop: Any) -> tuple[Any, Any]:
    """(started stop hotkey, confirmation gate or None) for acting on the live screen, announced on
    stderr; one clear error (exit 2) if the hotkey cannot start."""
    from caap.act.safety import ConfirmationGate, ConfirmRule, SafetyError, StopHotkey, describe_hotkey, terminal_ask

    try:
        hotkey = StopHotkey(stop, cfg.safety.stop_hotkey).start()
    except SafetyError as exc:
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
    return hotkey, gate
