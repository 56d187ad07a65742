# BPE training: incremental pair counts over weighted unique chunks (``train_merges``).
#
# Must equal ``bytepair.reference.train_bpe`` merge for merge, including its tie-break (equal
# counts go to the pair that occurs first: chunk order, then position inside the chunk) and
# seed 000's rule that a merge rebuilding an existing value is recorded but adds no id. It does
# not split or count the text: ``train.py`` hands it the unique pieces and their counts.
#
# Design. Every symbol of every unique chunk lives in one array, chunk after chunk, as a doubly
# linked list; a symbol keeps the offset of its first character, so offsets order occurrences
# exactly as positions in the reference's current sequences do. ``pair_at`` on a symbol is the
# id of the pair that starts there (-1 at a chunk's end, or once absorbed into its left
# neighbour). Per pair: its weighted count (exact at all times); the offsets where it was formed
# (checked lazily: an offset is still an occurrence iff its ``pair_at`` is that pair, and once
# it stops being one it never is again, because the two values there only grow); and its
# earliest offset (lazy: a new occurrence can only lower it; when the earliest one is destroyed
# it goes stale, and is recomputed from the list only when the pair reaches the top of the
# heap). The heap is a lazy max-heap on (count, -earliest offset): every live pair has an entry
# at least as good as its true key, so the first popped entry that equals its pair's true key is
# the reference's choice; other entries are dropped or re-queued at the true key.
#
# Complexity: O(N) to build for N symbols in the unique chunks; a merge costs O(k log H) for
# the k offsets on its list, and a stale earliest offset one pass over that pair's list. Over a
# run that is about O((N + merges applied) log H). Memory: 20 bytes per symbol of the unique
# chunks plus 4 per recorded occurrence; it follows the unique chunks, not the corpus.
#
# Measured (CPU time, 8,000 merges on WikiText-2 train as one 10.8M-character chunk): one array
# per field and std::unordered_map, 6.2 s; symbols as one struct and an open-addressing map,
# 4.3 s; prefetching the symbols of the occurrence list, 3.0 s. Considered and dropped: a tree
# per pair to read the earliest occurrence off directly (stale earliest offsets are rare, about
# one merge in five meets one, and one pass over that list costs less); hashing the neighbour
# pairs a merge destroys (``pair_at`` names them). Occurrence lists come out sorted in practice
# (all of a pair's occurrences form during one merge, which walks its own list in order), but
# nothing here relies on it.

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.algorithm cimport is_sorted as _train_is_sorted, sort as _train_sort
from libcpp.pair cimport pair as _train_pair
from libcpp.string cimport string
from libcpp.vector cimport vector

cdef extern from "engine/compat.hpp":
    void _train_prefetch "BP_PREFETCH"(const void* address) noexcept nogil

# Heap entries are (count, packed) with packed = (_TRAIN_MAX_POSITION - earliest) << 32 | pair,
# so a max-heap on the tuple puts the higher count first, then the earlier position.
cdef int64_t _TRAIN_MAX_POSITION = 2147483647
# A merge reads its occurrences' symbols in list order but far apart in memory; asking for them
# this many steps ahead hides most of the cache misses (see "Measured" above).
cdef size_t _TRAIN_PREFETCH_DISTANCE = 16
cdef int64_t _TRAIN_PAIR_MASK = 0xFFFFFFFF
cdef uint64_t _TRAIN_NO_PAIR = 0xFFFFFFFFFFFFFFFF  # an empty hash slot; real keys are < 2**63
cdef uint64_t _TRAIN_HASH_BASE = 0x100000001B3  # of a value's polynomial hash (mod 2**64)
ctypedef _train_pair[int64_t, int64_t] _TrainHeapEntry


# libcpp's priority_queue, with push declared as raising: an allocation failure becomes
# MemoryError instead of escaping the nogil code.
cdef extern from "<queue>" nogil:
    cdef cppclass _TrainQueue "std::priority_queue<std::pair<int64_t, int64_t> >":
        bint empty()
        _TrainHeapEntry& top()
        void pop()
        void push(_TrainHeapEntry&) except +


cdef struct _TrainSymbol:
    # One symbol of a unique chunk. The fields sit together because a merge reads a symbol
    # and its neighbours at once: one cache line instead of one per field.
    int32_t value    # token id, -1 once absorbed into its left neighbour
    int32_t next     # the next live symbol of the chunk, or -1
    int32_t prev     # the previous live symbol of the chunk, or -1
    int32_t pair_at  # id of the pair (value, next's value), or -1
    int32_t chunk    # index of the chunk, for its count


cdef class _MergeTrainer:
    """The state of one training run; see the note at the top of this file."""

    # Symbols, in one array over all unique chunks.
    cdef vector[_TrainSymbol] _symbols
    cdef vector[int64_t] _chunk_count
    # Pairs, by pair id.
    cdef vector[uint64_t] _slot_key  # open-addressing map (left << 32 | right) -> pair id
    cdef vector[int32_t] _slot_pair
    cdef vector[int32_t] _pair_left
    cdef vector[int32_t] _pair_right
    cdef vector[int64_t] _pair_count
    cdef vector[int32_t] _pair_earliest
    cdef vector[vector[int32_t]] _pair_positions
    cdef vector[char] _pair_touched
    cdef vector[int32_t] _touched
    cdef _TrainQueue _heap
    # Token values, by id, and the id of each value.
    cdef vector[string] _token_bytes
    # value -> id by a polynomial hash of the value's bytes, which a merge computes from its
    # two parts' hashes without joining them: _value_hash[id], _value_power[id] (the base to
    # the value's length) and an open-addressing table of id + 1 (0: empty). It replaced an
    # unordered_map of joined strings, a node walk per merge: the merges of WikiText-2 train
    # at 32,768 (32,465 unique pieces) 39.0-39.2 -> 32.4-36.7 ms, best of 9, alternated builds.
    cdef vector[uint64_t] _value_hash
    cdef vector[uint64_t] _value_power
    cdef vector[int32_t] _value_slots
    # The run.
    cdef int64_t _distinct_values
    cdef int64_t _vocab_size
    cdef int64_t _min_frequency
    cdef int64_t _sequence_length
    cdef bint finished
    cdef vector[int64_t] _records  # 5 per merge: left, right, merged, frequency, length after

    def __cinit__(self, chunks, counts, str mode, base_tokens, int64_t vocab_size,
                  int64_t min_frequency):
        self._vocab_size = vocab_size
        self._min_frequency = min_frequency
        self.finished = False
        if mode == "char":
            self._load_char_chunks(chunks, counts, self._char_base_ids(base_tokens))
        elif mode == "byte":
            self._load_byte_chunks(chunks, counts)
        else:
            raise ValueError(f"mode must be 'char' or 'byte', not {mode!r}")
        self._distinct_values = self._token_bytes.size()
        with nogil:
            self._count_initial_pairs()

    # -- loading --------------------------------------------------------------------------

    cdef vector[int32_t] _char_base_ids(self, base_tokens) except *:
        """Code point -> id (-1 if not a base token); fills the base values."""
        cdef vector[int32_t] base_ids
        cdef Py_UCS4 character
        cdef str token
        for token in base_tokens:
            if len(token) != 1:
                raise ValueError(f"base token {token!r} is not a single character")
            character = token[0]
            if character >= base_ids.size():
                base_ids.resize(<size_t>character + 1, -1)
            if base_ids[character] != -1:
                raise ValueError(f"base token {token!r} is listed twice")
            base_ids[character] = self._token_bytes.size()
            self._add_value(token.encode("utf-8", "surrogatepass"))
        return base_ids

    cdef int _load_char_chunks(self, chunks, counts, vector[int32_t]& base_ids) except -1:
        cdef str chunk
        cdef Py_UCS4 character
        cdef int32_t chunk_index = 0
        cdef int32_t base_id
        for chunk, count in zip(chunks, counts, strict=True):
            self._start_chunk(count)
            for character in chunk:
                base_id = base_ids[character] if character < base_ids.size() else -1
                if base_id < 0:
                    raise ValueError(
                        f"character {chr(character)!r} of chunk {chunk_index} is not in "
                        f"base_tokens; add it to the base alphabet")
                self._append_symbol(base_id, chunk_index)
            self._sequence_length += len(chunk) * self._chunk_count.back()
            chunk_index += 1
        return 0

    cdef int _load_byte_chunks(self, chunks, counts) except -1:
        cdef bytes encoded
        cdef const unsigned char* data
        cdef Py_ssize_t length, index
        cdef int32_t chunk_index = 0
        for value in range(256):
            self._add_value(bytes([value]))
        for chunk, count in zip(chunks, counts, strict=True):
            self._start_chunk(count)
            encoded = chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")
            data = encoded
            length = len(encoded)
            for index in range(length):
                self._append_symbol(data[index], chunk_index)
            self._sequence_length += length * self._chunk_count.back()
            chunk_index += 1
        return 0

    cdef int _start_chunk(self, count) except -1:
        if count < 1:
            raise ValueError(f"chunk counts must be at least 1, got {count!r}")
        self._chunk_count.push_back(count)
        return 0

    cdef inline int _append_symbol(self, int32_t value, int32_t chunk_index) except -1:
        cdef int32_t position = self._symbols.size()
        if position == _TRAIN_MAX_POSITION:
            raise OverflowError("the unique chunks hold more than 2**31 - 1 symbols")
        cdef bint starts_chunk = position == 0 or self._symbols.back().chunk != chunk_index
        cdef _TrainSymbol symbol
        symbol.value = value
        symbol.next = -1
        symbol.prev = -1 if starts_chunk else position - 1
        symbol.pair_at = -1
        symbol.chunk = chunk_index
        if not starts_chunk:
            self._symbols.back().next = position
        self._symbols.push_back(symbol)
        return 0

    cdef int32_t _add_value(self, string value_bytes) except -1 nogil:
        cdef uint64_t value_hash = 0, power = 1
        cdef size_t index
        for index in range(value_bytes.size()):
            value_hash = value_hash * _TRAIN_HASH_BASE + <unsigned char>value_bytes[index] + 1
            power *= _TRAIN_HASH_BASE
        return self._add_hashed_value(value_bytes, value_hash, power)

    cdef int32_t _add_hashed_value(self, string value_bytes, uint64_t value_hash,
                                   uint64_t power) except -1 nogil:
        cdef int32_t token_id = self._token_bytes.size()
        self._token_bytes.push_back(value_bytes)
        self._value_hash.push_back(value_hash)
        self._value_power.push_back(power)
        if 2 * self._token_bytes.size() > self._value_slots.size():
            self._grow_value_slots(max(<size_t>1024, 2 * self._value_slots.size()))
        else:
            self._value_slots[self._value_slot(value_hash)] = token_id + 1
        return token_id

    cdef inline size_t _value_home(self, uint64_t value_hash) noexcept nogil:
        """The first slot of ``value_hash``'s probe sequence."""
        return (value_hash * <uint64_t>0x9E3779B97F4A7C15) >> 32 & (self._value_slots.size() - 1)

    cdef inline size_t _value_slot(self, uint64_t value_hash) noexcept nogil:
        """The first empty slot of ``value_hash``'s probe sequence."""
        cdef size_t mask = self._value_slots.size() - 1
        cdef size_t slot = self._value_home(value_hash)
        while self._value_slots[slot] != 0:
            slot = (slot + 1) & mask
        return slot

    cdef int _grow_value_slots(self, size_t capacity) except -1 nogil:
        cdef size_t token_id
        self._value_slots.clear()
        self._value_slots.resize(capacity, 0)
        for token_id in range(self._token_bytes.size()):
            self._value_slots[self._value_slot(self._value_hash[token_id])] = token_id + 1
        return 0

    cdef int _count_initial_pairs(self) except -1 nogil:
        cdef _TrainSymbol* symbols = self._symbols.data()
        cdef int32_t position, pair_id
        self._grow_pair_slots(1024)
        for position in range(<int32_t>self._symbols.size()):
            if symbols[position].next >= 0:
                pair_id = self._get_pair(symbols[position].value, symbols[position + 1].value)
                self._add_occurrence(pair_id, position)
                symbols[position].pair_at = pair_id
        self._push_touched()
        return 0

    # -- pair bookkeeping (no Python objects below this line) --------------------------------

    cdef int32_t _get_pair(self, int32_t left, int32_t right) except -1 nogil:
        """The id of pair (left, right), created with count 0 if new."""
        cdef uint64_t key = (<uint64_t>left << 32) | <uint64_t>right
        cdef size_t slot = self._pair_slot(key)
        if self._slot_key[slot] == key:
            return self._slot_pair[slot]
        cdef int32_t pair_id = self._pair_left.size()
        self._slot_key[slot] = key
        self._slot_pair[slot] = pair_id
        self._pair_left.push_back(left)
        self._pair_right.push_back(right)
        self._pair_count.push_back(0)
        self._pair_earliest.push_back(_TRAIN_MAX_POSITION)
        self._pair_positions.push_back(vector[int32_t]())
        self._pair_touched.push_back(0)
        if 2 * self._pair_left.size() > self._slot_key.size():
            self._grow_pair_slots(2 * self._slot_key.size())
        return pair_id

    cdef inline size_t _pair_slot(self, uint64_t key) noexcept nogil:
        """The slot holding ``key``, or the empty slot where it belongs (linear probing)."""
        cdef size_t mask = self._slot_key.size() - 1
        cdef size_t slot = (key * <uint64_t>0x9E3779B97F4A7C15) >> 32 & mask
        while self._slot_key[slot] != key and self._slot_key[slot] != _TRAIN_NO_PAIR:
            slot = (slot + 1) & mask
        return slot

    cdef int _grow_pair_slots(self, size_t capacity) except -1 nogil:
        cdef size_t pair_id
        cdef uint64_t key
        # clear + resize rather than assign: Cython declares only resize as raising (MemoryError)
        self._slot_key.clear()
        self._slot_key.resize(capacity, _TRAIN_NO_PAIR)
        self._slot_pair.clear()
        self._slot_pair.resize(capacity, -1)
        for pair_id in range(self._pair_left.size()):
            key = (<uint64_t>self._pair_left[pair_id] << 32) | <uint64_t>self._pair_right[pair_id]
            slot = self._pair_slot(key)
            self._slot_key[slot] = key
            self._slot_pair[slot] = pair_id
        return 0

    cdef inline int _add_occurrence(self, int32_t pair_id, int32_t position) except -1 nogil:
        self._pair_count[pair_id] += self._chunk_count[self._symbols[position].chunk]
        self._pair_positions[pair_id].push_back(position)
        if position < self._pair_earliest[pair_id]:
            self._pair_earliest[pair_id] = position
        if not self._pair_touched[pair_id]:
            self._pair_touched[pair_id] = 1
            self._touched.push_back(pair_id)
        return 0

    cdef int _push_touched(self) except -1 nogil:
        """Give every pair that gained occurrences a heap entry with its new key."""
        cdef int32_t pair_id
        for pair_id in self._touched:
            self._pair_touched[pair_id] = 0
            if self._pair_count[pair_id] > 0:
                self._push(pair_id)
        self._touched.clear()
        return 0

    cdef inline int _push(self, int32_t pair_id) except -1 nogil:
        cdef int64_t packed = ((_TRAIN_MAX_POSITION - self._pair_earliest[pair_id]) << 32) | pair_id
        self._heap.push(_TrainHeapEntry(self._pair_count[pair_id], packed))
        return 0

    cdef int32_t _true_earliest(self, int32_t pair_id) noexcept nogil:
        """The pair's earliest live position; drops dead positions from its list."""
        cdef _TrainSymbol* symbols = self._symbols.data()
        cdef int32_t earliest = self._pair_earliest[pair_id]
        if earliest == _TRAIN_MAX_POSITION or symbols[earliest].pair_at == pair_id:
            return earliest  # (the first case only if counts and lists disagree: a bug)
        cdef vector[int32_t]* positions = &self._pair_positions[pair_id]
        cdef size_t kept = 0, index
        cdef int32_t position
        earliest = _TRAIN_MAX_POSITION
        for index in range(positions.size()):
            position = positions[0][index]
            if symbols[position].pair_at == pair_id:
                positions[0][kept] = position
                kept += 1
                if position < earliest:
                    earliest = position
        positions.resize(kept)
        self._pair_earliest[pair_id] = earliest
        return earliest

    cdef int32_t _pop_best(self) except -2 nogil:
        """The pair with the highest count, earliest first on ties; -1 when none is left."""
        cdef int32_t pair_id, earliest
        cdef int64_t count, entry_earliest
        cdef _TrainHeapEntry entry
        while not self._heap.empty():
            entry = self._heap.top()
            self._heap.pop()
            pair_id = <int32_t>(entry.second & _TRAIN_PAIR_MASK)
            count = self._pair_count[pair_id]
            if count <= 0 or entry.first < count:
                continue  # merged away, or a newer, better entry exists
            if entry.first > count:
                self._push(pair_id)  # the count fell since; re-queue at the true count
                continue
            earliest = self._true_earliest(pair_id)
            entry_earliest = _TRAIN_MAX_POSITION - (entry.second >> 32)
            if entry_earliest < earliest:
                self._push(pair_id)  # its earliest occurrence was destroyed
                continue
            if entry_earliest > earliest:
                continue
            return pair_id
        return -1

    # -- merging ---------------------------------------------------------------------------

    cdef int32_t _merged_id(self, int32_t left, int32_t right) except -1 nogil:
        """The id of left + right; a new id unless that value already exists (seed 000)."""
        cdef uint64_t value_hash = self._value_hash[left] * self._value_power[right] + self._value_hash[right]
        cdef const string* a = &self._token_bytes[left]
        cdef const string* b = &self._token_bytes[right]
        cdef size_t mask = self._value_slots.size() - 1
        cdef size_t slot = self._value_home(value_hash)
        cdef int32_t found
        cdef const string* value
        while self._value_slots[slot] != 0:
            found = self._value_slots[slot] - 1
            value = &self._token_bytes[found]
            if (self._value_hash[found] == value_hash and value.size() == a.size() + b.size()
                    and value.compare(0, a.size(), a[0]) == 0 and value.compare(a.size(), b.size(), b[0]) == 0):
                return found
            slot = (slot + 1) & mask
        self._distinct_values += 1
        return self._add_hashed_value(a[0] + b[0], value_hash, self._value_power[left] * self._value_power[right])

    cdef int _apply(self, int32_t pair_id, int32_t merged) except -1 nogil:
        """Merge every live occurrence of the pair, left to right inside each chunk."""
        cdef _TrainSymbol* symbols = self._symbols.data()  # never reallocated while training
        cdef _TrainSymbol* symbol
        cdef vector[int32_t] positions
        cdef int32_t position, right, after, before, neighbour
        cdef int64_t weight
        positions.swap(self._pair_positions[pair_id])
        if (self._pair_left[pair_id] == self._pair_right[pair_id]
                and not _train_is_sorted(positions.begin(), positions.end())):
            # subtle: in "aaa" the occurrences overlap and only the leftmost one may merge, so
            # they must be taken in order. Lists come out sorted in practice (all of a pair's
            # occurrences form during one merge, which walks its own list in order), so this
            # is a guard that costs one pass, not a sort per merge.
            _train_sort(positions.begin(), positions.end())
        cdef size_t index, count = positions.size()
        for index in range(count):
            if index + _TRAIN_PREFETCH_DISTANCE < count:
                _train_prefetch(&symbols[positions[index + _TRAIN_PREFETCH_DISTANCE]])
            position = positions[index]
            symbol = &symbols[position]
            if symbol.pair_at != pair_id:
                continue
            weight = self._chunk_count[symbol.chunk]
            right = symbol.next
            after = symbols[right].next
            before = symbol.prev
            if before >= 0:
                self._pair_count[symbols[before].pair_at] -= weight
                neighbour = self._get_pair(symbols[before].value, merged)
                symbols[before].pair_at = neighbour
                self._add_occurrence(neighbour, before)
            if after >= 0:
                self._pair_count[symbols[right].pair_at] -= weight
                neighbour = self._get_pair(merged, symbols[after].value)
                symbol.pair_at = neighbour
                self._add_occurrence(neighbour, position)
                symbols[after].prev = position
            else:
                symbol.pair_at = -1
            symbol.value = merged
            symbol.next = after
            symbols[right].value = -1
            symbols[right].pair_at = -1
            self._sequence_length -= weight
        self._pair_count[pair_id] = 0
        self._push_touched()
        return 0

    cdef int run(self, int64_t until) except -1 nogil:
        """Merge until ``until`` merges are recorded, or the run is finished."""
        cdef int32_t best, merged
        cdef int64_t frequency
        while self._records.size() < <size_t>(5 * until):
            if self._distinct_values >= self._vocab_size:
                self.finished = True
                return 0
            best = self._pop_best()
            if best < 0 or self._pair_count[best] < self._min_frequency:
                self.finished = True
                return 0
            frequency = self._pair_count[best]
            merged = self._merged_id(self._pair_left[best], self._pair_right[best])
            self._apply(best, merged)
            self._records.push_back(self._pair_left[best])
            self._records.push_back(self._pair_right[best])
            self._records.push_back(merged)
            self._records.push_back(frequency)
            self._records.push_back(self._sequence_length)
        return 0

    cdef int64_t merges_done(self) noexcept:
        return self._records.size() // 5

    cdef int64_t merges_wanted(self) noexcept:
        return max(self._vocab_size - self._distinct_values, 0)

    cdef object records(self, bint packed):
        return _records_out(self._records, packed)


cdef object _records_out(const vector[int64_t]& records, bint packed):
    """A run's records (5 int64 per merge) as ``train_merges`` returns them: a list of tuples,
    or with ``packed`` the bytes of the int64s (1.3 MB at 32,768 merges instead of a 7.6 MB
    list, and nothing for the collector to walk)."""
    cdef const int64_t* data = records.data()
    if packed:
        return PyBytes_FromStringAndSize(<const char*>data, records.size() * sizeof(int64_t))
    return [(data[i], data[i + 1], data[i + 2], data[i + 3], data[i + 4]) for i in range(0, records.size(), 5)]


cdef extern from "engine/sequence_trainer.hpp":
    cdef cppclass _SequenceTrainer "bp::SequenceTrainerBase":
        void reserve(size_t symbols) except +
        void append(const uint32_t* ids, size_t n) except +
        void end_chunk(int64_t times) except +
        void start() except + nogil
        void run(int64_t until) except + nogil
        bint finished
        vector[int64_t] records
        int64_t merges_done()
        int64_t merges_wanted()
    _SequenceTrainer* _new_sequence_trainer "bp::new_sequence_trainer"(
        const vector[string]& values, int64_t vocab_size, int64_t min_frequency, uint64_t max_id) except +

# Chunks whose repeats add at most this factor to their symbols are trained as one sequence
# (engine/sequence_trainer.hpp: 3-5 bytes per symbol of the whole text) rather than as unique
# chunks (20+ bytes per unique symbol): the sequence costs less memory up to about 8x; 2 keeps
# pre-tokenized text, where pieces repeat hundreds of times, on _MergeTrainer. Untuned beyond that.
SEQUENCE_REPEAT_LIMIT = 2
# Below this many symbols the layout hardly matters; _MergeTrainer, the older one, keeps them.
SEQUENCE_MIN_SYMBOLS = 1 << 16
# Symbols handed to the sequence trainer per call while loading (a bounded staging buffer).
_SEQUENCE_STAGE = 1 << 16


def _choose_layout(chunks, counts):
    cdef int64_t unique = 0, total = 0, length
    for chunk, count in zip(chunks, counts):
        length = len(chunk)
        unique += length
        total += length * count
    if total >= SEQUENCE_MIN_SYMBOLS and total <= SEQUENCE_REPEAT_LIMIT * unique:
        return "sequence"
    return "chunks"


cdef object _train_sequence(chunks, counts, str mode, base_tokens, int64_t vocab_size,
                            int64_t min_frequency, progress, bint packed):
    """``train_merges`` on chunks written end to end (engine/sequence_trainer.hpp)."""
    cdef vector[string] values
    cdef vector[int32_t] base_ids
    cdef vector[uint32_t] stage
    cdef Py_UCS4 character
    cdef const unsigned char* data
    cdef Py_ssize_t length, index
    cdef int64_t total = 0
    cdef str token
    cdef int32_t base_id
    cdef int32_t chunk_index = 0
    cdef int64_t step, until
    if mode == "char":
        for token in base_tokens:
            if len(token) != 1:
                raise ValueError(f"base token {token!r} is not a single character")
            character = token[0]
            if character >= base_ids.size():
                base_ids.resize(<size_t>character + 1, -1)
            if base_ids[character] != -1:
                raise ValueError(f"base token {token!r} is listed twice")
            base_ids[character] = values.size()
            values.push_back(token.encode("utf-8", "surrogatepass"))
    elif mode == "byte":
        for byte in range(256):
            values.push_back(bytes([byte]))
    else:
        raise ValueError(f"mode must be 'char' or 'byte', not {mode!r}")
    for chunk, count in zip(chunks, counts, strict=True):
        if count < 1:
            raise ValueError(f"chunk counts must be at least 1, got {count!r}")
        total += (len(chunk) + 1) * count
    cdef _SequenceTrainer* trainer = _new_sequence_trainer(
        values, vocab_size, min_frequency, max(vocab_size, <int64_t>values.size()))
    try:
        trainer.reserve(total)
        stage.reserve(_SEQUENCE_STAGE)
        for chunk, count in zip(chunks, counts):
            if mode == "char":
                for character in <str>chunk:
                    base_id = base_ids[character] if character < base_ids.size() else -1
                    if base_id < 0:
                        raise ValueError(
                            f"character {chr(character)!r} of chunk {chunk_index} is not in "
                            f"base_tokens; add it to the base alphabet")
                    stage.push_back(base_id)
                    if stage.size() == _SEQUENCE_STAGE:
                        trainer.append(stage.data(), stage.size())
                        stage.clear()
            else:
                encoded = chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")
                data = encoded
                length = len(encoded)
                for index in range(length):
                    stage.push_back(data[index])
                    if stage.size() == _SEQUENCE_STAGE:
                        trainer.append(stage.data(), stage.size())
                        stage.clear()
            trainer.append(stage.data(), stage.size())
            stage.clear()
            trainer.end_chunk(count)
            chunk_index += 1
        with nogil:
            trainer.start()
        step = max(1, trainer.merges_wanted() // 100)
        while not trainer.finished:
            until = trainer.merges_done() + step
            with nogil:
                trainer.run(until)
            PyErr_CheckSignals()
            if progress is not None:
                progress(trainer.merges_done())
        return _records_out(trainer.records, packed)
    finally:
        del trainer


def spell_merges(const int64_t[:, ::1] records, list values):
    """``train_merges``' records (packed, as an array of 5 columns) as merges of values:
    ``(merges, ids)``, where ``merges`` are
    the pairs ``(values[left], values[right])`` and ``ids`` the bytes of a uint32 array of
    ``(left, right, merged)`` per merge. ``values`` (the base values) grows by each new merged
    value, a record whose merged id is ``len(values)`` (the vocabulary rule). In Cython: in
    Python this loop took 13 ms of training's 180 at 32,768 merges.

    Python twin: ``model._vocabulary`` (same values and ids from the merges).

    Example:
        >>> import numpy
        >>> spell_merges(numpy.array([[0, 0, 2, 4, 9], [2, 1, 3, 2, 7]], dtype=numpy.int64), [b"a", b"b"])[0]
        [(b'a', b'a'), (b'aa', b'b')]
    """
    cdef list merges = []
    cdef uint32_t left, right, merged
    cdef vector[uint32_t] ids
    cdef Py_ssize_t row
    if records.shape[1] != 5:
        raise ValueError(f"records must have 5 columns, not {records.shape[1]}")
    ids.reserve(3 * records.shape[0])
    for row in range(records.shape[0]):
        left, right, merged = records[row, 0], records[row, 1], records[row, 2]
        pair = (values[left], values[right])
        if merged == <size_t>len(values):
            values.append(pair[0] + pair[1])
        merges.append(pair)
        ids.push_back(left)
        ids.push_back(right)
        ids.push_back(merged)
    return merges, PyBytes_FromStringAndSize(<const char*>ids.data(), ids.size() * sizeof(uint32_t))


def train_merges(chunks, counts, *, str mode, base_tokens, vocab_size, min_frequency,
                 progress=None, layout=None, packed=False):
    """Learn BPE merges over weighted unique chunks, exactly as ``reference.train_bpe``.

    Python twin: ``reference.train_bpe``.

    ``chunks`` are the unique pieces in order of first appearance and ``counts`` how often each
    occurs. Returns one tuple per merge: ``(left_id, right_id, merged_id, frequency,
    sequence_length_after)``, where ids follow the vocabulary rule (base ids first, then each
    new value once) and the length is the weighted number of tokens after the merge. The
    ``progress`` callable, if given, gets the number of merges done about every 1%.
    ``base_tokens`` (character mode) are single characters, id = index; byte mode ignores it
    and starts from the 256 bytes.

    Example:
        >>> train_merges(["aaabdaaabac"], [1], mode="char", base_tokens=list("abcd"),
        ...              vocab_size=7, min_frequency=2)
        [(0, 0, 4, 4, 9), (4, 0, 5, 2, 7), (5, 1, 6, 2, 5)]

    ``layout``: "chunks" (unique chunks, each a linked list: memory follows the unique
    chunks), "sequence" (the chunks end to end, repeats written out: 3-5 bytes per symbol of
    the whole text) or None, the sequence when chunks repeat little (seed 000's one text).
    Both give the same merges.

    ``packed``: the records as the bytes of 5 native-endian int64 per merge instead of tuples
    (``numpy.frombuffer(..., numpy.int64).reshape(-1, 5)``; what ``spell_merges`` takes).

    NOTE: the GIL is released while merging; ``progress`` runs with it held.
    """
    if layout is None:
        layout = _choose_layout(chunks, counts)
    if layout == "sequence":
        return _train_sequence(chunks, counts, mode, base_tokens, vocab_size, min_frequency, progress, packed)
    if layout != "chunks":
        raise ValueError(f"layout must be 'chunks', 'sequence' or None, not {layout!r}")
    cdef _MergeTrainer trainer = _MergeTrainer(
        chunks, counts, mode, base_tokens, vocab_size, min_frequency)
    cdef int64_t step = max(1, trainer.merges_wanted() // 100)
    cdef int64_t until
    while not trainer.finished:
        until = trainer.merges_done() + step
        with nogil:
            trainer.run(until)
        PyErr_CheckSignals()
        if progress is not None:
            progress(trainer.merges_done())
    return trainer.records(packed)
