"""Corpora for small GPTs: WikiText-2 loading, cleaning and download, encoded splits, sweeps.

- ``wikitext``: find, read, clean and download WikiText-2 (raw and tokens variants), cut it
  into articles;
- ``blocks``: read a split block by block and cut blocks where encoding stays exact;
- ``encode``: encode splits on a thread pool into token files, checking every block;
- ``prepare``: train, encode every split with the BPE and the character tokenizer, check,
  and write ``np.memmap``-ready ``.bin`` streams with a ``meta.json`` (``bytepair prepare``);
- ``sweep``: compare vocabulary sizes (``bytepair sweep``);
- ``documents``, ``corpus``, ``shards``: any corpus (text, JSON Lines, Parquet) through any
  tokenizer into np.memmap-ready shards (``encode_corpus``, ``bytepair encode-corpus``), read
  back with ``open_shards``.

The entry functions live in their modules (``bytepair.datasets.prepare.prepare``,
``bytepair.datasets.sweep.sweep``), so that each module name means one thing.

Example:
    >>> from bytepair.datasets import find_split_files                        # doctest: +SKIP
    >>> from bytepair.datasets.prepare import prepare                         # doctest: +SKIP
    >>> prepare("prepared", files=find_split_files("data/wikitext-2"))        # doctest: +SKIP
"""

from .corpus import encode_corpus
from .shards import open_shards
from .wikitext import clean_text, download_wikitext, find_split_files, load_wikitext, split_articles, write_texts

__all__ = [
    "clean_text",
    "download_wikitext",
    "encode_corpus",
    "find_split_files",
    "load_wikitext",
    "open_shards",
    "split_articles",
    "write_texts",
]
