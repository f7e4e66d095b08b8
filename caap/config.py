"""Configuration: one validated TOML file, overridden by environment variables, overridden by flags.

Where the file comes from: ``--config PATH``, else ``$CAAP_CONFIG``, else ``./caap.toml``, else
``~/.config/caap/config.toml``; none is required. Environment variables: the standard
``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``OPENAI_MODEL`` (for Azure also ``AZURE_OPENAI_ENDPOINT``,
``AZURE_OPENAI_API_KEY`` and ``OPENAI_API_VERSION``), and ``CAAP_<SECTION>__<FIELD>`` for
any field (``CAAP_AGENT__MAX_STEPS=10``, ``CAAP_LLM__MODE=text``). The API key is a secret: it is
never printed, never written to a trace, and ``redacted()`` is what gets recorded.

Example ``caap.toml``::

    [llm]
    base_url = "http://127.0.0.1:8000/v1"   # any OpenAI-compatible server
    model = "gpt-4o"
    mode = "tools"                           # or "text": the paper's Action_N=(...) lines
    [llm.prices."gpt-4o"]                    # USD per million tokens
    input = 2.5
    output = 10.0
    [prompt]
    token_budget = 12000
    [agent]
    max_steps = 30
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0, description="USD per million prompt tokens")
    output: float = Field(ge=0, description="USD per million completion tokens")
    cached_input: float | None = Field(default=None, ge=0)


# List prices at the time of writing, USD per million tokens; override or extend in the config
# file, since they change. A model missing here has unknown cost (reported as such).
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o": Price(input=2.5, output=10.0, cached_input=1.25),
    "gpt-4o-mini": Price(input=0.15, output=0.6, cached_input=0.075),
    "gpt-4.1": Price(input=2.0, output=8.0, cached_input=0.5),
    "gpt-4.1-mini": Price(input=0.4, output=1.6, cached_input=0.1),
    "gpt-4-turbo": Price(input=10.0, output=30.0),
    "gpt-4-0125-preview": Price(input=10.0, output=30.0),
}


class LLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint; None = OpenAI")
    api_key: SecretStr | None = None
    api_version: str | None = Field(
        default=None, description="Azure OpenAI API version; set it to talk to an Azure resource at base_url"
    )
    model: str = Field(default="gpt-4o", description="model name (the deployment name on Azure)")
    mode: Literal["tools", "text"] = "tools"
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=2048, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=5, ge=0, le=20)
    backoff_initial_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    @field_validator("prices", mode="after")
    @classmethod
    def _extend_default_prices(cls, value: dict[str, Price]) -> dict[str, Price]:
        # A config that prices its own model still knows the common ones.
        return {**DEFAULT_PRICES, **value}


class PromptConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    demonstrations: bool = True
    rationales: bool = True
    cot: bool = True
    token_budget: int = Field(default=12000, ge=500)
    max_demonstrations: int = Field(default=3, ge=0)
    # What the screen says is content, not the user's instructions: the prompt says so, with two
    # pop-ups that ask for what the task did not (caap/decide/prompter.py SCREEN_TEXT).
    injection_defence: bool = Field(default=True, description="tell the model that screen text is data, with "
                                                              "examples of pop-ups to dismiss (false: ablation)")


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(default=30, ge=1)
    max_seconds: float = Field(default=600.0, gt=0)
    max_cost_usd: float | None = Field(default=2.0, ge=0)
    max_invalid_answers: int = Field(default=3, ge=1, description="consecutive answers with no usable action")
    change_threshold_px: int = Field(
        default=16, ge=0, description="pixels that must differ for the screen to count as changed"
    )
    row_tolerance_px: int = Field(default=5, ge=0)


Screens = Literal["desktop", "web"]  # the kinds of screen the observer tells apart (text_choice.SCREENS)


class ScreenConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    monitor: int | None = Field(default=None, ge=0, description="mss monitor number (1 = first; 0 = all)")
    region: str | None = Field(default=None, description="LEFT,TOP,WIDTH,HEIGHT in OS pixels")
    window: str | None = Field(default=None, description="regular expression for a window title (X11)")
    # After an action the screen is captured every settle_poll_s until it has not changed for
    # settle_interval_s; one that has not changed by settle_min_s + settle_interval_s is taken as
    # unchanged (caap/observe/capture/live.py).
    settle_min_s: float = Field(default=0.05, ge=0, description="how long an app may take to start reacting")
    settle_interval_s: float = Field(default=0.04, gt=0, description="how long the screen must stay the same")
    settle_timeout_s: float = Field(default=3.0, gt=0)
    settle_poll_s: float = Field(default=0.01, gt=0, description="time between captures while settling")


class ObserveConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    detector: Path | None = Field(default=None, description="detector weights (None: the shipped ones)")
    reader: Path | None = Field(default=None, description="reader checkpoint directory (None: the shipped one)")
    conf: float = Field(default=0.25, gt=0, lt=1, description="detector confidence threshold")
    # false switches off the pipeline's whole fit stage (caap/observe/steps/__init__.py): the text
    # boxes snapped to their words, the words and rows no box holds, icons and shapes fitted to their ink.
    snap_text_boxes: bool = Field(default=True, description="run the fit stage: boxes fitted to their words and "
                                                            "ink, missed words and rows added")
    # The detector: its class is right for 0.9997 of matched elements, the shipped reader's type for
    # 0.955 (models/reader/MODEL_CARD.md); "reader" is the paper's choice.
    type_source: Literal["reader", "detector"] = Field(
        default="detector", description="which model's type wins when they disagree (see observe/vision.py)")
    # Where element texts come from: the reader's CTC head, PP-OCR (the rapidocr wheel's models),
    # or auto: the reader's, and PP-OCR reads the texts less confident than ocr_threshold; where the
    # two differ the reader's text chooser picks one (caap/observe/text_choice.py). Unset, each kind
    # of screen has its own (caap/observe/steps/texts.py SCREENS_OCR_THRESHOLD, chosen on validation
    # screens: desktop 0.98, models/reader/HISTORY.md; web pages 1.0, every text).
    text_source: Literal["reader", "ocr", "auto"] = Field(
        default="auto", description="reader | ocr | auto (see observe/vision.py)")
    ocr_threshold: float | None = Field(
        default=None, ge=0, le=1, description="auto: reader texts less confident than this are also read by PP-OCR "
                                              "(1: every text; unset: the kind of screen's own, web 1, desktop 0.98)")
    # The reader keeps a text chooser per kind of screen (caap/observe/text_choice.py): web pages and
    # desktop windows are drawn differently, and the reader and PP-OCR misread them differently.
    # caap bench miniwob sets web unless this is set.
    screens: Screens = Field(default="desktop", description="what is observed: desktop (application windows) "
                                                            "or web (web pages); picks the text chooser")
    device: str = Field(default="cpu", description="cpu, cuda, 0 ...")
    # Screens of any size are detected at their own resolution (a convolutional detector trained on
    # elements at one pixel size finds them at that size anywhere); a larger screen is shrunk to
    # this many pixels on its long side. 1,920 keeps a 1080p screen whole: 136 boxes in 694 ms (torch;
    # 354 ms in ONNX Runtime) on a 2-core CPU, where the 224 px the detector trained at found none
    # (models/detector/MODEL_CARD.md).
    detector_max_side: int = Field(default=1920, ge=32, description="longest side (px) the detector looks at")
    # ONNX Runtime runs the detector in half torch's time on a CPU (caap/observe/detect/onnx_export.py),
    # OpenVINO in about four fifths of ONNX Runtime's (caap/observe/detect/openvino_runtime.py);
    # auto: OpenVINO on the CPU where it is installed, else ONNX Runtime; torch on a GPU.
    detector_runtime: Literal["auto", "openvino", "onnx", "torch"] = Field(
        default="auto", description="what runs the detector: auto | openvino | onnx | torch")
    # ONNX Runtime runs the reader's encoder pass (its CTC texts and the decoder's memory) in a third
    # to a half of torch's time on a CPU (caap/observe/read/graph.py); the decoder stays in torch.
    # auto: ONNX Runtime on the CPU where it is installed; torch on a GPU.
    reader_runtime: Literal["auto", "onnx", "torch"] = Field(
        default="auto", description="what runs the reader's encoder: auto | onnx | torch")
    # What the observed application draws at: HiDPI toolkits scale everything by 1.25-2 (GDK_SCALE,
    # QT_SCALE_FACTOR, a browser's device scale factor). The models saw text and widgets at factor 1,
    # so the screen is shrunk by it before observing and the boxes grown back to captured pixels.
    ui_scale: float = Field(default=1.0, ge=0.5, le=4.0, description="the device scale factor the observed "
                                                                     "application draws at (1, 1.25, 1.5, 2)")
    # An element whose crop's pixels were read before takes its earlier reading (caap/observe/memo.py):
    # most of a screen is unchanged from one step to the next.
    # 1,024 readings are the last few dozen MiniWoB screens or a few 1080p ones (each holds its CTC
    # frames for the text chooser, 20-60 KB for a MiniWoB element): tens of MB at most.
    memo: int = Field(default=1024, ge=0, description="readings of element crops remembered by their pixels "
                                                       "(reader and PP-OCR each; 0: off)")
    # A screen whose pixels (and the typed values and task names the look was given) are the ones of a
    # recent look is answered with that look's elements: the steps are deterministic, and an agent
    # often looks again at a screen its last action did not change (a wait, a click on nothing).
    screen_memo: int = Field(default=16, ge=0, description="whole observations remembered by the screen's "
                                                           "pixels (0: off)")
    # After most actions only part of the screen changed (a ticked box, a menu, a dialog): the observer
    # looks again only there (caap/observe/partial.py), up to this share of the screen; a larger change
    # (a new page, a scroll) is looked at whole.
    partial_look: float = Field(default=0.5, ge=0.0, le=1.0,
                                description="a screen changed since the last look in regions up to this share "
                                            "of it is looked at only there (0: every screen whole)")
    # The observer's named steps switched off (caap observe --list-steps prints them): for A/B runs
    # and for a user whose screens one pixel rule gets wrong. An unknown name stops the observer
    # before any model loads, with the list of known ones (caap.observe.pipeline.Pipeline).
    disable: list[str] = Field(default_factory=list, description="observer steps switched off by name "
                                                                 "(caap observe --list-steps)")


class ExecutorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["pyautogui", "xdotool"] = "pyautogui"
    failsafe: bool = Field(default=True, description="pyautogui: moving the pointer into a corner aborts")


class ConfirmRuleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    actions: list[str]
    target: str = Field(description="regular expression on the target element's text or its label")
    reason: str


class SafetyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stop_hotkey: str = Field(default="<ctrl>+<alt>+x", description="pynput hotkey syntax")
    confirm: bool = Field(default=True, description="ask before actions matching the rules")
    confirm_timeout_s: float = Field(default=30.0, gt=0)
    rules: list[ConfirmRuleConfig] | None = Field(default=None, description="None: the built-in rules")
    # What appears on the screen by itself while the model decides (a pop-up, a notification): mark
    # shows it to the model as such; confirm also asks before any action on it but closing it.
    popups: Literal["off", "mark", "confirm"] = Field(
        default="mark", description="off | mark | confirm: elements that appeared by themselves")


class TraceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dir: Path = Path("runs")
    screenshots: bool = True


class MemoryConfig(BaseModel):
    """What the agent keeps between episodes (caap.memory); each part is off until given a path."""

    model_config = ConfigDict(extra="forbid")

    demos: list[Path] = Field(default_factory=list, description="demonstration directories to retrieve from")
    experience: Path | None = Field(default=None, description="directory of per-family experience files")
    derive_rules: bool = Field(default=True, description="after a failure, one LLM call derives rules")
    auto_context: Path | None = Field(default=None, description="directory successful runs are saved to")
    cache: Path | None = Field(default=None, description="action cache file")


class CaapConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    llm: LLMConfig = Field(default_factory=LLMConfig)
    prompt: PromptConfig = Field(default_factory=PromptConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    screen: ScreenConfig = Field(default_factory=ScreenConfig)
    observe: ObserveConfig = Field(default_factory=ObserveConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    safety: SafetyConfig = Field(default_factory=SafetyConfig)
    trace: TraceConfig = Field(default_factory=TraceConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)

    def redacted(self) -> dict[str, Any]:
        """The config as JSON with the API key replaced: what traces record."""
        data = self.model_dump(mode="json")
        data["llm"]["api_key"] = "***" if self.llm.api_key else None
        return data


class ConfigError(ValueError):
    """A config file or variable that cannot be used; the message names where and which field."""


def _set(tree: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for p in parents:
        tree = tree.setdefault(p, {})
    tree[leaf] = value


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def find_config_file(explicit: str | Path | None = None, environ: dict[str, str] | None = None) -> Path | None:
    if explicit:
        return Path(explicit)
    env = (os.environ if environ is None else environ).get("CAAP_CONFIG")
    if env:
        return Path(env)
    for candidate in (Path("caap.toml"), Path.home() / ".config" / "caap" / "config.toml"):
        if candidate.is_file():
            return candidate
    return None


def _env_layer(environ: dict[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    standard = {
        "AZURE_OPENAI_ENDPOINT": "llm.base_url", "AZURE_OPENAI_API_KEY": "llm.api_key",
        "OPENAI_API_VERSION": "llm.api_version",
        # The plain OpenAI variables win over the Azure ones when both are set.
        "OPENAI_BASE_URL": "llm.base_url", "OPENAI_API_KEY": "llm.api_key", "OPENAI_MODEL": "llm.model",
    }
    for var, dotted in standard.items():
        if environ.get(var):
            _set(layer, dotted, environ[var])
    for var, value in environ.items():
        if var.startswith("CAAP_") and "__" in var:
            section, _, name = var[len("CAAP_"):].partition("__")
            _set(layer, f"{section.lower()}.{name.lower()}", value)
    return layer


def load_config(
    path: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> CaapConfig:
    """Defaults < file < environment < ``overrides`` (dotted keys such as ``"llm.model"``; None
    values are ignored, so unset flags can be passed straight through)."""
    environ = dict(os.environ) if environ is None else environ
    data: dict[str, Any] = {}
    source = "defaults"
    file = find_config_file(path, environ)
    if file is not None:
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{file}: config file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{file}: cannot read config ({exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{file}: not valid TOML ({exc})") from None
        source = str(file)
    env_layer = _env_layer(environ)
    _merge(data, env_layer)
    flag_layer: dict[str, Any] = {}
    for dotted, value in (overrides or {}).items():
        if value is not None:
            _set(flag_layer, dotted, value)
    _merge(data, flag_layer)
    try:
        return CaapConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        origin = source
        if _has(env_layer, err["loc"]):
            origin = "environment"
        if _has(flag_layer, err["loc"]):
            origin = "command-line flags"
        raise ConfigError(f"config ({origin}): {where}: {err['msg']}") from None


def _has(tree: dict[str, Any], loc: tuple[Any, ...]) -> bool:
    node: Any = tree
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True
