// tiktoken's pair table from token bytes: every split of a token into two tokens.
//
// Python twin: bytepair.model.tiktoken_pair_table (numpy, hashed slices); parity tests in
// tests/engine/test_engine_load.py (`_engine.token_splits`).
//
// Design, and why: looking up both sides of every cut in the whole-piece table took ~0.1 s on
// cl100k (906K look-ups, nearly each a cache miss in an 8 MB table). Without hashing: with the
// tokens sorted by their bytes, the tokens that are prefixes of a token are exactly those on a
// stack kept while walking the sorted order (pop what is not a prefix of the next token; every
// token between a prefix and the token in sorted order starts with that prefix, so it is never
// popped early). The top is the token's longest token prefix, and that one's own longest token
// prefix is the next shorter one: a chain of links (`Link::parent`) gives them all. The same
// over the tokens sorted by their reversed bytes gives the suffix chain, and a split is a
// length in the prefix chain whose remainder is a length in the suffix chain. Work: two radix
// sorts of n 16-byte entries (8 bytes of key) and two linear walks (tokens of up to 8 bytes
// compared by key; longer ones by memcmp, bounded by both tokens' lengths; each token pushed
// and popped once), the prefix side and the suffix side on two threads, then the chains, in
// arrays of 12 bytes per token. cl100k: 233K splits in about a third of the look-ups' time
// (the numbers at EncoderCore::add_token_splits).
//
// Tokens with the same bytes: the first given is the one a split names as a side (as the
// whole-piece table, which keeps the first), and every one of them gets its own splits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "threads.hpp"

namespace bp {

struct TokenRef {
    const uint8_t* bytes;  // the caller's buffer
    size_t length;         // at least 1
    uint32_t id;
};

namespace splits_detail {

static const uint32_t NONE = 0xFFFFFFFFu;

struct Keyed {
    uint64_t key;     // the first (or last, reversed) 8 bytes, most significant first, 0-padded
    uint32_t index;   // into the tokens
    uint32_t length;  // the token's length, or LONG above 8 (then see the token itself)
};
static const uint32_t LONG = 9;

// 0-padding keeps key order consistent with byte order: a shorter token that agrees on its
// bytes sorts first unless the longer continues with zero bytes, and equal keys are compared
// in full.
inline uint64_t head_key(const uint8_t* p, size_t n) {
    uint64_t key = 0;
    size_t m = n < 8 ? n : 8;
    for (size_t i = 0; i < m; ++i) key |= uint64_t(p[i]) << (56 - 8 * i);
    return key;
}

inline uint64_t tail_key(const uint8_t* p, size_t n) {
    uint64_t key = 0;
    size_t m = n < 8 ? n : 8;
    for (size_t i = 0; i < m; ++i) key |= uint64_t(p[n - 1 - i]) << (56 - 8 * i);
    return key;
}

// <0, 0, >0: a against b by bytes (reversed: from the last byte back), then by length.
inline int compare(const TokenRef& a, const TokenRef& b, bool reversed) {
    size_t m = a.length < b.length ? a.length : b.length;
    if (!reversed) {
        int c = m ? std::memcmp(a.bytes, b.bytes, m) : 0;
        if (c) return c;
    } else {
        const uint8_t* x = a.bytes + a.length;
        const uint8_t* y = b.bytes + b.length;
        for (size_t i = 1; i <= m; ++i)
            if (x[-ptrdiff_t(i)] != y[-ptrdiff_t(i)]) return int(x[-ptrdiff_t(i)]) - int(y[-ptrdiff_t(i)]);
    }
    return a.length < b.length ? -1 : (a.length > b.length ? 1 : 0);
}

// Sorts by key, then bytes, then index: a stable LSD radix sort of the keys in 16-bit digits
// (a digit with one value everywhere skipped), then each run of equal keys (cl100k: at most
// 138 tokens) by comparison. std::sort of the whole with the comparison took ~3x longer.
inline void sort_tokens(const std::vector<TokenRef>& tokens, bool reversed, std::vector<Keyed>& order) {
    size_t n = order.size();
    std::vector<Keyed> other(n);
    std::vector<size_t> counts(size_t(4) << 16, 0);
    for (const Keyed& e : order)
        for (int d = 0; d < 4; ++d) ++counts[(size_t(d) << 16) | ((e.key >> (16 * d)) & 0xFFFF)];
    for (int d = 0; d < 4 && n; ++d) {
        size_t* count = &counts[size_t(d) << 16];
        if (count[(order[0].key >> (16 * d)) & 0xFFFF] == n) continue;
        size_t sum = 0;
        for (size_t v = 0; v < 0x10000; ++v) {
            size_t c = count[v];
            count[v] = sum;
            sum += c;
        }
        for (const Keyed& e : order) other[count[(e.key >> (16 * d)) & 0xFFFF]++] = e;
        order.swap(other);
    }
    auto less = [&](const Keyed& a, const Keyed& b) {
        int c = compare(tokens[a.index], tokens[b.index], reversed);
        return c ? c < 0 : a.index < b.index;  // the first given of equal tokens first
    };
    for (size_t begin = 0, end; begin < n; begin = end) {
        end = begin + 1;
        while (end < n && order[end].key == order[begin].key) ++end;
        if (end - begin > 1) std::sort(order.begin() + begin, order.begin() + end, less);
    }
}

// Whether a is a proper prefix (reversed: suffix) of b; tokens of up to 8 bytes by their keys.
inline bool starts(const std::vector<TokenRef>& tokens, const Keyed& a, const Keyed& b, bool reversed) {
    if (a.length < LONG) return b.length > a.length && ((a.key ^ b.key) >> (64 - 8 * a.length)) == 0;
    if (b.length < LONG || a.key != b.key) return false;
    const TokenRef& x = tokens[a.index];
    const TokenRef& y = tokens[b.index];
    if (x.length >= y.length) return false;
    // the 8 bytes in the keys are equal; the rest
    if (reversed) return std::memcmp(x.bytes, y.bytes + (y.length - x.length), x.length - 8) == 0;
    return std::memcmp(x.bytes + 8, y.bytes + 8, x.length - 8) == 0;
}

inline bool same(const std::vector<TokenRef>& tokens, const Keyed& a, const Keyed& b) {
    if (a.key != b.key || a.length != b.length) return false;
    if (a.length < LONG) return true;
    const TokenRef& x = tokens[a.index];
    const TokenRef& y = tokens[b.index];
    return x.length == y.length && std::memcmp(x.bytes, y.bytes, x.length) == 0;
}

// A token's longest proper token prefix (or suffix), with what the chains read of the token
// itself, so that a step of a chain is one load from an array of 12 bytes per token (reading
// the TokenRefs instead made these loads most of the derivation's time, perf).
struct Link {
    uint32_t parent;  // an index into the tokens, or NONE
    uint32_t length;  // the token's length, SATURATED from there on (then see the token)
    uint32_t id;
};
static const uint32_t SATURATED = 0xFFFFFFFFu;

// The links of every token (reversed: by suffixes). A token whose bytes an earlier one has
// gets that one's parent and is never a parent.
inline void parents(const std::vector<TokenRef>& tokens, bool reversed, std::vector<Link>& link) {
    size_t n = tokens.size();
    std::vector<Keyed> order(n);
    link.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const TokenRef& t = tokens[i];
        uint64_t key = reversed ? tail_key(t.bytes, t.length) : head_key(t.bytes, t.length);
        order[i] = {key, uint32_t(i), t.length < LONG ? uint32_t(t.length) : LONG};
        link[i] = {NONE, t.length < SATURATED ? uint32_t(t.length) : SATURATED, t.id};
    }
    sort_tokens(tokens, reversed, order);
    std::vector<Keyed> stack;  // each a proper prefix of the next
    for (const Keyed& t : order) {
        if (!stack.empty() && same(tokens, stack.back(), t)) {
            link[t.index].parent = link[stack.back().index].parent;  // the same bytes again
            continue;
        }
        while (!stack.empty() && !starts(tokens, stack.back(), t, reversed)) stack.pop_back();
        link[t.index].parent = stack.empty() ? NONE : stack.back().index;
        stack.push_back(t);
    }
}

inline size_t length_of(const std::vector<TokenRef>& tokens, const Link* link, uint32_t i) {
    return link[i].length != SATURATED ? link[i].length : tokens[i].length;
}

}  // namespace splits_detail

// Calls emit(left id, right id, whole id) for every split of every token into a token that
// ends at the cut and one that starts there (lengths >= 1 both), in no particular order.
template <class Emit>
void for_each_token_split(const std::vector<TokenRef>& tokens, Emit&& emit) {
    using splits_detail::NONE;
    using splits_detail::length_of;
    std::vector<splits_detail::Link> prefix_links, suffix_links;
    side_by_side([&] { splits_detail::parents(tokens, false, prefix_links); },
                 [&] { splits_detail::parents(tokens, true, suffix_links); });
    const splits_detail::Link* prefix = prefix_links.data();
    const splits_detail::Link* suffix = suffix_links.data();
    std::vector<std::pair<size_t, uint32_t>> suffixes;  // one token's (length, id), longest first
    for (size_t w = 0; w < tokens.size(); ++w) {
        if (prefix[w].parent == NONE || suffix[w].parent == NONE) continue;  // a byte: no cut
        size_t n = tokens[w].length;
        suffixes.clear();
        for (uint32_t s = suffix[w].parent; s != NONE; s = suffix[s].parent)
            suffixes.push_back({length_of(tokens, suffix, s), suffix[s].id});
        // Prefixes longest first need suffixes shortest first: walk both once.
        size_t j = suffixes.size();
        for (uint32_t p = prefix[w].parent; p != NONE && j > 0; p = prefix[p].parent) {
            size_t need = n - length_of(tokens, prefix, p);
            while (j > 0 && suffixes[j - 1].first < need) --j;
            if (j > 0 && suffixes[j - 1].first == need) emit(prefix[p].id, suffixes[j - 1].second, tokens[w].id);
        }
    }
}

// The same splits as three columns of ids (for the parity tests and any caller without a
// lambda).
inline void token_split_columns(const std::vector<TokenRef>& tokens, std::vector<uint32_t>& left,
                                std::vector<uint32_t>& right, std::vector<uint32_t>& whole) {
    for_each_token_split(tokens, [&](uint32_t a, uint32_t b, uint32_t w) {
        left.push_back(a);
        right.push_back(b);
        whole.push_back(w);
    });
}

}  // namespace bp
