"""The reference algorithms on cases small enough to check by hand."""

from bytepair import reference


def test_count_pairs_counts_overlapping_pairs():
    assert reference.count_pairs(list("aaab")) == {("a", "a"): 2, ("a", "b"): 1}


def test_merge_pair_is_left_to_right_without_overlap():
    assert reference.merge_pair(list("aaaa"), ("a", "a"), "aa") == ["aa", "aa"]
    assert reference.merge_pair(list("aaa"), ("a", "a"), "aa") == ["aa", "a"]


def test_textbook_aaabdaaabac_three_merges():
    # By hand: "aa" occurs 4 times (positions 0,1,4,5); then ("aa","a") and ("a","b") tie at
    # 2 and ("aa","a") is seen first; then ("aaa","b") occurs twice.
    base, merges = reference.train_chars("aaabdaaabac", vocab_size=7)
    assert base == ["a", "b", "c", "d"]
    assert merges == [("a", "a"), ("aa", "a"), ("aaa", "b")]
    assert reference.encode_piece(list("aaabdaaabac"), merges) == ["aaab", "d", "aaab", "a", "c"]


def test_seed_001_hand_example_first_four_merges():
    # low x5, lower x2, newest x6, widest x3: "e s" and "s t" tie at 9, "e s" is seen first;
    # then "es t" (9), "l o" (7, seen before "o w"), "lo w" (7).
    chunks = {tuple("low"): 5, tuple("lower"): 2, tuple("newest"): 6, tuple("widest"): 3}
    merges = reference.train_bpe(chunks, sorted(set("lowernstid")), vocab_size=14, min_frequency=1)
    assert merges[:4] == [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")]
    assert reference.encode_piece(list("lowest"), merges[:4]) == ["low", "est"]


def test_duplicate_value_is_recorded_but_does_not_grow_the_vocabulary():
    # "abc" is built twice: first as a+bc, later as ab+c.
    merges = [("b", "c"), ("a", "bc"), ("a", "b"), ("ab", "c")]
    values = reference.vocabulary(list("abc"), merges)
    assert values == ["a", "b", "c", "bc", "abc", "ab"]


def test_min_frequency_stops_training():
    base, merges = reference.train_chars("abcd", vocab_size=10, min_frequency=2)
    assert merges == []


def test_byte_trainer_starts_from_256_bytes():
    merges = reference.train_bytes("héhé", vocab_size=258, min_frequency=1)
    assert merges[0] == (b"h", b"\xc3")
    assert all(isinstance(left, bytes) and isinstance(right, bytes) for left, right in merges)


def test_decode_concatenates():
    assert reference.decode(["ab", "c"]) == "abc"
    assert reference.decode([b"a", b"\xc3\xa9"]) == "aé".encode()
