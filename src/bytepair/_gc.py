"""``gc_paused``: the cyclic garbage collector held off while a step builds many tuples.

CPython collects the young generation after every 700 new container objects; a step that
builds tens of thousands of tuples in a growing list triggers a collection each time, and each
walks the list built so far. Loading a vocabulary and assembling a training run's merges pause
it (the figures are at each use). Nothing here frees less: what the step leaves unreachable is
collected at the next collection after it.

Example:
    >>> with gc_paused():
    ...     pairs = [(i, i + 1) for i in range(100_000)]
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for the ``with`` block; restore it as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
