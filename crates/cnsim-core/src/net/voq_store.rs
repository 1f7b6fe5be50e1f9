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
//! link to the next chunk and 11 times, each as its low 40 bits beside the high bits they share
//! (exact), so a backlog takes 0.7 of the lines whole times took ("A VOQ's times in one line",
//! stop 36).
//!
//! A VOQ keeps its last chunk when it empties (and with its slot when the slot is recycled), so
//! a VOQ that empties after every frame — the common case below saturation — writes and reads
//! the same chunk and never allocates.

use crate::engine::huge_pages::push_in_huge_pages;
use crate::time::SimTime;

/// Times per chunk. A chunk is one cache line: the link to the next chunk, the high 24 bits its
/// times share, how many it holds, and each time's low 40 bits as a 32-bit and an 8-bit part
/// (2^40 ps is 1.1 s, so a FIFO starts a new chunk only where its times cross such a boundary).
/// Exact whatever the order or spacing of the times; 11 per line where whole `SimTime`s gave 8,
/// and the link is on the line a FIFO reads anyway.
const PER_CHUNK: u16 = 11;
/// Bits of a time kept per entry.
const LOW_BITS: u32 = 40;

/// The room a store takes at once in huge pages when it outgrows one: 256 MiB of address space
/// (a 128-host hotspot backlog fills about 170 MB).
const LARGE_STORE: usize = 1 << 22;

/// No chunk (a FIFO that never held a frame; the end of the free list).
const NONE: u32 = u32::MAX;

/// One cache line of a FIFO's times.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Chunk {
    /// The next chunk of the chunk's FIFO, or of the free list.
    next: u32,
    /// The times' shared high bits (`t >> 40`, 24 bits) above the number of entries written (8
    /// bits: `PER_CHUNK` unless the FIFO went on in a new chunk early).
    tag: u32,
    /// Each time's bits 0–31 and 32–39.
    low: [u32; PER_CHUNK as usize],
    mid: [u8; PER_CHUNK as usize],
}

impl Chunk {
    #[inline(always)]
    fn high(&self) -> u32 {
        self.tag >> 8
    }
    #[inline(always)]
    fn filled(&self) -> u16 {
        (self.tag & 0xff) as u16
    }
    /// Entry `i`'s time.
    #[inline(always)]
    fn time(&self, i: usize) -> SimTime {
        let bits_32_39 = u64::from(self.mid[i]) << 32;
        SimTime(u64::from(self.high()) << LOW_BITS | bits_32_39 | u64::from(self.low[i]))
    }

    /// Write entry `i`'s low 40 bits.
    #[inline(always)]
    fn set_low(&mut self, i: usize, t: SimTime) {
        (self.low[i], self.mid[i]) = (t.0 as u32, (t.0 >> 32) as u8);
    }
}

const _: () = assert!(std::mem::size_of::<Chunk>() == 64);

/// All chunks of all VOQ FIFOs of a simulation.
pub struct VoqStore {
    chunks: Vec<Chunk>,
    /// The chunk freed last (`NONE` if none): it is the next one handed out.
    free: u32,
}

impl std::fmt::Debug for VoqStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoqStore")
            .field("chunks", &self.chunks.len())
            .finish()
    }
}

impl Default for VoqStore {
    fn default() -> Self {
        VoqStore::new()
    }
}

impl VoqStore {
    pub fn new() -> Self {
        VoqStore {
            chunks: Vec::new(),
            free: NONE,
        }
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
        let chunk = Chunk {
            next: NONE,
            tag: 0,
            low: [0; PER_CHUNK as usize],
            mid: [0; PER_CHUNK as usize],
        };
        push_in_huge_pages(&mut self.chunks, chunk, LARGE_STORE);
        self.chunks.len() as u32 - 1
    }

    /// Chunk `c` (just read to its end, so in cache) goes back to the free list.
    #[inline(always)]
    fn release(&mut self, c: u32) {
        self.chunks[c as usize].next = self.free;
        self.free = c;
    }
}

/// One VOQ's generation times, oldest first, in chunks of a [`VoqStore`].
#[derive(Clone, Copy, Debug)]
pub struct TimeFifo {
    head: u32,
    tail: u32,
    /// The next entry to read in `head`, and the next to write in `tail`.
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
        let high = (t.0 >> LOW_BITS) as u32;
        if self.tail == NONE {
            let c = store.alloc();
            (self.head, self.tail) = (c, c);
        } else if self.tail_at > 0
            && (self.tail_at == PER_CHUNK || store.chunks[self.tail as usize].high() != high)
        {
            // the chunk is full, or its times have other high bits: go on in a new one
            let c = store.alloc();
            store.chunks[self.tail as usize].next = c;
            self.tail = c;
            self.tail_at = 0;
        }
        let tail = &mut store.chunks[self.tail as usize];
        tail.set_low(self.tail_at as usize, t);
        self.tail_at += 1;
        tail.tag = high << 8 | self.tail_at as u32;
        self.len += 1;
    }

    /// Remove and return the oldest time. A chunk read to its end goes back to the store, but
    /// the FIFO keeps the chunk it empties in.
    #[inline(always)]
    pub fn pop(&mut self, store: &mut VoqStore) -> Option<SimTime> {
        if self.len == 0 {
            return None;
        }
        let head = &store.chunks[self.head as usize];
        let (t, filled) = (head.time(self.head_at as usize), head.filled());
        self.head_at += 1;
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
    /// room, or the chunk the store hands out next (to prefetch it).
    #[inline(always)]
    pub fn back_chunk<'a>(&self, store: &'a VoqStore) -> Option<&'a Chunk> {
        let c = if self.tail_at < PER_CHUNK {
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

    /// The FIFO's times, oldest first, read without removing them.
    fn times(q: &TimeFifo, store: &VoqStore) -> Vec<SimTime> {
        let (mut c, mut at, mut out) = (q.head, q.head_at as usize, Vec::new());
        while out.len() < q.len() {
            let chunk = &store.chunks[c as usize];
            if at == chunk.filled() as usize {
                (c, at) = (chunk.next, 0);
                continue;
            }
            out.push(chunk.time(at));
            at += 1;
        }
        out
    }

    #[test]
    fn a_fifo_returns_its_times_in_order_across_chunk_boundaries() {
        let mut store = VoqStore::new();
        let mut q = TimeFifo::new();
        assert_eq!(q.pop(&mut store), None);
        // pushes and pops interleaved so that both ends cross several chunks
        let mut expected = std::collections::VecDeque::new();
        let mut next = 0u64;
        for round in 0..40u64 {
            for _ in 0..(round * 7 % 23) {
                q.push(&mut store, SimTime(next));
                expected.push_back(SimTime(next));
                next += 1;
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

    #[test]
    fn times_of_any_spacing_and_order_come_back_exact() {
        // in order but 4.3 ms (2^32 ps) apart or more, out of order, equal, at the ends of time,
        // across 2^40 ps boundaries: each comes back exact
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
        ];
        let mut store = VoqStore::new();
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

    #[test]
    fn a_chunk_holds_eleven_times_of_any_spacing_that_share_their_high_bits() {
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

    /// Which chunk a reference into the store names (the store may move as it grows).
    fn chunk_of(store: &VoqStore, r: &Chunk) -> usize {
        (r as *const Chunk as usize - store.chunks.as_ptr() as usize) / size_of::<Chunk>()
    }

    #[test]
    fn back_chunk_names_the_chunk_the_next_push_writes() {
        let mut store = VoqStore::new();
        let (mut a, mut b) = (TimeFifo::new(), TimeFifo::new());
        assert!(a.back_chunk(&store).is_none(), "no chunk yet");
        // a and b take turns, so that chunks are freed and taken over as the FIFOs cross them
        let mut checked = 0;
        for t in 0..20 * PER_CHUNK as u64 {
            let predicted = a.back_chunk(&store).map(|c| chunk_of(&store, c));
            a.push(&mut store, SimTime(t));
            b.push(&mut store, SimTime(t));
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

    #[test]
    fn a_fifo_that_empties_keeps_its_chunk_and_starts_it_over() {
        let mut store = VoqStore::new();
        let mut q = TimeFifo::new();
        for t in 0..1000 {
            q.push(&mut store, SimTime(t * (1 << 30)));
            assert_eq!(q.pop(&mut store), Some(SimTime(t * (1 << 30))));
        }
        assert_eq!(store.chunks(), 1, "one chunk, reused for every frame");
        assert_eq!((q.head_at, q.tail_at), (0, 0));
    }

    #[test]
    fn chunks_a_draining_fifo_frees_are_the_next_ones_filled() {
        let mut store = VoqStore::new();
        let (mut a, mut b) = (TimeFifo::new(), TimeFifo::new());
        let per = PER_CHUNK as u64;
        for t in 0..10 * per {
            a.push(&mut store, SimTime(t));
        }
        assert_eq!(store.chunks(), 10);
        for _ in 0..9 * per {
            a.pop(&mut store);
        }
        // nine chunks are free again; b fills them before any fresh chunk
        for t in 0..9 * per {
            b.push(&mut store, SimTime(t));
        }
        assert_eq!(store.chunks(), 10, "b took only freed chunks");
        b.push(&mut store, SimTime(9 * per));
        assert_eq!(store.chunks(), 11);
        for t in 9 * per..10 * per {
            assert_eq!(a.pop(&mut store), Some(SimTime(t)));
        }
        for t in 0..=9 * per {
            assert_eq!(b.pop(&mut store), Some(SimTime(t)));
        }
    }
}
