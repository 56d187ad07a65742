"""The token viewer page (``bytepair view``, ``compare --html``), checked in a real browser.

The browser tests open the page in headless Chromium, let its scripts run, and read the rendered
DOM back (``--dump-dom``); a probe script appended to a copy of the page collects every token
span's attributes and text and hovers a sample of spans, so the checks see what a reader sees.
The oracle is the tokenizer itself: ``encode`` for the ids, ``token_bytes`` for the bytes, and
the input text for the characters. They skip, saying why, where Chromium is not installed.
"""

from __future__ import annotations

import html
import http.client
import json
import os
import re
import shutil
import subprocess
import threading
import urllib.request
from html.parser import HTMLParser

import pytest

import bytepair
from bytepair.cli import main
from bytepair.view import compare_page, live_server, token_spans, view_page
from datafiles import data_file

CHROMIUM = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)

# Text that exercises what a page can get wrong: HTML metacharacters, CR LF, characters split
# across byte-level tokens (CJK, emoji, accents), a special token's string as plain text.
MIXED = 'Mixed: 你好世界 🌍🌍 <script>alert("x")</script> &amp; café, naïve — 東京\r\n\ttabs <|endoftext|>\n'

PROBE = r"""<script>
(function () {
  const panels = Array.from(document.querySelectorAll('.panel')).map(panel => {
    const spans = Array.from(panel.querySelectorAll('.text .t'));
    const info = panel.querySelector('.info');
    const step = Math.max(1, Math.floor(spans.length / 40));
    const sample = spans.filter((s, i) => i % step === 0 || (s.classList.contains('p') && i < 400));
    const hovered = sample.map(span => {
      span.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
      return [spans.indexOf(span), info.textContent, document.querySelectorAll('.t.hl').length];
    });
    return {
      label: panel.dataset.label,
      stats: Object.fromEntries(Array.from(panel.querySelectorAll('[data-stat]')).map(d => [d.dataset.stat, d.textContent])),
      ids: spans.map(s => +s.dataset.id), starts: spans.map(s => +s.dataset.start), ends: spans.map(s => +s.dataset.end),
      texts: spans.map(s => s.textContent), titles: spans.map(s => s.title), tails: spans.map(s => s.dataset.tail || ''),
      boxes: spans.map(s => { const box = s.getBoundingClientRect(); return [box.left, box.top, box.width]; }),
      hovered: hovered,
    };
  });
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify(panels);
  document.body.appendChild(out);
})();
</script>"""


def dump_dom(path, tmp_path):
    """Chromium's DOM of the page at ``path`` after its scripts ran (a fresh profile in tmp_path)."""
    command = [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
               f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", path.as_uri()]  # fmt: skip
    # check=False: a failed run is reported by the caller, with Chromium's own messages
    return subprocess.run(command, capture_output=True, timeout=900, check=False)


def rendered_panels(page, tmp_path):
    """Open ``page`` (HTML text) in headless Chromium; the probe's findings, one dict per panel."""
    path = tmp_path / "probed.html"
    assert page.count("</body>") == 1
    path.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    result = dump_dom(path, tmp_path)
    dom = result.stdout.decode("utf-8")
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.DOTALL)
    assert found, f"the probe did not run; chromium said: {result.stderr.decode(errors='replace')[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def check_panel(panel, tokenizer, text):
    """The rendered panel shows exactly ``tokenizer.encode(text)``, the text, and the bytes."""
    assert panel["ids"] == tokenizer.encode(text, disallowed_special=())
    assert "".join(panel["texts"]) == text
    for number, (token_id, start, end, shown) in enumerate(
        zip(panel["ids"], panel["starts"], panel["ends"], panel["texts"])
    ):
        assert text[start:end] == shown, (number, token_id)
    for token_id, title in zip(panel["ids"], panel["titles"]):
        assert f"id {token_id} " in title and tokenizer.token_bytes(token_id).hex(" ") in title
    for index, info, _highlighted in panel["hovered"]:
        token_id = panel["ids"][index]
        assert info.startswith(f"id {token_id} ") and tokenizer.token_bytes(token_id).hex(" ") in info
    assert int(panel["stats"]["tokens"].replace(",", "")) == len(panel["ids"])
    assert int(panel["stats"]["characters"].replace(",", "")) == len(text)


@pytest.fixture(scope="module")
def cl100k():
    return bytepair.load("cl100k_base", path=data_file("vocab/cl100k_base.tiktoken"))


@pytest.fixture(scope="module")
def trained():
    """Byte-level BPE trained here on WikiText-2's training split (first million characters)."""
    text = data_file("wikitext-2/train.txt").read_text(encoding="utf-8")
    return bytepair.train(text, mode="byte", vocab_size=1000, pattern="cl100k", max_chars=1_000_000, progress=False)


# -- in the browser ---------------------------------------------------------------------------


@pytest.mark.data
@pytest.mark.slow
@needs_chromium
def test_wikitext_slice_side_by_side_in_chromium(tmp_path, cl100k, trained, wikitext_valid):
    text = wikitext_valid[:20_000] + MIXED
    page = view_page(text, [("cl100k_base", cl100k), ("wikitext-1000", trained)])
    panels = rendered_panels(page, tmp_path)
    assert [p["label"] for p in panels] == ["cl100k_base", "wikitext-1000"]
    for panel, tokenizer in zip(panels, (cl100k, trained)):
        check_panel(panel, tokenizer, text)
        # hovering a token outlines the tokens over the same characters in the other panel
        assert any(highlighted > 0 for _, _, highlighted in panel["hovered"])
    # a character split across tokens: its bytes are shown as escapes on the tokens before
    # the one that completes it, and the completing token shows the character
    trained_panel = panels[1]
    split = [i for i, tail in enumerate(trained_panel["tails"]) if tail]
    assert split, "the mixed text should split some character in a 1,000-token vocabulary"
    for i in split:
        shown = trained_panel["tails"][i]  # four characters per byte: \xe4
        tail = trained.token_bytes(trained_panel["ids"][i])[-(len(shown) // 4) :]
        assert shown == "".join(f"\\x{b:02x}" for b in tail)


@pytest.mark.slow
@needs_chromium
def test_a_nul_character_shows_as_its_symbol_in_chromium(tmp_path):
    # a browser drops a raw U+0000 from the page's text, and &#0; would be U+FFFD
    tok = bytepair.train("a b c\x00 d " * 50, mode="byte", vocab_size=270)
    text = "a\x00b c\x00\x00 d"
    panels = rendered_panels(view_page(text, [("t", tok)]), tmp_path)
    assert panels[0]["ids"] == tok.encode(text)
    assert "".join(panels[0]["texts"]) == text.replace("\x00", "\u2400")


@pytest.mark.slow
@needs_chromium
def test_tokens_of_invisible_characters_have_width_in_chromium(tmp_path):
    # a lone CR, U+200B, U+FEFF and a variation selector are drawn 0 px wide: a marker shows them,
    # outside the span's text, which still joins back to the text
    text = "A\rB C\u200bD E\ufeffF \ufe0f\n"
    tok = bytepair.Tokenizer(mode="char", base_tokens=sorted(set(text)))
    panel = rendered_panels(view_page(text, [("chars", tok)]), tmp_path)[0]
    check_panel(panel, tok, text)
    assert all(width > 0 for _, _, width in panel["boxes"]), list(zip(panel["texts"], panel["boxes"]))
    infos = {panel["texts"][index]: info for index, info, _ in panel["hovered"]}
    assert '"\\u200b"' in infos["\u200b"] and '"\\ufeff"' in infos["\ufeff"]


@pytest.mark.slow
@needs_chromium
def test_bidi_controls_do_not_reorder_tokens_in_chromium(tmp_path):
    # a right-to-left override (U+202E) or embedding would draw the tokens after it right to
    # left; each token is isolated, so tokens are drawn left to right in their order
    text = "abc \u202e evil \u202bmore\u202c rest \u2067of\u2069 line"
    tok = bytepair.Tokenizer(mode="char", base_tokens=sorted(set(text)), merges=[("\u202e", " ")])
    panel = rendered_panels(view_page(text, [("chars", tok)]), tmp_path)[0]
    check_panel(panel, tok, text)
    lefts = [left for left, top, _ in panel["boxes"]]
    assert len({top for _, top, _ in panel["boxes"]}) == 1, "the text should fit on one line"
    assert lefts == sorted(lefts) and len(set(lefts)) == len(lefts), list(zip(panel["texts"], lefts))
    # the info line shows a bidi control as an escape, so that it does not reorder the line
    (info,) = [info for index, info, _ in panel["hovered"] if panel["texts"][index] == "\u202e "]
    assert '"\\u202e "' in info


# The left edge of each character of the first token holding "needle", as drawn.
GLYPHS = r"""<script>
(function () {
  const span = Array.from(document.querySelectorAll('.text .t')).find(s => s.textContent.includes('needle'));
  const lefts = [];
  const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange();
      range.setStart(node, i); range.setEnd(node, i + 1);
      lefts.push([node.data[i], range.getBoundingClientRect().left]);
    }
  }
  const out = document.createElement('pre');
  out.id = 'glyphs';
  out.textContent = JSON.stringify(lefts);
  document.body.appendChild(out);
})();
</script>"""


@pytest.mark.slow
@needs_chromium
def test_bidi_control_inside_a_token_does_not_reverse_its_text_in_chromium(tmp_path):
    # U+202E inside a token once drew the token's own letters right to left ("eldeen")
    text = "a \u202eneedle b"
    tok = bytepair.Tokenizer(
        mode="char",
        base_tokens=sorted(set(text)),
        merges=[("\u202e", "n"), ("\u202en", "e"), ("\u202ene", "e"), ("\u202enee", "d"), ("\u202eneed", "l"),
                ("\u202eneedl", "e")],
    )  # fmt: skip
    assert "\u202eneedle" in [tok.decode([i]) for i in tok.encode(text)]
    path = tmp_path / "glyphs.html"
    path.write_text(view_page(text, [("chars", tok)]).replace("</body>", GLYPHS + "</body>"), encoding="utf-8")
    result = dump_dom(path, tmp_path)
    found = re.search(r'<pre id="glyphs">(.*?)</pre>', result.stdout.decode("utf-8"), re.DOTALL)
    assert found, f"the probe did not run; chromium said: {result.stderr.decode(errors='replace')[-2000:]}"
    glyphs = json.loads(html.unescape(found.group(1)))
    letters = [(char, left) for char, left in glyphs if char != "\u202e"]
    assert "".join(char for char, _ in letters) == "needle"
    lefts = [left for _, left in letters]
    assert lefts == sorted(lefts) and len(set(lefts)) == len(lefts), letters


@pytest.mark.data
@pytest.mark.slow
@needs_chromium
def test_cli_page_with_published_name_and_file_in_chromium(tmp_path, cl100k, trained):
    artifact = tmp_path / "mine.json"
    trained.save(artifact)
    page = tmp_path / "page.html"
    code = main(
        [
            "view",
            MIXED,
            "-t",
            "cl100k_base",
            "-t",
            str(artifact),
            "--vocab-dir",
            str(data_file("vocab")),
            "-o",
            str(page),
        ]
    )
    assert code == 0
    panels = rendered_panels(page.read_text(encoding="utf-8"), tmp_path)
    assert [p["label"] for p in panels] == ["cl100k_base", "mine"]
    check_panel(panels[0], cl100k, MIXED)
    check_panel(panels[1], trained, MIXED)


@pytest.mark.slow
@needs_chromium
def test_compare_page_sorts_in_chromium(tmp_path):
    report = {
        "tokenizers": [
            {"label": "a<b", "vocab_size": 10, "fingerprint": "x"},
            {"label": "c", "vocab_size": 20, "fingerprint": "y"},
        ],
        "texts": [_row("eng", 100, 10, 20), _row("jpn", 50, 40, 30), _row("arb", 80, 25, None)],
        "total": {
            "name": "total",
            "texts": 2,
            "skipped": 1,
            "chars": 150,
            "bytes": 150,
            "results": {"a<b": _ratios(50, 150), "c": _ratios(50, 150)},
        },
    }
    path = tmp_path / "compare.html"
    # click the "a<b tokens" heading (column 4) once: ascending
    path.write_text(compare_page(report).replace("</body>", CLICK + "</body>"), encoding="utf-8")
    result = dump_dom(path, tmp_path)
    found = re.search(r'<pre id="order">(.*?)</pre>', result.stdout.decode("utf-8"), re.DOTALL)
    assert found, result.stderr.decode(errors="replace")[-2000:]
    assert json.loads(html.unescape(found.group(1))) == [["eng", "arb", "jpn"], ["jpn", "arb", "eng"]]


CLICK = r"""<script>
const heading = document.querySelector('#compare thead tr:last-child').cells[4];
const order = () => Array.from(document.querySelectorAll('#compare tbody tr')).map(r => r.cells[0].textContent);
heading.click(); const up = order(); heading.click(); const down = order();
const out = document.createElement('pre'); out.id = 'order'; out.textContent = JSON.stringify([up, down]);
document.body.appendChild(out);
</script>"""


def _ratios(tokens, size):
    return {
        "tokens": tokens,
        "bytes_per_token": size / tokens if tokens else None,
        "chars_per_token": size / tokens if tokens else None,
    }


def _row(name, size, first, second):
    results = {
        "a<b": _ratios(first, size),
        "c": _ratios(second, size) if second else {"tokens": None, "error": "unknown"},
    }
    return {"name": name, "chars": size, "bytes": size, "results": results}


@needs_chromium
@pytest.mark.slow
def test_whole_wikitext_validation_in_chromium(tmp_path, cl100k, trained, wikitext_valid):
    page = view_page(wikitext_valid, [("cl100k_base", cl100k), ("wikitext-1000", trained)])
    panels = rendered_panels(page, tmp_path)
    check_panel(panels[0], cl100k, wikitext_valid)
    check_panel(panels[1], trained, wikitext_valid)


# -- without a browser: the span rule and the markup --------------------------------------------


def test_a_character_belongs_to_the_token_holding_its_last_byte():
    # no merges: every byte is a token; "é" is c3 a9
    plain = bytepair.Tokenizer(mode="byte")
    spans = token_spans(plain, "é")
    assert [(s.id, s.start, s.end, s.head, s.tail) for s in spans] == [
        (0xC3, 0, 0, False, b"\xc3"),
        (0xA9, 0, 1, True, b""),
    ]
    # " 你" is 20 e4 bd a0; one merge makes " \xe4" a token that holds the space and begins 你
    merged = bytepair.Tokenizer(mode="byte", merges=[(b" ", b"\xe4")])
    spans = token_spans(merged, " 你!")
    assert [(s.id, s.start, s.end, s.head, s.tail) for s in spans] == [
        (256, 0, 1, False, b"\xe4"),
        (0xBD, 1, 1, True, b"\xbd"),
        (0xA0, 1, 2, True, b""),
        (ord("!"), 2, 3, False, b""),
    ]


def test_char_level_spans_and_special_tokens():
    tok = bytepair.Tokenizer(mode="char", base_tokens="ab<|>end", merges=[("a", "b")], special_tokens=["<|end|>"])
    text = "abab<|end|>a"
    spans = token_spans(tok, text, allowed_special="all")
    assert [s.id for s in spans] == tok.encode(text, allowed_special="all")
    assert "".join(text[s.start : s.end] for s in spans) == text
    assert [s.special for s in spans].count(True) == 1
    # not allowed: the special token's string is ordinary text, and the page still renders
    assert [s.id for s in token_spans(tok, text)] == tok.encode(text, disallowed_special=())


def test_lone_surrogates_are_shown_as_encoding_sees_them():
    # encoding's rule: a surrogate pair is its character, a lone surrogate U+FFFD
    tok = bytepair.Tokenizer(mode="byte")
    text = "x\ud800y\ud83d\ude00"
    parser = _Spans()
    parser.feed(view_page(text, [("bytes", tok)]))
    assert "".join(span["text"] for span in parser.spans) == "x\ufffdy\U0001f600"
    assert [int(span["data-id"]) for span in parser.spans] == tok.encode(text)


def test_invisible_tokens_carry_a_marker_outside_their_text():
    tok = bytepair.Tokenizer(mode="char", base_tokens=["a", "\r", "\u200b", "\x07", "\n"])
    parser = _Spans()
    parser.feed(view_page("a\r\u200ba\x07\n", [("chars", tok)]))
    assert [(span["text"], span.get("data-shown")) for span in parser.spans] == [
        ("a", None),
        ("\r", "\u240d"),
        ("\u200b", "\\u200b"),
        ("a", None),
        ("\x07", "\u2407"),
        ("\n", None),  # a line break has its own mark
    ]


def test_invisible_characters_inside_a_token_carry_their_own_marker():
    # a token of visible characters with a zero-width space and a bidi override inside: each of
    # those is marked in an inner span; the token's text is unchanged; CR LF keeps one mark
    text = "a\u200bb \u202eevil\r\n"
    tok = bytepair.Tokenizer(
        mode="char",
        base_tokens=sorted(set(text)),
        merges=[("a", "\u200b"), ("a\u200b", "b"), ("\u202e", "e"), ("\u202ee", "v"), ("\r", "\n")],
    )
    parser = _Spans()
    parser.feed(view_page(text, [("chars", tok)]))
    assert [span["text"] for span in parser.spans] == ["a\u200bb", " ", "\u202eev", "i", "l", "\r\n"]
    assert [attrs["data-shown"] for attrs in parser.inner] == ["\\u200b", "\\u202e"]
    assert [int(span["data-id"]) for span in parser.spans] == tok.encode(text)


@pytest.mark.data
def test_sentencepiece_dummy_prefix_token_carries_a_marker():
    # Mistral cuts "2024" as "▁", "2", "0", ...: the first token is the dummy prefix alone, which
    # covers no character; drawn empty, it would be counted but could be neither seen nor hovered
    mistral = bytepair.load("mistral", path=data_file("vocab/mistral/tokenizer.model.v1"))
    text = "2024 <s>1"
    parser = _Spans()
    parser.feed(view_page(text, [("mistral", mistral)], allowed_special="all"))
    assert [int(span["data-id"]) for span in parser.spans] == mistral.encode(text, allowed_special="all")
    assert "".join(span["text"] for span in parser.spans) == text
    empty = [span for span in parser.spans if span["data-start"] == span["data-end"]]
    assert [span["data-id"] for span in empty] == ["28705", "28705"]  # before "2024" and after "<s>"
    for span in empty:
        assert span["data-shown"] == "\u2581" and "z" in span["class"].split()
        assert span["title"] == "id 28705 · no bytes of the text"


def test_normalization_offsets_refer_to_the_normalized_text():
    tok = bytepair.Tokenizer(mode="byte", normalization="NFKC")
    page = view_page("ﬁ", [("nfkc", tok)])
    assert "offsets refer to the normalized text" in page
    assert [(s.start, s.end) for s in token_spans(tok, "ﬁ")] == [(0, 1), (1, 2)]  # "fi"


class _Spans(HTMLParser):
    """Token spans (attributes and text) and any elements other than the page's own."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.spans, self.tags, self._open, self._depth = [], set(), None, 0
        self.inner = []  # the attributes of spans inside token spans

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        if tag == "span" and self._open is not None:
            self._depth += 1
            self.inner.append(attrs)
        elif tag == "span" and "t" in attrs.get("class", "").split():
            self._open = {**attrs, "text": ""}
            self.spans.append(self._open)

    def handle_endtag(self, tag):
        if tag == "span" and self._depth:
            self._depth -= 1
        elif tag == "span":
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data


def test_everything_is_html_escaped():
    tok = bytepair.Tokenizer(mode="byte", merges=[(b"<", b"s")])
    text = '<script>alert("x")</script> & &amp; \' "'
    parser = _Spans()
    parser.feed(view_page(text, [('<b>"label"</b>', tok)], title="<i>title</i>"))
    assert "b" not in parser.tags and "i" not in parser.tags
    assert "".join(span["text"] for span in parser.spans) == text
    assert [int(span["data-id"]) for span in parser.spans] == tok.encode(text)


@pytest.mark.data
def test_page_is_self_contained(cl100k):
    page = view_page("hello world", [("cl100k_base", cl100k)])
    assert not re.search(r"(src|href)\s*=|https?://|@import|url\(", page)


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["view", "text", "-t", str(tmp_path / "missing.json"), "-o", str(tmp_path / "p.html")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error:") and error.count("\n") == 1
    assert not (tmp_path / "p.html").exists()
    char = bytepair.Tokenizer(mode="char", base_tokens="ab")
    char.save(tmp_path / "ab.json")
    assert main(["view", "abc", "-t", str(tmp_path / "ab.json"), "-o", str(tmp_path / "p.html")]) == 2
    assert "'c'" in capsys.readouterr().err
    assert not (tmp_path / "p.html").exists()


def test_cli_reads_a_file_and_cuts_max_chars(tmp_path):
    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    (tmp_path / "in.txt").write_text("hello there", encoding="utf-8")
    assert (
        main(
            [
                "view",
                str(tmp_path / "in.txt"),
                "-t",
                str(tmp_path / "bytes.json"),
                "--max-chars",
                "5",
                "-o",
                str(tmp_path / "p.html"),
            ]
        )
        == 0
    )
    parser = _Spans()
    parser.feed((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert "".join(span["text"] for span in parser.spans) == "hello"


def test_cli_error_names_the_tokenizer_whose_panel_cannot_be_drawn(tmp_path, capsys):
    bytepair.Tokenizer(mode="byte").save(tmp_path / "bytes.json")
    bytepair.Tokenizer(mode="char", base_tokens="ab").save(tmp_path / "ab.json")
    special = bytepair.Tokenizer(mode="byte", special_tokens=["<|x|>"])
    special.save(tmp_path / "special.json")
    tokenizers = ["-t", str(tmp_path / "bytes.json"), "-t", str(tmp_path / "ab.json")]
    assert main(["view", "abc", *tokenizers, "-o", str(tmp_path / "p.html")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: tokenizer 'ab': ") and "'c'" in error and error.count("\n") == 1
    tokenizers = ["-t", str(tmp_path / "special.json"), "-t", str(tmp_path / "bytes.json")]
    assert main(["view", "a<|x|>", *tokenizers, "--allowed-special", "<|x|>", "-o", str(tmp_path / "p.html")]) == 2
    assert capsys.readouterr().err.startswith("error: tokenizer 'bytes': allowed_special names ['<|x|>']")
    assert not (tmp_path / "p.html").exists()


def test_cli_page_to_standard_output_is_the_page_alone(tmp_path, capsys):
    # -o /dev/stdout (what the refusal of -o - suggests): the report line goes to standard error
    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    assert main(["view", "hi", "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"wrote {tmp_path / 'p.html'} (2 characters")


def test_cli_shows_a_long_file_in_part_unless_asked_for_more(tmp_path, capsys):
    from bytepair.view.cli import VIEW_MAX_CHARS

    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    (tmp_path / "long.txt").write_text("word " * VIEW_MAX_CHARS, encoding="utf-8")  # five times the cap
    args = ["view", str(tmp_path / "long.txt"), "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]
    assert main(args) == 0
    assert f"showing the first {VIEW_MAX_CHARS:,} of {5 * VIEW_MAX_CHARS:,} characters" in capsys.readouterr().err
    parser = _Spans()
    parser.feed((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert len("".join(span["text"] for span in parser.spans)) == VIEW_MAX_CHARS
    assert main([*args, "--max-chars", str(2 * VIEW_MAX_CHARS)]) == 0
    assert "showing the first" not in capsys.readouterr().err
    parser = _Spans()
    parser.feed((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert len("".join(span["text"] for span in parser.spans)) == 2 * VIEW_MAX_CHARS


def test_cli_keeps_a_page_of_many_tokens_a_character_within_its_token_budget(tmp_path, capsys, monkeypatch):
    # Chinese with gpt2 is 2-3 tokens a character, an emoji 3-4: the character cap alone let such
    # a page grow to 200 MB; here a byte tokenizer makes each of these characters 3 tokens
    from bytepair.view import cli as view_cli

    monkeypatch.setattr(view_cli, "VIEW_MAX_TOKENS", 3000)
    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    (tmp_path / "zh.txt").write_text("你好" * 1000, encoding="utf-8")  # 6,000 tokens
    args = ["view", str(tmp_path / "zh.txt"), "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]
    assert main(args) == 0
    assert "showing the first 1,000 of 2,000 characters (2,000 of them would be 6,000 tokens" in capsys.readouterr().err
    parser = _Spans()
    parser.feed((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert "".join(span["text"] for span in parser.spans) == "你好" * 500
    assert main([*args, "--max-chars", "2000"]) == 0  # asked for: shown whole
    assert "showing the first" not in capsys.readouterr().err
    parser = _Spans()
    parser.feed((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert len(parser.spans) == 6000


def test_cli_text_argument_that_is_not_utf8_shows_u_fffd(tmp_path, capsys):
    # Python hands an argument's bad bytes over as lone surrogates (surrogateescape): b"x\xffy"
    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    assert main(["view", "x\udcffy", "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]) == 0
    assert "not UTF-8 (byte 1: b'\\xff')" in capsys.readouterr().err
    parser = _Spans()
    parser.feed((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert "".join(span["text"] for span in parser.spans) == "x\ufffdy"
    # a file whose name is not UTF-8 is read, its name shown with U+FFFD
    name = tmp_path / os.fsdecode(b"n\xffame.txt")
    name.write_text("hi", encoding="utf-8")
    assert main(["view", str(name), "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]) == 0
    assert "<title>bytepair view: n\ufffdame.txt</title>" in (tmp_path / "p.html").read_text(encoding="utf-8")


def test_cli_empty_text_argument_is_an_empty_text(tmp_path):
    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    assert main(["view", "", "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]) == 0
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    parser = _Spans()
    parser.feed(page)
    assert parser.spans == [] and "0 characters, 0 bytes" in page


def test_cli_refuses_a_device_and_reads_a_fifo(tmp_path, capsys):
    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    assert main(["view", os.devnull, "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error:") and error.count("\n") == 1 and "is a device" in error
    assert not (tmp_path / "p.html").exists()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=("from a fifo",), kwargs={"encoding": "utf-8"})
    writer.start()
    try:
        assert main(["view", str(fifo), "-t", str(tmp_path / "bytes.json"), "-o", str(tmp_path / "p.html")]) == 0
    finally:
        writer.join()
    parser = _Spans()
    parser.feed((tmp_path / "p.html").read_text(encoding="utf-8"))
    assert "".join(span["text"] for span in parser.spans) == "from a fifo"


@pytest.mark.skipif(not os.path.exists("/proc/version"), reason="needs /proc (Linux)")
def test_cli_output_that_cannot_be_written_is_one_error_naming_it(tmp_path, capsys):
    # /proc lets no file be made beside /proc/version (where the page is staged), even for root
    tok = bytepair.Tokenizer(mode="byte")
    tok.save(tmp_path / "bytes.json")
    assert main(["view", "hi", "-t", str(tmp_path / "bytes.json"), "-o", "/proc/version"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: -o '/proc/version'") and error.count("\n") == 1 and ".tmp" not in error


def test_compare_html_from_the_command_line(tmp_path):
    tok = bytepair.Tokenizer(mode="byte", merges=[(b"a", b"b")])
    tok.save(tmp_path / "ab.json")
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "one.txt").write_text("ababab", encoding="utf-8")
    (folder / "two.txt").write_text("abc", encoding="utf-8")
    page = tmp_path / "compare.html"
    assert main(["compare", str(folder), "-t", str(tmp_path / "ab.json"), "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    rows = re.findall(r'<tr><td class="name">(\w+)</td>', text)
    assert rows == ["one", "two"]
    assert re.search(r'<td data-value="3">3</td>', text) and re.search(r'<td data-value="2">2</td>', text)


def test_compare_table_shows_long_tokenizer_names_whole(tmp_path, capsys):
    # two names alike in their first 26 characters: each column group is headed by its whole name
    tok = bytepair.Tokenizer(mode="byte", merges=[(b"a", b"b")])
    names = ["wikitext_bytelevel_vocab8000_v1", "wikitext_bytelevel_vocab8000_v2"]
    for name in names:
        tok.save(tmp_path / f"{name}.json")
    (tmp_path / "in.txt").write_text("ababab", encoding="utf-8")
    args = ["compare", str(tmp_path / "in.txt"), "-t", str(tmp_path / f"{names[0]}.json")]
    assert main([*args, "-t", str(tmp_path / f"{names[1]}.json")]) == 0
    heading, units, row = capsys.readouterr().out.splitlines()
    assert [group.strip() for group in heading.split(" | ")[1:]] == names
    assert row.split() == ["in", "6", "6", "|", "3", "2.000", "2.000", "|", "3", "2.000", "2.000"]
    assert [line.index("|", 40) for line in (heading, units, row)] == [heading.index("|", 40)] * 3  # aligned


def test_live_server_answers_panels():
    tok = bytepair.Tokenizer(mode="byte", merges=[(b"h", b"i")])
    server = live_server([("hi", tok)], port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        with urllib.request.urlopen(base + "/", timeout=10) as reply:
            assert "<textarea" in reply.read().decode("utf-8")
        request = urllib.request.Request(base + "/panels", data=b"hi <b>", method="POST")
        with urllib.request.urlopen(request, timeout=10) as reply:
            parser = _Spans()
            parser.feed(reply.read().decode("utf-8"))
        assert [int(s["data-id"]) for s in parser.spans] == tok.encode("hi <b>")
        assert "".join(s["text"] for s in parser.spans) == "hi <b>"
    finally:
        server.shutdown()
        server.server_close()


def test_live_server_answers_400_to_a_bad_content_length(capsys):
    tok = bytepair.Tokenizer(mode="byte")
    server = live_server([("bytes", tok)], port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for length in ("abc", "-5", "9" * 5000):
            connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
            connection.putrequest("POST", "/panels")
            connection.putheader("Content-Length", length)
            connection.endheaders(b"hi")
            reply = connection.getresponse()
            assert reply.status == 400
            assert reply.read().decode("utf-8").startswith("Content-Length must be a byte count")
            connection.close()
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in capsys.readouterr().err
