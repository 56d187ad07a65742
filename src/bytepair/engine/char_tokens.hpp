// Characters that enter a piece's merging as one token: a character whose bytes merge alone
// into token t is given as t, not as its bytes, wherever merging it first cannot change the
// piece's ids.
//
// Python twin: bytepair.reference.premerged_characters (the piece merged from those symbols
// must give the tokens of its bytes merged: tests/engine/test_engine_char_tokens.py).
//
// Why it is exact, for ranks that rise from a token's parts to the token (tiktoken's files,
// EncoderCore::ranks_rise): merging then applies ranks in rising order. A merge that joins
// part of character c, not all of it, to a neighbour is made at c's boundary (piece_cuts.hpp),
// with c's side a proper prefix of c's UTF-8 (the boundary before c) or a proper suffix (after
// it). If no pair of rank below t can make such a junction with c's neighbours, then until
// rank t nothing joins c's bytes to anything else, c's bytes merge as they do alone, and c is
// t once rank t has passed; every pair with t in it ranks above t. So c given as t from the
// start meets the same merges, less its own. A pair "can make the junction" when its other
// key fits: its left's last character (or its continuation bytes) ends the UTF-8 before c, or
// its right's first character (or the prefix of one it ends in) starts the UTF-8 after c. At
// the ends of a piece or of a cut part (merged alone) there is nothing to fit.
// A space that starts a piece and the character after it are one more such unit, with nothing
// before it: " " + c's lead byte often ranks below c (so c after a space stays bytes), while
// " c" is one token; its guards are the pairs of c whole or of c's last bytes with the
// character after, ranked below " c".
//
// Why: a piece that is merged is mostly new text, and outside ASCII its first merges are
// those inside characters. UDHR (460 languages), the merged pieces' characters of 2-4 bytes
// that are an o200k token: 85% enter as one (most of the rest follow a space); of the 28,865
// merged pieces that start with a space and such a character, 26,415 enter as " c". A first
// call, o200k (process time, the fastest of 30 children, rounds alternated): characters
// 144.7-152.5 -> 134.6-147.9 ms (3.7%), then the space units 134.3-141.5 -> 131.0-139.8 ms
// (2%); cl100k, whose tokens hold fewer whole characters, and random CJK + emoji unchanged.
// The pairs inside a character are the cheap, dense ones (pair_table.hpp), so the symbols
// saved (22% for o200k) save less time; with every guard ignored (not exact), as an upper
// bound: 130 ms. Building the tables: o200k 4.2 ms, cl100k 1.0 ms. Long pieces are merged in
// chunks as before: a seam's test (merge.hpp, seam_walk) reads the two ids' merge trees,
// which describe their bytes, and the symbols merge alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hashing.hpp"
#include "piece_cuts.hpp"

namespace bp {

class CharTokenTable {
  public:
    // A token whose bytes are one character of 2-4 bytes (`after_space`: a space and one),
    // which those bytes merge alone into.
    struct Candidate {
        uint32_t code_point, token;
        bool after_space;
    };

    bool enabled() const { return !characters_.entries.empty() || !after_space_.entries.empty(); }

    // `candidates`, each entered with its guards. for_each_junction(sink) calls sink(left,
    // right, rank) for every pair of the pair table that joins two characters, by its junction
    // keys (PieceCutTable's: up to 4 bytes, first byte lowest, their count in bits 32 up): its
    // left's last character or its continuation bytes, its right's first character or the
    // prefix of one it ends in. Characters from CODE_POINT_LIMIT on are left as bytes.
    template <class ForEachJunction>
    void build(const std::vector<Candidate>& candidates, ForEachJunction&& for_each_junction) {
        characters_ = Table{};
        after_space_ = Table{};
        guards_.clear();
        if (candidates.empty()) return;
        characters_.size_for(candidates, false);
        after_space_.size_for(candidates, true);
        Table spaced;  // the candidates after a space, by their character, guards not yet known
        spaced.size_for(candidates, true);
        for (const Candidate& c : candidates)
            if (c.after_space && c.code_point < spaced.entries.size()) spaced.set(c.code_point, Entry{c.token, 0});
        // the junctions by a part of a character on their one side, sorted: its first k bytes
        // (the junction is before it), its last k bytes (after it), or, for a space and a
        // character, the character whole before the junction
        std::vector<Side> by_prefix, by_suffix, by_whole;
        for_each_junction([&](uint64_t left, uint64_t right, uint32_t rank) {
            uint32_t first = uint32_t(left) & 0xFF;
            if (PieceCutTable::length_of(right) < utf8_sequence_length(uint32_t(right) & 0xFF))
                by_prefix.push_back({right, left, rank});
            if (utf8_continuation(first)) {
                by_suffix.push_back({left, right, rank});
            } else if (PieceCutTable::length_of(left) >= 2 && !spaced.entries.empty()) {  // a whole character
                uint32_t cp;
                uint8_t bytes[4];
                for (unsigned k = 0; k < 4; ++k) bytes[k] = uint8_t(left >> (8 * k));
                if (utf8_first(bytes, PieceCutTable::length_of(left), cp) && spaced.has(cp) &&
                    rank < spaced.entries[cp].token)
                    by_whole.push_back({left, right, rank});
            }
        });
        std::sort(by_prefix.begin(), by_prefix.end());
        std::sort(by_suffix.begin(), by_suffix.end());
        std::sort(by_whole.begin(), by_whole.end());
        std::vector<Guard> guards;
        for (const Candidate& c : candidates) {
            Table& table = c.after_space ? after_space_ : characters_;
            if (c.code_point >= table.entries.size()) continue;
            unsigned n;
            uint32_t bytes = utf8_of(c.code_point, n);
            guards.clear();
            // a space and a character: nothing before it (it starts a piece); after it, the
            // character whole or its last bytes
            if (c.after_space) add_guards(by_whole, PieceCutTable::make_key(bytes, n), c.token, true, guards);
            for (unsigned k = 1; k < n; ++k) {
                if (!c.after_space) add_guards(by_prefix, PieceCutTable::make_key(bytes, k), c.token, false, guards);
                add_guards(by_suffix, PieceCutTable::make_key(bytes >> (8 * (n - k)), k), c.token, true, guards);
            }
            std::sort(guards.begin(), guards.end());
            guards.erase(std::unique(guards.begin(), guards.end()), guards.end());
            if (guards.size() > MAX_GUARDS || guards_.size() >= (size_t(1) << 24)) continue;  // left as bytes
            table.set(c.code_point, {c.token, uint32_t(guards_.size()) << 8 | uint32_t(guards.size())});
            guards_.insert(guards_.end(), guards.begin(), guards.end());
        }
    }

    // The initial symbols of a piece (`len` code points, `utf8` its UTF-8) into `out` (room
    // for utf8_len): each character its token where that is exact, else its bytes' base ids.
    // Returns how many.
    template <class C>
    inline size_t symbols(const C* p, size_t len, const uint8_t* utf8, size_t utf8_len, const uint32_t* base_byte,
                          uint32_t* out) const {
        size_t n = 0, at = 0, before = 0, k = 0;  // before: where the character before starts
        if (len >= 2 && uint32_t(p[0]) == ' ' && after_space_.has(uint32_t(p[1]))) {
            const Entry& e = after_space_.entries[uint32_t(p[1])];
            unsigned bytes = utf8_sequence_length(utf8[1]);
            if (e.guards == 0 || unguarded(e, utf8, utf8_len, 1, 1, bytes)) {
                out[n++] = e.token;
                before = 1;
                at = 1 + bytes;
                k = 2;
            }
        }
        for (; k < len; ++k) {
            uint32_t cp = uint32_t(p[k]);
            unsigned bytes = utf8_sequence_length(utf8[at]);
            const Entry* e = characters_.has(cp) ? &characters_.entries[cp] : nullptr;
            if (e && (e->guards == 0 || unguarded(*e, utf8, utf8_len, before, at, bytes))) {
                out[n++] = e->token;
            } else {
                for (unsigned j = 0; j < bytes; ++j) out[n++] = base_byte[utf8[at + j]];
            }
            before = at;
            at += bytes;
        }
        return n;
    }

  private:
    // Guards above which a character is left as bytes: each is checked at each occurrence.
    // Untuned (o200k: 94% of its one-character tokens have at most 8).
    static const size_t MAX_GUARDS = 16;
    // Code points with entries (8 bytes each): the Basic Multilingual Plane and the emoji.
    static const uint32_t CODE_POINT_LIMIT = 0x20000;
    static const uint32_t NONE = 0xFFFFFFFFu;

    // A neighbour that some pair ranked below the character's token would join to part of it:
    // the UTF-8 that ends the character before (`after` false) or starts the one after.
    struct Guard {
        uint32_t key;
        uint8_t length;
        bool after;
        bool operator<(const Guard& o) const {
            return key != o.key ? key < o.key : length != o.length ? length < o.length : after < o.after;
        }
        bool operator==(const Guard& o) const { return key == o.key && length == o.length && after == o.after; }
    };
    // A junction by the part of a character on one side: that part's key, the other side's.
    struct Side {
        uint64_t part, other;
        uint32_t rank;
        bool operator<(const Side& o) const { return part < o.part; }
    };
    // Guards for a character whose first or last bytes are `part`, from `sides` sorted by part:
    // the other keys of the junctions ranked below its token.
    static void add_guards(const std::vector<Side>& sides, uint64_t part, uint32_t token, bool after,
                           std::vector<Guard>& guards) {
        auto from = std::lower_bound(sides.begin(), sides.end(), Side{part, 0, 0});
        for (auto s = from; s != sides.end() && s->part == part; ++s)
            if (s->rank < token) guards.push_back({uint32_t(s->other), uint8_t(PieceCutTable::length_of(s->other)), after});
    }
    struct Entry {
        uint32_t token = NONE;
        uint32_t guards = 0;  // first guard << 8 | how many
    };
    // Entries by code point, and which code points have one: random CJK text (cl100k: few of
    // its ideographs are tokens) read the entries at random, a cache miss a character; the
    // bitmap is 16 KB.
    struct Table {
        std::vector<Entry> entries;
        std::vector<uint64_t> present;
        void size_for(const std::vector<Candidate>& candidates, bool after_space) {
            uint32_t top = 0;
            for (const Candidate& c : candidates)
                if (c.after_space == after_space && c.code_point < CODE_POINT_LIMIT) top = std::max(top, c.code_point + 1);
            entries.assign(top, Entry{});
            present.assign((top + 63) / 64, 0);
        }
        inline bool has(uint32_t cp) const { return cp < entries.size() && ((present[cp / 64] >> (cp % 64)) & 1); }
        void set(uint32_t cp, const Entry& e) {
            entries[cp] = e;
            present[cp / 64] |= uint64_t(1) << (cp % 64);
        }
    };

    static inline uint32_t read(const uint8_t* at, unsigned n) {
        uint32_t v = 0;
        for (unsigned k = 0; k < n; ++k) v |= uint32_t(at[k]) << (8 * k);
        return v;
    }
    // Whether none of the entry's guards fits the characters around the one at `at`.
    inline bool unguarded(const Entry& e, const uint8_t* utf8, size_t utf8_len, size_t before, size_t at,
                          unsigned bytes) const {
        const Guard* g = &guards_[e.guards >> 8];
        const Guard* end = g + (e.guards & 0xFF);
        size_t next = at + bytes;
        unsigned next_bytes = next < utf8_len ? utf8_sequence_length(utf8[next]) : 0;
        for (; g != end; ++g) {
            if (g->after ? g->length <= next_bytes && read(utf8 + next, g->length) == g->key
                         : g->length <= at - before && read(utf8 + at - g->length, g->length) == g->key)
                return false;
        }
        return true;
    }

    Table characters_;   // a character
    Table after_space_;  // a space and a character, at the start of a piece
    std::vector<Guard> guards_;
};

}  // namespace bp
