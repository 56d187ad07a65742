# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""bytepair's compiled core: the loops, never the policy.

Python (``tokenizer.py``, ``train.py``) checks arguments, handles special tokens, normalization
and file formats; this module only scans, counts and merges. Every function here names the
``bytepair.reference`` function whose output it must equal. The parts live in include files
so that each can be read on its own:

- ``_scan.pxi``   pre-tokenizer scanner for the named patterns (gpt2, cl100k, o200k, llama3)
- ``_encode.pxi`` rank-based merging of pieces, the piece cache, batch encoding on threads
- ``_train.pxi``  incremental pair counting with a priority queue over unique chunks
- ``_count.pxi``  counting the unique pieces of a training text, on threads
"""

include "_scan.pxi"
include "_encode.pxi"
include "_train.pxi"
include "_count.pxi"
