#!/usr/bin/env bash
# Set up caap in ./.venv (created if missing) and install it editable with the given extras.
#   bash tools/setup.sh            # the agent (core)
#   bash tools/setup.sh --dev      # plus test and lint tools
#   bash tools/setup.sh vision     # plus any extra named in pyproject.toml
set -euo pipefail
cd "$(dirname "$0")/.."

extras=()
for arg in "$@"; do
  case "$arg" in
    --dev) extras+=(dev) ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    -*) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
    *) extras+=("$arg") ;;
  esac
done

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "setup.sh: caap needs Python >= 3.11 ($PY is $("$PY" --version 2>&1 || echo missing)); set PYTHON=..." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv

spec="."
if ((${#extras[@]})); then
  spec=".[$(IFS=,; echo "${extras[*]}")]"
fi
if ! .venv/bin/python -m pip install -q --disable-pip-version-check -e "$spec" >.venv/pip-install.log 2>&1; then
  cat .venv/pip-install.log >&2
  echo "setup.sh: pip install -e '$spec' failed (log above, kept in .venv/pip-install.log)" >&2
  exit 1
fi
echo "caap installed in .venv ($spec)"
