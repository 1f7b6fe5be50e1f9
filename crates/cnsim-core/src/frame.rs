//! Frames live in a pool and are moved by handle (htsim's `PacketDB` idea): no per-frame heap
//! allocation in the hot loop. Frames waiting in an unlimited NIC VOQ are not in the pool at all
//! (only their generation time is stored, DESIGN.md "Queued frames are cheap").

use crate::engine::huge_pages::push_in_huge_pages;
use crate::time::SimTime;
pub use crate::wire::{CmPayload, FrameId};

/// `Frame::flow_rec` of a flow whose throughput is not recorded.
pub const NO_RECORD: u32 = u32::MAX;
/// `Frame::flow_inst` of a frame that belongs to no tracked finite flow.
pub const NO_FLOW: u32 = u32::MAX;
/// The class of an 802.3x PAUSE frame: it stops every class (and CM control) at once.
pub const ALL_CLASSES: u8 = u8::MAX;

/// What a frame is, which decides its queue and its accounting (algorithms.md D6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A data frame of a flow.
    Data,
    /// PAUSE (MAC control): `xoff = true` pauses, `false` resumes (D12); for priority `class`
    /// only (802.1Qbb PFC), or every frame but MAC control ([`ALL_CLASSES`], 802.3x).
    Pause { xoff: bool, class: u8 },
    /// A CM backward message, class (a) of D6: strict priority, not counted in buffers.
    Control,
    /// A CM forward probe, class (b) of D6: queues and counts like data.
    Probe,
}

impl FrameKind {
    /// Frames that travel in the data FIFO and occupy switch buffers.
    #[inline]
    pub fn is_buffered(self) -> bool {
        matches!(self, FrameKind::Data | FrameKind::Probe)
    }
}

/// A frame in flight. `repr(C)`, 64-byte aligned: everything a hop reads or writes — times,
/// addresses, size, partition, kind and the CM tags a congestion point reads on a data frame
/// (the first fields of [`CmPayload`]) — lies in the first cache line; the rest of the CM content
/// (control frames and probes) in the second.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Frame {
    /// When the generator created it.
    pub gen_time: SimTime,
    /// When it may start leaving the current switch (admission + processing delay, D14); read
    /// only by a port that holds frames ([`crate::net::Port::hold_until_ready`]).
    pub ready_at: SimTime,
    /// Source and destination node indices (for PAUSE frames: unused).
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    /// The input port (local index) of the switch holding the frame — its partition — or, on a
    /// link, of the receiver it travels to (written when its last bit leaves, so the arrival
    /// reads nothing of the sending port).
    pub in_local: u32,
    /// Index of the flow's throughput recorder, `NO_RECORD` if the flow is not recorded.
    pub flow_rec: u32,
    /// The finite flow (TG-GEO) the frame belongs to, [`NO_FLOW`] if none.
    pub flow_inst: u32,
    pub kind: FrameKind,
    /// The 802.1Qbb priority class of a data frame or probe (0 without PFC).
    pub class: u8,
    /// Charged to a buffer (switch memory or NIC OB) whose counters drop when its last bit leaves.
    pub counted: bool,
    /// Scheme-specific content of control frames and tags of data frames.
    pub cm: CmPayload,
}

impl Frame {
    pub fn data(src: u32, dst: u32, size: u32, gen_time: SimTime) -> Self {
        Frame {
            kind: FrameKind::Data,
            src,
            dst,
            size,
            class: 0,
            in_local: 0,
            gen_time,
            ready_at: SimTime::ZERO,
            counted: false,
            flow_rec: NO_RECORD,
            flow_inst: NO_FLOW,
            cm: CmPayload::default(),
        }
    }
}

/// The room a pool takes at once in huge pages when it outgrows one: a million frames, 128 MiB
/// of address space.
const LARGE_POOL: usize = 1 << 20;

/// Pool of frames with a free list; handles are reused.
#[derive(Debug, Default)]
pub struct FramePool {
    frames: Vec<Frame>,
    free: Vec<u32>,
    live_data: u64,
}

impl FramePool {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn alloc(&mut self, frame: Frame) -> FrameId {
        if frame.kind == FrameKind::Data {
            self.live_data += 1;
        }
        if let Some(i) = self.free.pop() {
            self.frames[i as usize] = frame;
            FrameId(i)
        } else {
            // frames wait long in the queues of a loaded network and are read at random
            push_in_huge_pages(&mut self.frames, frame, LARGE_POOL);
            FrameId(self.frames.len() as u32 - 1)
        }
    }

    #[inline]
    pub fn free(&mut self, id: FrameId) {
        if self.frames[id.0 as usize].kind == FrameKind::Data {
            self.live_data -= 1;
        }
        self.free.push(id.0);
    }

    #[inline]
    pub fn get(&self, id: FrameId) -> &Frame {
        &self.frames[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: FrameId) -> &mut Frame {
        &mut self.frames[id.0 as usize]
    }

    /// Data frames currently allocated: on links, in switches and NIC output buffers.
    pub fn live_data(&self) -> u64 {
        self.live_data
    }

    /// Slots ever allocated (the pool's high-water mark).
    pub fn capacity(&self) -> usize {
        self.frames.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_reads_one_cache_line_of_its_frame() {
        use std::mem::offset_of;
        assert_eq!(std::mem::align_of::<Frame>(), 64);
        let cm = offset_of!(Frame, cm);
        for end in [
            offset_of!(Frame, counted),
            offset_of!(Frame, ready_at) + 7,
            offset_of!(Frame, kind) + std::mem::size_of::<FrameKind>() - 1,
            cm + offset_of!(CmPayload, cpid) + 3,
            cm + offset_of!(CmPayload, ce),
        ] {
            assert!(end < 64, "offset {end}");
        }
    }

    #[test]
    fn handles_are_reused_and_live_data_counted() {
        let mut pool = FramePool::new();
        let a = pool.alloc(Frame::data(0, 1, 1500, SimTime::ZERO));
        let b = pool.alloc(Frame::data(1, 0, 1500, SimTime::ZERO));
        assert_eq!(pool.live_data(), 2);
        pool.free(a);
        let c = pool.alloc(Frame {
            kind: FrameKind::Pause {
                xoff: true,
                class: ALL_CLASSES,
            },
            ..Frame::data(0, 0, 64, SimTime::ZERO)
        });
        assert_eq!(c, a);
        assert_eq!(pool.live_data(), 1);
        assert_eq!(pool.get(b).src, 1);
        assert_eq!(pool.capacity(), 2);
    }
}
