"""Handing freed heap pages back to the system (glibc's malloc_trim, once mallinfo2 counts enough free; elsewhere
nothing): the run's stages and the lattice search free many small arrays whose pages would otherwise stay resident."""

from __future__ import annotations

import ctypes


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                      "fsmblks", "uordblks", "fordblks", "keepcost")]


def _glibc() -> ctypes.CDLL | None:
    """glibc with malloc_trim and mallinfo2 (2.33 and later), or None."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _glibc()


def trim_freed(free_bytes: int) -> None:
    """glibc's malloc_trim once the heap holds ``free_bytes`` free or more; elsewhere nothing. A process that
    never held ``free_bytes`` resident cannot have freed that many (the heap's free bytes were all in use once,
    but for the top chunk's small pad): mallinfo2, which walks the heap's free lists (0.2 ms after an Adult
    search), is skipped then (ru_maxrss: the peak resident set, in KiB on Linux)."""
    if _LIBC is None:
        return
    import resource  # (POSIX: where glibc is)

    if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 < free_bytes:
        return
    if _LIBC.mallinfo2().fordblks >= free_bytes:
        _LIBC.malloc_trim(0)
