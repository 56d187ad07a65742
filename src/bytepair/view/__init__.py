"""The token viewer: one self-contained HTML page showing how tokenizers cut a text.

``view_page(text, tokenizers)`` returns the page: one panel per tokenizer, side by side, each
with its token count, characters per token and bytes per token, and the text cut into coloured
token spans. Hovering a span shows its id and bytes (a ``title`` attribute, so it works with
scripts off, and an info line above the text). Scripts and styles are inline; the page needs no
network. ``compare_page(report)`` renders ``bytepair compare``'s report as a sortable table with
a bar chart of tokens per text. ``serve(tokenizers)`` is a local page (stdlib ``http.server`` on
127.0.0.1) where typed text is cut live.

Every span carries ``data-id``, ``data-start`` and ``data-end`` (character offsets into the text
the tokenizer saw, i.e. after its normalization), so a test can check a page against ``encode``.

Tokens that split a character (byte-level BPE cuts UTF-8 anywhere) follow one rule: **a
character belongs to the token that holds its last byte.** So
    - a token with bytes of a character that it does not complete shows those bytes as escapes
      (``\\xe4\\xbd``, drawn by CSS from ``data-tail``, so they are not part of the span's text)
      and is outlined with a dashed border (class ``p``);
    - the token that completes the character shows the whole character, also dashed;
    - a token inside one character (neither starting nor completing one) has
      ``data-start == data-end`` and no text, only its escapes.
The spans' texts, in order, concatenate to exactly the text, except that U+0000, which HTML
cannot hold (a browser drops it), shows as ``NUL_SHOWN`` (U+2400, "␀"). The text is the one
encoding sees: a lone surrogate is U+FFFD. A token made only of characters drawn with no width
(a lone CR, U+200B, U+FEFF, bidi controls) keeps them as its text and gets a marker (``␍``,
``\\u200b``) drawn by CSS from ``data-shown``; inside a token of visible characters, each such
character (but CR) is an inner ``<span class="zi">`` with its marker. A SentencePiece token that
stands for its dummy prefix alone (``▁`` before a text that starts with a digit, or after a
special token) covers no character: it has no text and shows ``DUMMY_PREFIX_SHOWN`` (U+2581)
the same way. Every span isolates its direction (CSS ``unicode-bidi: isolate``), so a
right-to-left override cannot reorder the tokens after it, nor the rest of its own token.

Example:
    >>> import bytepair
    >>> tok = bytepair.Tokenizer(mode="byte", merges=[(b"h", b"i")])
    >>> [(s.id, s.start, s.end, s.tail) for s in token_spans(tok, "hi")]
    [(256, 0, 2, b'')]

It does not train or load tokenizers; the command line (``bytepair view``) does that.
"""

from __future__ import annotations

import html
import sys
import unicodedata
from typing import NamedTuple

import numpy as np

from ..errors import BytepairError, ViewError
from ..normalize import clean_surrogates, normalize

# Pastel backgrounds that keep black text readable; neighbours never share a colour.
NUL_SHOWN = "\u2400"  # what a span shows for U+0000 (see the module docstring)
DUMMY_PREFIX_SHOWN = "\u2581"  # what a token of no text shows (SentencePiece's dummy prefix "▁")
COLOURS = ("#fde2a7", "#c7e9c0", "#c6dbef", "#fcbba1", "#dadaeb", "#d9f0d3", "#fdd0e8")


class Span(NamedTuple):
    """One token as the page shows it."""

    id: int
    start: int  # character offsets into the (normalized) text: text[start:end] is shown
    end: int
    bytes: bytes  # the token's bytes
    head: bool  # the token starts inside a character (it completes one begun earlier)
    tail: bytes  # trailing bytes of a character this token does not complete
    special: bool


def token_spans(tokenizer, text, *, allowed_special=frozenset()):
    """The tokens of ``text`` as ``Span``s with character ranges (see the module's rule).

    Special tokens in ``allowed_special`` become special tokens; other special-token strings
    are encoded as ordinary text (the viewer never refuses a text).
    """
    text = _seen(text, tokenizer)
    ids = tokenizer.encode(text, allowed_special=allowed_special, disallowed_special=())
    data = text.encode("utf-8", errors="surrogatepass")
    try:
        pieces = tokenizer._text_pieces(ids)  # SentencePiece's without its dummy prefix
    except ValueError:
        pieces = None
    if pieces is None or b"".join(pieces) != data:
        raise ViewError(
            f"tokenizer {_label(tokenizer)!r} does not decode its own ids back to the text; "
            "it cannot be shown as spans (is it lossy for this text?)"
        )
    raw = np.frombuffer(data, dtype=np.uint8)
    is_start = (raw & 0xC0) != 0x80  # a byte that begins a character
    starts_before = np.concatenate(([0], np.cumsum(is_start)))  # characters begun before byte b
    start_positions = np.flatnonzero(is_start)
    boundary = np.append(is_start, True)  # byte offset b lies between two characters

    def complete(offset):  # characters wholly inside data[:offset]
        return int(starts_before[offset]) - (0 if boundary[offset] else 1)

    specials = set(tokenizer.special_tokens.values())
    spans, offset = [], 0
    for token_id, piece in zip(ids, pieces):
        end_offset = offset + len(piece)
        tail = b""
        if not boundary[end_offset]:
            begun = int(start_positions[np.searchsorted(start_positions, end_offset) - 1])
            tail = piece[max(begun, offset) - offset :]
        spans.append(
            Span(
                token_id,
                complete(offset),
                complete(end_offset),
                piece,
                not boundary[offset],
                tail,
                token_id in specials,
            )
        )
        offset = end_offset
    return spans


def _seen(text, tokenizer):
    # the text as encoding sees it: surrogates by encoding's rule (a lone one, as from a
    # command-line argument's bad bytes, is U+FFFD; a pair its character), then normalized,
    # in that order as encoding does, so the spans join back to it
    return normalize(clean_surrogates(text), tokenizer.normalization)


def panel_stats(text, spans):
    """Counts and ratios of one panel: tokens, characters, bytes, per-token averages."""
    chars, size, tokens = len(text), len(text.encode("utf-8", errors="surrogatepass")), len(spans)
    return {
        "tokens": tokens,
        "characters": chars,
        "bytes": size,
        "chars_per_token": round(chars / tokens, 3) if tokens else None,
        "bytes_per_token": round(size / tokens, 3) if tokens else None,
    }


# -- the page ---------------------------------------------------------------------------------


def view_page(text, tokenizers, *, title="bytepair view", allowed_special=frozenset()):
    """The whole page as a string: ``tokenizers`` is ``[(label, tokenizer)]``. A tokenizer that
    cannot encode the text (or refuses ``allowed_special``) is a ``ViewError`` naming its label.

    Example:
        >>> page = view_page("hello", [("mine", tok)])  # doctest: +SKIP
        >>> "data-id" in page                            # doctest: +SKIP
        True
    """
    text = clean_surrogates(text)  # counted as encoding sees it (a lone surrogate is U+FFFD)
    panels = []
    for label, tok in tokenizers:
        try:
            panels.append(render_panel(label, tok, text, allowed_special=allowed_special))
        except ViewError:
            raise
        except BytepairError as error:  # with several panels, say whose text cannot be drawn
            raise ViewError(f"tokenizer {label!r}: {error}") from error
    size = len(text.encode("utf-8", errors="surrogatepass"))
    intro = f"{len(text):,} characters, {size:,} bytes (UTF-8). Hover a token for its id and bytes."
    body = f'<main class="panels" style="--n:{max(1, len(panels))}">{"".join(panels)}</main>'
    return _document(
        title, f"<header><h1>{_e(title)}</h1><p>{_e(intro)}</p></header>{body}", VIEW_SCRIPT + "bindPanels();"
    )


def render_panel(label, tokenizer, text, *, allowed_special=frozenset()):
    """One tokenizer's panel: heading, statistics, info line and the spans."""
    seen = _seen(text, tokenizer)
    spans = token_spans(tokenizer, seen, allowed_special=allowed_special)
    stats = panel_stats(seen, spans)
    shown = [
        ("tokens", f"{stats['tokens']:,}"),
        ("characters", f"{stats['characters']:,}"),
        ("bytes", f"{stats['bytes']:,}"),
        ("chars/token", _ratio(stats["chars_per_token"])),
        ("bytes/token", _ratio(stats["bytes_per_token"])),
        ("vocab size", f"{tokenizer.vocab_size:,}"),
    ]
    keys = ("tokens", "characters", "bytes", "chars_per_token", "bytes_per_token", "vocab_size")
    cells = "".join(
        f'<div><dt>{_e(name)}</dt><dd data-stat="{key}">{_e(value)}</dd></div>'
        for (name, value), key in zip(shown, keys)
    )
    note = ""
    if normalize(text, tokenizer.normalization) != text:
        note = f'<p class="note">{_e(tokenizer.normalization)} normalization changed the text; offsets refer to the normalized text.</p>'
    fingerprint = tokenizer.fingerprint  # a hash over the whole vocabulary: seconds for cl100k
    return (
        f'<section class="panel" data-label="{_e(label)}" data-fingerprint="{_e(fingerprint)}">'
        f'<h2 title="fingerprint {_e(fingerprint)}">{_e(label)}</h2>'
        f'<dl class="stats">{cells}</dl>{note}'
        f'<div class="info">hover a token</div>'
        f'<div class="text">{render_spans(seen, spans)}</div></section>'
    )


def render_spans(text, spans):
    """The spans as HTML, each ``<span class="t ..." data-id data-start data-end title>``."""
    out = []
    for number, span in enumerate(spans):
        classes = f"t c{number % len(COLOURS)}"
        if span.head or span.tail:
            classes += " p"
        if span.special:
            classes += " s"
        piece = text[span.start : span.end]
        if "\n" in piece and not piece.strip():
            classes += " nl"  # a run of line breaks: mark it, or its colour is invisible
        shown, body = "", _text(piece)
        if piece and all(_invisible(char) for char in piece):
            classes += " z"  # drawn 0 px wide: CSS shows data-shown instead, so it can be hovered
            shown = f' data-shown="{_e("".join(map(_marker, piece)))}"'
        elif any(_invisible(char) and char != "\r" for char in piece):
            body = _marked(piece)
        elif not span.bytes:  # SentencePiece's dummy prefix alone: no text, so drawn as its marker
            classes += " z"
            shown = f' data-shown="{DUMMY_PREFIX_SHOWN}"'
        hover = f"id {span.id} · bytes {span.bytes.hex(' ')}" if span.bytes else f"id {span.id} · no bytes of the text"
        if span.tail or span.head:
            hover += " · splits a character"
        tail = f' data-tail="{_e(_escapes(span.tail))}"' if span.tail else ""
        out.append(
            f'<span class="{classes}" data-id="{span.id}" data-start="{span.start}" data-end="{span.end}"'
            f' title="{_e(hover)}"{tail}{shown}>{body}</span>'
        )
    return "".join(out)


def _marked(piece):
    # An invisible character inside a token of visible ones: its own isolated span with a marker,
    # so that it shows and a bidi control in it (U+202E) cannot reverse the token's other
    # characters. A CR stays plain: CR LF, one token in most vocabularies, keeps its one mark.
    return "".join(
        f'<span class="zi" data-shown="{_e(_marker(char))}">{_text(char)}</span>'
        if _invisible(char) and char != "\r"
        else _text(char)
        for char in piece
    )


# Drawn with no width (or as nothing) though they are characters: format characters (U+200B,
# U+FEFF, bidi controls), controls other than tab and line feed, and the default-ignorable ones
# that are not format characters (variation selectors, Hangul fillers). U+0000 has its symbol.
_IGNORABLE = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x180B, 0x180F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0100, 0xE01EF),
)  # fmt: skip


def _invisible(char):
    if char in "\t\n\x00":
        return False
    code = ord(char)
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") or any(lo <= code <= hi for lo, hi in _IGNORABLE)


def _marker(char):
    # C0 controls and DEL as their control pictures (as U+0000 is), the rest as escapes: \u200b
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return char.encode("unicode_escape").decode("ascii")


def _escapes(data):
    return "".join(f"\\x{b:02x}" for b in data)


def _text(piece):
    # subtle: the HTML parser turns a raw CR (and CR LF) into LF; a character reference keeps it.
    # U+0000 has no form in HTML (a browser drops it, &#0; is U+FFFD): it shows as U+2400.
    return _e(piece).replace("\r", "&#13;").replace("\x00", NUL_SHOWN)


def _e(value):
    return html.escape(str(value), quote=True)


def _ratio(value):
    return "-" if value is None else f"{value:.3f}"


def _label(tokenizer):
    return getattr(tokenizer, "name", None) or repr(tokenizer)


def _document(title, body, script):
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head>"
        f"<body>{body}<script>{script}</script></body></html>\n"
    )


STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; padding: 12px 16px; color: #222; background: #fafafa; }
h1 { font-size: 18px; margin: 0 0 2px; } h2 { font-size: 15px; margin: 0 0 6px; overflow-wrap: anywhere; }
header p { margin: 0 0 10px; color: #555; }
.panels { display: grid; grid-template-columns: repeat(var(--n), minmax(0, 1fr)); gap: 12px; }
.panel { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 10px; min-width: 0; }
.stats { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 0 0 6px; }
.stats div { display: flex; gap: 4px; } .stats dt { color: #666; } .stats dd { margin: 0; font-weight: 600; }
.note { color: #a33; margin: 0 0 6px; }
.info { font: 12px/1.4 ui-monospace, monospace; background: #f1f1f1; padding: 3px 6px; border-radius: 4px;
        min-height: 1.4em; margin-bottom: 6px; white-space: pre-wrap; overflow-wrap: anywhere; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 78vh; overflow: auto; font: 14px/1.7 ui-monospace, monospace; }
.t { border-radius: 3px; box-shadow: inset 0 0 0 1px rgba(0,0,0,.06); unicode-bidi: isolate; }
.t:hover, .t.hl { outline: 2px solid #333; }
.t.p { box-shadow: none; border: 1px dashed #b00; }
.t[data-tail]::after { content: attr(data-tail); font-size: 10px; color: #b00; }
.t.nl::before { content: "\\21b5"; color: #999; }
.t.z::before, .zi::before { content: attr(data-shown); font-size: 10px; color: #777; }
.zi { unicode-bidi: isolate; }
.t.s { font-weight: 700; box-shadow: inset 0 0 0 2px #555; }
table { border-collapse: collapse; background: #fff; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
th { cursor: pointer; user-select: none; background: #f1f1f1; position: sticky; top: 0; }
th.sorted-asc::after { content: " \\25b2"; } th.sorted-desc::after { content: " \\25bc"; }
td.name, th.name { text-align: left; } .bars { min-width: 260px; text-align: left; }
th.group { text-align: center; cursor: default; border-left: 2px solid #fff; }
.bar { height: 9px; margin: 1px 0; border-radius: 2px; } .legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
""" + "".join(f".c{i} {{ background: {colour}; }}\n" for i, colour in enumerate(COLOURS))

# On hover: the token's id, bytes and character range in the panel's info line, and the tokens
# covering the same characters outlined in the other panels (binary search: spans are in order).
VIEW_SCRIPT = r"""
// format characters as escapes in the info line: a bidi control there would reorder the line
const INVISIBLE = /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
const escape = c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
function bindPanels() {
  const panels = Array.from(document.querySelectorAll('.panel'));
  const spans = panels.map(p => Array.from(p.querySelectorAll('.t')));
  let lit = [];
  function first(list, start) {  // first span whose end is after start
    let lo = 0, hi = list.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (+list[mid].dataset.end <= start) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function describe(span) {
    const start = +span.dataset.start, end = +span.dataset.end;
    const bytes = span.title.split(' · ')[1] || '';
    const tail = span.dataset.tail ? ' + ' + span.dataset.tail : '';
    return 'id ' + span.dataset.id + ' · ' + bytes + ' · chars ' + start + '–' + end + ' · ' +
      JSON.stringify(span.textContent).replace(INVISIBLE, escape) + tail;
  }
  panels.forEach((panel, index) => {
    const info = panel.querySelector('.info');
    panel.querySelector('.text').addEventListener('mouseover', event => {
      const span = event.target.closest('.t');
      if (!span) return;
      info.textContent = describe(span);
      lit.forEach(s => s.classList.remove('hl'));
      lit = [];
      const start = +span.dataset.start, end = Math.max(+span.dataset.end, start + 1);
      spans.forEach((list, other) => {
        if (other === index) return;
        for (let i = first(list, start); i < list.length && +list[i].dataset.start < end; i++) {
          list[i].classList.add('hl'); lit.push(list[i]);
        }
      });
    });
  });
}
"""


# -- the comparison page (bytepair compare --html) ---------------------------------------------


def compare_page(report, *, title="bytepair compare"):
    """``bytepair compare``'s report (``formats.cli.compare``) as a page: a table with one row
    per text (per language for the UDHR folder), sortable by any column, and a bar per
    tokenizer of its token count for that text.
    """
    labels = [entry["label"] for entry in report["tokenizers"]]
    rows = report["texts"]
    most = max([row["results"][label]["tokens"] or 0 for row in rows for label in labels] + [1])
    groups = '<th colspan="4"></th>' + "".join(f'<th colspan="3" class="group">{_e(label)}</th>' for label in labels)
    head = '<th class="name" data-type="text">text</th><th class="bars" data-type="none">tokens</th><th>chars</th><th>bytes</th>'
    head += "<th>tokens</th><th>B/tok</th><th>ch/tok</th>" * len(labels)
    body = []
    for row in rows:
        cells, bars = _number(row["chars"]) + _number(row["bytes"]), []
        for number, label in enumerate(labels):
            result = row["results"][label]
            cells += (
                _number(result["tokens"])
                + _number(result.get("bytes_per_token"), 3)
                + _number(result.get("chars_per_token"), 3)
            )
            width = 100 * (result["tokens"] or 0) / most
            shown = "n/a" if result["tokens"] is None else f"{result['tokens']:,}"
            bars.append(
                f'<div class="bar" style="width:{width:.2f}%;background:{_bar_colour(number)}" '
                f'title="{_e(label)}: {shown} tokens"></div>'
            )
        body.append(f'<tr><td class="name">{_e(row["name"])}</td><td class="bars">{"".join(bars)}</td>{cells}</tr>')
    total = report["total"]
    foot = (
        f'<td class="name">total ({total["texts"]} texts)</td><td></td>'
        + _number(total["chars"])
        + _number(total["bytes"])
    )
    for label in labels:
        result = total["results"][label]
        foot += (
            _number(result["tokens"]) + _number(result["bytes_per_token"], 3) + _number(result["chars_per_token"], 3)
        )
    legend = "".join(
        f'<span><i style="background:{_bar_colour(n)}"></i>{_e(label)}</span>' for n, label in enumerate(labels)
    )
    content = (
        f"<header><h1>{_e(title)}</h1><p>Tokens per text for each tokenizer; fewer tokens for the same "
        "text means more text per token. Click a column heading to sort.</p>"
        f'<p class="legend">{legend}</p></header>'
        f'<table id="compare"><thead><tr>{groups}</tr><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
        f"<tfoot><tr>{foot}</tr></tfoot></table>"
    )
    return _document(title, content, SORT_SCRIPT)


def _number(value, digits=0):
    if value is None:
        return '<td data-value="">n/a</td>'
    shown = f"{value:,.{digits}f}" if digits else f"{value:,}"
    return f'<td data-value="{value}">{shown}</td>'


def _bar_colour(number):
    return ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")[number % 8]


SORT_SCRIPT = r"""
(function () {
  const table = document.getElementById('compare');
  const body = table.tBodies[0];
  const headings = Array.from(table.tHead.rows[table.tHead.rows.length - 1].cells);
  headings.forEach((th, column) => {
    if (th.dataset.type === 'none') return;
    th.addEventListener('click', () => {
      const descending = th.classList.contains('sorted-asc');
      headings.forEach(h => h.classList.remove('sorted-asc', 'sorted-desc'));
      th.classList.add(descending ? 'sorted-desc' : 'sorted-asc');
      const key = row => {
        const cell = row.cells[column];
        if (th.dataset.type === 'text') return cell.textContent;
        return cell.dataset.value === '' ? Infinity : +cell.dataset.value;
      };
      const rows = Array.from(body.rows).sort((a, b) => {
        const x = key(a), y = key(b);
        const order = typeof x === 'string' ? x.localeCompare(y) : x - y;
        return descending ? -order : order;
      });
      rows.forEach(row => body.appendChild(row));
    });
  });
})();
"""


# -- the live page (bytepair view --serve) -----------------------------------------------------


def live_page(tokenizers, *, title="bytepair view"):
    """The page ``serve`` answers with: a text box whose tokens are redrawn as one types."""
    labels = ", ".join(label for label, _ in tokenizers)
    content = (
        f"<header><h1>{_e(title)}</h1><p>Type or paste text; tokens for {_e(labels)} update as you type.</p>"
        '<textarea id="input" rows="5" style="width:100%;font:14px ui-monospace,monospace" '
        'spellcheck="false">Hello, world! 你好 🌍</textarea></header>'
        f'<main class="panels" id="panels" style="--n:{max(1, len(tokenizers))}"></main>'
    )
    return _document(title, content, VIEW_SCRIPT + LIVE_SCRIPT)


LIVE_SCRIPT = r"""
(function () {
  const input = document.getElementById('input');
  let pending = null, serial = 0;
  async function update() {
    const mine = ++serial;
    const reply = await fetch('/panels', { method: 'POST', body: input.value });
    const html = await reply.text();
    if (mine !== serial) return;
    document.getElementById('panels').innerHTML = html;
    bindPanels();
  }
  input.addEventListener('input', () => { clearTimeout(pending); pending = setTimeout(update, 120); });
  window.addEventListener('load', update);
})();
"""

# The live page refuses texts longer than this: the page is for typing, not for corpora.
MAX_LIVE_BYTES = 1_000_000


def serve(tokenizers, *, port=8000, host="127.0.0.1", allowed_special=frozenset()):
    """Serve the live page on ``http://host:port/`` until interrupted (localhost only)."""
    server = live_server(tokenizers, port=port, host=host, allowed_special=allowed_special)
    print(f"serving on http://{host}:{server.server_address[1]}/ (Ctrl-C to stop)", file=sys.stderr)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def live_server(tokenizers, *, port=8000, host="127.0.0.1", allowed_special=frozenset()):
    """The live page's HTTP server, bound but not yet serving: ``GET /`` is the page,
    ``POST /panels`` with UTF-8 text answers the panels' HTML. ``port=0`` takes a free port.
    """
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ViewError(f"the live page binds to localhost only, not {host!r}; use host='127.0.0.1'")
    page = live_page(tokenizers).encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path not in ("/", "/index.html"):
                self._reply(404, b"not found", "text/plain")
                return
            self._reply(200, page, "text/html")

        def do_POST(self):
            if self.path != "/panels":
                self._reply(404, b"not found", "text/plain")
                return
            given = self.headers.get("Content-Length") or "0"
            try:
                length = int(given)
            except ValueError:  # not a number, or past int's digit limit
                length = -1
            if length < 0:
                self._reply(400, f"Content-Length must be a byte count, not {given!r}".encode(), "text/plain")
                return
            if length > MAX_LIVE_BYTES:
                self._reply(413, f"text over {MAX_LIVE_BYTES:,} bytes".encode(), "text/plain")
                return
            text = self.rfile.read(length).decode("utf-8", errors="replace")
            panels = []
            for label, tok in tokenizers:
                try:
                    panels.append(render_panel(label, tok, text, allowed_special=allowed_special))
                except BytepairError as error:
                    panels.append(
                        f'<section class="panel"><h2>{_e(label)}</h2><p class="note">{_e(error)}</p></section>'
                    )
            self._reply(200, "".join(panels).encode("utf-8"), "text/html")

        def _reply(self, status, data, kind):
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):  # quiet: one line at start is enough
            pass

    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise ViewError(f"port must be an int from 0 to 65535 (0: any free port), not {port!r}")
    try:
        return ThreadingHTTPServer((host, port), Handler)
    except OSError as error:
        raise ViewError(
            f"cannot serve on {host}:{port} ({error.strerror or error}); choose another port, or 0 for any free one"
        ) from None


__all__ = ["Span", "compare_page", "live_page", "live_server", "render_panel", "serve", "token_spans", "view_page"]
