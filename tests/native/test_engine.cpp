// Native tests of the engine's structures, beside the loops (as tiktoken and HF keep Rust unit
// tests): the pair table with duplicate ranks and in each layout, map growth, the rank-bucket walk stepping back
// to a lower rank, the seam test by merge trees, hashing of 8-25-byte keys, UTF-8 read back, the thread helpers' fallbacks, the worker pool's
// budget and its fork handlers.
//
// Plain asserts, no framework: tests/engine/test_native.py builds this file with the engine's
// flags and runs it; exit 0 means every check held. By hand:
//   c++ -std=c++17 -O1 -Wall -Wextra -I src/bytepair/engine tests/native/test_engine.cpp -o t && ./t
#undef NDEBUG
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <chrono>
#include <thread>
#if defined(__unix__) || defined(__APPLE__)
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "counting.hpp"
#include "decoder.hpp"
#include "encoder.hpp"
#include "hashing.hpp"
#include "merge.hpp"
#include "pair_table.hpp"
#include "piece_maps.hpp"
#include "threads.hpp"
#include "worker_pool.hpp"

using namespace bp;
typedef std::vector<uint32_t> Ids;

struct Rule {  // a merge list as (left, right, rank, merged), for the table and the oracle
    uint32_t left, right, rank, merged;
};

static PairTable table_of(const std::vector<Rule>& rules) {
    PairTable table;
    for (const Rule& r : rules) table.add(r.left, r.right, r.rank, r.merged);
    table.build();
    return table;
}

// The oracles, straight from the definitions. Rank rule (tiktoken, HF): the pair of lowest
// (rank, position) first, until none has a rank. Replay rule: each rule in rank order over the
// whole piece, left to right (reference.encode_piece). O(n^2 * rules).
static Ids merge_naive(const std::vector<Rule>& rules, bool monotonic, Ids ids) {
    if (monotonic) {
        std::vector<Rule> ordered = rules;
        std::sort(ordered.begin(), ordered.end(), [](const Rule& a, const Rule& b) { return a.rank < b.rank; });
        for (const Rule& r : ordered) {
            Ids out;
            for (size_t i = 0; i < ids.size(); ++i) {
                if (i + 1 < ids.size() && ids[i] == r.left && ids[i + 1] == r.right) {
                    out.push_back(r.merged);
                    ++i;
                } else {
                    out.push_back(ids[i]);
                }
            }
            ids.swap(out);
        }
        return ids;
    }
    for (;;) {
        uint32_t best_rank = NO_RANK, merged = 0;
        size_t best = 0;
        for (size_t i = 0; i + 1 < ids.size(); ++i)
            for (const Rule& r : rules)
                if (r.left == ids[i] && r.right == ids[i + 1] && r.rank < best_rank) {
                    best_rank = r.rank;
                    best = i;
                    merged = r.merged;
                }
        if (best_rank == NO_RANK) return ids;
        ids[best] = merged;
        ids.erase(ids.begin() + long(best) + 1);
    }
}

// `count` random merge rules over ids 0-3 and the ids they make, with ranks 0..count-1
// shuffled (so that merges make lower-ranked pairs) or, with `ordered`, in the order drawn. A
// pair drawn twice is learned again with its first merged id, or skipped with `no_repeats`.
static std::vector<Rule> random_rules(std::mt19937& random, uint32_t count, bool ordered, bool no_repeats) {
    std::vector<Rule> rs;
    std::set<std::pair<uint32_t, uint32_t>> seen;
    std::vector<uint32_t> ranks(count);
    for (uint32_t rank = 0; rank < count; ++rank) ranks[rank] = rank;
    if (!ordered) std::shuffle(ranks.begin(), ranks.end(), random);
    uint32_t next_id = 4;
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t left = random() % next_id, right = random() % next_id;
        bool again = !seen.insert({left, right}).second;
        if (again && no_repeats) continue;
        uint32_t merged = next_id;
        if (again) {
            for (const Rule& r : rs)
                if (r.left == left && r.right == right) merged = r.merged;
        } else {
            ++next_id;
        }
        rs.push_back({left, right, ordered ? uint32_t(rs.size()) : ranks[k], merged});
    }
    return rs;
}

static Ids run(void (*merge)(const PairTable&, bool, MergeScratch&), const PairTable& table,
               bool monotonic, const Ids& ids) {
    MergeScratch scratch;
    scratch.symbols.assign(ids.begin(), ids.end());
    merge(table, monotonic, scratch);
    return Ids(scratch.symbols.begin(), scratch.symbols.end());
}

static void test_pair_table_duplicate_ranks() {
    // (1, 2) learned at ranks 5 and 9 (a replayed list that rebuilds a part), (3, 4) once
    PairTable table = table_of({{1, 2, 9, 10}, {3, 4, 2, 11}, {1, 2, 5, 10}, {1, 2, 7, 10}});
    uint32_t merged = 0;
    assert(table.rank_at_least(1, 2, 0, &merged) == 5 && merged == 10);
    assert(table.rank_at_least(1, 2, 5, &merged) == 5);
    assert(table.rank_at_least(1, 2, 6, &merged) == 7 && merged == 10);
    assert(table.rank_at_least(1, 2, 8, &merged) == 9);
    assert(table.rank_at_least(1, 2, 10, &merged) == NO_RANK);
    assert(table.rank_at_least(3, 4, 0, &merged) == 2 && merged == 11);
    assert(table.rank_at_least(3, 4, 3, &merged) == NO_RANK);
    assert(table.rank_at_least(2, 1, 0, &merged) == NO_RANK);  // order matters
    assert(table.rank_at_least(7, 7, 0, &merged) == NO_RANK);
    assert(table.merged_of(1, 2) == 10 && table.merged_of(3, 4) == 11);
    assert(table.max_rank() == 9);
    PairTable empty = table_of({});
    assert(empty.rank_at_least(1, 2, 0, &merged) == NO_RANK);
}

// The same merges in each of the table's layouts: ids below 256 (the dense array), ids and
// ranks that fit 21 bits (8-byte slots, merged ids through rank + offset or an array), and
// larger ones (16-byte slots). Ids are shifted by `base`, ranks by `rank_base`.
static void check_layout(uint32_t base, uint32_t rank_base, bool offset_rule, bool packed) {
    std::mt19937 random(base ^ rank_base ^ offset_rule);
    for (int trial = 0; trial < 200; ++trial) {
        // offset: merged = 4 + rank, so no pair twice
        std::vector<Rule> rs = random_rules(random, 1 + random() % 12, offset_rule, offset_rule);
        for (Rule& r : rs) r = {base + r.left, base + r.right, rank_base + r.rank, base + r.merged};
        PairTable table = table_of(rs);
        if (base >= 256) assert(table.packed() == packed);
        uint32_t merged = 0;
        for (const Rule& r : rs) {  // the lowest rank of each pair, and its merged id
            uint32_t lowest = NO_RANK, lowest_merged = 0;
            for (const Rule& q : rs)
                if (q.left == r.left && q.right == r.right && q.rank < lowest) {
                    lowest = q.rank;
                    lowest_merged = q.merged;
                }
            assert(table.rank_at_least(r.left, r.right, 0, &merged) == lowest && merged == lowest_merged);
            assert(table.rank_at_least(r.left, r.right, r.rank, &merged) == r.rank);
        }
        assert(table.rank_at_least(base + 1000, base + 1000, 0, &merged) == NO_RANK);
        Ids piece(1 + random() % 90);
        for (uint32_t& id : piece) id = base + random() % 4;
        for (bool monotonic : {false, true}) {
            Ids expected = merge_naive(rs, monotonic, piece);
            assert(run(merge_long, table, monotonic, piece) == expected);
            if (piece.size() <= SHORT_PIECE) assert(run(merge_short, table, monotonic, piece) == expected);
        }
    }
}

static void test_pair_table_layouts() {
    check_layout(0, 0, false, true);                // dense
    check_layout(1000, 0, false, true);             // packed, rank -> merged array
    check_layout(1000, 0, true, true);              // packed, merged = rank + offset
    check_layout(1u << 21, 0, false, false);        // ids past 21 bits: 16-byte slots
    check_layout(1000, 1u << 21, false, false);     // ranks past 21 bits
    check_layout(1u << 30, 1u << 30, true, false);
    // one rank, two merged ids: 16-byte slots
    PairTable table = table_of({{300, 301, 5, 400}, {302, 303, 5, 401}});
    uint32_t merged = 0;
    assert(!table.packed());
    assert(table.rank_at_least(300, 301, 0, &merged) == 5 && merged == 400);
    assert(table.rank_at_least(302, 303, 0, &merged) == 5 && merged == 401);
    // duplicate ranks in packed slots
    table = table_of({{300, 301, 9, 310}, {300, 301, 5, 310}, {300, 301, 7, 310}, {3, 4, 6, 311}});
    assert(table.packed());
    assert(table.rank_at_least(300, 301, 0, &merged) == 5 && merged == 310);
    assert(table.rank_at_least(300, 301, 6, &merged) == 7 && merged == 310);
    assert(table.rank_at_least(300, 301, 8, &merged) == 9);
    assert(table.rank_at_least(300, 301, 10, &merged) == NO_RANK);
    assert(table.rank_at_least(301, 300, 0, &merged) == NO_RANK);
    assert(table.rank_at_least(3, 4, 0, &merged) == 6 && merged == 311);
}

// The pair filter: no pair of the table is turned away (else a merge would be missed), and
// most absent pairs are (else it saves nothing), in both hashed layouts.
// retain() keeps exactly the pairs it is told to, with their ranks, merged ids and later
// ranks, in both hashed layouts and for many pairs (the table and filter sized anew), and
// among the dense pairs of ids below 256.
static void test_pair_table_retain() {
    for (uint32_t base : {1000u, 1u << 22}) {  // packed slots; 16-byte slots
        std::vector<Rule> rs;
        for (uint32_t k = 0; k < 20000; ++k) rs.push_back({base + k, base + (k * 7) % 20000, k, base + 20000 + k});
        rs.push_back({base + 3, base + 21, 30000, base + 20003});  // (3, 21): ranks 3 and 30000
        PairTable table = table_of(rs);
        table.retain([base](uint32_t left, uint32_t, uint32_t) { return (left - base) % 3 == 0; });
        uint32_t merged = 0;
        for (uint32_t k = 0; k < 20000; ++k) {
            uint32_t rank = table.rank_at_least(base + k, base + (k * 7) % 20000, 0, &merged);
            if (k % 3 == 0) assert(rank == k && merged == base + 20000 + k);
            else assert(rank == NO_RANK);
        }
        assert(table.rank_at_least(base + 3, base + 21, 4, &merged) == 30000);
    }
    // pairs of ids below 256 (the dense array) are kept or dropped alike, and for_each_pair
    // sees only the kept ones
    PairTable table = table_of({{1, 60, 70, 70}, {50, 50, 70, 70}, {60, 1, 70, 70}, {1, 1, 50, 50}});
    table.retain([](uint32_t left, uint32_t right, uint32_t rank) { return rank != 70 || (left == 50 && right == 50); });
    uint32_t merged = 0;
    assert(table.rank_at_least(1, 60, 0, &merged) == NO_RANK && table.rank_at_least(60, 1, 0, &merged) == NO_RANK);
    assert(table.rank_at_least(50, 50, 0, &merged) == 70 && merged == 70);
    assert(table.rank_at_least(1, 1, 0, &merged) == 50 && merged == 50);
    size_t pairs = 0;
    table.for_each_pair([&pairs](uint32_t, uint32_t, uint32_t, uint32_t) { ++pairs; });
    assert(pairs == 2);
}

static void test_pair_filter() {
    for (uint32_t base : {1000u, 1u << 22}) {  // packed slots; 16-byte slots
        std::mt19937 random(base);
        std::vector<Rule> rs;
        std::set<std::pair<uint32_t, uint32_t>> present;
        const uint32_t ids = 5000;
        for (uint32_t rank = 0; rs.size() < 60000; ++rank) {
            uint32_t left = base + random() % ids, right = base + random() % ids;
            if (!present.insert({left, right}).second) continue;
            rs.push_back({left, right, rank, base + ids + rank});
        }
        PairTable table = table_of(rs);
        assert(table.packed() == (base < (1u << 21)));
        uint32_t merged = 0;
        for (const Rule& r : rs) {
            assert(table.may_hold(r.left, r.right));
            assert(table.rank_at_least(r.left, r.right, 0, &merged) == r.rank && merged == r.merged);
        }
        size_t absent = 0, let_through = 0;
        for (int k = 0; k < 100000; ++k) {
            uint32_t left = base + random() % ids, right = base + random() % ids;
            if (present.count({left, right})) continue;
            ++absent;
            let_through += table.may_hold(left, right);
            assert(table.rank_at_least(left, right, 0, &merged) == NO_RANK);
        }
        // two bits of a 64-bit word per pair, 8 bits per pair (rounded up): about 5%
        assert(let_through * 10 < absent);
    }
    PairTable unbuilt;  // a table looked up before build() holds nothing
    uint32_t merged = 0;
    assert(unbuilt.rank_at_least(300, 301, 0, &merged) == NO_RANK);
}

static void test_map_growth() {
    ShortMap shorts;
    PieceMap longs;
    const size_t n = 20000;  // far past both maps' first sizes
    std::vector<std::vector<uint8_t>> keys;
    for (size_t k = 0; k < n; ++k) {
        std::vector<uint8_t> key;
        size_t len = 1 + k % 40;  // short and long keys
        for (size_t i = 0; i < len; ++i) key.push_back(uint8_t('a' + (k * 31 + i * 7 + k / 26) % 26));
        key.push_back(uint8_t(k & 0xFF));
        key.push_back(uint8_t(k >> 8));
        keys.push_back(key);
    }
    for (size_t k = 0; k < n; ++k) {
        const std::vector<uint8_t>& key = keys[k];
        uint32_t ids[3] = {uint32_t(k), uint32_t(k + 1), uint32_t(k + 2)};
        size_t count = 1 + k % 3, found_count;
        if (key.size() <= SHORT_KEY) {
            ShortKey packed;
            pack_bytes(key.data(), key.size(), packed);
            assert(!shorts.find(packed, packed.hash(), &found_count));
            shorts.insert(packed, packed.hash(), ids, count);
        } else {
            uint64_t h = hash_bytes(key.data(), key.size());
            assert(!longs.find(key.data(), key.size(), h, &found_count));
            longs.insert(key.data(), key.size(), h, ids, count);
        }
    }
    assert(shorts.slots() > SHORT_MAP_INITIAL_SLOTS && longs.slots() > PIECE_MAP_INITIAL_SLOTS);
    assert(2 * shorts.entries() <= shorts.slots() && 2 * longs.entries() <= longs.slots());
    assert(shorts.entries() + longs.entries() == n);
    for (size_t k = 0; k < n; ++k) {  // every key, after every growth, still maps to its ids
        const std::vector<uint8_t>& key = keys[k];
        size_t count = 0;
        const uint32_t* ids;
        if (key.size() <= SHORT_KEY) {
            ShortKey packed;
            pack_bytes(key.data(), key.size(), packed);
            ids = shorts.find(packed, packed.hash(), &count);
        } else {
            ids = longs.find(key.data(), key.size(), hash_bytes(key.data(), key.size()), &count);
        }
        assert(ids && count == 1 + k % 3);
        for (size_t i = 0; i < count; ++i) assert(ids[i] == k + i);
    }
    shorts.clear();
    longs.clear();
    size_t count;
    ShortKey packed;
    pack_bytes(keys[0].data(), keys[0].size(), packed);
    assert(shorts.entries() == 0 && !shorts.find(packed, packed.hash(), &count));
}

// Every ASCII string of 1-8 characters packs to its own nonzero word (the length included:
// "a" and "a\0" differ), which a WordMap finds after growing; non-ASCII does not pack.
static void test_word_keys_and_map() {
    std::mt19937 random(7);
    std::set<std::string> strings;
    for (size_t len = 1; len <= 8; ++len) {
        strings.insert(std::string(len, '\0'));
        strings.insert(std::string(len, '\x7f'));
        strings.insert("a" + std::string(len - 1, '\0'));
    }
    while (strings.size() < 30000) {
        std::string text(1 + random() % 8, ' ');
        for (char& c : text) c = char(random() % 4 == 0 ? random() % 128 : 'a' + random() % 3);
        strings.insert(text);
    }
    WordMap map;
    std::set<uint64_t> words;
    size_t k = 0;
    for (const std::string& text : strings) {
        std::vector<uint16_t> units(text.begin(), text.end());
        uint64_t word, again;
        assert(pack_word(reinterpret_cast<const uint8_t*>(text.data()), text.size(), word));
        assert(pack_word(units.data(), units.size(), again) && again == word);  // any code unit width
        assert(word != 0 && words.insert(word).second);
        uint32_t ids[3] = {uint32_t(k), uint32_t(k + 1), uint32_t(k + 2)};
        size_t count;
        assert(!map.find(word, &count));
        map.insert(word, ids, 1 + k % 3);
        ++k;
    }
    assert(map.slots() > WORD_MAP_INITIAL_SLOTS && 2 * map.entries() <= map.slots());
    k = 0;
    for (const std::string& text : strings) {
        uint64_t word;
        pack_word(reinterpret_cast<const uint8_t*>(text.data()), text.size(), word);
        size_t count = 0;
        const uint32_t* ids = map.find(word, &count);
        assert(ids && count == 1 + k % 3);
        for (size_t i = 0; i < count; ++i) assert(ids[i] == k + i);
        ++k;
    }
    const uint16_t wide[] = {'a', 0xE9, 'b'};
    uint64_t word;
    assert(!pack_word(wide, 3, word));
    map.clear();
    size_t count;
    assert(map.entries() == 0 && !map.find(*words.begin(), &count));
}

// Spans for threads start and end at safe boundaries only, in order, and cover the text.
static void test_cut_spans() {
    CutTable cuts;
    cuts.add_pair(0, 1, 0, 3);  // a + b -> ab: no cut between a and b
    cuts.add_pair(3, 2, 1, 4);  // ab + c: none between b and c
    cuts.build({{0, 'a'}, {1, 'b'}, {2, 'c'}});
    assert(cuts.enabled());
    std::mt19937 random(11);
    for (int round = 0; round < 200; ++round) {
        std::string text(1 + random() % 300, 'a');
        for (char& c : text) c = "abc"[random() % 3];
        if (round % 10 == 0) text = std::string(text.size(), 'a') + "bc";  // runs of "a" cut everywhere
        if (round % 10 == 1) text = "a" + std::string(text.size(), 'b') + std::string(text.size(), 'c');
        size_t parts = 1 + random() % 9;
        std::vector<size_t> bounds = cuts.spans(reinterpret_cast<const uint8_t*>(text.data()), text.size(), parts);
        assert(bounds.front() == 0 && bounds.back() == text.size() && bounds.size() >= 2 && bounds.size() <= parts + 1);
        for (size_t k = 1; k + 1 < bounds.size(); ++k) {
            size_t at = bounds[k];
            assert(bounds[k - 1] < at && at < text.size());
            bool joined = (text[at - 1] == 'a' && text[at] == 'b') || (text[at - 1] == 'b' && text[at] == 'c');
            assert(!joined);
        }
    }
    // "abcabc...": no safe boundary at all but between c and a
    std::string abc;
    for (int k = 0; k < 100; ++k) abc += "abc";
    for (size_t at : cuts.spans(reinterpret_cast<const uint8_t*>(abc.data()), abc.size(), 7))
        assert(at == abc.size() || at % 3 == 0);
}

static void test_bucket_walk_steps_back() {
    // 0 1 0 1 -> 2 2 (rank 1 twice) -> 3 (rank 0, lower than the bucket being walked): the
    // walk must go back down to rank 0. A walk that only moved up would stop at 2 2.
    std::vector<Rule> rules = {{2, 2, 0, 3}, {0, 1, 1, 2}};
    PairTable table = table_of(rules);
    Ids piece = {0, 1, 0, 1};
    assert(run(merge_long, table, false, piece) == Ids({3}));
    assert(merge_naive(rules, false, piece) == Ids({3}));
    // replay never applies a lower rank after a higher one: 2 2 stays
    assert(run(merge_long, table, true, piece) == Ids({2, 2}));
    assert(merge_naive(rules, true, piece) == Ids({2, 2}));
    // and resumes the bucket it left: 0 1 0 1 0 1 -> 3 2 (then 3 2 has no rule)
    Ids longer = {0, 1, 0, 1, 0, 1};
    assert(run(merge_long, table, false, longer) == merge_naive(rules, false, longer));

    // Random rules and pieces over a small alphabet, both rules: every strategy equals the
    // oracle (merge_short only up to SHORT_PIECE symbols).
    std::mt19937 random(12345);
    for (int trial = 0; trial < 400; ++trial) {
        std::vector<Rule> rs = random_rules(random, 1 + random() % 12, false, false);
        PairTable table = table_of(rs);
        Ids piece(1 + random() % 90);
        for (uint32_t& id : piece) id = random() % 4;
        for (bool monotonic : {false, true}) {
            Ids expected = merge_naive(rs, monotonic, piece);
            assert(run(merge_long, table, monotonic, piece) == expected);
            if (piece.size() <= SHORT_PIECE) assert(run(merge_short, table, monotonic, piece) == expected);
        }
    }
}

// merge_chunked<Chunk> against the oracle under tiktoken's rule: chunks of 1 to 8 symbols, so
// that nearly every piece has seams, many of which fail and give ids back; when the window
// outgrows 8 chunks it must say so and leave the symbols as they were.
template <size_t Chunk> static bool run_chunked(const PairTable& table, Ids& ids) {
    MergeScratch scratch;
    scratch.symbols.assign(ids.begin(), ids.end());
    bool done = merge_chunked<Chunk>(table, scratch);
    ids.assign(scratch.symbols.begin(), scratch.symbols.end());
    return done;
}

static void test_chunked_merge() {
    // 16 zeros make one token: with 1-symbol chunks the window (8) is too small, with 8 it is not
    std::vector<Rule> doubling = {{0, 0, 0, 1}, {1, 1, 1, 2}, {2, 2, 2, 3}, {3, 3, 3, 4}};
    PairTable tree = table_of(doubling);
    Ids zeros(40, 0), ids = zeros;
    assert(!run_chunked<1>(tree, ids) && ids == zeros);
    assert(run_chunked<8>(tree, ids) && ids == merge_naive(doubling, false, zeros));

    std::mt19937 random(777);
    size_t chunked = 0, given_up = 0;
    for (int trial = 0; trial < 600; ++trial) {
        std::vector<Rule> rs = random_rules(random, 1 + random() % 14, false, true);
        PairTable table = table_of(rs);
        Ids piece(1 + random() % 200);
        for (uint32_t& id : piece) id = random() % 4;
        Ids expected = merge_naive(rs, false, piece);
        Ids a = piece, b = piece, c = piece, d = piece;
        for (auto [done, ids] : {std::pair<bool, Ids*>{run_chunked<1>(table, a), &a}, {run_chunked<2>(table, b), &b},
                                 {run_chunked<3>(table, c), &c}, {run_chunked<8>(table, d), &d}}) {
            if (done) ++chunked, assert(*ids == expected);
            else ++given_up, assert(*ids == piece);
        }
        MergeScratch scratch;  // and the dispatcher, whichever way it goes
        scratch.symbols.assign(piece.begin(), piece.end());
        merge_symbols(table, false, scratch);
        assert(Ids(scratch.symbols.begin(), scratch.symbols.end()) == expected);
    }
    assert(chunked > given_up);  // random rules seldom make tokens of more than 8 chunks
}

// seam_walk, the seam test read off merge trees, against merging the seam's symbols again:
// random rules whose ranks are the ids they make, rising from parts to token (as in
// tiktoken's files), on pairs of ids that two short runs of symbols each merge into alone.
static void test_seam_walk() {
    std::mt19937 random(4242);
    size_t held = 0, broken = 0;
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<Rule> rs = random_rules(random, 1 + random() % 20, true, true);
        std::vector<uint64_t> makers(4 + rs.size(), PairTable::NOT_MADE);
        for (Rule& r : rs) {
            r.rank = r.merged;
            makers[r.merged] = uint64_t(r.left) << 32 | r.right;
        }
        PairTable table = table_of(rs);
        table.set_makers(makers);
        // a token's symbols: its merge tree's leaves
        std::function<void(uint32_t, Ids&)> leaves = [&](uint32_t id, Ids& out) {
            if (makers[id] == PairTable::NOT_MADE) return out.push_back(id);
            leaves(uint32_t(makers[id] >> 32), out);
            leaves(uint32_t(makers[id]), out);
        };
        for (int k = 0; k < 60; ++k) {
            Ids left, right;
            leaves(uint32_t(random() % makers.size()), left);
            leaves(uint32_t(random() % makers.size()), right);
            Ids a = merge_naive(rs, false, left), b = merge_naive(rs, false, right);
            if (a.size() != 1 || b.size() != 1) continue;  // a token its own symbols do not make
            Ids both = left;
            both.insert(both.end(), right.begin(), right.end());
            bool expected = merge_naive(rs, false, both) == Ids{a[0], b[0]};
            assert(seam_walk(table, a[0], b[0]) == expected);
            ++(expected ? held : broken);
        }
    }
    assert(held > 1000 && broken > 1000);  // both answers, many times (13,153 and 2,425)
}

static void test_hashing_8_to_25_bytes() {
    uint8_t base[32];
    for (size_t i = 0; i < sizeof base; ++i) base[i] = uint8_t(0x30 + i);
    std::set<uint64_t> seen;
    for (size_t n = 8; n <= 25; ++n) {
        // exactly n bytes on the heap: a read past the end is the sanitizers' to catch
        std::vector<uint8_t> key(base, base + n);
        uint64_t h = hash_bytes(key.data(), n);
        assert(h != 0);                                 // 0 marks an empty slot
        assert(h == hash_bytes(key.data(), n));         // deterministic
        assert(seen.insert(h).second);                  // prefixes of one another differ
        for (size_t i = 0; i < n; ++i) {                // every byte counts, the tail included
            key[i] ^= 0x01;
            assert(hash_bytes(key.data(), n) != h);
            key[i] ^= 0x01;
        }
        if (n <= SHORT_KEY) {
            ShortKey a, b;
            pack_bytes(key.data(), n, a);
            assert(pack_ascii(reinterpret_cast<const char*>(key.data()), n, b));  // ASCII digits
            assert(a.len == n && b.len == n && a.hash() == b.hash());
            assert(a.w[0] == b.w[0] && a.w[1] == b.w[1] && a.w[2] == b.w[2]);
            for (size_t i = 0; i < n; ++i) assert(a.bytes()[i] == key[i]);
            ShortKey shorter;
            pack_bytes(key.data(), n - 1, shorter);     // zero padding does not alias a length
            assert(shorter.hash() != a.hash());
            std::vector<uint8_t> padded(key);            // bytes past the key do not count
            padded.resize(n + SHORT_KEY, 0xA5);
            ShortKey c;
            pack_padded(padded.data(), n, c);
            assert(c.len == n && c.w[0] == a.w[0] && c.w[1] == a.w[1] && c.w[2] == a.w[2]);
        }
    }
    for (size_t n = 0; n <= SHORT_KEY; ++n) {  // pack_padded at every length: as pack_bytes
        std::vector<uint8_t> padded(base, base + n);
        padded.resize(n + SHORT_KEY, 0xFF);
        ShortKey a, c;
        pack_bytes(padded.data(), n, a);
        pack_padded(padded.data(), n, c);
        assert(c.len == n && c.w[0] == a.w[0] && c.w[1] == a.w[1] && c.w[2] == a.w[2]);
    }
    ShortKey too_long;
    assert(!pack_ascii(reinterpret_cast<const char*>(base), SHORT_KEY + 1, too_long));
    const uint16_t wide[] = {'a', 0xE9};
    assert(!pack_ascii(wide, 2, too_long));  // not ASCII: the caller encodes UTF-8 first
}

// utf8_first reads back every code point utf8_of writes, and nothing else: not a continuation
// byte, a truncated character, an overlong form, a surrogate or a code point past U+10FFFF.
static void test_utf8_first() {
    for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
        if (cp >= 0xD800 && cp < 0xE000) continue;
        unsigned n;
        uint32_t packed = utf8_of(cp, n);
        uint8_t bytes[5] = {0, 0, 0, 0, 'x'};  // a byte after the character does not count
        for (unsigned k = 0; k < n; ++k) bytes[k] = uint8_t(packed >> (8 * k));
        assert(utf8_sequence_length(bytes[0]) == n);
        for (unsigned k = 1; k < n; ++k) assert(utf8_continuation(bytes[k]));
        uint32_t back = 0;
        assert(utf8_first(bytes, n + 1, back) == n && back == cp);
        assert(utf8_first(bytes, n - 1, back) == 0);  // cut short
    }
    const std::vector<std::vector<uint8_t>> not_characters = {
        {0x80}, {0xBF, 0x41}, {0xC3, 0x41}, {0xC0, 0x80}, {0xC1, 0xBF}, {0xE0, 0x80, 0x80},
        {0xF0, 0x80, 0x80, 0x80}, {0xED, 0xA0, 0x80}, {0xF4, 0x90, 0x80, 0x80}, {0xF8, 0x80, 0x80, 0x80, 0x80}};
    for (const std::vector<uint8_t>& bytes : not_characters) {
        uint32_t cp = 0;
        assert(utf8_first(bytes.data(), bytes.size(), cp) == 0);
    }
}

static void test_threads_carry_errors() {
    std::atomic<int> ran{0};
    int started = on_threads(4, [&](int) { ++ran; });
    assert(started == 4 && ran == 4);
    bool caught = false;
    try {
        on_threads(3, [&](int t) {
            if (t == 1) throw std::bad_alloc();
        });
    } catch (const std::bad_alloc&) {
        caught = true;
    }
    assert(caught);  // carried to the caller, not std::terminate
}

static void test_share_out_items() {
    std::vector<std::atomic<int>> taken(1000);
    share_out(4, taken.size(), [&](int, auto& next) {
        for (size_t k; next(k);) ++taken[k];
    });
    for (const std::atomic<int>& count : taken) assert(count == 1);  // each item once
    std::atomic<size_t> after_error{0};
    bool caught = false;
    try {
        share_out(2, 1000000, [&](int, auto& next) {
            for (size_t k; next(k);) {
                if (k == 10) throw std::bad_alloc();
                if (k > 10) ++after_error;
            }
        });
    } catch (const std::bad_alloc&) {
        caught = true;
    }
    assert(caught);
    assert(after_error < 1000000 - 11);  // the other thread stopped early
}

static void test_side_by_side() {
    std::atomic<int> first{0}, second{0};
    side_by_side([&] { ++first; }, [&] { ++second; });
    assert(first == 1 && second == 1);  // each job once, whichever thread took it
    bool caught = false;
    try {
        side_by_side([] { throw std::bad_alloc(); }, [&] { ++second; });
    } catch (const std::bad_alloc&) {
        caught = true;
    }
    assert(caught);  // carried to the caller
}

static void test_worker_pool_budget() {
    size_t before = set_idle_cache_budget(0);
    {
        WorkerPool pool;
        Worker* w = pool.acquire();
        pool.release(w);  // over a zero budget: freed, not kept
        assert(pool.idle_workers() == 0 && idle_cache_bytes.load() == 0);
        set_idle_cache_budget(size_t(64) << 20);
        w = pool.acquire();
        w->scratch.symbols.resize(SCRATCH_KEEP * 4);  // a huge piece's buffer
        pool.release(w);
        assert(pool.idle_workers() == 1);
        assert(idle_cache_bytes.load() < (size_t(1) << 20));  // the buffer was given back
    }
    assert(idle_cache_bytes.load() == 0);  // a pool's idle bytes go with it
    set_idle_cache_budget(before);
}

// A fork while another thread holds a pool's lock: the handlers make fork() wait for it, so
// the child's pool works. Without them the child inherits a lock nobody will release and its
// first acquire() hangs (then this test fails on its deadline instead of hanging).
static void test_fork_while_pool_locked() {
#if defined(__unix__) || defined(__APPLE__)
    WorkerPool pool;
    pool.release(pool.acquire());
    std::atomic<bool> holding{false};
    std::thread holder([&] {
        std::lock_guard<std::mutex> guard(pool.mutex());
        holding = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    });
    while (!holding) std::this_thread::yield();
    pid_t pid = fork();
    if (pid == 0) {
        Worker* w = pool.acquire();
        pool.release(w);
        _exit(0);
    }
    assert(pid > 0);
    int status = 0;
    bool ended = false;
    for (int k = 0; k < 1000 && !ended; ++k) {  // 10 s
        ended = waitpid(pid, &status, WNOHANG) == pid;
        if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!ended) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    holder.join();
    assert(ended && WIFEXITED(status) && WEXITSTATUS(status) == 0);
#endif
}

// The byte table against its definition: tokens of every length around the PAD-byte block copy,
// holes, ids past the table and negative ids (wrapped), and a strided id array.
static void test_byte_table() {
    std::mt19937 rng(7);
    std::vector<std::string> tokens;
    ByteTable table;
    for (int id = 0; id < 300; ++id) {
        if (id % 37 == 5) {
            tokens.push_back("\x01HOLE");
            table.add_hole();
            continue;
        }
        std::string token(size_t(rng() % 40), 'x');
        for (char& c : token) c = char('a' + rng() % 26);
        tokens.push_back(token);
        table.add(token.data(), token.size());
    }
    table.finish();
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<int64_t> ids(size_t(rng() % 50) * 2);
        std::string want;
        for (size_t k = 0; k < ids.size(); ++k) {
            do ids[k] = int64_t(rng() % 300);
            while (ids[k] % 37 == 5);
            if (k % 2 == 0) want += tokens[size_t(ids[k])];  // the strided view: even positions
        }
        size_t total = 0;
        const char* base = reinterpret_cast<const char*>(ids.data());
        size_t n = ids.size() / 2;
        assert(table.measure<int64_t>(base, n, 2 * sizeof(int64_t), total) == n);
        assert(total == want.size());
        std::string out(total, '\0');
        char* end = table.write<int64_t>(base, n, 2 * sizeof(int64_t), &out[0], &out[0] + total);
        assert(end == &out[0] + total && out == want);
    }
    const int32_t bad[] = {1, 2, 5, 3};  // 5 is a hole
    const int32_t past[] = {1, 300};
    const int32_t negative[] = {1, -1};
    size_t total = 0;
    assert(table.measure<int32_t>(reinterpret_cast<const char*>(bad), 4, sizeof(int32_t), total) == 2);
    assert(table.measure<int32_t>(reinterpret_cast<const char*>(past), 2, sizeof(int32_t), total) == 1);
    assert(table.measure<int32_t>(reinterpret_cast<const char*>(negative), 2, sizeof(int32_t), total) == 1);
}

int main() {
    test_byte_table();
    test_pair_table_duplicate_ranks();
    test_pair_table_layouts();
    test_pair_filter();
    test_pair_table_retain();
    test_map_growth();
    test_word_keys_and_map();
    test_cut_spans();
    test_bucket_walk_steps_back();
    test_chunked_merge();
    test_seam_walk();
    test_hashing_8_to_25_bytes();
    test_utf8_first();
    test_threads_carry_errors();
    test_share_out_items();
    test_side_by_side();
    test_worker_pool_budget();
    test_fork_while_pool_locked();
    std::puts("engine native tests: ok");
    return 0;
}
