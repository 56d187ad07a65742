// Safe cuts: where a character-mode text with no pattern can be cut into pieces that encode
// independently to the same ids as the whole.
//
// Python twin: bytepair.reference.safe_cuts (and the whole text through
// reference.encode_piece, which the pieces must equal end to end).
//
// The rule, and why it is exact. A token that spans the boundary between characters i and i+1
// is first made by a merge (A, B) whose own junction is that boundary (A and B, made earlier,
// do not span it): A ends with character i and B starts with character i+1. So if the pair
// (last character of A, first character of B) of no merge equals (c[i], c[i+1]), no token ever
// spans the boundary. Merging is then the two sides' merging interleaved: no pair straddles
// the boundary, and rank-lowest-first (replay's passes included) picks, on each side, what
// that side alone would pick. The rule needs no whole-piece lookup (a lookup of the whole text
// is not a lookup of its parts), so it is used without one only.
//
// Shape. Characters are put in classes: as the left of a boundary (the last characters of
// merges' left sides) and as its right (first characters of right sides); class 0 takes part
// in no junction, class 1 is "never cut here" (a character with no base id: byte fallback or
// unknown, reported by the merging). A bit matrix of left class x right class holds the
// junctions. WikiText-2 train with seed 000's tokenizer (vocab 500, 217 merges): 161 junctions,
// 3.36 M cuts in 10.8 M characters, pieces of 3.2 characters on average and 45 at most, 95 K
// distinct, so the worker's piece cache answers nearly every one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bp {

// Classes' bit matrix cells above which cutting is left off (the text is then one piece, as
// before): 2**26 bits, 8 MB; seed-sized vocabularies need a few hundred. Untuned.
static const size_t MAX_CUT_MATRIX_BITS = size_t(1) << 26;

class CutTable {
  public:
    static const uint32_t NONE = 0, NEVER = 1;  // classes: no junction; never cut next to it

    // Every merge (left, right) -> merged, at its rank, before build().
    void add_pair(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
        staged_.push_back({rank, left, right, merged});
    }

    // `base`: (base id, code point) of every base character. After it, `enabled()` says
    // whether cuts are known (every merge's parts reached from base characters, matrix small).
    void build(const std::vector<std::pair<uint32_t, uint32_t>>& base) {
        enabled_ = false;
        std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> ends;  // id -> first, last cp
        for (const auto& entry : base) ends[entry.first] = {entry.second, entry.second};
        std::sort(staged_.begin(), staged_.end(), [](const Staged& a, const Staged& b) { return a.rank < b.rank; });
        std::vector<std::pair<uint32_t, uint32_t>> junctions;  // (last cp of left, first cp of right)
        for (const Staged& s : staged_) {
            auto left = ends.find(s.left), right = ends.find(s.right);
            if (left == ends.end() || right == ends.end()) return;  // a part not made from characters
            junctions.push_back({left->second.second, right->second.first});
            ends[s.merged] = {left->second.first, right->second.second};
        }
        std::vector<Staged>().swap(staged_);
        std::unordered_map<uint32_t, uint32_t> left_class, right_class;
        for (const auto& j : junctions) {
            left_class.emplace(j.first, uint32_t(left_class.size() + 2));
            right_class.emplace(j.second, uint32_t(right_class.size() + 2));
        }
        rows_ = left_class.size() + 2;
        columns_ = right_class.size() + 2;
        if (rows_ > 0xFFFF || columns_ > 0xFFFF || rows_ * columns_ > MAX_CUT_MATRIX_BITS) return;
        bits_.assign((rows_ * columns_ + 63) / 64, 0);
        for (size_t c = 0; c < columns_; ++c) set(NEVER, c);
        for (size_t r = 0; r < rows_; ++r) set(r, NEVER);
        for (const auto& j : junctions) set(left_class[j.first], right_class[j.second]);
        // the class of a base character, both sides in one word; characters with no base id
        // (and astral ones, looked up in the map) are NEVER on both sides
        class_bmp_.assign(0x10000, NEVER << 16 | NEVER);
        for (const auto& entry : base) {
            uint32_t cp = entry.second;
            auto l = left_class.find(cp), r = right_class.find(cp);
            uint32_t word = (l == left_class.end() ? NONE : l->second) << 16 | (r == right_class.end() ? NONE : r->second);
            if (cp < 0x10000) class_bmp_[cp] = word;
            else class_astral_[cp] = word;
        }
        enabled_ = true;
    }

    bool enabled() const { return enabled_; }

    // Both classes of a code point: left class << 16 | right class.
    inline uint32_t classes(uint32_t cp) const {
        if (cp < 0x10000) return class_bmp_[cp];
        auto it = class_astral_.find(cp);
        return it == class_astral_.end() ? (NEVER << 16 | NEVER) : it->second;
    }
    // Whether a boundary may be cut, between characters of classes `before` and `after`.
    inline bool safe(uint32_t before, uint32_t after) const {
        size_t cell = size_t(before >> 16) * columns_ + (after & 0xFFFF);
        return !((bits_[cell >> 6] >> (cell & 63)) & 1);
    }

    // Calls piece(start, end) for the pieces of s[0, n), cut at every safe boundary.
    template <class C, class Piece> void cut(const C* s, size_t n, Piece&& piece) const {
        if (n == 0) return;
        size_t start = 0;
        uint32_t before = classes(s[0]);
        for (size_t i = 1; i < n; ++i) {
            uint32_t after = classes(s[i]);
            if (safe(before, after)) {
                piece(start, i);
                start = i;
            }
            before = after;
        }
        piece(start, n);
    }

    // The bounds of up to `parts` spans of s[0, n) for threads, each cut where cut() could:
    // 0, the first safe boundary at or after each k * n / parts (k = 1 .. parts - 1), then n.
    // Fewer spans where there is no safe boundary between two targets.
    template <class C> std::vector<size_t> spans(const C* s, size_t n, size_t parts) const {
        std::vector<size_t> bounds{0};
        for (size_t k = 1; k < parts && n > 1; ++k) {
            size_t i = std::max(bounds.back() + 1, k * n / parts);
            while (i < n && !safe(classes(s[i - 1]), classes(s[i]))) ++i;
            if (i >= n) break;
            bounds.push_back(i);
        }
        bounds.push_back(n);
        return bounds;
    }

  private:
    struct Staged {
        uint32_t rank, left, right, merged;
    };
    void set(size_t row, size_t column) {
        size_t cell = row * columns_ + column;
        bits_[cell >> 6] |= 1ULL << (cell & 63);
    }

    std::vector<Staged> staged_;
    bool enabled_ = false;
    size_t rows_ = 0, columns_ = 0;
    std::vector<uint64_t> bits_;
    std::vector<uint32_t> class_bmp_;
    std::unordered_map<uint32_t, uint32_t> class_astral_;
};

}  // namespace bp
