"""Fix texts that more than one row of the findings table uses."""

from __future__ import annotations

#: A new iterator per batch: the per-call-input-pipeline and input-bound rows' shared text.
ITERATOR_ONCE = (
    "Your code makes a new iterator over the dataset for every batch (`next(iter(ds))`, or "
    "`for x in ds: … break`, inside the loop): each new iterator starts the pipeline from "
    "scratch, refilling its shuffle buffer and prefetch. Create the iterator once (`it = "
    "iter(ds)` outside the loop, with `ds.repeat()` for more than one epoch) and call "
    "`next(it)` in the loop; `num_parallel_calls` and `prefetch` do not remove this cost."
)
