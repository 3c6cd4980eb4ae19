"""The release check (`just dist-check`): the built wheel installs into a fresh venv with pip, and
the installed `agent-history` answers `--version` and indexes the shared corpus on its own
embedded server (scratch data dir), finding every transcript with no load error.

Usage: python .ci/check_wheel.py [DIST_DIR]   (default dist/; run `just dist` first)
Exit 0 when every check holds; otherwise one line saying which failed, exit 1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "home"


def run(args: list[str], env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


def check(ok: bool, what: str, detail: str = "") -> None:
    if not ok:
        sys.exit(f"dist-check: {what}" + (f": {detail.strip().splitlines()[-1]}" if detail.strip() else ""))


def main() -> None:
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "dist")
    wheels = sorted(dist.glob("agent_history_catalogue-*.whl"))
    check(len(wheels) == 1, f"expected one agent_history_catalogue wheel in {dist}, found {len(wheels)}")
    check(CORPUS.is_dir(), f"{CORPUS} is absent")
    version = wheels[0].name.split("-")[1]
    scratch = Path(tempfile.mkdtemp(prefix="ah-dist-check-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HISTORY_", "VIRTUAL_ENV", "XDG_"))}
    env.update(
        AGENT_HISTORY_DATA_DIR=str(scratch / "data"),
        AGENT_HISTORY_CONFIG=str(scratch / "config.toml"),
        HOME=str(scratch / "home"),
    )
    (scratch / "home").mkdir()
    (scratch / "config.toml").touch()
    bin_dir = scratch / "venv" / "bin"
    try:
        venv.create(scratch / "venv", with_pip=True)
        pip = run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheels[0])], env)
        check(pip.returncode == 0, "pip install of the wheel failed", pip.stderr)
        exe = str(bin_dir / "agent-history")
        out = run([exe, "--version"], env)
        check(
            out.returncode == 0 and out.stdout.strip() == f"agent-history {version}",
            "--version",
            out.stdout + out.stderr,
        )
        out = run([exe, "index", "--home", str(CORPUS), "--json"], env)
        check(out.returncode == 0, "index of the shared corpus failed", out.stderr)
        summary = json.loads(out.stdout)
        transcripts = len(list(CORPUS.rglob("*.jsonl")))
        check(
            summary["files_scanned"] == summary["files_changed"] == transcripts and summary["files_failed"] == 0,
            f"index found {summary['files_scanned']} files ({summary['files_failed']} failed), expected {transcripts}",
        )
        check(summary["issues"].get("load_error", 0) == 0, f"load errors: {summary['issues']}")
        out = run([exe, "status", "--json"], env)
        check(out.returncode == 0, "status failed", out.stderr)
        namespaces = json.loads(out.stdout)["namespaces"]
        sessions = sum(n["sessions"] for n in namespaces.values())
        messages = sum(n["messages"] for n in namespaces.values())
        check(sessions > 0 and messages > 0, f"status shows {sessions} sessions, {messages} messages")
        print(
            f"dist-check: {wheels[0].name} installs; --version {version}; indexed {transcripts} transcripts: "
            f"{sessions} sessions, {messages} messages in {len(namespaces)} namespaces"
        )
    finally:
        if (bin_dir / "agent-history").exists():
            run([str(bin_dir / "agent-history"), "db", "stop"], env, timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
