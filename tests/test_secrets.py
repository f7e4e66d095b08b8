"""Secrets (caap.act.secrets): given as --secret NAME=VALUE, named {NAME} in the task and by the
model, typed by the executor alone, and found in no file a run writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from tk_form_kit import run_on_tk_form
from typer.testing import CliRunner

from caap.act.actions import ScreenState, execute, plan
from caap.act.secrets import SecretError, Secrets, masks_itself, placeholders
from caap.agent.trace import TraceWriter
from caap.elements import Element

CITY = "Transylvania-42"  # shown in clear by the form's entry: the observer reads it back


def test_secrets_come_from_flags_and_the_environment_and_never_show_in_their_repr():
    s = Secrets.parse(["PASSWORD=hunter22", "CITY=x=y=z1"], environ={"CAAP_SECRET_PIN": "4711", "HOME": "/root"})
    assert s.names == ("PIN", "PASSWORD", "CITY") and s.values["CITY"] == "x=y=z1"
    assert repr(s) == "Secrets(PIN, PASSWORD, CITY)" and "hunter22" not in repr(s) + str(s)
    # A flag wins over the environment.
    assert Secrets.parse(["PIN=9999"], environ={"CAAP_SECRET_PIN": "4711"}).values["PIN"] == "9999"


@pytest.mark.parametrize(("flags", "env", "message"), [
    (["PASSWORD"], {}, "expected NAME=VALUE"),
    (["password=hunter22"], {}, "upper-case letters"),
    (["1PW=hunter22"], {}, "upper-case letters"),
    (["PW=abc"], {}, "fewer than 4 characters"),
    ([], {"CAAP_SECRET_lower": "hunter22"}, "environment variable CAAP_SECRET_lower"),
])
def test_malformed_secrets_get_one_clear_error(flags, env, message):
    with pytest.raises(SecretError, match=message):
        Secrets.parse(flags, environ=env)


def test_a_task_naming_a_secret_the_run_was_not_given_stops_before_anything_runs():
    s = Secrets.parse(["PASSWORD=hunter22"], environ={})
    s.check('Log in as "ada" with password {PASSWORD}.')
    s.check("Braces that name no secret: {x}, {Name}, {}.")
    assert placeholders("{PIN} then {PASSWORD} and {PIN}") == ["PIN", "PASSWORD"]
    with pytest.raises(SecretError, match=r"needs \{PIN\}.*--secret PIN=VALUE.*CAAP_SECRET_PIN"):
        s.check("Type {PASSWORD} and then {PIN}.")


def test_fill_redact_and_readings_a_character_or_two_off():
    s = Secrets.parse(["CITY=Transylvania-42", 'QUOTE=say "hi" \\ now'], environ={})
    assert s.fill("type {CITY}, {OTHER} and {x}") == "type Transylvania-42, {OTHER} and {x}"
    assert s.redact("City: Transylvania-42.") == "City: {CITY}."
    assert s.redact(json.dumps({"t": 'say "hi" \\ now'})) == '{"t": "{QUOTE}"}'  # escaped inside JSON
    assert s.redact_reading("City Transylvan1a-4Z here") == "City {CITY} here"
    assert s.redact_reading("Paris 42") == "Paris 42"
    assert masks_itself("••••••") and masks_itself("* * *") and not masks_itself("") and not masks_itself("a•")


class Keys:
    def __init__(self):
        self.typed = []

    def type_text(self, text):
        self.typed.append(text)


def test_only_the_executor_gets_the_value_and_the_action_keeps_its_placeholder():
    s = Secrets.parse(["PASSWORD=hunter22"], environ={})
    field = Element(id=1, type="input_field", bbox=[10, 10, 100, 30], text="")
    action = plan("type_text", {"string_to_type": "{PASSWORD}\n"}, ScreenState([field], 200, 100))
    keys = Keys()
    execute(action, keys, s)  # type: ignore[arg-type]
    assert keys.typed == ["hunter22\n"] and action.args["string_to_type"] == "{PASSWORD}\n"


def test_a_trace_writes_placeholders_and_blacks_out_the_boxes_it_is_given(tmp_path):
    s = Secrets.parse(["PASSWORD=hunter22"], environ={})
    trace = TraceWriter(tmp_path, "log in with {PASSWORD}", hidden=s, secrets=["sk-key-123"])
    trace.start({"note": "hunter22 and sk-key-123"})
    image = Image.new("RGB", (60, 40), "white")
    name = trace.screenshot(1, image, [(10, 10, 30, 20)])
    trace.step({"text": 'typed "hunter22"'})
    trace.finish({"reason": "done hunter22"})
    written = "".join(p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.json*"))
    assert "hunter22" not in written and "sk-key-123" not in written and "{PASSWORD}" in written
    saved = np.asarray(Image.open(trace.dir / name))
    assert (saved[9:20, 9:30] == 0).all() and (saved[25:, :] == 255).all()
    assert (np.asarray(image) == 255).all()  # the frame itself is left as it was


def test_caap_run_refuses_a_task_whose_secret_was_not_given(tmp_path):
    from caap.cli import app

    shot = tmp_path / "screen.png"
    Image.new("RGB", (200, 100), "white").save(shot)
    result = CliRunner().invoke(app, ["run", "Log in with {PASSWORD}", "--screenshot", str(shot), "--dry-run",
                                      "--elements", str(shot), "--base-url", "http://127.0.0.1:9/v1",
                                      "--trace-dir", str(tmp_path / "traces")],
                                env={"CAAP_SECRET_PIN": "4711"})
    assert result.exit_code == 2, result.output
    assert "needs {PASSWORD}" in result.output and "--secret PASSWORD=VALUE" in result.output
    assert not (tmp_path / "traces").exists()


def test_a_secret_shown_in_clear_reaches_the_app_and_no_prompt_or_file(tmp_path: Path, ppocr) -> None:
    """caap run types a secret into a real Tk entry that shows it in clear: the app holds the value,
    the model was never sent it, no file the run wrote holds it (trace, experience, the
    demonstration auto-context saved, the action cache, the regression test), and PP-OCR finds no
    trace of it in the screenshots kept."""
    traces, kept = tmp_path / "traces", tmp_path / "kept"
    task = 'Fill in the form: Name "Ada Lovelace", City "{CITY}"; tick "Subscribe"; then press "Save".'
    run, saved, planner = run_on_tk_form(
        tmp_path, task, "--trace-dir", str(traces), "--experience", str(kept / "experience"), "--auto-context",
        str(kept / "demos"), "--cache", str(kept / "cache.json"), "--save-test", str(kept / "test.json"),
        env={"CAAP_SECRET_CITY": CITY})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert saved is not None and saved["city"] == CITY  # the executor typed the value
    sent = json.dumps(planner.requests)
    assert "{CITY}" in sent and CITY not in sent and "Transylvania" not in sent
    assert CITY not in run.stdout + run.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]  # trace, memory, test, demo
    names = {p.name for p in files}
    assert {"steps.jsonl", "summary.json", "test.json", "cache.json"} <= names, names
    assert any(p.suffix == ".png" for p in files) and any(p.parent.name == "demos" for p in files), names
    for path in files:
        assert CITY.encode() not in path.read_bytes(), path
    steps = [json.loads(line) for line in next(traces.rglob("steps.jsonl")).read_text().splitlines()]
    shown = [e for s in steps[1:] for e in s["elements"] if e.get("text") == "{CITY}"]
    assert shown, "the value typed was never read back, so this test proves nothing about redaction"
    for path in sorted(traces.rglob("step_*.png")):
        with Image.open(path) as im:
            image = im.convert("RGB")
        read = ppocr.read(image, [(0, 0, image.width, image.height)], ["text_area"])[0].text
        assert "Transylvania" not in read and "42" not in read, (path.name, read)


def test_a_secret_goes_only_to_the_field_the_task_names_for_it():
    s = Secrets.parse(["PASSWORD=hunter22", "CITY=Transylvania-42"], environ={})
    login = 'Log in with the user name "ada" and the password "{PASSWORD}", then press "OK".'
    assert s.named_for(login, "PASSWORD", "Password:") and s.named_for(login, "PASSWORD", "  Your password")
    assert not s.named_for(login, "PASSWORD", "User name") and not s.named_for(login, "PASSWORD", "Verification code")
    form = 'Fill in the form: Name "Ada Lovelace", City "{CITY}"; then press "Save".'
    assert s.named_for(form, "CITY", "City") and not s.named_for(form, "CITY", "Name")
