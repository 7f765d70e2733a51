"""The partitions of a cluster run's Parquet table, and a function mapped over them on the workers: one task per
partition, the results collected as they arrive (in partition order, or handed to a merge in batches), released
when read, and every task cancelled on a failure or a cancel. Imported by :mod:`.backend` only (it imports dask)."""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from ...errors import InputError
from . import partitions

MERGE_EVERY = 8  # partition results merged on the driver in batches of this many


def read_partitions(path: str) -> tuple[list[str], list]:
    """The table's columns and its partitions (one per Parquet row group) as delayed frames of text cells."""
    import dask
    import dask.dataframe as dd

    if not os.path.exists(path):
        raise InputError(f"{path}: no such Parquet file or folder")
    with dask.config.set({"dataframe.convert-string": False}):
        try:
            frame = dd.read_parquet(path, split_row_groups=True)
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read it as Parquet ({exc})") from None
    return [str(c) for c in frame.columns], frame.to_delayed()


class PartitionMap:
    """``fn(partition, *args, index, offset)`` on every partition of ``parts`` on ``client``'s workers, the
    progress told to ``report(fraction, phase)`` (which raises to cancel). ``offsets``: each partition's first
    row in the table, once the scan has counted them (zeros before)."""

    def __init__(self, client, parts: list, report: Callable[[float, str], None]):
        self.client = client
        self.parts = parts
        self.report = report
        self.offsets = np.zeros(len(parts), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.parts)

    def __call__(self, fn: Callable, *args: Any, merge: Callable[[list], None] | None = None,
                 phase: str = "", share: tuple[float, float] = (0.0, 1.0), keep: list | None = None) -> list:
        """The results in partition order (or, with ``merge``, handed to it in batches of (index, result) as they
        arrive and not kept). With ``keep``, the futures are appended to it in partition order and not released:
        their results stay on the workers."""
        futures = self._submit(fn, args)
        if keep is not None:
            keep.extend(futures)
        try:
            done, batch = self._collect(futures, merge, phase, share, keep is None)
        except BaseException:
            self._abort(futures, keep)
            raise
        if merge is not None and batch:
            merge(batch)
        return [done[i] for i in range(len(futures))] if merge is None else []

    def _submit(self, fn: Callable, args: tuple) -> list:
        """One task per partition: ``fn(partition, *args, index, offset)``, the large arguments scattered once."""
        import dask

        # an empty list goes as it is: distributed's scatter refuses one (a table without sensitive columns)
        shared = [self.client.scatter(a, broadcast=True, hash=False)
                  if isinstance(a, partitions.Recipe) or (isinstance(a, list) and a) else a for a in args]
        tasks = [dask.delayed(fn)(p, *shared, i, int(self.offsets[i])) for i, p in enumerate(self.parts)]
        return self.client.compute(tasks)

    def _collect(self, futures: list, merge: Callable[[list], None] | None, phase: str,
                 share: tuple[float, float], release: bool) -> tuple[dict[int, Any], list]:
        """The futures' results as they arrive: by partition index, or handed to ``merge`` in batches (the
        last, short batch returned with them)."""
        from distributed import as_completed

        index = {f.key: i for i, f in enumerate(futures)}
        done: dict[int, Any] = {}
        batch: list = []
        total = len(futures)
        for count, future in enumerate(as_completed(futures), 1):
            result = future.result()  # re-raises the worker's error (InputError, VerificationError, ...)
            if merge is None:
                done[index[future.key]] = result
            else:
                batch.append((index[future.key], result))
                if len(batch) >= MERGE_EVERY:
                    merge(batch)
                    batch = []
            if release:
                future.release()
            lo, hi = share
            self.report(lo + (hi - lo) * count / total, f"{phase}: {count} of {total} partitions")
        return done, batch

    def _abort(self, futures: list, keep: list | None) -> None:
        """A failure or a cancel: drop the queued tasks and let the running ones end before the caller removes
        the written partitions (a task still writing would leave a file behind)."""
        from distributed import wait

        self.client.cancel(futures)
        if keep is not None:
            for future in keep:
                future.release()
            keep.clear()
        try:
            wait(futures, timeout=60)
        except Exception:  # noqa: BLE001 - the first error is the one to report
            pass
