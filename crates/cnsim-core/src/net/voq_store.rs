//! The generation times of the frames waiting in the VOQs of every NIC (algorithms.md §1.1, D15:
//! a VOQ holds a frame as its generation time until the frame moves to the output buffer).
//!
//! Each VOQ's times form a FIFO ([`TimeFifo`]) of fixed-size chunks, and every chunk of the
//! network comes from one store ([`VoqStore`]) with one free list. Why not a growable ring per
//! VOQ: without CM a 128-host hotspot leaves tens of millions of frames in 16,000 backlogged
//! VOQs. The rings grew by copying, and once the backlog drained every frame read the head of
//! one ring and wrote the tail of another, each a cache miss in a different part of 300 MB.
//! Here a backlog grows a chunk at a time, and the chunk a draining VOQ frees
//! is the next one any VOQ fills, so the tail a frame is written to was just read and is still
//! in cache (docs/performance.md, "VOQ backlogs in chunks").
//!
//! A VOQ keeps its last chunk when it empties (and with its slot when the slot is recycled), so
//! a VOQ that empties after every frame — the common case below saturation — writes and reads
//! the first line of the same chunk and never allocates.

use crate::engine::huge_pages::push_in_huge_pages;
use crate::time::SimTime;

/// Times per chunk: 128 B, two cache lines. The links between chunks live apart
/// ([`VoqStore::next`]), read once per chunk, so a time's index is masked, never bounds-checked.
const PER_CHUNK: u16 = 16;
const SLOT: usize = PER_CHUNK as usize - 1;

/// The room a store takes at once in huge pages when it outgrows one: 512 MiB of address space
/// for the chunks (a 128-host hotspot backlog fills 300 MB), 16 MiB for their links.
const LARGE_STORE: usize = 1 << 22;

/// No chunk (a FIFO that never held a frame; the end of the free list).
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([SimTime; PER_CHUNK as usize]);

const _: () = assert!(std::mem::size_of::<Chunk>() == 128);

/// All chunks of all VOQ FIFOs of a simulation.
pub struct VoqStore {
    chunks: Vec<Chunk>,
    /// The next chunk of each chunk's FIFO, or of the free list.
    next: Vec<u32>,
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
            next: Vec::new(),
            free: NONE,
        }
    }

    /// Chunks made so far (128 B each), the free ones included: the store's size.
    #[cfg(test)]
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// A chunk for a FIFO to fill: the one freed last, else a new one.
    #[inline(always)]
    fn alloc(&mut self) -> u32 {
        if self.free != NONE {
            let c = self.free;
            self.free = self.next[c as usize];
            return c;
        }
        // a deep backlog reads and writes its chunks all over the store
        push_in_huge_pages(
            &mut self.chunks,
            Chunk([SimTime::ZERO; PER_CHUNK as usize]),
            LARGE_STORE,
        );
        push_in_huge_pages(&mut self.next, NONE, LARGE_STORE);
        self.chunks.len() as u32 - 1
    }

    #[inline(always)]
    fn release(&mut self, c: u32) {
        self.next[c as usize] = self.free;
        self.free = c;
    }
}

/// One VOQ's generation times, oldest first, in chunks of a [`VoqStore`].
#[derive(Clone, Copy, Debug)]
pub struct TimeFifo {
    head: u32,
    tail: u32,
    /// The next time to read in `head`, and the next slot to write in `tail`.
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
        } else if self.tail_at == PER_CHUNK {
            let c = store.alloc();
            store.next[self.tail as usize] = c;
            self.tail = c;
            self.tail_at = 0;
        }
        store.chunks[self.tail as usize].0[self.tail_at as usize & SLOT] = t;
        self.tail_at += 1;
        self.len += 1;
    }

    /// Remove and return the oldest time. A chunk read to its end goes back to the store, but
    /// the FIFO keeps the chunk it empties in.
    #[inline(always)]
    pub fn pop(&mut self, store: &mut VoqStore) -> Option<SimTime> {
        if self.len == 0 {
            return None;
        }
        let t = store.chunks[self.head as usize].0[self.head_at as usize & SLOT];
        self.head_at += 1;
        self.len -= 1;
        if self.len == 0 {
            // head == tail: start the kept chunk over, on its first line
            self.head_at = 0;
            self.tail_at = 0;
        } else if self.head_at == PER_CHUNK {
            let next = store.next[self.head as usize];
            store.release(self.head);
            self.head = next;
            self.head_at = 0;
        }
        Some(t)
    }

    /// The oldest time, in place (to prefetch its line).
    #[inline(always)]
    pub fn front<'a>(&self, store: &'a VoqStore) -> Option<&'a SimTime> {
        (self.len > 0).then(|| &store.chunks[self.head as usize].0[self.head_at as usize & SLOT])
    }

    /// The slot the next [`TimeFifo::push`] writes, in place (to prefetch its line), if it is
    /// in a chunk that exists already: the tail's next slot, or the first of the chunk the store
    /// hands out next.
    #[inline(always)]
    pub fn back_slot<'a>(&self, store: &'a VoqStore) -> Option<&'a SimTime> {
        let (c, at) = if self.tail_at < PER_CHUNK {
            (self.tail, self.tail_at)
        } else {
            (store.free, 0)
        };
        (c != NONE).then(|| &store.chunks[c as usize].0[at as usize & SLOT])
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
                assert_eq!(q.front(&store).copied(), expected.front().copied());
                assert_eq!(q.pop(&mut store), expected.pop_front());
            }
            assert_eq!(q.len(), expected.len());
        }
        while let Some(t) = expected.pop_front() {
            assert_eq!(q.pop(&mut store), Some(t));
        }
        assert!(q.is_empty() && q.front(&store).is_none());
    }

    /// Where a reference into the store points, as a slot index (the store may move as it grows).
    fn slot_of(store: &VoqStore, r: &SimTime) -> usize {
        (r as *const SimTime as usize - store.chunks.as_ptr() as usize) / size_of::<SimTime>()
    }

    #[test]
    fn back_slot_names_the_slot_the_next_push_writes() {
        let mut store = VoqStore::new();
        let (mut a, mut b) = (TimeFifo::new(), TimeFifo::new());
        assert!(a.back_slot(&store).is_none(), "no chunk yet");
        // a and b take turns, so that chunks are freed and taken over as the FIFOs cross them;
        // `front` names the slot a pop reads, so each prediction is checked when its time leaves
        let mut predicted = std::collections::VecDeque::new();
        let mut checked = 0;
        for t in 0..20 * PER_CHUNK as u64 {
            predicted.push_back(a.back_slot(&store).map(|s| slot_of(&store, s)));
            a.push(&mut store, SimTime(t));
            b.push(&mut store, SimTime(t));
            if t % 3 == 0 {
                let s = slot_of(&store, a.front(&store).unwrap());
                if let Some(Some(p)) = predicted.pop_front() {
                    assert_eq!(s, p);
                    checked += 1;
                }
                let stored = store.chunks[s / PER_CHUNK as usize].0[s % PER_CHUNK as usize];
                assert_eq!(Some(stored), a.pop(&mut store));
            }
            if t % 2 == 0 {
                b.pop(&mut store);
            }
        }
        assert!(checked > 90, "{checked} predictions checked");
    }

    #[test]
    fn a_fifo_that_empties_keeps_its_chunk_and_starts_it_over() {
        let mut store = VoqStore::new();
        let mut q = TimeFifo::new();
        for t in 0..1000 {
            q.push(&mut store, SimTime(t));
            assert_eq!(q.pop(&mut store), Some(SimTime(t)));
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
        b.push(&mut store, SimTime(0));
        assert_eq!(store.chunks(), 11);
        for t in 9 * per..10 * per {
            assert_eq!(a.pop(&mut store), Some(SimTime(t)));
        }
        for t in 0..9 * per {
            assert_eq!(b.pop(&mut store), Some(SimTime(t)));
        }
    }
}
