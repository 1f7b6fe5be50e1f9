//! The discrete-event engine: a FIFO-stable event queue over a closed event enum, seeded
//! per-component random streams, and a cache prefetch hint. The simulator is a value; nothing
//! here is global.

pub mod huge_pages;
pub mod prefetch;
pub mod queue;
pub mod rng;

pub use prefetch::{prefetch, prefetch_address, prefetch_all, prefetch_lines};
pub use queue::EventQueue;
pub use rng::{stream, SimRng};

use crate::wire::FrameId;

/// Every event the simulator knows. Small and `Copy`: the payload names components by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The last bit of `frame`, the frame in service, left transmitter `port` (the event names
    /// the frame so that the event loop can prefetch its line without reading the port's).
    TxDone { port: u32, frame: FrameId },
    /// The last bit of `frame` arrived at switch `switch`, on the input the frame names
    /// (`Frame::in_local`, set when it left): the event carries the receiver so that an arrival
    /// reads nothing of the port that sent it.
    ArriveAtSwitch { switch: u32, frame: FrameId },
    /// The last bit of `frame` arrived at NIC `nic`.
    ArriveAtNic { nic: u32, frame: FrameId },
    /// The head of switch egress `port`'s queue becomes eligible (processing delay elapsed).
    PortWake { port: u32 },
    /// NIC `nic` has a generator arrival or a rate-limiter release due.
    NicWake { nic: u32 },
    /// Hotspot window `index` starts (`on`) or ends.
    Hotspot { index: u32, on: bool },
    /// An out-of-band CM message (`feedback = "oob"`) reaches NIC `nic`.
    Feedback { nic: u32, frame: FrameId },
    /// A reaction-point timer of flow `flow` at NIC `nic` (scheme specific; `token` detects stale timers).
    CmTimer { nic: u32, flow: u32, token: u32 },
    /// A wake-up the destination NIC `nic` asked for about a flow it receives (DCQCN's periodic
    /// CNP check, §7.2): `flow` holds its source node and priority class ([`sink_flow`]).
    SinkTimer { nic: u32, flow: u32 },
    /// The measurement interval of the congestion point at egress `port` ends (FECN's T, §6).
    CpTick { port: u32 },
    /// Look for a PAUSE deadlock (an observer: it changes no state of the model and is not
    /// counted in the engine's events).
    DeadlockCheck,
    /// The last source of a run to completion stops generating: from here on the run ends as
    /// soon as no data frame is left (an observer, not counted: it only makes sure the end is
    /// looked for then, when no other event may follow).
    SourcesStopped,
}

// an event is 16 bytes whatever it names: the queue's buckets hold events by value
const _: () = assert!(std::mem::size_of::<Event>() == 16);

/// The most nodes a network may have: [`sink_flow`] keeps a node index in 24 bits (the front end
/// allows 65,536 nodes).
pub const MAX_NODES: usize = 1 << 24;

/// A received flow's source node and priority class in one word, for [`Event::SinkTimer`]: a
/// field of its own changed the events' layout, and moving them in the event queue cost 2 %
/// more instructions on every run (docs/performance.md).
#[inline]
pub fn sink_flow(src: u32, class: u8) -> u32 {
    debug_assert!((src as usize) < MAX_NODES);
    src | (class as u32) << 24
}

/// The source node and class of a [`sink_flow`].
#[inline]
pub fn sink_flow_parts(flow: u32) -> (u32, u8) {
    (flow & 0x00FF_FFFF, (flow >> 24) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_flow_keeps_its_source_and_class_apart() {
        for src in [0, 1, 2_047, (MAX_NODES - 1) as u32] {
            for class in 0..8u8 {
                let flow = sink_flow(src, class);
                assert_eq!(sink_flow_parts(flow), (src, class));
                // one word per (source, class): no two pairs share it
                assert_eq!(flow >> 24, u32::from(class));
            }
        }
    }
}
