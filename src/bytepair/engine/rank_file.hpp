// A tiktoken rank file (`base64-token SPACE rank NEWLINE` per line) parsed from its bytes in
// one pass: the tokens decoded back to back, and the ranks.
//
// Python twin: bytepair.formats.tiktoken_files._read_ranks_numpy (the same files accepted, the
// same tokens and ranks); parity tests in tests/engine/test_engine_load.py.
//
// Only the published layout is read here; anything else (a blank line, CRLF, a tab, a bad
// character, a rank given twice, a rank far past the number of lines) makes parse_rank_lines
// return false, and the caller reads the file line by line, which names the bad line. Why:
// splitting, decoding and int() in Python took ~0.08 s of cl100k's load (bench/RESULTS.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bp {

struct RankLines {
    std::vector<uint8_t> bytes;  // every token's bytes, back to back
    std::vector<size_t> ends;    // token k is bytes[ends[k - 1], ends[k])
    std::vector<uint64_t> ranks;
};

namespace rank_file_detail {

static const uint8_t BAD = 0xFF;

struct Base64Table {
    uint8_t value[256];
    Base64Table() {
        for (int c = 0; c < 256; ++c) value[c] = BAD;
        const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int k = 0; k < 64; ++k) value[uint8_t(alphabet[k])] = uint8_t(k);
    }
};

inline const Base64Table& base64_table() {
    static const Base64Table table;
    return table;
}

// Decodes p[0, n) (n a multiple of 4, at least 4; at most two '=' and only at the end, as
// strict base64 requires) onto out; false for anything else. Like binascii.a2b_base64, the
// unused low bits of the last character are dropped.
inline bool decode_base64(const uint8_t* p, size_t n, std::vector<uint8_t>& out) {
    if (n < 4 || n % 4) return false;
    size_t pads = p[n - 1] == '=' ? (p[n - 2] == '=' ? 2 : 1) : 0;
    const uint8_t* value = base64_table().value;
    size_t full = n - 4;  // groups before the last
    for (size_t i = 0; i < full; i += 4) {
        uint8_t a = value[p[i]], b = value[p[i + 1]], c = value[p[i + 2]], d = value[p[i + 3]];
        if ((a | b | c | d) & 0xC0) return false;  // BAD has the top bits set, a sextet never
        uint32_t v = (uint32_t(a) << 18) | (uint32_t(b) << 12) | (uint32_t(c) << 6) | d;
        out.push_back(uint8_t(v >> 16));
        out.push_back(uint8_t(v >> 8));
        out.push_back(uint8_t(v));
    }
    const uint8_t* q = p + full;
    uint8_t a = value[q[0]], b = value[q[1]];
    uint8_t c = pads == 2 ? 0 : value[q[2]], d = pads >= 1 ? 0 : value[q[3]];
    if ((a | b | c | d) & 0xC0) return false;
    uint32_t v = (uint32_t(a) << 18) | (uint32_t(b) << 12) | (uint32_t(c) << 6) | d;
    out.push_back(uint8_t(v >> 16));
    if (pads < 2) out.push_back(uint8_t(v >> 8));
    if (pads < 1) out.push_back(uint8_t(v));
    return true;
}

}  // namespace rank_file_detail

// Parses data[0, n) into `out`: true when every line is exactly one strict base64 token, one
// space and decimal digits (a '+' and leading zeros allowed, as int() reads them), each line
// ending in '\n' except perhaps the last, no rank given twice and every rank below
// `count + gap` (count: the lines). False for anything else, `out` then meaningless. A token
// given twice is the caller's to find (it builds the dict of tokens anyway).
inline bool parse_rank_lines(const uint8_t* data, size_t n, uint64_t gap, RankLines& out) {
    using namespace rank_file_detail;
    out.bytes.clear();
    out.ends.clear();
    out.ranks.clear();
    if (n == 0) return false;
    out.bytes.reserve(n / 4 * 3);
    size_t i = 0;
    uint64_t max_rank = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && data[i] != ' ' && data[i] != '\n') ++i;
        if (i == n || data[i] != ' ') return false;
        if (!decode_base64(data + start, i - start, out.bytes)) return false;
        ++i;  // the space
        if (i < n && data[i] == '+') ++i;  // as int() reads it
        size_t digits = i;
        uint64_t rank = 0;
        while (i < n && data[i] != '\n') {
            unsigned digit = unsigned(data[i]) - '0';
            if (digit > 9 || rank > (UINT64_MAX - 9) / 10) return false;  // too big: the caller's int()
            rank = rank * 10 + digit;
            ++i;
        }
        if (i == digits) return false;
        if (i < n) ++i;  // the newline
        out.ends.push_back(out.bytes.size());
        out.ranks.push_back(rank);
        if (rank > max_rank) max_rank = rank;
    }
    size_t count = out.ranks.size();
    if (max_rank >= count + gap) return false;
    std::vector<bool> seen(size_t(max_rank) + 1, false);
    for (uint64_t rank : out.ranks) {
        if (seen[size_t(rank)]) return false;
        seen[size_t(rank)] = true;
    }
    return true;
}

}  // namespace bp
