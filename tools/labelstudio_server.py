"""Run a local Label Studio for correcting the labels of a caap dataset.

    .venv/bin/python tools/labelstudio_server.py DATASET [--tasks tasks.json] [--port 8080]
    .venv/bin/python tools/labelstudio_server.py DATASET --images-only [--port 8081]
    .venv/bin/python tools/labelstudio_server.py --install


Installs Label Studio into its own virtualenv ``.venv-labelstudio`` when it is missing (its many
pins clash with caap's, so it never goes into ``.venv``), then starts it on 127.0.0.1 serving the
images of DATASET as local files (``LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT=DATASET``), with
Sentry, analytics and the version check off. With ``--tasks`` (written by ``caap dataset
export-labelstudio``) it also creates a project with caap's labeling config, connects the
dataset's images as local-files storage and imports the tasks. Stop it with Ctrl-C.

With ``--images-only`` it runs no Label Studio but serves DATASET's files over HTTP with the CORS
header Label Studio needs (``python -m http.server`` lacks it, and the browser then refuses the
images), for tasks exported with ``--image-root-url http://127.0.0.1:PORT``.

With ``--install`` it only installs Label Studio into its virtualenv (``tools/setup.sh annotation``
does this, so the first server start does not wait for pip).

The tests import the helpers below (``ensure_installed``, ``start_server``, ``stop_server``).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("CAAP_LABEL_STUDIO_VENV", REPO / ".venv-labelstudio"))
# The version the round trip was checked against; override to try another.
LABEL_STUDIO_SPEC = os.environ.get("CAAP_LABEL_STUDIO_SPEC", "label-studio==1.23.2")


class LabelStudioError(RuntimeError):
    """Label Studio could not be installed or started; the message says why."""


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def installed_version(venv: Path = VENV) -> str | None:
    """The label-studio version in the venv, or None when it is not (completely) installed."""
    python, exe = _bin(venv, "python"), _bin(venv, "label-studio")
    if not (python.exists() and exe.exists()):
        return None
    probe = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('label-studio'))"],
                           capture_output=True, text=True, timeout=60)
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure_installed(venv: Path = VENV, spec: str = LABEL_STUDIO_SPEC) -> float:
    """Create the venv and pip-install Label Studio unless it is there; return the seconds spent.

    A lock file keeps two concurrent callers from installing into the same venv at once; an
    interrupted install is repaired by running pip again, never by deleting the venv."""
    if installed_version(venv):
        return 0.0
    start = time.monotonic()
    venv.mkdir(parents=True, exist_ok=True)  # (venv accepts an existing directory)
    with open(venv / ".caap-install.lock", "w") as lock:  # inside the venv: gitignored with it
        with contextlib.suppress(ImportError):
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_version(venv):  # installed by whoever held the lock
            return time.monotonic() - start
        steps = []
        if not _bin(venv, "python").exists():
            steps.append([sys.executable, "-m", "venv", str(venv)])
        steps.append([str(_bin(venv, "python")), "-m", "pip", "install", "--disable-pip-version-check", "-q", spec])
        for cmd in steps:
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise LabelStudioError(f"`{' '.join(cmd)}` failed: {exc}") from None
            if done.returncode != 0:
                tail = (done.stdout + done.stderr).strip()[-3000:]
                raise LabelStudioError(f"`{' '.join(cmd)}` exited with {done.returncode}:\n{tail}")
    version = installed_version(venv)
    if not version:
        raise LabelStudioError(f"pip reported success but {_bin(venv, 'label-studio')} does not work")
    return time.monotonic() - start


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def server_env(document_root: Path, token: str) -> dict[str, str]:
    env = dict(os.environ)
    for var in [v for v in env if v.startswith("LABEL_STUDIO_")]:
        del env[var]  # nothing of a developer's own Label Studio setup leaks in
    env.update({
        "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
        "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(document_root.resolve()),
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        "LABEL_STUDIO_USER_TOKEN": token,
        # Nothing that reaches the internet: error reporting, analytics, the PyPI version check.
        "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": "", "COLLECT_ANALYTICS": "false", "LATEST_VERSION_CHECK": "false",
        "FEATURE_FLAGS_OFFLINE": "true",
        "SECRET_KEY": secrets.token_hex(32),
        "PYTHONUNBUFFERED": "1",
    })
    return env


class Server:
    """A running Label Studio: its URL, the API token, the process (own process group) and log."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str, token: str, username: str, password: str,
                 log_path: Path) -> None:
        self.proc, self.url, self.token = proc, url, token
        self.username, self.password, self.log_path = username, password, log_path

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def api(self, method: str, path: str, body: Any = None) -> Any:
        """A JSON request to the REST API with the token (for the CLI helper; tests use the SDK)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Token {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raise LabelStudioError(f"{method} {path}: HTTP {exc.code}: {exc.read()[:2000]!r}") from None
        return json.loads(raw) if raw else None


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has Linux send the child SIGTERM when this process dies, so a killed
    test run or helper leaves no server behind (the child is in its own session, out of reach of
    the terminal's Ctrl-C)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return None
    parent = os.getpid()

    def preexec() -> None:
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return preexec


def start_server(document_root: Path, data_dir: Path, *, port: int | None = None, venv: Path = VENV,
                 username: str = "caap@localhost", password: str | None = None, token: str | None = None,
                 timeout: float = 300.0) -> Server:
    """Start Label Studio and wait until /health answers; raise LabelStudioError (with the log's
    tail) if it exits or does not come up in ``timeout`` seconds."""
    port = port or free_port()
    if port_in_use(port):
        # Else /health would be answered by whatever holds the port, not by our server.
        raise LabelStudioError(f"port {port} on 127.0.0.1 is already in use")
    token = token or secrets.token_hex(20)
    password = password or secrets.token_urlsafe(12)
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "label-studio.log"
    cmd = [str(_bin(venv, "label-studio")), "start", "--no-browser", "--internal-host", "127.0.0.1",
           "--port", str(port), "--data-dir", str(data_dir),
           # OPTION=VALUE: a value that starts with "-" (a random password may) is still the option's value
           f"--username={username}", f"--password={password}", f"--user-token={token}", "--enable-legacy-api-token"]
    with open(log_path, "wb") as log_file:
        # Own session (process group): stopping it takes the whole server tree down.
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=server_env(document_root, token), cwd=data_dir, start_new_session=True,
                                preexec_fn=_die_with_parent())
    server = Server(proc, f"http://127.0.0.1:{port}", token, username, password, log_path)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise LabelStudioError(f"label-studio exited with {proc.returncode} while starting:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=5) as resp:
                if resp.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            stop_server(server)
            raise LabelStudioError(f"label-studio did not answer /health within {timeout:.0f}s:\n{server.log_tail()}")
        time.sleep(0.5)


def stop_server(server: Server, grace: float = 10.0) -> None:
    """SIGTERM the server's process group, SIGKILL it after ``grace`` seconds."""
    if server.proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.proc.pid, signal.SIGTERM)
    try:
        server.proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait(grace)


def setup_project(server: Server, dataset: Path, tasks_path: Path, title: str) -> int:
    """Create a project with caap's labeling config, connect DATASET/images as local-files source
    storage (so Label Studio may serve them) and import the tasks; return the project id."""
    from caap.data.labelstudio import labeling_config

    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    title = title[:50].ljust(3, "_")  # Label Studio wants 3 to 50 characters
    project = server.api("POST", "/api/projects", {"title": title, "label_config": labeling_config()})
    server.api("POST", "/api/storages/localfiles", {
        "project": project["id"], "title": "caap images", "path": str((dataset / "images").resolve()),
        "use_blob_urls": False})
    server.api("POST", f"/api/projects/{project['id']}/import", tasks)
    return int(project["id"])


class _CORSFiles(SimpleHTTPRequestHandler):
    # Label Studio fetches task images with XHR from its own origin: without this header the
    # browser refuses every image served from another port.
    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()


def serve_images(dataset: Path, port: int) -> None:
    """Serve DATASET's files read-only over HTTP on 127.0.0.1 with CORS, for tasks exported with
    ``--image-root-url http://127.0.0.1:PORT`` (Label Studio then needs no local-files setup)."""
    handler = functools.partial(_CORSFiles, directory=str(dataset))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"serving {dataset} at http://127.0.0.1:{port}/ (export with --image-root-url "
              f"http://127.0.0.1:{port}); Ctrl-C to stop")
        with contextlib.suppress(KeyboardInterrupt):
            httpd.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, nargs="?", help="the caap dataset directory whose images Label Studio "
                        "serves")
    parser.add_argument("--install", action="store_true", help=f"only install {LABEL_STUDIO_SPEC} into {VENV} "
                        "(nothing to do when it is there) and exit")
    parser.add_argument("--tasks", type=Path, help="tasks JSON from `caap dataset export-labelstudio` to import")
    parser.add_argument("--port", type=int, default=None, help="default 8080 (8081 with --images-only)")
    parser.add_argument("--images-only", action="store_true",
                        help="do not run Label Studio: only serve DATASET's images with CORS headers, for tasks "
                        "exported with --image-root-url http://127.0.0.1:PORT")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="Label Studio's database and media (default: DATASET/../.labelstudio-<name>)")
    parser.add_argument("--username", default="caap@localhost")
    parser.add_argument("--password", default=None, help="default: a random one, printed (both are kept in the "
                        "data directory and reused)")
    args = parser.parse_args(argv)
    if args.install:
        try:
            spent = ensure_installed()
        except LabelStudioError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"installed {LABEL_STUDIO_SPEC} into {VENV} in {spent:.0f}s" if spent
              else f"{LABEL_STUDIO_SPEC} is installed in {VENV}")
        return 0
    if args.dataset is None:
        parser.error("DATASET is required (unless --install)")
    dataset = args.dataset.resolve()
    if not (dataset / "dataset.json").is_file():
        parser.error(f"{dataset}: not a caap dataset (no dataset.json)")
    if args.images_only:
        serve_images(dataset, args.port or 8081)
        return 0
    data_dir = (args.data_dir or dataset.parent / f".labelstudio-{dataset.name}").resolve()
    # Label Studio sets user, password and token only when it creates the user: keep them with
    # the data directory so a restart prints the ones that work.
    creds_path = data_dir / "caap-credentials.json"
    creds = json.loads(creds_path.read_text()) if creds_path.is_file() else {
        "username": args.username, "password": args.password or secrets.token_urlsafe(12),
        "token": secrets.token_hex(20)}
    data_dir.mkdir(parents=True, exist_ok=True)
    creds_path.write_text(json.dumps(creds))
    creds_path.chmod(0o600)
    try:
        spent = ensure_installed()
        if spent:
            print(f"installed {LABEL_STUDIO_SPEC} into {VENV} in {spent:.0f}s")
        print(f"starting Label Studio (data in {data_dir}) ...")
        server = start_server(dataset, data_dir, port=args.port or 8080, username=creds["username"],
                              password=creds["password"], token=creds["token"])
    except LabelStudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    def _stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # SIGTERM/SIGHUP: stop the server too, as for Ctrl-C

    signal.signal(signal.SIGTERM, _stop)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, _stop)
    try:
        if args.tasks:
            project = setup_project(server, dataset, args.tasks, f"caap {dataset.name}")
            print(f"project {project}: {server.url}/projects/{project}/data")
        print(f"Label Studio at {server.url}  user {server.username}  password {server.password}  "
              f"API token {server.token}\nCtrl-C to stop.")
        while server.proc.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    except LabelStudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        stop_server(server)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
