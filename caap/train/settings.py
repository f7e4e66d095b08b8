"""Training settings: a YAML recipe (``training/*.yaml``) with flags laid over it, validated by a
pydantic model, so a misspelt key or a value of the wrong kind is one error naming the file and the
field before anything trains. The detector's and the reader's trainers read their recipes here."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

S = TypeVar("S", bound=BaseModel)


def validation_message(exc: ValidationError, source: str) -> str:
    """The first problem of a validation error, naming ``source`` and the field."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{source}: {where + ': ' if where else ''}{err['msg']} (got {err.get('input')!r})"


def load_settings(model: type[S], path: str | Path, overrides: dict[str, Any] | None,
                  error: type[Exception]) -> S:
    """The recipe at ``path`` with the non-None ``overrides`` applied, validated as ``model``; any
    problem is one ``error`` naming the file (and the field)."""
    import yaml

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise error(f"{path}: training config not found") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise error(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise error(f"{path}: expected a mapping of settings")
    raw.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise error(validation_message(exc, str(path))) from None
