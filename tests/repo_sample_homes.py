"""Agent homes built from this repository's ``fixtures/samples/<harness>/`` (real excerpts and
hand-written files, each with its PROVENANCE.md), laid out where each harness writes them — the
directory comes from the harness's registry row for this OS (`places.resolve` with no
environment), so the same layout works on Linux and macOS."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agent_history.harnesses import BY_NAME
from agent_history.harnesses.places import resolve

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples"
CLINE = SAMPLES / "cline"
ROO = SAMPLES / "roo-code"
KILO = SAMPLES / "kilo-code"
CONTINUE = SAMPLES / "continue"
AMP = SAMPLES / "amp"
CHATGPT = SAMPLES / "chatgpt-export"
CLINE_REAL_TASK = "1769053680585"
XML_TASK_ID = "1727000000000"
"""The hand-written XML-era Cline task."""
"""The task id of the real Cline excerpt (its folder name in the source repository)."""
TASK_FILES = ("api_conversation_history.json", "ui_messages.json", "task_metadata.json", "history_item.json")

REPO_SAMPLE_DIRS: dict[str, str] = {
    "cline": "cline",
    "roo-code": "roo-code",
    "kilo-code": "kilo-code",
    "continue": "continue",
    "amp": "amp",
    "chatgpt-export": "chatgpt",
}
"""``fixtures/samples/<dir>`` → the harness whose format it holds."""
NOT_READ = ("cline-cli-sessions", "dev_data")
"""Sample subtrees agent-history does not read: the Cline CLI/SDK session layout (hand-written
only) and Continue's ``dev_data`` (token counts without a session id)."""


def home_of(agent: str, home: Path) -> Path:
    """`agent`'s default home inside the directory `home` laid out like ``~``."""
    return resolve(BY_NAME[agent].home, home=home, env={})


def sample_documents() -> list[tuple[str, Path]]:
    """``(harness, path)`` of every sample document agent-history reads, in a stable order."""
    out = []
    for name, agent in REPO_SAMPLE_DIRS.items():
        for path in sorted((SAMPLES / name).rglob("*.json")):
            if not any(part in NOT_READ for part in path.relative_to(SAMPLES / name).parts):
                out.append((agent, path))
    return out


def task_folders(root: Path) -> list[Path]:
    """The task folders (``tasks/<id>/``) under a sample directory."""
    return sorted(p for p in root.rglob("tasks/*") if p.is_dir())


def _copy_tasks(src_root: Path, dst_home: Path) -> None:
    for folder in task_folders(src_root):
        dst = dst_home / "tasks" / folder.name
        dst.mkdir(parents=True, exist_ok=True)
        for f in folder.iterdir():
            shutil.copyfile(f, dst / f.name)


def cline_layout(home: Path) -> Path:
    """The real excerpt as ``tasks/1769053680585/`` and the hand-written task; → Cline's home."""
    root = home_of("cline", home)
    real = root / "tasks" / CLINE_REAL_TASK
    real.mkdir(parents=True, exist_ok=True)
    for name in TASK_FILES:
        if (CLINE / name).is_file():
            shutil.copyfile(CLINE / name, real / name)
    _copy_tasks(CLINE / "hand-written", root)
    return root


def roo_layout(home: Path) -> Path:
    """Every Roo Code sample task folder; → Roo Code's home."""
    root = home_of("roo-code", home)
    _copy_tasks(ROO, root)
    return root


def kilo_layout(home: Path) -> Path:
    """The hand-written Kilo Code task folder; → Kilo Code's home."""
    root = home_of("kilo-code", home)
    _copy_tasks(KILO, root)
    return root


def continue_layout(home: Path, user: str = "user1") -> Path:
    """One user's Continue sessions and index in ``sessions/``; → Continue's home."""
    root = home_of("continue", home)
    (root / "sessions").mkdir(parents=True, exist_ok=True)
    for f in sorted((CONTINUE / user / "sessions").iterdir()):
        shutil.copyfile(f, root / "sessions" / f.name)
    return root


def amp_layout(home: Path) -> Path:
    """The hand-written Amp threads in ``threads/``; → Amp's home."""
    root = home_of("amp", home)
    (root / "threads").mkdir(parents=True, exist_ok=True)
    for f in sorted(AMP.rglob("T-*.json")):
        shutil.copyfile(f, root / "threads" / f.name)
    return root


def chatgpt_export(root: Path) -> Path:
    """An unzipped ChatGPT export: ``conversations.json`` = the real conversation and the
    hand-written one (one JSON array, as the export writes it); → the folder."""
    root.mkdir(parents=True, exist_ok=True)
    convs = [json.loads((CHATGPT / "001_simple_text.raw.json").read_text())]
    convs += json.loads((CHATGPT / "hand-written" / "conversations.json").read_text())
    (root / "conversations.json").write_text(json.dumps(convs))
    (root / "user.json").write_text(json.dumps({"id": "user-REDACTED", "email": "someone@example.com"}))
    return root


def build_sample_home(home: Path) -> Path:
    """Every harness above in one directory laid out like ``~`` (Continue: user1); → `home`."""
    cline_layout(home)
    roo_layout(home)
    kilo_layout(home)
    continue_layout(home)
    amp_layout(home)
    return home


# -- what `status` must show for these homes, counted from the raw files -----------------------

DISJOINT = {"anthropic", "openrouter"}


def _ui_tokens(info: dict, provider: str | None) -> int | None:
    """Tokens of one ``api_req_started`` payload by the UI token rule (in + cache + out), None
    when it recorded no counts."""
    tin, tout = info.get("tokensIn"), info.get("tokensOut")
    cw, cr = info.get("cacheWrites") or 0, info.get("cacheReads") or 0
    if tin is None and tout is None:
        return None
    protocol = info.get("apiProtocol")
    if protocol == "openai":
        return tin + tout  # tokensIn already holds the cached tokens
    if protocol == "anthropic" or provider in DISJOINT or not (cw or cr):
        return tin + cw + cr + tout
    return cr + tout  # provider unknown with cache tokens: input and writes NULL


def _sum(values) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def task_folder_status(root: Path) -> tuple[dict, int, int, int | None]:
    """(files by status, sessions, model calls, tokens) of a Cline-family home."""
    folders = sorted((root / "tasks").iterdir())
    files = sum(1 for d in folders for f in d.iterdir() if f.name in TASK_FILES)
    calls, toks = 0, []
    for d in folders:
        ui = d / "ui_messages.json"
        for r in json.loads(ui.read_text()) if ui.is_file() else []:
            if r.get("say") == "api_req_started":
                calls += 1
                toks.append(_ui_tokens(json.loads(r["text"]), (r.get("modelInfo") or {}).get("providerId")))
    return {"ok": files}, len(folders), calls, _sum(toks)


def continue_status(root: Path) -> tuple[dict, int, int, None]:
    """(files, sessions — those of the index and of the files —, model calls, tokens: none)."""
    sessions = root / "sessions"
    ids = {e["sessionId"] for e in json.loads((sessions / "sessions.json").read_text())}
    docs = [json.loads(p.read_text()) for p in sessions.glob("*-*.json")]
    ids |= {d["sessionId"] for d in docs}
    calls = sum(1 for d in docs for h in d["history"] if h["message"]["role"] == "assistant")
    return {"ok": len(docs) + 1}, len(ids), calls, None


def amp_status(root: Path) -> tuple[dict, int, int, int | None]:
    """(files, sessions, model calls, tokens) of an Amp home."""
    threads = [json.loads(p.read_text()) for p in (root / "threads").glob("T-*.json")]
    assistants = [m for t in threads for m in t["messages"] if m["role"] == "assistant"]
    toks = [
        sum(m["usage"][k] for k in ("inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens"))
        for m in assistants
        if "usage" in m
    ]
    return {"ok": len(threads)}, len(threads), len(assistants), _sum(toks)


def chatgpt_status(export: Path) -> tuple[dict, int, int, None]:
    """(files, sessions, model calls — visible assistant nodes with text or code —, tokens: none)."""
    convs = json.loads((export / "conversations.json").read_text())
    calls = 0
    for c in convs:
        for n in c["mapping"].values():
            m = n["message"]
            if not m or m["author"]["role"] != "assistant" or m["metadata"].get("is_visually_hidden_from_conversation"):
                continue
            content = m["content"]
            text = "".join(p for p in content.get("parts", []) if isinstance(p, str)) or content.get("text", "")
            if content["content_type"] in ("text", "multimodal_text", "code") and text.strip():
                calls += 1
    return {"ok": 1}, len(convs), calls, None
