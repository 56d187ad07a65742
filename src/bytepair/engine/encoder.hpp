// The encoder: text -> ids for one vocabulary, by scanning, looking up and merging pieces.
//
// Python twins: bytepair.reference.encode_piece for the rule "replay" (`monotonic`), and
// reference.merge_by_rank for tiktoken's and HF's rules (`whole_piece`, no monotonic
// restriction), piece by piece over bytepair.patterns.split; see docs/internals.md for the
// contract and tests/engine/test_engine_encode.py for the parity tests. It does not handle special
// tokens, normalization or custom regexes: the Python layer does.
//
// Design, and why:
// - One piece at a time, from its initial symbols (bytes, or characters mapped to base ids),
//   merged by the pair table (merge.hpp, pair_table.hpp); in byte mode a character enters as
//   its token where that is exact (char_tokens.hpp).
// - A whole-piece lookup first (tiktoken's and HF's vocabularies hold most pieces as one
//   token), in tables shared by every thread, so no thread learns a single-token piece again;
//   then the worker's cache (worker_pool.hpp), which then only holds what merging made; then
//   merging.
// - Keys are the piece's UTF-8 (hashing.hpp); a piece of ASCII code units is its own UTF-8 and
//   is packed without encoding.
// - The GIL is released while scanning and merging; batches run on plain std::threads
//   (threads.hpp), each with its own worker taken from the pool.
// Result: 5-7x tiktoken's single-thread encode_ordinary on cl100k (bench/run.py --only encode).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "char_tokens.hpp"
#include "cuts.hpp"
#include "hashing.hpp"
#include "merge.hpp"
#include "pair_table.hpp"
#include "piece_cuts.hpp"
#include "piece_maps.hpp"
#include "scanner.hpp"
#include "threads.hpp"
#include "token_splits.hpp"
#include "worker_pool.hpp"

namespace bp {

static const uint32_t NO_ID = 0xFFFFFFFFu;

inline uint8_t* put_utf8(uint32_t c, uint8_t* o) {
    unsigned bytes;
    uint32_t u = utf8_of(c, bytes);
    for (unsigned k = 0; k < bytes; ++k) *o++ = uint8_t(u >> (8 * k));
    return o;
}

// The buffer keeps SHORT_KEY bytes past the longest possible encoding, for pack_padded.
template <class C> inline void utf8_encode(const C* p, size_t n, Utf8Buffer& out) {
    if (out.bytes.size() < 4 * n + SHORT_KEY) out.bytes.resize(4 * n + SHORT_KEY);
    uint8_t* o = out.bytes.data();
    for (size_t k = 0; k < n; ++k) o = put_utf8(p[k], o);
    out.length = size_t(o - out.bytes.data());
}

// Code points -> key, when their UTF-8 fits in SHORT_KEY bytes: each character's bytes built
// in a register and put in the key's words whole (little-endian hosts; false elsewhere, and
// the caller takes utf8_encode + pack_padded). On random CJK + emoji, where every piece comes
// this way, a third of encode_chars' samples sat on pack_padded's loads of the buffer that
// utf8_encode had just written byte by byte (the loads wait for those stores to retire).
template <class C> inline bool pack_utf8(const C* p, size_t len, ShortKey& key) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    (void)p, (void)len, (void)key;
    return false;
#else
    if (len > SHORT_KEY) return false;
    uint64_t cur = 0;     // the word being filled
    unsigned bits = 0;    // bits of `cur` in use
    unsigned words = 0;   // words of the key filled
    for (size_t k = 0; k < len; ++k) {
        unsigned bytes;
        uint64_t u = utf8_of(uint32_t(p[k]), bytes);  // the character's UTF-8, first byte lowest
        unsigned n = 8 * bytes;                        // its bits
        if (64 * words + bits + n > 8 * SHORT_KEY) return false;
        cur |= u << bits;
        bits += n;
        if (bits >= 64) {  // the word is full: the rest of u starts the next one
            key.w[words++] = cur;
            bits -= 64;
            cur = bits ? u >> (n - bits) : 0;
        }
    }
    key.len = uint32_t(8 * words + bits / 8);
    for (; words < 3; ++words, cur = 0) key.w[words] = cur;
    return true;
#endif
}

// One vocabulary, read-only once finish() has run; any number of threads encode with it.
struct EncoderCore {
    bool char_mode, whole_piece, monotonic;
    int pattern;
    uint32_t base_byte[256];
    std::vector<uint32_t> base_bmp;                      // char mode, code points < 0x10000
    std::unordered_map<uint32_t, uint32_t> base_astral;  // char mode, the rest
    bool has_fallback = false;
    uint32_t fallback[256];
    PairTable pairs;
    CutTable cuts;                                       // char mode without whole-piece lookup
    PieceCutTable piece_cuts;                            // byte mode: cuts inside a piece
    CharTokenTable char_tokens;                          // byte mode: characters as tokens
    ShortMap short_vocab;                                // whole-piece lookup
    PieceMap long_vocab;
    // Code points from U+0080 to below LEAD_LIMIT whose UTF-8 begins a token of more bytes
    // (a bitmap, 16 KB), and those that follow a space at the start of a token: a piece of two
    // or more characters is a token only if its first one is in the first map or, when it is a
    // space, its second one is in the second. Most pieces of CJK text (a space, then
    // ideographs) are not tokens, and their whole-piece probe waited on a tag that missed the
    // CPU's caches. Random CJK + emoji, warm, tiktoken / bytepair: o200k 3.48-3.66x ->
    // 3.76-3.96x with the first map, cl100k 3.41-3.57x -> 3.80-3.93x with the second; UDHR
    // and WikiText-2 within the noise. (1,007 of 20,991 CJK ideographs begin a longer o200k
    // token, 168 a cl100k one.)
    static const uint32_t LEAD_LIMIT = 0x20000;
    std::vector<uint64_t> leads_longer_token = std::vector<uint64_t>(LEAD_LIMIT / 64, 0);
    std::vector<uint64_t> follows_leading_space = std::vector<uint64_t>(LEAD_LIMIT / 64, 0);
    bool token_splits = false;                           // derive_token_splits()
    std::vector<TokenRef> split_tokens;                  // every token, by pointer: the caller's
                                                         // buffers must outlive finish()
    WorkerPool pool;

    EncoderCore(bool char_mode_, int pattern_, bool whole_piece_, bool monotonic_)
        : char_mode(char_mode_), whole_piece(whole_piece_), monotonic(monotonic_), pattern(pattern_) {
        std::fill(base_byte, base_byte + 256, NO_ID);
        std::fill(fallback, fallback + 256, NO_ID);
        if (char_mode) base_bmp.assign(0x10000, NO_ID);
    }
    void set_base_byte(int byte, uint32_t id) { base_byte[byte & 0xFF] = id; }
    void set_base_char(uint32_t cp, uint32_t id) {
        if (cp < 0x10000) base_bmp[cp] = id;
        else base_astral[cp] = id;
    }
    void set_fallback(int byte, uint32_t id) {
        fallback[byte & 0xFF] = id;
        has_fallback = true;
    }
    void add_pair(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
        pairs.add(left, right, rank, merged);
        if (char_mode && !whole_piece) cuts.add_pair(left, right, rank, merged);
    }
    // The token into the whole-piece tables (the first id of the same bytes stays).
    void insert_token(const uint8_t* key, size_t n, uint32_t id) {
        size_t count;
        note_lead(key, n);
        if (n <= SHORT_KEY) {
            ShortKey packed;
            pack_bytes(key, n, packed);
            uint64_t h = packed.hash();
            if (!short_vocab.find(packed, h, &count)) short_vocab.insert(packed, h, &id, 1);
        } else {
            uint64_t h = hash_bytes(key, n);
            if (!long_vocab.find(key, n, h, &count)) long_vocab.insert(key, n, h, &id, 1);
        }
    }
    // Notes the token's first character in leads_longer_token if more bytes follow it, or its
    // second in follows_leading_space if the first is a space.
    void note_lead(const uint8_t* key, size_t n) {
        uint32_t cp;
        if (key[0] == ' ' && n > 1) {
            if (utf8_first(key + 1, n - 1, cp) > 1) set_bit(follows_leading_space, cp);
            return;
        }
        unsigned length = utf8_first(key, n, cp);
        if (length > 1 && n > length) set_bit(leads_longer_token, cp);
    }
    static void set_bit(std::vector<uint64_t>& bits, uint32_t cp) {
        if (cp < LEAD_LIMIT) bits[cp >> 6] |= uint64_t(1) << (cp & 63);
    }
    static bool has_bit(const std::vector<uint64_t>& bits, uint32_t cp) {
        return cp >= LEAD_LIMIT || ((bits[cp >> 6] >> (cp & 63)) & 1);
    }
    // Whether a piece of `len` characters may be a token (by its first two).
    template <class C> inline bool may_be_token(const C* p, size_t len) const {
        uint32_t first = uint32_t(p[0]);
        if (first >= 0x80) return len == 1 || has_bit(leads_longer_token, first);
        if (first == ' ' && len > 1 && uint32_t(p[1]) >= 0x80) return has_bit(follows_leading_space, uint32_t(p[1]));
        return true;
    }
    // The tokens (the caller's buffers; empty ones, never a piece, are passed over) into the
    // whole-piece tables. Under token_splits they are only noted here, by pointer, and
    // inserted in finish(), beside the pair table's build.
    void add_tokens(const std::vector<TokenRef>& tokens) {
        if (!token_splits) return insert_tokens(tokens);
        for (const TokenRef& t : tokens)
            if (t.length) split_tokens.push_back(t);
    }
    // insert_token for each, with the slot of the token LOAD_AHEAD further on loaded early:
    // inserting cl100k's 100K tokens one by one spent 80% of its time waiting for the first
    // slot (perf); the table now takes 17 ms, not 26-34.
    void insert_tokens(const std::vector<TokenRef>& tokens) {
        size_t n = tokens.size();
        for (size_t k = 0; k < n; ++k) {
            if (k + LOAD_AHEAD < n && tokens[k + LOAD_AHEAD].length <= SHORT_KEY) {
                ShortKey packed;
                pack_bytes(tokens[k + LOAD_AHEAD].bytes, tokens[k + LOAD_AHEAD].length, packed);
                short_vocab.prefetch(packed.hash());
            }
            if (tokens[k].length) insert_token(tokens[k].bytes, tokens[k].length, tokens[k].id);
        }
    }
    static const size_t LOAD_AHEAD = 16;  // untuned

    // tiktoken's rule: every split of a whole-piece token into two whole-piece tokens is a
    // pair, ranked as the token and merging into it (ids are ranks). Asked for before the
    // tokens are added (each is then noted, by pointer), derived in finish() by
    // token_splits.hpp. Python twin: model.tiktoken_pair_table.
    void derive_token_splits() { token_splits = true; }
    void reserve_tokens(size_t n) { short_vocab.reserve(n); }

    void finish() {
        std::vector<uint32_t> split_count;
        std::vector<CharTokenTable::Candidate> characters;  // tokens of one character
        if (token_splits) {
            // the whole-piece tables and the pair table read the same tokens and nothing of
            // each other, so they are built side by side; with the two threads of
            // keep_last_merges and of the splits' sorts, loading cl100k took 0.105 s instead
            // of 0.114, o200k 0.223 instead of 0.260 (bench/run.py --only load, best of 3)
            side_by_side([this, &split_count] {
                split_count = add_token_splits();
                pairs.build();
            }, [this] { insert_tokens(split_tokens); });
            keep_last_merges(split_count);
            characters = one_character_tokens();
        } else {
            pairs.build();
        }
        std::vector<TokenRef>().swap(split_tokens);
        if (!char_mode) build_piece_cuts(characters);
        if (char_mode && !whole_piece) {
            std::vector<std::pair<uint32_t, uint32_t>> base;  // (id, code point)
            for (uint32_t cp = 0; cp < 0x10000; ++cp)
                if (base_bmp[cp] != NO_ID) base.push_back({base_bmp[cp], cp});
            for (const auto& entry : base_astral) base.push_back({entry.second, entry.first});
            cuts.build(base);
        }
    }

    // cl100k: 52-59 ms with the derivation and the pair table's build, against 119-160 ms
    // when both sides of each cut were looked up in the whole-piece table (process time).
    // Returns how many splits each whole id has.
    std::vector<uint32_t> add_token_splits() {
        pairs.reserve(3 * split_tokens.size());  // cl100k: 2.3 pairs a token; untuned
        std::vector<uint32_t> split_count(split_tokens.size() + 1, 0);
        for_each_token_split(split_tokens, [this, &split_count](uint32_t left, uint32_t right, uint32_t whole) {
            pairs.add(left, right, whole, whole);
            if (whole >= split_count.size()) split_count.resize(size_t(whole) + 1, 0);
            ++split_count[whole];
        });
        return split_count;
    }

    // Of a token's splits, only the one that merging the token's own bytes ends with can ever
    // be merged, in any piece: until a token forms, its bytes' symbols lie inside it and merge
    // as they do alone, so the pair it forms from is the last pair of its own merging (and any
    // other split, never merged, is never the lowest pair either). So the others go from the
    // table: o200k's hashed pairs 441K -> about 200K (slots 8 -> 4 MB, filter 512 -> 256 KB),
    // cl100k's 229K -> about 100K. UDHR 3-5% and random CJK + emoji 3-6% faster on both
    // (alternated builds, best of 7); loading 20-50 ms slower (the table is built twice and
    // each token of several splits merged once). A token longer than a short piece is merged
    // by the buckets (merge_long): by the O(n^2) scan, a file with a 1 MB token took 160 s.
    void keep_last_merges(const std::vector<uint32_t>& count) {
        size_t top = count.size();
        // the last merge of each token with several splits (left << 32 | right), or all ones:
        // keep every split (a token that its bytes do not merge into, e.g. a second token of
        // the same bytes)
        std::vector<uint64_t> last(top, ~0ULL);
        // on two threads, in blocks of tokens (each token's own entry of `last`)
        const size_t block = 4096;
        share_out(2, (split_tokens.size() + block - 1) / block, [&](int, auto& next) {
            MergeScratch scratch;
            std::vector<ShortSymbol> merged;
            for (size_t b; next(b);) {
                size_t end = std::min(split_tokens.size(), (b + 1) * block);
                for (size_t k = b * block; k < end; ++k) {
                    const TokenRef& t = split_tokens[k];
                    if (t.id >= top || count[t.id] < 2) continue;
                    SymbolBuffer& ids = scratch.symbols;
                    ids.resize(t.length);
                    for (size_t j = 0; j < t.length; ++j) ids[j] = base_byte[t.bytes[j]];
                    uint64_t pair = ~0ULL;
                    bool whole;
                    if (t.length > SHORT_PIECE) {  // the buckets, O(n log n), not the O(n^2) scan
                        merge_long(pairs, false, scratch, &pair);
                        whole = ids.size() == 1 && ids[0] == t.id;
                    } else {
                        merged.resize(t.length);
                        whole = merge_array(pairs, false, ids.data(), t.length, merged.data(), &pair) == 1 &&
                                merged[0].id == t.id;
                    }
                    if (whole) last[t.id] = pair;
                }
            }
        });
        pairs.retain([&last, top](uint32_t left, uint32_t right, uint32_t rank) {
            return rank >= top || last[rank] == ~0ULL || last[rank] == ((uint64_t(left) << 32) | right);
        });
    }

    // Every id's bytes at both ends, from the base bytes and the pairs that make the merged
    // ids, then the cuts. Each id is first worked out from the first pair that makes it (depth
    // first), then the pairs are passed over until nothing changes (an id whose first pair
    // never forms may still come from another). An id left unknown is one no merging makes.
    void build_piece_cuts(const std::vector<CharTokenTable::Candidate>& characters) {
        static constexpr uint64_t NOT_MADE = PairTable::NOT_MADE;
        std::vector<std::pair<uint32_t, uint32_t>> parts;
        std::vector<uint32_t> part_ranks;
        std::vector<uint64_t> maker;  // merged id -> left << 32 | right
        pairs.for_each_pair([&](uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
            parts.push_back({left, right});
            part_ranks.push_back(rank);
            if (merged >= maker.size()) maker.resize(std::max<size_t>(size_t(merged) + 1, 2 * maker.size()), NOT_MADE);
            if (maker[merged] == NOT_MADE) maker[merged] = uint64_t(left) << 32 | right;
        });
        size_t top = maker.size();
        for (const auto& p : parts) top = std::max<size_t>(top, size_t(std::max(p.first, p.second)) + 1);
        for (uint32_t id : base_byte) top = std::max<size_t>(top, id == NO_ID ? 0 : size_t(id) + 1);
        maker.resize(top, NOT_MADE);
        std::vector<PieceCutTable::Ends> ends(top);
        enum : uint8_t { UNSEEN, OPEN, DONE };
        std::vector<uint8_t> state(top, UNSEEN);
        for (int byte = 0; byte < 256; ++byte)
            if (base_byte[byte] != NO_ID) {
                ends[base_byte[byte]] = PieceCutTable::one_byte(uint8_t(byte));
                state[base_byte[byte]] = DONE;
            }
        std::vector<uint32_t> stack;
        for (uint32_t id = 0; id < top; ++id) {
            if (state[id] != UNSEEN) continue;
            stack.push_back(id);
            while (!stack.empty()) {
                uint32_t x = stack.back();
                uint64_t m = maker[x];
                if (state[x] == DONE || m == NOT_MADE) {
                    state[x] = DONE;
                    stack.pop_back();
                    continue;
                }
                uint32_t left = uint32_t(m >> 32), right = uint32_t(m);
                if (state[x] == OPEN) {  // its parts are done (or on the stack: a cycle)
                    if (ends[left].length && ends[right].length) ends[x] = PieceCutTable::joined(ends[left], ends[right]);
                    state[x] = DONE;
                    stack.pop_back();
                    continue;
                }
                state[x] = OPEN;
                if (state[left] == UNSEEN) stack.push_back(left);
                if (state[right] == UNSEEN) stack.push_back(right);
            }
        }
        for (bool changed = true; changed;) {
            changed = false;
            pairs.for_each_pair([&](uint32_t left, uint32_t right, uint32_t, uint32_t merged) {
                if (ends[merged].length || !ends[left].length || !ends[right].length) return;
                ends[merged] = PieceCutTable::joined(ends[left], ends[right]);
                changed = true;
            });
        }
        piece_cuts.build(ends, parts);
        if (token_splits && ranks_rise(maker)) {
            pairs.set_makers(std::move(maker));
            build_char_tokens(ends, parts, part_ranks, characters);
        }
    }

    // Each token whose bytes are one character of two bytes or more, or a space and one.
    std::vector<CharTokenTable::Candidate> one_character_tokens() const {
        std::vector<CharTokenTable::Candidate> characters;
        for (const TokenRef& t : split_tokens) {
            uint32_t cp;
            bool spaced = t.length >= 3 && t.bytes[0] == ' ';
            size_t n = t.length - (spaced ? 1 : 0);
            if (n >= 2 && n <= 4 && utf8_first(t.bytes + (spaced ? 1 : 0), n, cp) == n)
                characters.push_back({cp, t.id, spaced});
        }
        return characters;
    }

    // The candidates whose bytes merge alone into their token, and the pairs (`parts`, their
    // `ranks`) that join two characters, into char_tokens; ranks must rise (ranks_rise).
    void build_char_tokens(const std::vector<PieceCutTable::Ends>& ends,
                           const std::vector<std::pair<uint32_t, uint32_t>>& parts, const std::vector<uint32_t>& ranks,
                           std::vector<CharTokenTable::Candidate> characters) {
        auto for_each_junction = [&](auto&& sink) {
            for (size_t k = 0; k < parts.size(); ++k) {
                uint32_t left = parts[k].first, right = parts[k].second;
                uint64_t l, r;
                if (left < ends.size() && right < ends.size() && ends[left].length && ends[right].length &&
                    PieceCutTable::left_key(ends[left], l) && PieceCutTable::right_key(ends[right], r))
                    sink(l, r, ranks[k]);
            }
        };
        ShortSymbol merged[5];
        uint32_t ids[5];
        auto merges_alone = [&](const CharTokenTable::Candidate& c) {
            unsigned n, at = 0;
            uint32_t bytes = utf8_of(c.code_point, n);
            if (c.after_space) ids[at++] = base_byte[' '];
            for (unsigned k = 0; k < n; ++k) ids[at++] = base_byte[(bytes >> (8 * k)) & 0xFF];
            return merge_array(pairs, false, ids, at, merged) == 1 && merged[0].id == c.token;
        };
        characters.erase(std::remove_if(characters.begin(), characters.end(), [&](const auto& c) { return !merges_alone(c); }),
                         characters.end());
        char_tokens.build(characters, for_each_junction);
    }

    // Whether every pair ranks as the id it makes and above each of its parts that a pair
    // makes: merging then goes up in rank, which seam_walk (merge.hpp) relies on. True of
    // tiktoken's files (a token's rank is the order it was learned in, after its parts).
    bool ranks_rise(const std::vector<uint64_t>& maker) const {
        bool rise = true;
        pairs.for_each_pair([&](uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
            auto made = [&](uint32_t id) { return id < maker.size() && maker[id] != PairTable::NOT_MADE; };
            if (rank != merged || (made(left) && left >= merged) || (made(right) && right >= merged)) rise = false;
        });
        return rise;
    }

    inline uint32_t base_char(uint32_t cp) const {
        if (cp < 0x10000) return base_bmp[cp];
        auto it = base_astral.find(cp);
        return it == base_astral.end() ? NO_ID : it->second;
    }
};

// Initial symbols of a piece; false (and the code points noted) if a character is unknown.
template <class C>
inline bool initial_symbols(const EncoderCore& core, Worker& w, const C* p, size_t len,
                            const uint8_t* utf8, size_t utf8_len) {
    SymbolBuffer& symbols = w.scratch.symbols;
    symbols.clear();
    if (!core.char_mode) {
        symbols.resize(utf8_len);
        if (utf8_len > len && core.char_tokens.enabled())
            symbols.resize(core.char_tokens.symbols(p, len, utf8, utf8_len, core.base_byte, symbols.data()));
        else
            for (size_t k = 0; k < utf8_len; ++k) symbols[k] = core.base_byte[utf8[k]];
        return true;
    }
    bool known = true;
    symbols.reserve(len);
    for (size_t k = 0; k < len; ++k) {
        uint32_t id = core.base_char(p[k]);
        if (id != NO_ID) {
            symbols.push_back(id);
        } else if (core.has_fallback) {
            uint8_t bytes[4];
            uint8_t* end = put_utf8(p[k], bytes);
            for (uint8_t* b = bytes; b < end; ++b) symbols.push_back(core.fallback[*b]);
        } else {
            w.unknown.push_back(p[k]);
            known = false;
        }
    }
    return known;
}

// One part of a cut piece (encode_cut_piece): one or two characters from the worker's memos
// (CharMemo, CharPairMemo), a longer part from the cache; else merged, and kept there (in the
// cache when its UTF-8 fits a short key). The cache holds merged ids only, which are the
// parts' ids too.
template <class C>
inline void encode_part(const EncoderCore& core, Worker& w, const C* p, size_t len, std::vector<uint32_t>& out) {
    if (len == 1) {
        const uint32_t* ids;
        if (uint32_t count = w.chars.find(uint32_t(p[0]), ids)) {
            append_ids(out, ids, count);
            return;
        }
        unsigned bytes;
        uint32_t utf8 = utf8_of(uint32_t(p[0]), bytes);
        w.scratch.symbols.resize(bytes);
        for (unsigned k = 0; k < bytes; ++k) w.scratch.symbols[k] = core.base_byte[(utf8 >> (8 * k)) & 0xFF];
        merge_symbols(core.pairs, core.monotonic, w.scratch);
        append_ids(out, w.scratch.symbols.data(), w.scratch.symbols.size());
        w.chars.insert(uint32_t(p[0]), w.scratch.symbols.data(), w.scratch.symbols.size());
        return;
    }
    bool two = len == 2;
    if (two) {
        const uint32_t* ids;
        if (uint32_t count = w.char_pairs.find(uint32_t(p[0]), uint32_t(p[1]), ids)) {
            append_ids(out, ids, count);
            return;
        }
    }
    ShortKey key;
    bool keyed = pack_utf8(p, len, key);
    if (!keyed) {  // the piece's own UTF-8 buffer may still be in use: the part has its own
        utf8_encode(p, len, w.part_utf8);
        keyed = w.part_utf8.size() <= SHORT_KEY;
        if (keyed) pack_padded(w.part_utf8.data(), w.part_utf8.size(), key);
    }
    uint64_t h = 0;
    if (keyed && !two) {
        h = key.hash();
        size_t count;
        if (const uint32_t* found = w.cache.find(key, h, &count)) {
            append_ids(out, found, count);
            return;
        }
    }
    size_t start = out.size();
    if (keyed) initial_symbols(core, w, p, len, key.bytes(), key.len);
    else initial_symbols(core, w, p, len, w.part_utf8.data(), w.part_utf8.size());
    merge_symbols(core.pairs, core.monotonic, w.scratch);
    append_ids(out, w.scratch.symbols.data(), w.scratch.symbols.size());
    if (two) {  // a pair of more than CharPairMemo::MAX_IDS ids (rare) is merged each time
        w.char_pairs.insert(uint32_t(p[0]), uint32_t(p[1]), out.data() + start, out.size() - start);
        return;
    }
    if (!keyed) return;
    if (w.cache.entries() >= CACHE_LIMIT) w.cache.clear();
    w.cache.insert(key, h, out.data() + start, out.size() - start);
}

// A byte-mode piece that is not one token and not in the cache, cut between characters where
// no merge can span (piece_cuts.hpp) and its parts appended; false, and nothing appended, if
// it has no such place. Random CJK + emoji: nearly every piece is new, but its parts (mostly
// single characters) come back.
template <class C>
inline bool encode_cut_piece(const EncoderCore& core, Worker& w, const C* p, size_t len, std::vector<uint32_t>& out) {
    const PieceCutTable& cuts = core.piece_cuts;
    uint32_t before = cuts.classes(p[0]);
    size_t start = 0;
    for (size_t i = 1; i < len; ++i) {
        uint32_t after = cuts.classes(p[i]);
        if (cuts.safe(before, after)) {
            encode_part(core, w, p + start, i - start, out);
            start = i;
        }
        before = after;
    }
    if (start == 0) return false;
    encode_part(core, w, p + start, len - start, out);
    return true;
}

// A piece whose UTF-8 is `key` (nearly all pieces): whole-piece lookup, cache, merging.
template <class C>
inline void encode_short(const EncoderCore& core, Worker& w, const C* p, size_t len,
                         const ShortKey& key, std::vector<uint32_t>& out) {
    uint64_t h = key.hash();
    size_t count;
    const uint32_t* found =
        core.whole_piece && core.may_be_token(p, len) ? core.short_vocab.find(key, h, &count) : nullptr;
    if (found) {
        out.push_back(*found);
        return;
    }
    bool probed = w.probe_cache();
    if (probed) {
        found = w.cache.find(key, h, &count);
        w.count_probe(found != nullptr);
        if (found) {
            append_ids(out, found, count);
            return;
        }
    }
    size_t start = out.size();
    // a piece with a character beyond ASCII (its UTF-8 is longer) may have safe cuts
    if (!(core.piece_cuts.enabled() && key.len > len && encode_cut_piece(core, w, p, len, out))) {
        if (!initial_symbols(core, w, p, len, key.bytes(), key.len)) return;
        merge_symbols(core.pairs, core.monotonic, w.scratch);
        append_ids(out, w.scratch.symbols.data(), w.scratch.symbols.size());
    }
    if (!probed) return;  // it may be in the cache already, and insert takes new keys only
    if (w.cache.entries() >= CACHE_LIMIT) w.cache.clear();
    w.cache.insert(key, h, out.data() + start, out.size() - start);
}

// A longer piece, given as UTF-8 (`utf8`, or nullptr in char mode when nothing needs it).
template <class C>
void encode_long(const EncoderCore& core, Worker& w, const C* p, size_t len, const uint8_t* utf8,
                 size_t utf8_len, std::vector<uint32_t>& out) {
    bool cacheable = utf8 && utf8_len <= CACHE_MAX_BYTES;
    uint64_t h = cacheable || core.whole_piece ? hash_bytes(utf8, utf8_len) : 0;
    size_t count;
    const uint32_t* found = core.whole_piece ? core.long_vocab.find(utf8, utf8_len, h, &count) : nullptr;
    if (found) {
        out.push_back(*found);
        return;
    }
    if (cacheable && (found = w.long_cache.find(utf8, utf8_len, h, &count))) {
        append_ids(out, found, count);
        return;
    }
    size_t start = out.size();
    if (!(core.piece_cuts.enabled() && utf8_len > len && encode_cut_piece(core, w, p, len, out))) {
        if (!initial_symbols(core, w, p, len, utf8, utf8_len)) return;
        merge_symbols(core.pairs, core.monotonic, w.scratch);
        append_ids(out, w.scratch.symbols.data(), w.scratch.symbols.size());
    }
    if (cacheable) {
        if (w.long_cache.entries() >= CACHE_LIMIT) w.long_cache.clear();
        w.long_cache.insert(utf8, utf8_len, h, out.data() + start, out.size() - start);
    }
}

// Appends the ids of one piece (`ascii`: the whole text is ASCII, so p is its UTF-8).
template <class C>
inline void encode_piece(const EncoderCore& core, Worker& w, const C* p, size_t len, bool ascii,
                         std::vector<uint32_t>& out) {
    ShortKey key;
    // one call of encode_short, so that it is inlined here (with pack_utf8's call beside
    // pack_ascii's, GCC made it a function of its own)
    if (!pack_ascii(p, len, key) && !pack_utf8(p, len, key)) {
        // char mode needs no bytes for a long piece it neither caches nor looks up whole
        if (core.char_mode && !core.whole_piece && len > CACHE_MAX_BYTES)
            return encode_long(core, w, p, len, nullptr, 0, out);
        if (sizeof(C) == 1 && ascii) return encode_long(core, w, p, len, reinterpret_cast<const uint8_t*>(p), len, out);
        utf8_encode(p, len, w.utf8);
        if (w.utf8.size() > SHORT_KEY) return encode_long(core, w, p, len, w.utf8.data(), w.utf8.size(), out);
        pack_padded(w.utf8.data(), w.utf8.size(), key);
    }
    encode_short(core, w, p, len, key, out);
}

// A text with no pattern (or a piece longer than a short one) in char mode: cut at every safe
// boundary (cuts.hpp) and each part encoded as a piece, mostly from the cache; a lone character
// is its base id. WikiText-2 train, seed 000's tokenizer: 6.4 M characters/s as one piece
// merged by rank buckets, 70+ M cut (bench/run.py --only char).
// Parts of up to 3 characters (2.3 M of WikiText-2's 3.4 M) are merged here, by one or two
// pair lookups, without hashing them for the cache: lowest (rank, position) first, as
// merge.hpp's strategies; the second merge at a rank above the first's in replay.
static inline bool merge_tiny(const EncoderCore& core, const uint32_t* ids, size_t n, std::vector<uint32_t>& out) {
    if (n == 1) {
        out.push_back(ids[0]);
        return true;
    }
    uint32_t m0, m1, m2;
    uint32_t r0 = core.pairs.rank_at_least(ids[0], ids[1], 0, &m0);
    if (n == 2) {
        out.push_back(r0 == NO_RANK ? ids[0] : m0);
        if (r0 == NO_RANK) out.push_back(ids[1]);
        return true;
    }
    uint32_t r1 = core.pairs.rank_at_least(ids[1], ids[2], 0, &m1);
    if (r0 == NO_RANK && r1 == NO_RANK) {
        for (size_t k = 0; k < 3; ++k) out.push_back(ids[k]);
    } else if (r0 <= r1) {
        uint32_t r2 = core.pairs.rank_at_least(m0, ids[2], core.monotonic ? r0 + 1 : 0, &m2);
        if (r2 == NO_RANK) {
            out.push_back(m0);
            out.push_back(ids[2]);
        } else {
            out.push_back(m2);
        }
    } else {
        uint32_t r2 = core.pairs.rank_at_least(ids[0], m1, core.monotonic ? r1 + 1 : 0, &m2);
        if (r2 == NO_RANK) {
            out.push_back(ids[0]);
            out.push_back(m1);
        } else {
            out.push_back(m2);
        }
    }
    return true;
}

// Adds a merged part to a full-or-not cache (`Map`: ShortMap or WordMap, through `insert`).
// A full cache is kept rather than emptied at once (encode_short's rule): WikiText-2 train
// cuts into 95 K distinct parts, more than it holds, and the frequent ones come early; it is
// emptied after as many misses as it has entries, so another text's parts get in.
template <class Map, class Insert>
inline void cache_part(Map& map, size_t& misses_when_full, Insert&& insert) {
    if (map.entries() >= CACHE_LIMIT) {
        if (++misses_when_full < CACHE_LIMIT) return;
        map.clear();
        misses_when_full = 0;
    }
    insert();
}

// Parts whose cache slots are asked for together, a batch ahead of reading them (encode_cut).
// The probes of a warm cache are random reads of a 2-4 MB table: one at a time, they were half
// of the parts' time in perf (WikiText-2 train). Untuned.
static const size_t CUT_BATCH = 32;

template <class C>
void encode_cut(const EncoderCore& core, Worker& w, const C* s, size_t n, bool ascii, std::vector<uint32_t>& out) {
    out.reserve(out.size() + n / 2 + 16);
    size_t word_misses = 0, short_misses = 0;
    enum Kind : uint8_t { TINY, WORD, SHORT, OTHER };
    struct Part {
        uint32_t start, len;  // texts are < 2**32 characters (checked in Python)
        Kind kind;
        uint64_t word;        // WORD: the key; SHORT: the hash
    };
    // Two batches in turn: the slots of one are asked for while the other is encoded.
    Part batches[2][CUT_BATCH];
    ShortKey batch_keys[2][CUT_BATCH];
    size_t filling = 0, pending = 0, ready = 0;  // the batch being filled, its parts, the other's

    // every part's key, and its slot asked for
    auto prepare = [&](Part* parts, ShortKey* keys, size_t m) {
        for (size_t j = 0; j < m; ++j) {
            Part& part = parts[j];
            const C* p = s + part.start;
            if (part.len <= 3) {
                part.kind = TINY;
            } else if (part.len <= 8 && pack_word(p, part.len, part.word)) {
                part.kind = WORD;
                w.words.prefetch(part.word);
            } else if (pack_ascii(p, part.len, keys[j])) {
                part.kind = SHORT;
                part.word = keys[j].hash();
                w.cache.prefetch(part.word);
            } else {
                part.kind = OTHER;
            }
        }
    };
    // the parts in order
    auto encode_parts = [&](const Part* parts, const ShortKey* keys, size_t m) {
        for (size_t j = 0; j < m; ++j) {
            const Part& part = parts[j];
            const C* p = s + part.start;
            size_t len = part.len, count;
            const uint32_t* found;
            switch (part.kind) {
                case TINY: {
                    // parts of up to 3 characters (2.3 M of WikiText-2's 3.4 M): one or two pair lookups
                    uint32_t ids[3] = {0, 0, 0};
                    bool known = true;
                    for (size_t k = 0; k < len; ++k) known &= (ids[k] = core.base_char(p[k])) != NO_ID;
                    if (!(known && merge_tiny(core, ids, len, out))) encode_piece(core, w, p, len, ascii, out);
                    break;
                }
                case WORD: {
                    // 4-8 ASCII characters (1.0 M of the 1.1 M longer parts): a one-word key
                    if ((found = w.words.find(part.word, &count))) {
                        append_ids(out, found, count);
                        break;
                    }
                    size_t at = out.size();
                    if (!initial_symbols(core, w, p, len, nullptr, 0)) break;
                    merge_symbols(core.pairs, core.monotonic, w.scratch);
                    append_ids(out, w.scratch.symbols.data(), w.scratch.symbols.size());
                    cache_part(w.words, word_misses, [&] { w.words.insert(part.word, out.data() + at, out.size() - at); });
                    break;
                }
                case SHORT: {
                    const ShortKey& key = keys[j];
                    if ((found = w.cache.find(key, part.word, &count))) {
                        append_ids(out, found, count);
                        break;
                    }
                    size_t at = out.size();
                    if (!initial_symbols(core, w, p, len, key.bytes(), key.len)) break;
                    merge_symbols(core.pairs, core.monotonic, w.scratch);
                    append_ids(out, w.scratch.symbols.data(), w.scratch.symbols.size());
                    cache_part(w.cache, short_misses, [&] { w.cache.insert(key, part.word, out.data() + at, out.size() - at); });
                    break;
                }
                default:
                    encode_piece(core, w, p, len, ascii, out);
            }
        }
    };
    core.cuts.cut(s, n, [&](size_t start, size_t end) {
        Part& part = batches[filling][pending];
        part.start = uint32_t(start);
        part.len = uint32_t(end - start);
        if (++pending < CUT_BATCH) return;
        prepare(batches[filling], batch_keys[filling], pending);
        encode_parts(batches[filling ^ 1], batch_keys[filling ^ 1], ready);
        filling ^= 1;
        ready = pending;
        pending = 0;
    });
    prepare(batches[filling], batch_keys[filling], pending);
    encode_parts(batches[filling ^ 1], batch_keys[filling ^ 1], ready);
    encode_parts(batches[filling], batch_keys[filling], pending);
}

// Room reserved for a text's ids before it is scanned: at most one id per UTF-8 byte (per
// character in char mode, four with byte fallback), up to RESERVE_MAX_IDS. Pages of the room
// left unused are never touched. Reserving a third of the characters, random CJK + emoji (2 ids
// a character) grew three times, copying its ids and touching twice their pages: its first
// call in a fresh process went from 59-62 to 54-56 ms. Without the cap, UDHR (5 M characters,
// 20 M ids of room, 3 M used) was 2% slower warm: a reserve that large is mapped afresh each call.
static const size_t RESERVE_MAX_IDS = size_t(1) << 22;
template <class C>
inline size_t ids_bound(const EncoderCore& core, const C*, size_t n, bool ascii) {
    if (core.char_mode) return core.has_fallback ? 4 * n : n;
    return sizeof(C) == 1 ? (ascii ? n : 2 * n) : sizeof(C) == 2 ? 3 * n : 4 * n;
}

template <class C>
void encode_chars(const EncoderCore& core, Worker& w, const C* s, size_t n, bool ascii, bool one_piece,
                  std::vector<uint32_t>& out) {
    if (one_piece || core.pattern == P_NONE) {
        if (n > SHORT_PIECE && core.cuts.enabled()) encode_cut(core, w, s, n, ascii, out);
        else if (n) encode_piece(core, w, s, n, ascii, out);
        return;
    }
    size_t used = out.size();
    out.reserve(used + std::min(ids_bound(core, s, n, ascii), RESERVE_MAX_IDS));
    advise_huge_pages(out.data() + used, (out.capacity() - used) * sizeof(uint32_t));
    Scanner<C> scanner(s, n, core.pattern);
    size_t start, end;
    while (scanner.next(start, end)) encode_piece(core, w, s + start, end - start, ascii, out);
}

inline void encode_ref(const EncoderCore& core, Worker& w, const TextRef& t, bool one_piece,
                       std::vector<uint32_t>& out) {
    with_code_units(t, [&](auto s) { encode_chars(core, w, s, t.length, t.ascii, one_piece, out); });
}

inline void sorted_unique(std::vector<uint32_t>& values) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
}

// All texts into one id list (encode_ordinary: one text; encode_pieces: each a piece).
// Code points with no id (char mode without fallback) go to `unknown`, sorted, each once.
inline void encode_concat(EncoderCore& core, const std::vector<TextRef>& texts, bool one_piece,
                          std::vector<uint32_t>& out, std::vector<uint32_t>& unknown) {
    Borrowed b(core.pool);
    for (const TextRef& t : texts) encode_ref(core, *b.w, t, one_piece, out);
    unknown.insert(unknown.end(), b.w->unknown.begin(), b.w->unknown.end());
    sorted_unique(unknown);
}

// Blocks of 256 without an early exit inside, so that the compiler vectorizes the test. The
// surrogates are counted, not OR-ed into a bool: GCC left the bool's loop scalar, 3% of
// encoding time on UDHR (a 4-byte str of 6.4 M characters) in perf.
template <class C> bool any_surrogate(const C* s, size_t n) {
    for (size_t start = 0; start < n; start += 256) {
        size_t end = std::min(n, start + 256);
        uint32_t found = 0;
        for (size_t k = start; k < end; ++k) found += (uint32_t(s[k]) & 0xFFFFF800u) == 0xD800u;
        if (found) return true;
    }
    return false;
}

inline bool has_surrogates(int kind, const void* data, size_t n) {
    if (kind == 2) return any_surrogate(static_cast<const uint16_t*>(data), n);
    if (kind == 4) return any_surrogate(static_cast<const uint32_t*>(data), n);
    return false;
}

// Each text into its own id list, on up to `threads` threads that take texts in turn (fewer
// if the OS refuses some; see threads.hpp). Exceptions reach the caller.
// Ids go to the worker's own buffer and are copied to `outs[k]` once: the vectors of `outs` lie
// side by side, and appending to two of them from two threads wrote one cache line from both
// cores on every id (false sharing). Two threads against one went from 1.37x to 1.66-1.97x
// (WikiText-2 train, cl100k, warm caches); encode_spread and counting do the same.
// With `surrogates`, a text that holds a surrogate is not encoded: its index goes there (in
// order), for the caller to clean (tiktoken's rule, in Python) and encode again. The test so
// runs on the threads, not before them on one (WikiText-2 train's 6,212 sections: 2.5 ms).
inline void encode_batch(EncoderCore& core, const std::vector<TextRef>& texts, int threads,
                         std::vector<std::vector<uint32_t>>& outs, std::vector<uint32_t>& unknown,
                         std::vector<uint32_t>* surrogates = nullptr) {
    outs.resize(texts.size());
    std::mutex mutex;
    share_out(threads, texts.size(), [&](int, auto& next) {
        Borrowed b(core.pool);
        for (size_t k; next(k);) {
            if (surrogates && has_surrogates(texts[k].kind, texts[k].data, texts[k].length)) {
                std::lock_guard<std::mutex> guard(mutex);
                surrogates->push_back(uint32_t(k));
                continue;
            }
            b.w->ids.clear();
            encode_ref(core, *b.w, texts[k], false, b.w->ids);
            outs[k].assign(b.w->ids.begin(), b.w->ids.end());
        }
        std::lock_guard<std::mutex> guard(mutex);
        unknown.insert(unknown.end(), b.w->unknown.begin(), b.w->unknown.end());
    });
    sorted_unique(unknown);
    if (surrogates) std::sort(surrogates->begin(), surrogates->end());
}

// One text in char mode without a pattern, spread over threads: cut at safe boundaries
// (cuts.hpp) into spans, each encoded apart (so their ids end to end are the whole text's),
// up to `threads` at a time; `outs` gets one id list per span. Any other text, or a short one,
// is one list from one thread, as encode_concat. Python twin: reference.encode_piece on the
// whole text (tests/engine/test_engine_cuts.py checks spread against one thread).
// Characters per span below which a text is not spread further: a thread costs about as
// much to start as 10 K characters, and each worker's cache warms apart. Untuned; the tests
// lower it (set_spread_min_chars) to spread short texts.
static const size_t SPREAD_MIN_CHARS = size_t(1) << 18;
inline std::atomic<size_t> spread_min_chars{SPREAD_MIN_CHARS};
// Sets the characters per span (at least 1); returns the previous value.
inline size_t set_spread_min_chars(size_t n) { return spread_min_chars.exchange(n ? n : 1); }
// Spans per thread, so that a thread slowed by another job hands its share to the others. Untuned.
static const size_t SPANS_PER_THREAD = 4;

inline bool spreads(const EncoderCore& core, const TextRef& t, int threads) {
    return threads > 1 && core.char_mode && core.pattern == P_NONE && core.cuts.enabled() &&
           t.length >= 2 * spread_min_chars.load();
}

inline void encode_spread(EncoderCore& core, const TextRef& t, int threads, std::vector<std::vector<uint32_t>>& outs,
                          std::vector<uint32_t>& unknown) {
    if (!spreads(core, t, threads)) {
        outs.assign(1, std::vector<uint32_t>());
        encode_concat(core, std::vector<TextRef>{t}, false, outs[0], unknown);
        return;
    }
    size_t parts = std::min(size_t(threads) * SPANS_PER_THREAD, t.length / spread_min_chars.load());
    std::vector<size_t> bounds;
    with_code_units(t, [&](auto s) { bounds = core.cuts.spans(s, t.length, parts); });
    outs.assign(bounds.size() - 1, std::vector<uint32_t>());
    std::mutex mutex;
    share_out(std::min(threads, int(outs.size())), outs.size(), [&](int, auto& next) {
        Borrowed b(core.pool);
        for (size_t k; next(k);) {
            b.w->ids.clear();
            with_code_units(t, [&](auto s) {
                encode_cut(core, *b.w, s + bounds[k], bounds[k + 1] - bounds[k], t.ascii, b.w->ids);
            });
            outs[k].assign(b.w->ids.begin(), b.w->ids.end());
        }
        std::lock_guard<std::mutex> guard(mutex);
        unknown.insert(unknown.end(), b.w->unknown.begin(), b.w->unknown.end());
    });
    sorted_unique(unknown);
}

// One list's ids into `out` as T; false if an id does not fit in T (one test per list, not per
// id, so that the loop vectorizes).
template <class T> bool copy_ids(const std::vector<uint32_t>& ids, T* out) {
    if (sizeof(T) == sizeof(uint32_t)) {
        if (!ids.empty()) std::memcpy(out, ids.data(), ids.size() * sizeof(uint32_t));
        return true;
    }
    uint32_t high = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        high |= ids[i];
        out[i] = T(ids[i]);
    }
    return high <= T(~T(0));
}

// A batch's id lists end to end in `out` (T: uint16_t or uint32_t); `offsets[k]` is where text
// k's ids start, offsets[outs.size()] the total. Returns false, with `bad` an id of the first
// list that holds one, if an id does not fit in T (what was copied is then unspecified). The
// lists are copied on up to `threads` threads: on one, the copy was the largest part of a
// two-thread encode_batch_to_array that ran on one core (WikiText-2 train's 6,212 sections:
// 9 MB of ids, 3-4 ms).
template <class T>
bool concat_ids(const std::vector<std::vector<uint32_t>>& outs, T* out, int64_t* offsets, uint32_t& bad,
                int threads = 1) {
    int64_t at = 0;
    for (size_t k = 0; k < outs.size(); ++k) {
        offsets[k] = at;
        at += int64_t(outs[k].size());
    }
    offsets[outs.size()] = at;
    size_t lists = std::max<size_t>(1, outs.size() / (8 * size_t(std::max(threads, 1))));  // per item
    size_t first_bad = outs.size();
    std::mutex mutex;
    share_out(threads, (outs.size() + lists - 1) / lists, [&](int, auto& next) {
        for (size_t item; next(item);) {
            for (size_t k = item * lists; k < std::min(outs.size(), (item + 1) * lists); ++k) {
                if (copy_ids(outs[k], out + offsets[k])) continue;
                std::lock_guard<std::mutex> guard(mutex);
                first_bad = std::min(first_bad, k);
            }
        }
    });
    if (first_bad == outs.size()) return true;
    for (uint32_t id : outs[first_bad]) {
        if (id > T(~T(0))) {
            bad = id;
            break;
        }
    }
    return false;
}

}  // namespace bp
