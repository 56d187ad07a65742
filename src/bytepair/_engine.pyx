# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""bytepair's compiled core: the loops, never the policy.

Python (``tokenizer.py``, ``train.py``) checks arguments, handles special tokens, normalization
and file formats; this module only scans, counts and merges. Every function here names the
``bytepair.reference`` (or ``patterns``) function whose output it must equal, its Python twin.
The C++ is in ``engine/`` (one header per structure, each with its design note); the include
files below declare it and wrap it for Python:

- ``_scan.pxi``   the scanner's tables, ``split`` and ``TextRef`` (a str read in place)
                  (engine/scanner.hpp)
- ``_encode.pxi`` ``Encoder``: rank-based merging, piece caches, batches on threads
                  (engine/encoder.hpp, merge.hpp, pair_table.hpp, piece_maps.hpp,
                  worker_pool.hpp, threads.hpp, py_lists.hpp)
- ``_train.pxi``  ``train_merges``: incremental pair counting with a priority queue (Cython)
- ``_count.pxi``  ``count_pieces``: the unique pieces of a training text (engine/counting.hpp)
- ``_decode.pxi`` ``Decoder``: ids to bytes through one flat table (engine/decoder.hpp, py_ids.hpp)
- ``_load.pxi``   ``read_rank_lines`` (a tiktoken rank file's bytes) and ``token_splits``
                  (tiktoken's pair table) (engine/rank_file.hpp, token_splits.hpp)
"""

include "_scan.pxi"
include "_encode.pxi"
include "_train.pxi"
include "_count.pxi"
include "_decode.pxi"
include "_load.pxi"

cdef extern from "engine/threads.hpp" namespace "bp":
    void ready_for_exceptions() nogil

# The importing thread's C++ exception state, made now: its first exception may come when no
# memory is left (engine/threads.hpp; engine threads and encodes make theirs themselves).
ready_for_exceptions()

