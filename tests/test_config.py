import pytest

from caap.config import ConfigError, load_config


def test_defaults_file_env_flags_precedence(tmp_path):
    path = tmp_path / "caap.toml"
    path.write_text('[llm]\nmodel = "from-file"\nmode = "text"\n[agent]\nmax_steps = 7\n'
                    '[llm.prices."my-model"]\ninput = 1.0\noutput = 2.0\n')
    cfg = load_config(path, environ={})
    assert (cfg.llm.model, cfg.llm.mode, cfg.agent.max_steps) == ("from-file", "text", 7)
    assert cfg.llm.prices["my-model"].output == 2.0 and "gpt-4o" in cfg.llm.prices  # defaults kept
    assert cfg.llm.temperature == 0.0

    env = {"OPENAI_MODEL": "from-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "CAAP_AGENT__MAX_STEPS": "9"}
    cfg = load_config(path, environ=env)
    assert (cfg.llm.model, cfg.llm.base_url, cfg.agent.max_steps) == ("from-env", "http://127.0.0.1:9/v1", 9)

    cfg = load_config(path, {"llm.model": "from-flag", "agent.max_steps": None}, environ=env)
    assert cfg.llm.model == "from-flag" and cfg.agent.max_steps == 9


def test_config_file_found_in_working_directory_and_via_env(tmp_path, monkeypatch):
    (tmp_path / "caap.toml").write_text('[llm]\nmodel = "cwd"\n')
    assert load_config(environ={}).llm.model == "cwd"
    other = tmp_path / "other.toml"
    other.write_text('[llm]\nmodel = "env-file"\n')
    assert load_config(environ={"CAAP_CONFIG": str(other)}).llm.model == "env-file"


@pytest.mark.parametrize(
    ("content", "env", "message"),
    [
        ("[llm\nmodel=1", {}, "not valid TOML"),
        ('[llm]\nmodl = "x"\n', {}, r"caap.toml\): llm.modl: Extra inputs"),
        ('[agent]\nmax_steps = 0\n', {}, "agent.max_steps"),
        ("", {"CAAP_LLM__MODE": "telepathy"}, r"\(environment\): llm.mode"),
    ],
)
def test_bad_config_names_source_and_field(tmp_path, content, env, message):
    path = tmp_path / "caap.toml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        load_config(path, environ=env)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "none.toml", environ={})


def test_api_key_is_secret_and_redacted():
    cfg = load_config(environ={"OPENAI_API_KEY": "sk-very-secret"})
    assert cfg.llm.api_key.get_secret_value() == "sk-very-secret"
    assert "sk-very-secret" not in repr(cfg) and "sk-very-secret" not in str(cfg.redacted())
    assert cfg.redacted()["llm"]["api_key"] == "***"
