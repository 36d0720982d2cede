"""The file operations of the compile cache: private directories, checked
reads, atomic durable writes.

A private cache is trusted only as far as nobody else can write it: every
directory and file read from it must be owned by this user and not
writable by group or others (:func:`check_owned`), else
:class:`~onnx_mlir_py.errors.UnsafeCacheError`. What it writes is made so
whatever the umask: directories 0700, files 0600 (libraries 0700), each
file written to a temp file in its directory, fsync'd, renamed into place,
and the directory fsync'd (:func:`write_atomic`), so a crash or power loss
leaves the old entry or the new one, never a part.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from onnx_mlir_py.errors import UnsafeCacheError

DIR_MODE, FILE_MODE, LIBRARY_MODE = 0o700, 0o600, 0o700
_CHUNK = 1 << 20


def check_owned(path: Path, st: os.stat_result, *, is_dir: bool) -> None:
    """UnsafeCacheError unless ``path`` (stat ``st``) is a directory / regular
    file owned by this user that group and others cannot write."""
    kind = "directory" if is_dir else "file"
    if is_dir and not stat.S_ISDIR(st.st_mode) or not is_dir and not stat.S_ISREG(st.st_mode):
        problem = f"is not a {'directory' if is_dir else 'regular file'}"
    elif st.st_uid != os.geteuid():
        problem = f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    elif st.st_mode & 0o022:
        who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002))
                           if st.st_mode & bit)
        problem = f"is writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    else:
        return
    raise UnsafeCacheError(f"compile cache {kind} {path} {problem}: not loaded (another user "
                           f"could have planted code there; fix it with chmod go-w / chown, "
                           f"use another cache directory, or see 'shared cache' in "
                           f"docs/design.md)")


def check_dir(path: Path) -> bool:
    """False when ``path`` does not exist; UnsafeCacheError when it is not a
    private directory (symlinks to one are followed)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    check_owned(path, st, is_dir=True)
    return True


def private_dir(path: Path) -> Path:
    """``path`` as a private directory: created 0700 (its missing parents
    with the umask, as ``mkdir -p``), checked when it exists."""
    if not check_dir(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, DIR_MODE)
            os.chmod(path, DIR_MODE)        # the umask may have taken owner bits
        except FileExistsError:             # made by another process meanwhile
            pass
        check_dir(path)
    return path


def open_checked(path: Path, *, trusted: bool = False) -> int | None:
    """A read-only descriptor of the regular file ``path`` (not followed if a
    symlink), checked unless ``trusted``; None when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == getattr(os, "ELOOP", 40) and not trusted:
            raise UnsafeCacheError(f"compile cache file {path} is a symbolic link: "
                                   "not loaded") from None
        raise
    if not trusted:
        try:
            check_owned(path, os.fstat(fd), is_dir=False)
        except BaseException:
            os.close(fd)
            raise
    return fd


def read_checked(path: Path, *, trusted: bool = False) -> bytes | None:
    """The bytes of ``path`` (see :func:`open_checked`); None when absent."""
    fd = open_checked(path, trusted=trusted)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def hash_fd(fd: int, out=None) -> tuple[int, str, bytes]:
    """(size, sha256 hex, first 4 bytes) of the file open at ``fd``, read from
    its start; the bytes are also written to ``out`` (a binary file) if given."""
    h, size, head = hashlib.sha256(), 0, b""
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            break
        if size < 4:
            head = (head + chunk)[:4]
        h.update(chunk)
        size += len(chunk)
        if out is not None:
            out.write(chunk)
    return size, h.hexdigest(), head


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int = FILE_MODE, durable: bool = True) -> None:
    """Write ``data`` to ``path`` as one step (temp file in its directory,
    fsync, rename, fsync of the directory). ``durable=False`` leaves out the
    fsyncs (still one step for the readers): for entries checked against
    their sha256 on every load, where a power loss costs a recompile only
    (the kernel cache's objects: two fsyncs per kernel were 2.6 s of a
    ResNet-18 compile on a loaded disk)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)


def unlink_quiet(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# -- code kept beside its sha256 (the runtime's objects, the tool launcher) --------

def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def elf_verified(path: Path) -> bool:
    """``path`` is an ELF file (checked as :func:`read_checked` does) whose
    sha256 is the one recorded beside it (``<path>.sha256``)."""
    return read_verified(path)[0] is not None


def read_verified(path: Path, magic: bytes = b"\x7fELF") -> tuple[bytes | None, str | None]:
    """(the bytes of ``path``, None) when it is an ELF file (another format:
    ``magic``, its first bytes; checked as :func:`read_checked` does:
    UnsafeCacheError) whose sha256 is the one recorded beside it; (None,
    None) when it or its record is absent (not written yet, or being
    written: the record comes last); (None, why) when it does not match."""
    digest = read_checked(_digest_path(path))
    data = read_checked(path) if digest is not None else None
    if data is None:
        return None, None
    if data[:len(magic)] != magic:
        return None, "it is not an ELF file" if magic == b"\x7fELF" else "not its format"
    if hashlib.sha256(data).hexdigest().encode() != digest.strip():
        return None, (f"it has {len(data)} bytes and its content hash differs from the "
                      f"recorded one (truncated or corrupt)")
    return data, None


def store_verified(path: Path, data: bytes, mode: int = FILE_MODE, durable: bool = True) -> None:
    """Write ``data`` to ``path`` and its sha256 beside it, each atomically
    (what :func:`elf_verified` checks; ``durable``: see :func:`write_atomic`)."""
    write_atomic(path, data, mode, durable)
    write_atomic(_digest_path(path), hashlib.sha256(data).hexdigest().encode(), durable=durable)


def unlink_verified(path: Path) -> None:
    """Remove ``path`` and its recorded sha256, if there."""
    for p in (path, _digest_path(path)):
        unlink_quiet(p)
