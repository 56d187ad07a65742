// The pre-tokenizer scanner: the named patterns of bytepair.patterns, hand-compiled.
//
// Python twin: bytepair.patterns.split (the `regex` module on the exact pattern strings). With
// the `regex` module's Unicode tables it must give exactly the same pieces for every input;
// tests/engine/test_scanner.py checks that with hypothesis and on real multilingual text. It does not encode, and it knows no custom regex.
//
// How: regex semantics is "at each position, the first alternative that matches, with its
// quantifiers' backtracking". Each `*_end` function below walks one pattern's alternatives in
// order and returns where the piece starting at `i` ends; the comment on each branch is the
// alternative it implements. Character classes come from a table of per-code-point flags, one
// per Unicode version the scanner emulates (`Unicode` below): U_REGEX is filled from the `regex`
// module itself (`_char_tables` in _scan.pxi, through set_flags and add_fold), so the scanner
// agrees with `patterns.split` on every script and on what \s means (it is not str.isspace:
// \x1c-\x1f are not in it); U_16_0 is filled from the generated ranges in unicode_tables.hpp,
// the tables compiled into tiktoken 0.14 (Rust regex) and HF tokenizers 0.23 (Oniguruma), so a
// vocabulary loaded from them gets exactly their pieces for every code point
// (tests/peers/test_unicode_tables.py). Only the tables differ: the code is the same.
//
// Complexity: one pass, O(1) work per character, except that the whitespace alternatives
// re-read at most the one whitespace run they end in. Speed (bench/run.py --only encode,
// "split", cl100k, WikiText-2 and stdlib source): about 10x the `regex` module on the same
// pattern, str pieces included. Why this shape: Python already stores a str as fixed-width code
// points (1, 2 or 4 bytes), so the scanner is a template over that width and reads them in
// place, with no UTF-8 decoding; one flag byte per code point answers every class test with
// one load.
#pragma once

#include <cstdint>
#include <cstddef>
#include <vector>
#include <utility>

#include "unicode_tables.hpp"

namespace bp {

// Per-code-point class flags.
enum : uint8_t {
    F_L = 1,     // \p{L}
    F_N = 2,     // \p{N}
    F_S = 4,     // \s
    F_U = 8,     // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]   (o200k's "upper" class)
    F_W = 16,    // [\p{Ll}\p{Lm}\p{Lo}\p{M}]          (o200k's "lower" class)
    F_FOLD = 32  // non-ASCII, equal to a contraction letter under (?i:...), e.g. U+017F
};
enum Pattern : int { P_NONE = 0, P_GPT2 = 1, P_CL100K = 2, P_O200K = 3, P_LLAMA3 = 4 };
// Whose Unicode tables answer the class tests: the `regex` module's (filled from Python), or
// a pinned version's generated ranges. U_REGEX_CASE is `regex`'s with o200k's case classes
// too, a table of its own so that a table is never written once scans read it: only o200k
// reads F_U and F_W, and reading them from `regex` costs 30 ms of every process's first scan.
enum Unicode : int { U_REGEX = 0, U_16_0 = 1, U_REGEX_CASE = 2, U_COUNT = 3 };

// One scanner id carries both: the pattern in the low byte, the Unicode tables above it, so
// that it travels through the encoder and the counter as the one int it always was.
// P_NONE is 0 whatever the tables.
inline int scanner_id(int pattern, int unicode) { return pattern == P_NONE ? P_NONE : pattern | (unicode << 8); }

// The class flags of every code point under one Unicode version.
struct CharClasses {
    uint8_t flags[0x110000];
    std::vector<std::pair<uint32_t, char>> fold_extra;  // non-ASCII cp -> letter

    inline uint8_t fl(uint32_t c) const { return flags[c]; }
    inline bool is_L(uint32_t c) const { return fl(c) & F_L; }
    inline bool is_N(uint32_t c) const { return fl(c) & F_N; }
    inline bool is_S(uint32_t c) const { return fl(c) & F_S; }
    // [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls (everything else)
    inline bool is_P(uint32_t c) const { return !(fl(c) & (F_L | F_N | F_S)); }
    // [^\r\n\p{L}\p{N}]: the optional one-character prefix of a letter run
    inline bool is_Q(uint32_t c) const { return !(fl(c) & (F_L | F_N)) && c != '\r' && c != '\n'; }
    // The letter c stands for inside (?i:...), or 0 (ASCII: its lower case).
    inline char fold_letter(uint32_t c) const {
        if (c < 128) return (c >= 'A' && c <= 'Z') ? char(c + 32) : char(c);
        if (!(fl(c) & F_FOLD)) return 0;
        for (const auto& entry : fold_extra) if (entry.first == c) return entry.second;
        return 0;
    }
};

inline CharClasses unicode_classes[U_COUNT];

inline void set_flags(int unicode, size_t start, size_t end, uint8_t bit) {
    for (size_t c = start; c < end && c < 0x110000; ++c) unicode_classes[unicode].flags[c] |= bit;
}
inline void add_fold(int unicode, uint32_t cp, char letter) {
    unicode_classes[unicode].flags[cp] |= F_FOLD;
    unicode_classes[unicode].fold_extra.emplace_back(cp, letter);
}

inline const uint8_t* class_flags(int unicode) { return unicode_classes[unicode].flags; }

template <size_t N> inline void set_ranges(int unicode, const CodeRange (&ranges)[N], uint8_t bit) {
    for (const auto& r : ranges) set_flags(unicode, r.first, size_t(r.last) + 1, bit);
}
// Fills a generated version's table (once, before any scan; the caller holds the GIL).
inline void fill_generated(int unicode) {
    if (unicode != U_16_0) return;
    set_ranges(unicode, u16_0_0::letter, F_L);
    set_ranges(unicode, u16_0_0::number, F_N);
    set_ranges(unicode, u16_0_0::space, F_S);
    set_ranges(unicode, u16_0_0::upper, F_U);
    set_ranges(unicode, u16_0_0::lower, F_W);
    for (const auto& f : u16_0_0::fold) add_fold(unicode, f.code_point, f.letter);
}

inline bool is_crlf(uint32_t c) { return c == '\r' || c == '\n'; }

// Length of the contraction 's 't 'm 'd 're 've 'll at i (s[i] == '\''), or 0.
template <class C>
inline size_t contraction_len(const CharClasses& cc, const C* s, size_t n, size_t i, bool ignore_case) {
    if (i + 1 >= n || s[i] != '\'') return 0;
    char a = ignore_case ? cc.fold_letter(s[i + 1]) : (s[i + 1] < 128 ? char(s[i + 1]) : 0);
    if (a == 's' || a == 'd' || a == 'm' || a == 't') return 2;
    if (i + 2 >= n) return 0;
    char b = ignore_case ? cc.fold_letter(s[i + 2]) : (s[i + 2] < 128 ? char(s[i + 2]) : 0);
    if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')) return 3;
    return 0;
}

template <class C> inline size_t run_of(const CharClasses& cc, const C* s, size_t n, size_t i, uint8_t bit) {
    while (i < n && (cc.fl(s[i]) & bit)) ++i;
    return i;
}
template <class C> inline size_t run_P(const CharClasses& cc, const C* s, size_t n, size_t i) {
    while (i < n && cc.is_P(s[i])) ++i;
    return i;
}
template <class C> inline size_t run_crlf(const C* s, size_t n, size_t i) {
    while (i < n && is_crlf(s[i])) ++i;
    return i;
}
template <class C> inline size_t digits_1_to_3(const CharClasses& cc, const C* s, size_t n, size_t i) {
    size_t end = i;
    while (end < n && end < i + 3 && cc.is_N(s[end])) ++end;
    return end;
}

// The whitespace alternatives. `end_first`: the pattern tries \s++$ before \s*[\r\n]
// (gpt2, cl100k); otherwise (o200k, llama3) \s*[\r\n]+ comes first and \s+(?!\S)
// takes a run that reaches the end. gpt2 has no [\r\n] alternative (`crlf` false).
template <class C>
inline size_t whitespace_end(const CharClasses& cc, const C* s, size_t n, size_t i, bool end_first, bool crlf) {
    size_t j = i, last_crlf = 0;
    bool seen_crlf = false;
    while (j < n && cc.is_S(s[j])) {
        if (is_crlf(s[j])) { seen_crlf = true; last_crlf = j; }
        ++j;
    }
    if (j == i) return i;                            // not whitespace
    if (end_first && j == n) return n;               // \s++$
    if (crlf && seen_crlf) return last_crlf + 1;     // \s*[\r\n] (greedy, backtracks)
    if (j == n) return n;                            // \s+(?!\S) at the end
    if (j - i >= 2) return j - 1;                    // \s+(?!\S): leave one for the word
    return i + 1;                                    // \s
}

// '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
template <class C> inline size_t gpt2_end(const CharClasses& cc, const C* s, size_t n, size_t i) {
    uint32_t c = s[i];
    if (c == '\'') {
        size_t k = contraction_len(cc, s, n, i, false);
        if (k) return i + k;
    }
    bool space = c == ' ' && i + 1 < n;
    if (space && cc.is_L(s[i + 1])) return run_of(cc, s, n, i + 1, F_L);   //  ?\p{L}++
    if (cc.is_L(c)) return run_of(cc, s, n, i, F_L);
    if (space && cc.is_N(s[i + 1])) return run_of(cc, s, n, i + 1, F_N);   //  ?\p{N}++
    if (cc.is_N(c)) return run_of(cc, s, n, i, F_N);
    if (space && cc.is_P(s[i + 1])) return run_P(cc, s, n, i + 1);         //  ?[^\s\p{L}\p{N}]++
    if (cc.is_P(c)) return run_P(cc, s, n, i);
    return whitespace_end(cc, s, n, i, true, false);
}

// '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+
// | ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
// and llama3, the same without possessives (which change nothing here) and with its
// whitespace alternatives in the other order: \s*[\r\n]+|\s+(?!\S)|\s+
template <class C>
inline size_t cl100k_end(const CharClasses& cc, const C* s, size_t n, size_t i, bool end_first) {
    uint32_t c = s[i];
    if (c == '\'') {
        size_t k = contraction_len(cc, s, n, i, true);
        if (k) return i + k;
    }
    if (cc.is_L(c)) return run_of(cc, s, n, i, F_L);                       // \p{L}++
    if (cc.is_Q(c) && i + 1 < n && cc.is_L(s[i + 1]))                      // [^\r\n\p{L}\p{N}]\p{L}++
        return run_of(cc, s, n, i + 1, F_L);
    if (cc.is_N(c)) return digits_1_to_3(cc, s, n, i);                      // \p{N}{1,3}
    if (c == ' ' && i + 1 < n && cc.is_P(s[i + 1]))                     //  ?[^\s\p{L}\p{N}]++[\r\n]*
        return run_crlf(s, n, run_P(cc, s, n, i + 1));
    if (cc.is_P(c)) return run_crlf(s, n, run_P(cc, s, n, i));
    return whitespace_end(cc, s, n, i, end_first, true);
}

// o200k's letter alternatives, from `start` (after the optional prefix):
//   upper_first: [U]*[W]+(contraction)?   (greedy [U]*, backtracking to leave one W)
//   otherwise:   [U]+[W]*(contraction)?
// Returns the end, or 0 when the alternative does not match here.
template <class C>
inline size_t o200k_word_end(const CharClasses& cc, const C* s, size_t n, size_t start, bool upper_first) {
    size_t upper_end = run_of(cc, s, n, start, F_U);
    size_t lower_start;
    if (upper_first) {
        // the longest [U]* whose next character is W: [U]* gives back U-and-W characters
        lower_start = upper_end;
        if (!(lower_start < n && (cc.fl(s[lower_start]) & F_W))) {
            while (lower_start > start && !(cc.fl(s[lower_start - 1]) & F_W)) --lower_start;
            if (lower_start == start) return 0;
            --lower_start;
        }
    } else {
        if (upper_end == start) return 0;
        lower_start = upper_end;
    }
    size_t end = run_of(cc, s, n, lower_start, F_W);
    return end + contraction_len(cc, s, n, end, true);
}

// [^\r\n\p{L}\p{N}]?[U]*[W]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
// |[^\r\n\p{L}\p{N}]?[U]+[W]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
// |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
template <class C> inline size_t o200k_end(const CharClasses& cc, const C* s, size_t n, size_t i) {
    uint32_t c = s[i];
    bool prefix = cc.is_Q(c) && i + 1 < n;
    for (int upper_first = 1; upper_first >= 0; --upper_first) {
        // the optional prefix is greedy: with it first, then without (marks are both)
        size_t end = prefix ? o200k_word_end(cc, s, n, i + 1, upper_first) : 0;
        if (!end) end = o200k_word_end(cc, s, n, i, upper_first);
        if (end) return end;
    }
    if (cc.is_N(c)) return digits_1_to_3(cc, s, n, i);
    size_t end = 0;
    if (c == ' ' && i + 1 < n && cc.is_P(s[i + 1])) end = run_P(cc, s, n, i + 1);
    else if (cc.is_P(c)) end = run_P(cc, s, n, i);
    if (end) {
        while (end < n && (is_crlf(s[end]) || s[end] == '/')) ++end;   // [\r\n/]*
        return end;
    }
    return whitespace_end(cc, s, n, i, false, true);
}

// Where the piece that starts at i ends; i itself when nothing matches there (the `regex`
// module then tries the next position).
template <class C>
inline size_t piece_end(const CharClasses& cc, int pattern, const C* s, size_t n, size_t i) {
    switch (pattern) {
        case P_GPT2: return gpt2_end(cc, s, n, i);
        case P_CL100K: return cl100k_end(cc, s, n, i, true);
        case P_O200K: return o200k_end(cc, s, n, i);
        case P_LLAMA3: return cl100k_end(cc, s, n, i, false);
        default: return n;
    }
}

// A Python str's code units, read in place: kind 1, 2 or 4 bytes per code point.
struct TextRef {
    int kind;
    const void* data;
    size_t length;
    bool ascii;  // every code point < 128: a kind-1 text is then its own UTF-8
};

// f(units): the text's code units as const uint8_t*, uint16_t* or uint32_t*, by its kind.
template <class F> inline void with_code_units(const TextRef& t, F&& f) {
    if (t.kind == 1) f(static_cast<const uint8_t*>(t.data));
    else if (t.kind == 2) f(static_cast<const uint16_t*>(t.data));
    else f(static_cast<const uint32_t*>(t.data));
}

// Iterates the pieces of one text: while (scanner.next(start, end)) ...
template <class C> struct Scanner {
    const C* s;
    size_t n;
    int pattern;
    const CharClasses& cc;
    size_t pos = 0;
    // scanner: a scanner_id (pattern and Unicode tables)
    Scanner(const C* text, size_t length, int scanner)
        : s(text), n(length), pattern(scanner & 0xFF), cc(unicode_classes[(scanner >> 8) % U_COUNT]) {}
    inline bool next(size_t& start, size_t& end) {
        while (pos < n) {
            size_t stop = piece_end(cc, pattern, s, n, pos);
            if (stop > pos) { start = pos; end = stop; pos = stop; return true; }
            ++pos;
        }
        return false;
    }
};

// All piece boundaries of a text given as Python's 1/2/4-byte code point array.
inline void scan_bounds(int scanner, int kind, const void* data, size_t n,
                        std::vector<size_t>& bounds) {
    with_code_units(TextRef{kind, data, n, false}, [&](auto s) {
        Scanner pieces(s, n, scanner);
        size_t start, end;
        while (pieces.next(start, end)) {
            bounds.push_back(start);
            bounds.push_back(end);
        }
    });
}

}  // namespace bp
