#!/usr/bin/env bash
# Set up caap in ./.venv (created if missing) and install it editable with the given extras.
#   bash tools/setup.sh                   # the agent (core)
#   bash tools/setup.sh --dev             # plus test and lint tools
#   bash tools/setup.sh screen bench      # plus any extra named in pyproject.toml
#   bash tools/setup.sh --system ...      # also install the Debian packages caap drives (needs root + apt)
#   bash tools/setup.sh --system desktop  # plus the desktop apps and accessibility bus of `caap dataset desktop`
#   bash tools/setup.sh annotation        # plus the Label Studio SDK, and the server in .venv-labelstudio
set -euo pipefail
cd "$(dirname "$0")/.."

# What the live screen, the virtual display and the MiniWoB++ benchmark need from the system.
SYSTEM_PACKAGES=(xvfb xdotool chromium fonts-liberation fonts-dejavu-core fonts-droid-fallback tesseract-ocr)
# With the `desktop` extra: the applications `caap dataset desktop` labels (GTK 3/4 examples, zenity,
# Qt 5 examples, Tk's demos), the accessibility bus and the system Python's pyatspi that reads their
# widgets, and tkinter for the Tk demo.
DESKTOP_PACKAGES=(python3-pyatspi at-spi2-core dbus-x11 gir1.2-gtk-3.0 gir1.2-gtk-4.0 python3-pyqt5 gtk-3-examples gtk-4-examples zenity galculator qtbase5-examples
                  tk8.6-doc python3-tk)

extras=()
system=0
for arg in "$@"; do
  case "$arg" in
    --dev) extras+=(dev) ;;
    --system) system=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    -*) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
    *) extras+=("$arg") ;;
  esac
done

if ((system)); then
  wanted=("${SYSTEM_PACKAGES[@]}")
  for extra in "${extras[@]}"; do
    if [ "$extra" = desktop ]; then wanted+=("${DESKTOP_PACKAGES[@]}"); fi
  done
  missing=()
  for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    if ! command -v apt-get >/dev/null; then
      echo "setup.sh: --system needs apt-get (Debian/Ubuntu); install yourself: ${missing[*]}" >&2
      exit 1
    fi
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup.sh: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

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
for extra in "${extras[@]}"; do
  if [ "$extra" = gpu ]; then
    # onnxruntime-gpu and onnxruntime install the same module; the CPU build, if pulled in by the
    # vision extra, would shadow the CUDA one. Reinstalled over its files, the CUDA build stands alone.
    .venv/bin/python -m pip uninstall -q -y onnxruntime >/dev/null 2>&1 || true
    .venv/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps onnxruntime-gpu \
      >>.venv/pip-install.log 2>&1 || { echo "setup.sh: onnxruntime-gpu failed to install" >&2; exit 1; }
  fi
done
# Label Studio's server (for annotation) lives in a virtualenv of its own: its pins clash with caap's.
for extra in "${extras[@]}"; do
  if [ "$extra" = annotation ]; then
    # Only the server tool and its tests need it: a failed install is reported, not fatal.
    .venv/bin/python tools/labelstudio_server.py --install ||
      echo "setup.sh: Label Studio's server was not installed (above); run tools/labelstudio_server.py --install again" >&2
  fi
done
