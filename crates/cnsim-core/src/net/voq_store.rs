//! The generation times of the frames waiting in the VOQs of every NIC (algorithms.md §1.1, D15:
//! a VOQ holds a frame as its generation time until the frame moves to the output buffer).
//!
//! Each VOQ's times form a FIFO ([`TimeFifo`]) of one-line chunks, and every chunk of the
//! network comes from one store ([`VoqStore`]) with one free list. Why not a growable ring per
//! VOQ: without CM a 128-host hotspot leaves tens of millions of frames in 16,000 backlogged
//! VOQs. The rings grew by copying, and once the backlog drained every frame read the head of
//! one ring and wrote the tail of another, each a cache miss in a different part of 300 MB.
//! Here a backlog grows a chunk at a time, and the chunk a draining VOQ frees
//! is the next one any VOQ fills, so the tail a frame is written to was just read and is still
//! in cache (docs/performance.md, "VOQ backlogs in chunks"). A chunk is one cache line: its
//! link to the next chunk and the times, in one of two layouts chosen for the whole store
//! ([`VoqStore::on_grid`]):
//!
//! - **On the grid** (a simulation whose generators' slot grids share a unit that reaches far
//!   enough, as in every shipped scenario): a base time and up to 44 increments, each the
//!   number of units since the entry before it in one byte (below 240), two (below 4,080) or
//!   three. The unit is the greatest common divisor of the generators' slots and of the
//!   distances between their grids' origins, so any two generated times differ by a whole
//!   number of it. A FIFO fills a chunk until its bytes are used or a time lies more than 65,535
//!   units past the chunk's base (78 ms for 1500 B frames at 10 Gb/s). A time off the grid or
//!   before the one written last starts a new chunk: the store is exact whatever the times, and
//!   the unit only decides how many share a line (docs/performance.md, "A backlog on its
//!   generators' grid", stop 37, and "A backlog in increments", stop 62): up to 45 times a
//!   line, where stop 37's 16-bit offsets from the base held 24; the store of a 16-host
//!   hotspot's backlog is 47 % smaller, of a 128-host one 36 %.
//! - **Wide** (a unit too small to reach far or longer than 2^47 ps, past which the quotient
//!   test cannot tell a time off the grid, or no generator): 11 times, each as its low 40
//!   bits beside the high bits they share ("A VOQ's times in one line", stop 36). 5.8 bytes per
//!   waiting frame.

use crate::engine::huge_pages::push_in_huge_pages;
use crate::time::SimTime;

/// Times per chunk in the wide layout: each time's low 40 bits as a 32-bit and an 8-bit part,
/// beside the high 24 bits the chunk's times share (2^40 ps is 1.1 s, so a FIFO starts a new
/// chunk only where its times cross such a boundary).
const WIDE_PER_CHUNK: u16 = 11;
/// Bits of a time kept per entry in the wide layout.
const LOW_BITS: u32 = 40;
/// Bytes of increments in a chunk on the grid (after the base time and the offsets of the entries
/// written and read last).
const GRID_STEP_BYTES: u16 = 44;
/// Where a grid chunk's body keeps the offset in units from its base of the entry written last
/// and of the one read last, and where its increments begin.
const WRITTEN_AT: usize = 8;
const READ_AT: usize = 10;
const GRID_STEPS_AT: usize = 12;
/// Positions in a grid chunk: the base (0), then the byte where each increment starts, plus one.
/// A position below this has room for a one-byte increment.
const GRID_POSITIONS: u16 = GRID_STEP_BYTES + 1;
/// The largest offset on the grid, in units.
const GRID_MAX_OFFSET: u64 = u16::MAX as u64;
/// Increments below this take one byte (the byte itself); a first byte from it up to
/// [`THREE_BYTES`] starts a two-byte increment (`ONE_BYTE` + its distance from `ONE_BYTE` · 256 +
/// the second byte, to 4,079 units), and [`THREE_BYTES`] a three-byte one (a `u16` follows).
const ONE_BYTE: u8 = 0xf0;
const THREE_BYTES: u8 = 0xff;
/// The increments two bytes hold: below `ONE_BYTE` + 15 · 256.
const TWO_BYTE_END: u64 = ONE_BYTE as u64 + ((THREE_BYTES - ONE_BYTE) as u64) * 256;
/// The grid is used only if a chunk on it reaches this many of the generators' longest slot past
/// its base: a backlog's times are a slot apart or more, and a chunk of short reach would hold
/// few of them.
const GRID_MIN_REACH_SLOTS: u64 = 4096;
/// The longest unit the grid takes: the quotient test ([`exact_quotient`]) gives a number above
/// [`GRID_MAX_OFFSET`] for every time off the grid or before a base (below 2^63 ps) only while
/// the unit is at most 2^47 ps (2^63 / 65,536; 141 s, a 1500 B frame's slot at 85 b/s).
const GRID_MAX_UNIT: u64 = 1 << 47;

/// The room a store takes at once in huge pages when it outgrows one: 2 GiB of address space,
/// memory only as chunks are used. A store that grows past its room doubles by copying, and
/// holds the old block and the new one at once: 0.6 s of `zhb-ft-5stage` (1,024 hosts, 2 x 10^8
/// frames waiting) peaked at 1.47 GB with a room of 256 MiB and peaks at 1.07 GB with this one.
const LARGE_STORE: usize = 1 << 25;

/// No chunk (a FIFO that never held a frame; the end of the free list).
const NONE: u32 = u32::MAX;

/// One cache line of a FIFO's times.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Chunk {
    /// The next chunk of the chunk's FIFO, or of the free list.
    next: u32,
    /// The position after the last entry written (low 8 bits: in the wide layout the number of
    /// entries, on the grid 1 + the bytes of increments), and in the wide layout above it the
    /// times' shared high bits (`t >> 40`, 24 bits).
    tag: u32,
    /// On the grid: the base time (bytes 0–7), the offsets in units from the base of the entry
    /// written last and of the one read last (`u16`s at 8 and 10), and the increments from byte
    /// 12 on. Wide: each time's bits 0–31 (a `u32` at 4i) and 32–39 (the byte at 44 + i).
    body: [u8; 56],
}

impl Chunk {
    const EMPTY: Chunk = Chunk {
        next: NONE,
        tag: 0,
        body: [0; 56],
    };

    #[inline(always)]
    fn filled(&self) -> u16 {
        (self.tag & 0xff) as u16
    }

    // the grid layout

    #[inline(always)]
    fn base(&self) -> u64 {
        u64::from_le_bytes(self.body[0..8].try_into().expect("8 bytes"))
    }
    /// The 16-bit number at byte `at` of the body: the offset of the entry written last
    /// ([`WRITTEN_AT`]) or read last ([`READ_AT`]), or a three-byte increment's number.
    #[inline(always)]
    fn u16_at(&self, at: usize) -> u64 {
        u64::from(u16::from_le_bytes([self.body[at], self.body[at + 1]]))
    }
    #[inline(always)]
    fn set_u16_at(&mut self, at: usize, units: u64) {
        self.body[at..at + 2].copy_from_slice(&(units as u16).to_le_bytes());
    }
    /// The increment at position `at` (≥ 1) and the position after it.
    #[inline(always)]
    fn step(&self, at: u16) -> (u64, u16) {
        let i = GRID_STEPS_AT + at as usize - 1;
        match self.body[i] {
            b if b < ONE_BYTE => (u64::from(b), at + 1),
            THREE_BYTES => (self.u16_at(i + 1), at + 3),
            b => {
                let high = u64::from(b - ONE_BYTE) << 8;
                (
                    u64::from(ONE_BYTE) + (high | u64::from(self.body[i + 1])),
                    at + 2,
                )
            }
        }
    }

    // the wide layout

    #[inline(always)]
    fn high(&self) -> u32 {
        self.tag >> 8
    }
    #[inline(always)]
    fn wide_time(&self, i: usize) -> SimTime {
        let low = u32::from_le_bytes(self.body[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        let bits_32_39 = u64::from(self.body[44 + i]) << 32;
        SimTime(u64::from(self.high()) << LOW_BITS | bits_32_39 | u64::from(low))
    }
}

const _: () = assert!(std::mem::size_of::<Chunk>() == 64);

/// All chunks of all VOQ FIFOs of a simulation.
#[derive(Clone)]
pub struct VoqStore {
    chunks: Vec<Chunk>,
    /// The chunk freed last (`NONE` if none): it is the next one handed out.
    free: u32,
    /// The grid's unit in ps, or 0 for the wide layout.
    unit: u64,
    /// `unit` as an odd factor and a power of two: the odd factor's inverse modulo 2^64 and the
    /// power's exponent, to find a time's offset without a division ([`exact_quotient`]).
    odd_inverse: u64,
    twos: u32,
    /// Positions per chunk in the store's layout: a position below it has room for one more
    /// entry (on the grid: for an increment of one byte).
    per_chunk: u16,
}

impl std::fmt::Debug for VoqStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoqStore")
            .field("chunks", &self.chunks.len())
            .field("unit", &self.unit)
            .finish()
    }
}

impl Default for VoqStore {
    fn default() -> Self {
        VoqStore::new()
    }
}

impl VoqStore {
    /// A store in the wide layout: 11 times per chunk, whatever they are.
    pub fn new() -> Self {
        VoqStore {
            chunks: Vec::new(),
            free: NONE,
            unit: 0,
            odd_inverse: 0,
            twos: 0,
            per_chunk: WIDE_PER_CHUNK,
        }
    }

    /// A store for the times of generators whose (slot, grid origin) pairs are `grids`: on the
    /// grid of their unit ([`grid_unit`]) if it reaches far enough, else wide. Any time, on the
    /// grid or not, is stored exactly.
    pub fn on_grid(grids: impl IntoIterator<Item = (SimTime, SimTime)>) -> Self {
        match grid_unit(grids) {
            Some(unit) => VoqStore {
                unit,
                odd_inverse: inverse_mod_2_64(unit >> unit.trailing_zeros()),
                twos: unit.trailing_zeros(),
                per_chunk: GRID_POSITIONS,
                ..VoqStore::new()
            },
            None => VoqStore::new(),
        }
    }

    /// The grid's unit in ps (`None` in the wide layout).
    pub fn unit(&self) -> Option<u64> {
        (self.unit > 0).then_some(self.unit)
    }

    /// Chunks made so far (64 B each), the free ones included: the store's size.
    #[cfg(test)]
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// A chunk for a FIFO to fill: the one freed last, else a new one.
    #[inline(always)]
    fn alloc(&mut self) -> u32 {
        if self.free != NONE {
            let c = self.free;
            self.free = self.chunks[c as usize].next;
            return c;
        }
        // a deep backlog reads and writes its chunks all over the store
        push_in_huge_pages(&mut self.chunks, Chunk::EMPTY, LARGE_STORE);
        self.chunks.len() as u32 - 1
    }

    /// Chunk `c` (just read to its end, so in cache) goes back to the free list.
    #[inline(always)]
    fn release(&mut self, c: u32) {
        self.chunks[c as usize].next = self.free;
        self.free = c;
    }

    /// The entry at position `at` of chunk `c` and the position after it. On the grid the chunk
    /// keeps the offset of the entry read last, from which the next increment counts.
    #[inline(always)]
    fn read(&mut self, c: u32, at: u16) -> (SimTime, u16) {
        let unit = self.unit;
        let chunk = &mut self.chunks[c as usize];
        if unit == 0 {
            return (chunk.wide_time(at as usize), at + 1);
        }
        let (units, next) = if at == 0 {
            (0, 1)
        } else {
            let (step, next) = chunk.step(at);
            (chunk.u16_at(READ_AT) + step, next)
        };
        chunk.set_u16_at(READ_AT, units);
        (SimTime(chunk.base() + units * unit), next)
    }

    /// Write `t` at position `at` of chunk `c` and return the position after it, if the chunk
    /// can hold it there: the layout has room, and on the grid `t` is a whole number of units
    /// within reach past the base and not before the entry written last, in the wide layout it
    /// has the chunk's high bits. Position 0 always fits: it starts the chunk over.
    #[inline(always)]
    fn try_write(&mut self, c: u32, at: u16, t: SimTime) -> Option<u16> {
        let (unit, odd_inverse, twos, per_chunk) =
            (self.unit, self.odd_inverse, self.twos, self.per_chunk);
        let chunk = &mut self.chunks[c as usize];
        let next = if unit > 0 {
            let (units, next) = if at == 0 {
                chunk.body[0..8].copy_from_slice(&t.0.to_le_bytes());
                (0, 1)
            } else {
                let d = t.0.wrapping_sub(chunk.base());
                // a time before the base makes `d` huge, and its quotient too; one before the
                // entry written last makes the increment wrap to a huge number
                let units = exact_quotient(d, odd_inverse, twos);
                if units > GRID_MAX_OFFSET {
                    return None;
                }
                let step = units.wrapping_sub(chunk.u16_at(WRITTEN_AT));
                let i = GRID_STEPS_AT + at as usize - 1;
                if step < u64::from(ONE_BYTE) && at < per_chunk {
                    chunk.body[i] = step as u8;
                    (units, at + 1)
                } else if step < TWO_BYTE_END && at + 1 < per_chunk {
                    let beyond = step - u64::from(ONE_BYTE);
                    chunk.body[i] = ONE_BYTE + (beyond >> 8) as u8;
                    chunk.body[i + 1] = beyond as u8;
                    (units, at + 2)
                } else if step <= GRID_MAX_OFFSET && at + 2 < per_chunk {
                    chunk.body[i] = THREE_BYTES;
                    chunk.set_u16_at(i + 1, step);
                    (units, at + 3)
                } else {
                    return None;
                }
            };
            chunk.set_u16_at(WRITTEN_AT, units);
            chunk.tag = u32::from(next);
            next
        } else {
            let high = (t.0 >> LOW_BITS) as u32;
            if at > 0 && (at == per_chunk || chunk.tag >> 8 != high) {
                return None;
            }
            let i = at as usize;
            chunk.body[4 * i..4 * i + 4].copy_from_slice(&(t.0 as u32).to_le_bytes());
            chunk.body[44 + i] = (t.0 >> 32) as u8;
            chunk.tag = high << 8 | (i as u32 + 1);
            at + 1
        };
        Some(next)
    }
}

/// The unit of the grids of generators whose (slot, origin) pairs are `grids`: the greatest common
/// divisor of the slots and of the distances between the origins, so that any two generated
/// times differ by a whole number of it. `None` (the wide layout) without generators, when
/// 65,535 units fall short of [`GRID_MIN_REACH_SLOTS`] times the longest slot, or when the unit
/// is longer than [`GRID_MAX_UNIT`].
pub fn grid_unit(grids: impl IntoIterator<Item = (SimTime, SimTime)>) -> Option<u64> {
    let (mut unit, mut first_origin, mut longest) = (0u64, None, 0u64);
    for (slot, origin) in grids {
        let first = *first_origin.get_or_insert(origin.0);
        unit = gcd(gcd(unit, slot.0), first.abs_diff(origin.0));
        longest = longest.max(slot.0);
    }
    let reach = unit.saturating_mul(GRID_MAX_OFFSET);
    let reaches = reach >= longest.saturating_mul(GRID_MIN_REACH_SLOTS);
    (unit > 0 && unit <= GRID_MAX_UNIT && reaches).then_some(unit)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `d / unit` if `unit` divides `d`, else a number above `u64::MAX / unit`, for a `unit` given as
/// the inverse modulo 2^64 of its odd factor and the exponent of its power of two (Granlund and
/// Montgomery's test, as compilers test `d % unit == 0`; Hacker's Delight 10-17). For `d` = m ·
/// odd, `d · inverse` is m; rotating it right by the exponent gives m / 2^twos when the power
/// divides m and puts m's low bits on top otherwise. A multiplication and a rotation where a
/// division takes tens of cycles: every push of a waiting frame asks it.
#[inline(always)]
fn exact_quotient(d: u64, odd_inverse: u64, twos: u32) -> u64 {
    d.wrapping_mul(odd_inverse).rotate_right(twos)
}

/// The inverse of odd `x` modulo 2^64, by Newton's iteration: each step doubles the bits that
/// are right, and `x` itself is right in the low three.
fn inverse_mod_2_64(x: u64) -> u64 {
    debug_assert!(x % 2 == 1);
    let mut inv = x;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(x.wrapping_mul(inv)));
    }
    inv
}

/// One VOQ's generation times, oldest first, in chunks of a [`VoqStore`].
#[derive(Clone, Copy, Debug)]
pub struct TimeFifo {
    head: u32,
    tail: u32,
    /// The position of the next entry to read in `head`, and of the next to write in `tail`.
    head_at: u16,
    tail_at: u16,
    len: u32,
}

impl Default for TimeFifo {
    fn default() -> Self {
        TimeFifo::new()
    }
}

impl TimeFifo {
    pub const fn new() -> Self {
        TimeFifo {
            head: NONE,
            tail: NONE,
            head_at: 0,
            tail_at: 0,
            len: 0,
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append `t`.
    #[inline(always)]
    pub fn push(&mut self, store: &mut VoqStore, t: SimTime) {
        if self.tail == NONE {
            let c = store.alloc();
            (self.head, self.tail) = (c, c);
        }
        self.tail_at = match store.try_write(self.tail, self.tail_at, t) {
            Some(next) => next,
            None => {
                // the chunk is full, or cannot hold `t`: go on in a new one
                let c = store.alloc();
                store.chunks[self.tail as usize].next = c;
                self.tail = c;
                store
                    .try_write(c, 0, t)
                    .expect("a chunk's first entry always fits")
            }
        };
        self.len += 1;
    }

    /// Remove and return the oldest time. A chunk read to its end goes back to the store, but
    /// the FIFO keeps the chunk it empties in.
    #[inline(always)]
    pub fn pop(&mut self, store: &mut VoqStore) -> Option<SimTime> {
        if self.len == 0 {
            return None;
        }
        let (t, next) = store.read(self.head, self.head_at);
        let filled = store.chunks[self.head as usize].filled();
        self.head_at = next;
        self.len -= 1;
        if self.len == 0 {
            // head == tail: start the kept chunk over, on its first entry
            self.head_at = 0;
            self.tail_at = 0;
        } else if self.head_at == filled {
            // the head chunk is read: free it and go on in the next one
            let next = store.chunks[self.head as usize].next;
            store.release(self.head);
            self.head = next;
            self.head_at = 0;
        }
        Some(t)
    }

    /// The chunk the next [`TimeFifo::pop`] reads (to prefetch it).
    #[inline(always)]
    pub fn front_chunk<'a>(&self, store: &'a VoqStore) -> Option<&'a Chunk> {
        (self.len > 0).then(|| &store.chunks[self.head as usize])
    }

    /// The chunk the next [`TimeFifo::push`] writes, if it exists already: the tail while it has
    /// room (on the grid: for a one-byte increment, so a longer one may still go on in the next
    /// chunk), or the chunk the store hands out next (to prefetch it).
    #[inline(always)]
    pub fn back_chunk<'a>(&self, store: &'a VoqStore) -> Option<&'a Chunk> {
        let c = if self.tail_at < store.per_chunk {
            self.tail
        } else {
            store.free
        };
        (c != NONE).then(|| &store.chunks[c as usize])
    }

    /// Remove every time (the kept chunk stays).
    #[cfg(test)]
    pub fn clear(&mut self, store: &mut VoqStore) {
        while self.pop(store).is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1500 B frame's slot at 10 Gb/s.
    const SLOT: u64 = 1_200_000;

    /// A store in each layout: wide, and on the grid of 10 Gb/s slots from one origin.
    fn both_layouts() -> [VoqStore; 2] {
        let grid = VoqStore::on_grid([(SimTime(SLOT), SimTime::ZERO)]);
        assert_eq!(grid.unit(), Some(SLOT));
        [VoqStore::new(), grid]
    }

    /// The FIFO's times, oldest first, read without removing them (from copies of the FIFO and
    /// its store).
    fn times(q: &TimeFifo, store: &VoqStore) -> Vec<SimTime> {
        let (mut q, mut store) = (*q, store.clone());
        std::iter::from_fn(|| q.pop(&mut store)).collect()
    }

    #[test]
    fn a_fifo_returns_its_times_in_order_across_chunk_boundaries() {
        for mut store in both_layouts() {
            let mut q = TimeFifo::new();
            assert_eq!(q.pop(&mut store), None);
            // pushes and pops interleaved so that both ends cross several chunks; the times
            // are on the grid, a slot or more apart
            let mut expected = std::collections::VecDeque::new();
            let mut next = 0u64;
            for round in 0..40u64 {
                for _ in 0..(round * 7 % 23) {
                    q.push(&mut store, SimTime(next));
                    expected.push_back(SimTime(next));
                    next += SLOT * (1 + round % 3);
                }
                for _ in 0..(round * 5 % 19) {
                    assert_eq!(times(&q, &store).first(), expected.front());
                    assert_eq!(q.pop(&mut store), expected.pop_front());
                }
                assert_eq!(q.len(), expected.len());
            }
            while let Some(t) = expected.pop_front() {
                assert_eq!(q.pop(&mut store), Some(t));
            }
            assert!(q.is_empty() && q.front_chunk(&store).is_none());
        }
    }

    #[test]
    fn times_of_any_spacing_and_order_come_back_exact() {
        // in order but 4.3 ms (2^32 ps) apart or more, out of order, equal, at the ends of time,
        // across 2^40 ps boundaries, on the grid and off it, beyond its reach: each comes back
        // exact in either layout
        let big = 1u64 << 32;
        let seq = [
            0,
            5,
            big - 2,
            big - 1,
            big + 7,
            3,
            3,
            2 * big + 1,
            1,
            u64::MAX - 1,
            u64::MAX - 1,
            0,
            big,
            big,
            SLOT,
            SLOT * 65_535,
            SLOT * 65_536,
            SLOT * 70_000 + 1,
            SLOT * 3,
            (1 << 53) + SLOT,
            (1 << 53) + 2 * SLOT,
            (1 << 63) + SLOT,
        ];
        for mut store in both_layouts() {
            let (mut q, mut expected) = (TimeFifo::new(), std::collections::VecDeque::new());
            for (i, &t) in seq.iter().cycle().take(10 * seq.len()).enumerate() {
                q.push(&mut store, SimTime(t));
                expected.push_back(SimTime(t));
                assert_eq!(times(&q, &store), Vec::from(expected.clone()));
                if i % 3 == 2 {
                    assert_eq!(q.pop(&mut store), expected.pop_front());
                }
            }
            while let Some(t) = expected.pop_front() {
                assert_eq!(q.pop(&mut store), Some(t));
            }
            assert_eq!(q.pop(&mut store), None);
        }
    }

    #[test]
    fn fifos_sharing_a_store_return_increments_of_every_width_exact() {
        // three FIFOs take turns pushing and popping times whose increments take one, two or
        // three bytes, or leave the reach, the order or the grid (a new chunk), so that chunks
        // are freed by one and refilled by another at every position
        for mut store in both_layouts() {
            let mut fifos = [TimeFifo::new(); 3];
            let mut expected = [(); 3].map(|_| std::collections::VecDeque::new());
            let mut last = [0u64; 3];
            let mut state = 0x2545_f491_4f6c_dd1du64;
            let mut draw = |n: u64| {
                // xorshift: a fixed sequence, the same on every run
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % n
            };
            for _ in 0..20_000 {
                let f = draw(3) as usize;
                if draw(5) < 3 {
                    let step = match draw(20) {
                        0..=9 => draw(240),
                        10..=15 => 240 + draw(3_840),
                        16 | 17 => 4_080 + draw(61_456),
                        18 => 65_536 + draw(10),
                        _ => 0,
                    };
                    let mut t = last[f] + step * SLOT;
                    if draw(50) == 0 {
                        t = t.saturating_sub(3 * SLOT) + 1;
                    }
                    last[f] = t;
                    fifos[f].push(&mut store, SimTime(t));
                    expected[f].push_back(SimTime(t));
                } else {
                    assert_eq!(fifos[f].pop(&mut store), expected[f].pop_front());
                }
            }
            for (q, e) in fifos.iter_mut().zip(&mut expected) {
                assert_eq!(times(q, &store), Vec::from(e.clone()));
                while let Some(t) = e.pop_front() {
                    assert_eq!(q.pop(&mut store), Some(t));
                }
            }
        }
    }

    #[test]
    fn a_wide_chunk_holds_eleven_times_of_any_spacing_that_share_their_high_bits() {
        let mut store = VoqStore::new();
        let mut q = TimeFifo::new();
        // 5 ms apart (beyond 32 bits of picoseconds), out of order too: eleven per chunk
        let times: Vec<u64> = (0..11 * 10)
            .map(|i| (i * 5_000_000_000) % 200_000_000_000)
            .collect();
        for &t in &times {
            q.push(&mut store, SimTime(t));
        }
        assert_eq!(store.chunks(), 10);
        // across a 2^40 ps (1.1 s) boundary the FIFO goes on in a new chunk
        let mut r = TimeFifo::new();
        let edge = 1u64 << LOW_BITS;
        for t in [edge - 2, edge - 1, edge, edge + 1] {
            r.push(&mut store, SimTime(t));
        }
        assert_eq!(store.chunks(), 12);
        for t in [edge - 2, edge - 1, edge, edge + 1] {
            assert_eq!(r.pop(&mut store), Some(SimTime(t)));
        }
        for &t in &times {
            assert_eq!(q.pop(&mut store), Some(SimTime(t)));
        }
    }

    #[test]
    fn a_grid_chunk_holds_45_times_a_byte_apart_23_two_bytes_apart_15_three() {
        // the same number of chunks for each spacing, every time back exact; increments of 0
        // (equal times) to 239 units take a byte, to 4,079 two, to 65,535 three
        for (steps, per_chunk) in [
            (&[0u64, 1, 239, 5][..], 45usize),
            (&[240, 1_000, 4_079][..], 23),
            (&[4_080, 4_100][..], 15),
            (&[1, 240][..], 30),
        ] {
            let [_, mut store] = both_layouts();
            let mut q = TimeFifo::new();
            let mut t = 7 * SLOT;
            let mut times = Vec::new();
            for i in 0..per_chunk * 10 {
                // a new base every chunk's worth, so that the offsets stay within reach
                t += steps[i % steps.len()] * SLOT;
                if i % per_chunk == 0 {
                    t += 70_000 * SLOT;
                }
                times.push(t);
                q.push(&mut store, SimTime(t));
            }
            assert_eq!(store.chunks(), 10, "increments {steps:?}");
            for &t in &times {
                assert_eq!(q.pop(&mut store), Some(SimTime(t)));
            }
        }
        // a new chunk for a time beyond reach of the base, before the entry written last, or off
        // the grid
        let base = 1_000 * SLOT;
        let at = |units: u64| base + units * SLOT;
        let cases: Vec<(Vec<u64>, usize)> = vec![
            (vec![at(65_535)], 1),
            (vec![at(32_767), at(65_534), at(65_535)], 1),
            (vec![at(65_536)], 2),
            (vec![at(32_767), at(65_534), at(65_536)], 2),
            (vec![at(5), at(5), at(4)], 2),
            (vec![base - SLOT], 2),
            (vec![base + SLOT + 1], 2),
            (vec![base + SLOT / 2], 2),
        ];
        // the last byte of a chunk holds a one-byte increment, not a two-byte one; the last two
        // a two-byte one, not a three-byte one
        let ones = |n: u64| (1..=n).map(at).collect::<Vec<_>>();
        let then = |n: u64, step: u64| [ones(n), vec![at(n + step)]].concat();
        let edges = [
            (then(43, 1), 1),
            (then(43, 240), 2),
            (then(42, 240), 1),
            (then(42, 4_080), 2),
        ];
        for (later, chunks) in cases.into_iter().chain(edges) {
            let mut store = VoqStore::on_grid([(SimTime(SLOT), SimTime::ZERO)]);
            let mut r = TimeFifo::new();
            for &t in std::iter::once(&base).chain(&later) {
                r.push(&mut store, SimTime(t));
            }
            assert_eq!(store.chunks(), chunks, "times after the base {later:?}");
            for &t in std::iter::once(&base).chain(&later) {
                assert_eq!(r.pop(&mut store), Some(SimTime(t)));
            }
        }
    }

    #[test]
    fn the_quotient_is_exact_for_multiples_and_beyond_reach_for_the_rest() {
        // units odd, even, a power of two, 1, the 10 Gb/s and 1 Gb/s slots, their gcd with 0.1 s
        for unit in [
            1u64,
            2,
            3,
            7,
            1 << 20,
            400_000,
            SLOT,
            10 * SLOT,
            999_999_999_989,
        ] {
            let (inv, twos) = (
                inverse_mod_2_64(unit >> unit.trailing_zeros()),
                unit.trailing_zeros(),
            );
            let near =
                (0..70_000u64).flat_map(|q| [q * unit, q * unit + 1, (q * unit).wrapping_sub(1)]);
            let far = [
                u64::MAX,
                u64::MAX - unit + 1,
                1 << 63,
                (1 << 53) + unit,
                12_345_678_901,
            ];
            for d in near.chain(far) {
                let q = exact_quotient(d, inv, twos);
                if d % unit == 0 {
                    assert_eq!(q, d / unit, "unit {unit}, d {d}");
                } else {
                    assert!(q > u64::MAX / unit, "unit {unit}, d {d}: {q}");
                }
            }
        }
    }

    #[test]
    fn the_grid_unit_divides_every_slot_and_distance_between_origins() {
        let ps = SimTime;
        // one grid: its slot
        assert_eq!(grid_unit([(ps(SLOT), ps(7))]), Some(SLOT));
        // 1 and 10 Gb/s slots from one origin: the 10 Gb/s slot
        assert_eq!(
            grid_unit([(ps(SLOT), ps(0)), (ps(10 * SLOT), ps(0))]),
            Some(SLOT)
        );
        // a grid that starts at 0.2 s: gcd(1.2 us, 0.2 s) = 0.4 us
        let hot = ps(200_000_000_000);
        assert_eq!(
            grid_unit([(ps(SLOT), ps(0)), (ps(SLOT), hot)]),
            Some(400_000)
        );
        // the same origin twice is no distance
        assert_eq!(grid_unit([(ps(SLOT), hot), (ps(SLOT), hot)]), Some(SLOT));
        // a unit that reaches fewer than 4,096 slots past a base: the wide layout
        assert_eq!(grid_unit([(ps(SLOT), ps(0)), (ps(SLOT), ps(1_000))]), None);
        assert_eq!(grid_unit([(ps(SLOT), ps(0)), (ps(SLOT + 1), ps(0))]), None);
        assert_eq!(grid_unit(std::iter::empty()), None);
        assert_eq!(VoqStore::on_grid(std::iter::empty()).unit(), None);
    }

    #[test]
    fn a_unit_too_long_for_the_quotient_test_leaves_the_store_wide() {
        // A 3·2^48 ps slot (a 1500 B frame at 14 b/s): 2^48 ps past a base is a third of a unit
        // off the grid, yet its quotient is 43,691, within reach; a time before the base of a
        // unit above 2^47 may pass too. Such a grid is not used, and every time comes back exact.
        let slot = 3u64 << 48;
        let mut store = VoqStore::on_grid([(SimTime(slot), SimTime::ZERO)]);
        let mut q = TimeFifo::new();
        let seq = [0, 1 << 48, slot, 5, 2 * slot].map(SimTime);
        for t in seq {
            q.push(&mut store, t);
        }
        assert_eq!(times(&q, &store), seq);
        assert_eq!(store.unit(), None);
        // the longest unit kept: 2^47 ps, where the test holds for every time below 2^63 ps
        assert_eq!(
            grid_unit([(SimTime(1 << 47), SimTime::ZERO)]),
            Some(1 << 47)
        );
        assert_eq!(grid_unit([(SimTime((1 << 47) + 1), SimTime::ZERO)]), None);
    }

    /// Which chunk a reference into the store names (the store may move as it grows).
    fn chunk_of(store: &VoqStore, r: &Chunk) -> usize {
        (r as *const Chunk as usize - store.chunks.as_ptr() as usize) / size_of::<Chunk>()
    }

    #[test]
    fn back_chunk_names_the_chunk_the_next_push_writes() {
        for mut store in both_layouts() {
            let (mut a, mut b) = (TimeFifo::new(), TimeFifo::new());
            assert!(a.back_chunk(&store).is_none(), "no chunk yet");
            // a and b take turns, so that chunks are freed and taken over as the FIFOs cross
            let mut checked = 0;
            for t in 0..20 * store.per_chunk as u64 {
                let predicted = a.back_chunk(&store).map(|c| chunk_of(&store, c));
                a.push(&mut store, SimTime(t * SLOT));
                b.push(&mut store, SimTime(t * SLOT));
                if let Some(p) = predicted {
                    assert_eq!(p, a.tail as usize, "time {t}");
                    checked += 1;
                }
                if t % 3 == 0 {
                    let front = chunk_of(&store, a.front_chunk(&store).unwrap());
                    assert_eq!(front, a.head as usize);
                    a.pop(&mut store);
                }
                if t % 2 == 0 {
                    b.pop(&mut store);
                }
            }
            assert!(checked > 200, "{checked} predictions checked");
        }
    }

    #[test]
    fn a_fifo_that_empties_keeps_its_chunk_and_starts_it_over() {
        for mut store in both_layouts() {
            let mut q = TimeFifo::new();
            for t in 0..1000 {
                // far apart, so that each time is a new base on the grid
                let t = SimTime(t * (1 << 30) * SLOT);
                q.push(&mut store, t);
                assert_eq!(q.pop(&mut store), Some(t));
            }
            assert_eq!(store.chunks(), 1, "one chunk, reused for every frame");
            assert_eq!((q.head_at, q.tail_at), (0, 0));
        }
    }

    #[test]
    fn chunks_a_draining_fifo_frees_are_the_next_ones_filled() {
        for mut store in both_layouts() {
            let (mut a, mut b) = (TimeFifo::new(), TimeFifo::new());
            let per = store.per_chunk as u64;
            let at = |i: u64| SimTime(i * SLOT);
            for t in 0..10 * per {
                a.push(&mut store, at(t));
            }
            assert_eq!(store.chunks(), 10);
            for _ in 0..9 * per {
                a.pop(&mut store);
            }
            // nine chunks are free again; b fills them before any fresh chunk
            for t in 0..9 * per {
                b.push(&mut store, at(t));
            }
            assert_eq!(store.chunks(), 10, "b took only freed chunks");
            b.push(&mut store, at(9 * per));
            assert_eq!(store.chunks(), 11);
            for t in 9 * per..10 * per {
                assert_eq!(a.pop(&mut store), Some(at(t)));
            }
            for t in 0..=9 * per {
                assert_eq!(b.pop(&mut store), Some(at(t)));
            }
        }
    }
}
