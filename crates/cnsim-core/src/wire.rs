//! The wire layer: what travels in frames, as plain data — the handle of a frame in the pool and
//! the content of congestion-management control frames (BCN/ECM feedback, QCN CNMs, E2CM probes,
//! SONAR pings and answers, QCN+ probes, DCQCN CNPs) with the CM tags a data frame carries (algorithms.md
//! §1.5, D6). It imports nothing but `time`, so the engine and the frame pool sit below the
//! schemes, which build on these types (DESIGN.md: the engine knows no scheme).

/// Handle of a frame in the frame pool (`frame::FramePool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameId(pub u32);

/// Message types carried in [`CmPayload::msg`].
pub mod msg {
    /// BCN/ECM feedback or a QCN CNM (backward, class (a)).
    pub const FEEDBACK: u8 = 0;
    /// BCN(0,0): stop the flow (backward, class (a)), D4.
    pub const STOP: u8 = 1;
    /// QCN-3pt reflection (Fb = 0) from the destination (backward, class (a)), §5.5.
    pub const REFLECTION: u8 = 2;
    /// A forward probe: E2CM probe, SONAR ping, QCN+ directed probe (class (b)), D6.
    pub const PROBE: u8 = 3;
    /// A returned probe or a CP's answer to a probe (backward, class (a)).
    pub const PROBE_REPLY: u8 = 4;
    /// A DCQCN congestion notification packet from the destination NIC (backward, class (a)), §7.2.
    pub const CNP: u8 = 5;
}

/// Content of a CM control frame, and the CM tags a data frame carries. Fields a scheme does
/// not use stay zero.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct CmPayload {
    /// One of [`msg`].
    pub msg: u8,
    /// Data frames: a rate-limited tag (RLT) naming `cpid` is present.
    pub tagged: bool,
    /// Data frames: QCN-3pt discard-eligible bit.
    pub de: bool,
    /// Data frames: ECN congestion experienced (a DCQCN CP marked it, §7.1).
    pub ce: bool,
    /// Identity of the CP that generated a message; on a data frame with `tagged`, the CP its
    /// rate limiter is associated with (RLT); on a probe, the CP (or destination) it is for.
    pub cpid: u32,
    /// Feedback value in the scheme's unit (bytes, or quanta when quantised; QCN: QntzFb).
    pub fb: f64,
    /// The CP's Qoff and Qdelta in bytes at the sampling instant (ECM-Q, QCN+).
    pub qoff: f64,
    pub qdelta: f64,
    /// The flow the message is about: (source, destination) node indices (and `flow_class`).
    pub flow_src: u32,
    pub flow_dst: u32,
    /// Probe timestamps in ps: sent by the source, stamped by the destination or CP.
    pub stamp: u64,
    pub stamp2: u64,
    /// Probes: the known forward delay of the probe's path without queueing (E2CM `d0`, D17).
    pub base_delay: u64,
    pub seq: u32,
    /// The flow's PFC priority class (0 without PFC): the class of the frame the message is
    /// about, which picks the flow's VOQ when a NIC keeps one per destination and class. Last,
    /// in what was the struct's tail padding: a frame stays the size it was.
    pub flow_class: u8,
}
