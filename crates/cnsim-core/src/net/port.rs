//! A transmitter: one direction of a full-duplex link (rate, one-way propagation delay), serving
//! one frame at a time in strict priority MAC control (PAUSE) > CM class (a) control > data FIFO
//! (D6). PAUSE stops it after the frame in progress (D12); MAC control is never paused. A
//! hotspot lowers the rate of data only (D11, D16).
//!
//! With PFC (802.1Qbb, algorithms.md §2.1) the data FIFO is one FIFO per priority class, served
//! in strict priority (the highest class first), and a PAUSE names one class: it stops that
//! class alone, never CM control. An 802.3x PAUSE ([`ALL_CLASSES`]) stops data and CM control.
//!
//! The port owns its state and decides alone; it returns what happened ([`Start`],
//! [`PauseChange`]) and the simulator's kernel turns that into events and records.

use std::collections::VecDeque;

use crate::frame::{FrameId, FrameKind, FramePool, ALL_CLASSES};
use crate::metrics::PauseRecord;
use crate::time::{tx_time, BitRate, SimTime};
use crate::topology::{Device, PackedDevice, PortSpec};

/// A transmitter. Laid out for the event path (`repr(C)`, 64-byte aligned) so that the end of a
/// transmission touches one cache line of its port: the first line holds what every frame's
/// start and end read and write (busy, the frame in service, queue bytes, the serialisation
/// memo, counts that say whether the control FIFOs or PFC FIFOs need looking at, which recorders
/// watch the port) and, copied from `spec`, what the end of a transmission needs of the link (its
/// owner, the receiver and the input it arrives on, the propagation delay). The second line
/// holds the recorder slots, the data FIFO, the start time and the wake-up time; the link
/// (`spec`, read for control frames and PAUSE only), the control and PFC FIFOs and the PAUSE
/// bookkeeping come last. At 2,048 hosts the ports do not fit in L2 and thousands of events pass
/// between two visits to one port, so each line a hop touches is a likely miss
/// (docs/performance.md).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Port {
    pub busy: bool,
    /// The number of PFC FIFOs beyond class 0 (`hi.len()`).
    hi_fifos: u8,
    /// What PAUSE frames from the link partner hold: bit c for data class c, [`CONTROL`] for CM
    /// control (0: nothing paused).
    pub paused: u16,
    pub current: FrameId,
    /// The last serialisation time computed at the data rate, for `memo_size` bytes (0: none) —
    /// nearly every frame repeats it; a new data rate clears it.
    memo_size: u32,
    /// Frames in `mac` and `ctrl` (they are looked at only when there are any).
    urgent: u32,
    /// Bytes of `oq` plus the data frame in service (the CP's q; the OB occupancy). Every frame
    /// in the data FIFOs is counted here, so an idle port with none has empty FIFOs.
    pub q_bytes: u64,
    /// Current service rate of data and class (b) frames (hotspots change it).
    pub data_rate: BitRate,
    memo_time: SimTime,
    /// `spec.delay`, `spec.owner`, `spec.peer` and `spec.peer_local`, for the first line.
    pub delay: SimTime,
    pub owner: PackedDevice,
    pub peer: PackedDevice,
    pub peer_local: u32,
    /// Which recorders watch this port ([`RECORD_QUEUE`], [`RECORD_TPUT`]): the slots below are
    /// meaningful only with their bit set, and a departure reads them only then.
    records: u8,
    /// Frames may have to wait for their `Frame::ready_at` (a switch with a processing delay).
    holds: bool,
    /// With `hi`: the class FIFO the frame in service came from (0: class 0, [`NO_CLASS`]: a
    /// control frame); in the padding before `queue_rec`.
    serving_class: u8,
    /// Index of this port's queue recorder (with [`RECORD_QUEUE`]).
    queue_rec: u32,
    /// Index of this port's throughput recorder (with [`RECORD_TPUT`]).
    tput_rec: u32,
    /// The data FIFO: a switch output queue, or a NIC's output buffer (OB); with PFC, class 0.
    pub oq: VecDeque<QueuedFrame>,
    /// When the frame in service started.
    pub tx_start: SimTime,
    /// Pending `PortWake` instant, `NEVER` if none (a processing delay: rare).
    pub wake_at: SimTime,
    pub spec: PortSpec,
    /// MAC control frames (PAUSE) waiting: sent first, never paused ([`Port::push_mac`]).
    mac: VecDeque<FrameId>,
    /// CM class (a) backward messages: strict priority over data ([`Port::push_ctrl`]).
    ctrl: VecDeque<FrameId>,
    /// With PFC and more than one class: the FIFOs of classes 1, 2, … (empty otherwise).
    hi: Vec<ClassFifo>,
    /// Since when something has been paused (the paused-time metrics).
    pub paused_since: SimTime,
    /// Since when each data class has been paused (the deadlock detector, per class).
    pub class_since: [SimTime; 8],
    pub pause_record: PauseRecord,
}

/// A data frame or probe in a data FIFO with its size, which is what starting it needs (unless
/// the port holds frames for a processing delay, [`Port::hold_until_ready`]): a start reads
/// nothing of the frame, which at 2,048 hosts is no longer in cache once it has waited in a
/// queue. (Eight bytes: the ready time in the entry too doubled the FIFOs' write misses.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedFrame {
    pub frame: FrameId,
    pub size: u32,
}

/// A PFC class's FIFO beyond class 0, with what [`Port::class_bytes`] needs to count the class
/// as `q_bytes` counts all of them (its frames and its frame in service): a congestion point
/// measures the queue of its frame's class (algorithms.md §7.1 "q of the lossless class", §3.1
/// "per output queue, per CM class").
#[derive(Debug, Default)]
struct ClassFifo {
    frames: VecDeque<QueuedFrame>,
    /// The bytes of `frames`.
    bytes: u64,
    /// The size of the class's last frame to start: in service while the port is busy with it
    /// ([`Port::serving_class`]), so that the end of a transmission need not look at classes.
    serving: u32,
}

/// [`Port::serving_class`] while a control frame is in service.
const NO_CLASS: u8 = u8::MAX;

/// [`Port::records`]: the queue length is recorded.
const RECORD_QUEUE: u8 = 1;
/// [`Port::records`]: the throughput is recorded.
const RECORD_TPUT: u8 = 2;

impl Port {
    pub fn new(spec: PortSpec) -> Self {
        Port {
            busy: false,
            hi_fifos: 0,
            paused: 0,
            current: FrameId(u32::MAX),
            memo_size: 0,
            urgent: 0,
            q_bytes: 0,
            data_rate: spec.rate,
            memo_time: SimTime::ZERO,
            delay: spec.delay,
            owner: spec.owner.packed(),
            peer: spec.peer.packed(),
            peer_local: spec.peer_local,
            records: 0,
            holds: false,
            serving_class: 0,
            spec,
            queue_rec: 0,
            tput_rec: 0,
            oq: VecDeque::new(),
            tx_start: SimTime::ZERO,
            wake_at: SimTime::NEVER,
            mac: VecDeque::new(),
            ctrl: VecDeque::new(),
            hi: Vec::new(),
            paused_since: SimTime::ZERO,
            class_since: [SimTime::ZERO; 8],
            pause_record: PauseRecord::default(),
        }
    }

    /// Queue a MAC control frame (PAUSE): it goes before everything, even while paused.
    #[inline]
    pub fn push_mac(&mut self, f: FrameId) {
        self.mac.push_back(f);
        self.urgent += 1;
    }

    /// Queue a CM class (a) control frame: strict priority over data (D6).
    #[inline]
    pub fn push_ctrl(&mut self, f: FrameId) {
        self.ctrl.push_back(f);
        self.urgent += 1;
    }

    /// Control frames waiting (MAC and CM).
    pub fn control_queued(&self) -> usize {
        self.urgent as usize
    }

    /// Frames leave no earlier than their `Frame::ready_at` (a switch with a processing delay,
    /// D14); otherwise every queued frame is ready and its time is not read.
    pub fn hold_until_ready(&mut self) {
        self.holds = true;
    }

    /// Record this port's queue length in queue recorder `slot`.
    pub fn record_queue(&mut self, slot: u32) {
        self.queue_rec = slot;
        self.records |= RECORD_QUEUE;
    }

    /// Record this port's throughput in throughput recorder `slot`.
    pub fn record_tput(&mut self, slot: u32) {
        self.tput_rec = slot;
        self.records |= RECORD_TPUT;
    }

    /// The queue recorder slot, if the queue is recorded (the flag in the first line decides).
    #[inline(always)]
    pub fn queue_rec(&self) -> Option<u32> {
        (self.records & RECORD_QUEUE != 0).then_some(self.queue_rec)
    }

    /// The throughput recorder slot, if the throughput is recorded.
    #[inline(always)]
    pub fn tput_rec(&self) -> Option<u32> {
        (self.records & RECORD_TPUT != 0).then_some(self.tput_rec)
    }
}

/// [`Port::paused`]: CM control (class (a)) is held.
pub const CONTROL: u16 = 1 << 8;

/// The bits of [`Port::paused`] a PAUSE frame for `class` sets or clears.
pub fn pause_bits(class: u8) -> u16 {
    if class == ALL_CLASSES {
        0xFF | CONTROL
    } else {
        1 << class
    }
}

/// What [`Port::start_next`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Transmission of `frame` started; its last bit leaves at `done`.
    Sent { frame: FrameId, done: SimTime },
    /// The head data frame becomes eligible at this instant (processing delay, D14): the port
    /// must be woken then (the wake-up is recorded in `wake_at`).
    WakeAt(SimTime),
    /// Nothing to do now: busy, paused with no MAC control waiting, empty, a wake-up already
    /// pending earlier, or a 0 Gb/s hotspot holding the data (D16).
    Nothing,
}

/// What a received PAUSE frame changed (XOFF/XON semantics, D12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseChange {
    /// The port was already in the requested state.
    None,
    /// XOFF: the port stops after the frame in progress (nothing was paused before).
    Paused,
    /// XON: the port may send again; it had been paused since `since`.
    Resumed { since: SimTime },
    /// PFC: one class paused or resumed while another stays paused.
    Class,
}

impl Port {
    /// Start the next frame if the port is idle: MAC control first (even when paused), then CM
    /// control, then the head of the data FIFO once it is ready and the service rate is not 0.
    #[inline(always)]
    pub fn start_next(&mut self, now: SimTime, pool: &mut FramePool) -> Start {
        if self.busy {
            return Start::Nothing;
        }
        let urgent = if self.urgent == 0 {
            None
        } else if let Some(f) = self.mac.pop_front() {
            Some(f)
        } else if self.paused & CONTROL == 0 {
            self.ctrl.pop_front()
        } else {
            None
        };
        let (f, size, rate) = if let Some(f) = urgent {
            self.urgent -= 1;
            if self.hi_fifos != 0 {
                self.serving_class = NO_CLASS; // a control frame: no class's bytes
            }
            (f, pool.get(f).size, self.spec.rate)
        } else if self.hi_fifos != 0 {
            match self.start_class(now, pool) {
                Ok(q) => (q.frame, q.size, self.data_rate),
                Err(start) => return start,
            }
        } else {
            if self.paused & 1 != 0 || self.q_bytes == 0 {
                // (an idle port's counted bytes are its FIFO's: none, and its line is not read)
                return Start::Nothing;
            }
            let Some(&QueuedFrame { frame: f, size }) = self.oq.front() else {
                unreachable!("queued bytes without a queued frame");
            };
            if self.holds {
                let ready_at = pool.get(f).ready_at;
                if ready_at > now {
                    if self.wake_at > ready_at {
                        self.wake_at = ready_at;
                        return Start::WakeAt(ready_at);
                    }
                    return Start::Nothing;
                }
            }
            if self.data_rate.0 == 0 {
                return Start::Nothing; // a 0 Gb/s hotspot: data waits (D16)
            }
            self.oq.pop_front();
            (f, size, self.data_rate)
        };
        if let Device::Nic(_) = self.owner.get() {
            let frame = pool.get_mut(f);
            if frame.kind == FrameKind::Probe {
                frame.cm.stamp = now.0; // t_src: the probe's transmission start (D17)
            }
        }
        let size = size as u64;
        self.busy = true;
        self.current = f;
        self.tx_start = now;
        let time = if rate != self.data_rate {
            tx_time(size, rate) // a control frame during a hotspot: at the link rate
        } else {
            if self.memo_size as u64 != size {
                self.memo_size = size as u32;
                self.memo_time = tx_time(size, rate);
            }
            self.memo_time
        };
        Start::Sent {
            frame: f,
            done: now + time,
        }
    }

    /// PFC with several classes: take the head of the highest class that is not paused, not
    /// empty and ready; or say when the earliest such head becomes ready.
    #[inline(never)]
    fn start_class(&mut self, now: SimTime, pool: &FramePool) -> Result<QueuedFrame, Start> {
        if self.data_rate.0 == 0 {
            return Err(Start::Nothing); // a 0 Gb/s hotspot: data waits (D16)
        }
        let mut earliest = SimTime::NEVER;
        for c in (0..=self.hi.len()).rev() {
            if self.paused & (1 << c) != 0 {
                continue;
            }
            let queue = if c == 0 {
                &mut self.oq
            } else {
                &mut self.hi[c - 1].frames
            };
            let Some(&q) = queue.front() else { continue };
            let ready_at = if self.holds {
                pool.get(q.frame).ready_at
            } else {
                now
            };
            if ready_at <= now {
                queue.pop_front();
                if c > 0 {
                    let fifo = &mut self.hi[c - 1];
                    fifo.bytes -= q.size as u64;
                    fifo.serving = q.size;
                }
                self.serving_class = c as u8;
                return Ok(q);
            }
            earliest = earliest.min(ready_at);
        }
        if earliest != SimTime::NEVER && self.wake_at > earliest {
            self.wake_at = earliest;
            return Err(Start::WakeAt(earliest));
        }
        Err(Start::Nothing)
    }

    /// Queue a data frame or probe of `size` bytes and priority `class` (the class FIFOs exist
    /// with PFC only); it counts in `q_bytes` until its last bit leaves ([`Port::finish`]).
    #[inline]
    pub fn enqueue(&mut self, f: FrameId, class: u8, size: u64) {
        self.q_bytes += size;
        let q = QueuedFrame {
            frame: f,
            size: size as u32,
        };
        if class == 0 || self.hi_fifos == 0 {
            self.oq.push_back(q);
        } else {
            self.enqueue_class(q, class);
        }
    }

    /// PFC with several classes: a frame of class `class` ≥ 1 joins its FIFO (out of line, so
    /// that the common enqueue stays small enough to inline).
    #[inline(never)]
    fn enqueue_class(&mut self, q: QueuedFrame, class: u8) {
        let fifo = &mut self.hi[class as usize - 1];
        fifo.frames.push_back(q);
        fifo.bytes += q.size as u64;
    }

    /// The bytes `q_bytes` counts for data class `class` alone: its FIFO and its frame in
    /// service (every class's with one FIFO).
    #[inline]
    pub fn class_bytes(&self, class: u8) -> u64 {
        let held = |c: usize| {
            let fifo = &self.hi[c - 1];
            let serving = self.busy && self.serving_class as usize == c;
            fifo.bytes + if serving { fifo.serving as u64 } else { 0 }
        };
        if self.hi_fifos == 0 {
            self.q_bytes
        } else if class == 0 {
            self.q_bytes - (1..=self.hi.len()).map(held).sum::<u64>()
        } else {
            held(class as usize)
        }
    }

    /// Give the port one FIFO per priority class (PFC with `classes` > 1).
    pub fn set_classes(&mut self, classes: u8) {
        self.hi = (1..classes).map(|_| ClassFifo::default()).collect();
        self.hi_fifos = self.hi.len() as u8;
    }

    /// Every data FIFO, class 0 first.
    pub fn data_queues(&self) -> impl Iterator<Item = &VecDeque<QueuedFrame>> {
        std::iter::once(&self.oq).chain(self.hi.iter().map(|c| &c.frames))
    }

    /// The last bit of the frame in service left: the port is idle again. A frame charged to
    /// the queue (`counted`) leaves the queue's byte count. Returns the frame.
    #[inline(always)]
    pub fn finish(&mut self, size: u64, counted: bool) -> FrameId {
        self.busy = false;
        if counted {
            self.q_bytes -= size;
        }
        self.current
    }

    /// Apply a received PAUSE (`xoff`) or resume (XON) for `class` ([`ALL_CLASSES`]: 802.3x) at
    /// `now`.
    #[inline]
    pub fn set_paused(&mut self, now: SimTime, xoff: bool, class: u8) -> PauseChange {
        let bits = pause_bits(class);
        let before = self.paused;
        self.paused = if xoff { before | bits } else { before & !bits };
        if self.paused == before {
            return PauseChange::None;
        }
        for c in 0..8 {
            if self.paused & !before & (1 << c) != 0 {
                self.class_since[c] = now;
            }
        }
        match (before, self.paused) {
            (0, _) => {
                self.paused_since = now;
                PauseChange::Paused
            }
            (_, 0) => PauseChange::Resumed {
                since: self.paused_since,
            },
            _ => PauseChange::Class,
        }
    }

    /// Whether data class `class` is paused.
    #[inline]
    pub fn class_paused(&self, class: u8) -> bool {
        self.paused & (1 << class) != 0
    }

    /// A hotspot window starts or ends: data is served at `fraction` of the link rate (a frame in
    /// service finishes at the old rate, D16).
    pub fn set_service_fraction(&mut self, fraction: f64) {
        self.data_rate = self.spec.rate.scaled(fraction);
        self.memo_size = 0; // the memo is at the data rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_a_transmission_reads_one_cache_line_of_its_port() {
        use std::mem::offset_of;
        let line = |off: usize| off / 64;
        assert_eq!(std::mem::align_of::<Port>(), 64);
        // line 0: what every start and end of a transmission reads and writes
        for off in [
            offset_of!(Port, busy),
            offset_of!(Port, hi_fifos),
            offset_of!(Port, paused),
            offset_of!(Port, current),
            offset_of!(Port, urgent),
            offset_of!(Port, q_bytes),
            offset_of!(Port, data_rate),
            offset_of!(Port, memo_time) + 7,
            offset_of!(Port, delay) + 7,
            offset_of!(Port, owner) + 3,
            offset_of!(Port, peer) + 3,
            offset_of!(Port, peer_local) + 3,
            offset_of!(Port, records),
            offset_of!(Port, holds),
        ] {
            assert_eq!(line(off), 0, "offset {off}");
        }
        // line 1: the recorder slots, the data FIFO, the start of the frame in service and the
        // wake-up time
        let oq_end = offset_of!(Port, oq) + std::mem::size_of::<VecDeque<QueuedFrame>>() - 1;
        for off in [
            offset_of!(Port, queue_rec),
            offset_of!(Port, tput_rec),
            offset_of!(Port, oq),
            oq_end,
            offset_of!(Port, tx_start) + 7,
            offset_of!(Port, wake_at) + 7,
        ] {
            assert_eq!(line(off), 1, "offset {off}");
        }
        // the link itself after them: a data frame's start and end never read it
        assert!(offset_of!(Port, spec) > offset_of!(Port, wake_at));
        // six lines in all (PFC's class state lives in its FIFOs and in line 0's padding)
        assert!(std::mem::size_of::<Port>() <= 6 * 64);
    }

    #[test]
    fn the_first_line_copies_the_link_and_says_which_recorders_watch() {
        let mut p = port(Device::Switch(3));
        assert_eq!(p.owner.get(), Device::Switch(3));
        assert_eq!(p.peer.get(), Device::Nic(1));
        assert_eq!((p.delay, p.peer_local), (SimTime(US), 0));
        assert_eq!((p.queue_rec(), p.tput_rec()), (None, None));
        p.record_tput(7);
        assert_eq!((p.queue_rec(), p.tput_rec()), (None, Some(7)));
        p.record_queue(0);
        assert_eq!((p.queue_rec(), p.tput_rec()), (Some(0), Some(7)));
    }

    #[test]
    fn control_frames_are_counted_in_and_out() {
        let mut pool = FramePool::new();
        let mut p = port(Device::Switch(0));
        let c = frame(&mut pool, FrameKind::Control, 64);
        let m = frame(
            &mut pool,
            FrameKind::Pause {
                xoff: true,
                class: ALL_CLASSES,
            },
            64,
        );
        p.push_ctrl(c);
        p.push_mac(m);
        assert_eq!(p.control_queued(), 2);
        // paused for control: the MAC frame still goes, the CM frame waits
        p.paused = CONTROL;
        assert_eq!(sent(p.start_next(SimTime::ZERO, &mut pool)).0, m);
        p.finish(64, false);
        assert_eq!(p.control_queued(), 1);
        assert_eq!(p.start_next(SimTime::ZERO, &mut pool), Start::Nothing);
        p.paused = 0;
        assert_eq!(sent(p.start_next(SimTime::ZERO, &mut pool)).0, c);
        assert_eq!(p.control_queued(), 0);
    }
    use crate::frame::Frame;

    const US: u64 = 1_000_000; // ps

    fn port(owner: Device) -> Port {
        Port::new(PortSpec {
            owner,
            local: 0,
            peer: Device::Nic(1),
            peer_local: 0,
            reverse: 1,
            rate: BitRate(10_000_000_000),
            delay: SimTime(US),
        })
    }

    fn frame(pool: &mut FramePool, kind: FrameKind, size: u32) -> FrameId {
        let mut f = Frame::data(0, 1, size, SimTime::ZERO);
        f.kind = kind;
        pool.alloc(f)
    }

    fn sent(start: Start) -> (FrameId, SimTime) {
        match start {
            Start::Sent { frame, done } => (frame, done),
            other => panic!("expected a transmission, got {other:?}"),
        }
    }

    #[test]
    fn serialisation_is_exact_and_one_frame_at_a_time() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        let a = frame(&mut pool, FrameKind::Data, 1500);
        let b = frame(&mut pool, FrameKind::Data, 64);
        p.enqueue(a, 0, 1500);
        p.enqueue(b, 0, 64);
        assert_eq!(p.q_bytes, 1564);
        let (f, done) = sent(p.start_next(SimTime(5), &mut pool));
        assert_eq!((f, done), (a, SimTime(5 + 12 * US / 10))); // 1500 B at 10 Gb/s: 1.2 us
        assert_eq!(p.start_next(SimTime(6), &mut pool), Start::Nothing, "busy");
        assert_eq!(p.finish(1500, true), a);
        assert_eq!(p.q_bytes, 64);
        let (f, done) = sent(p.start_next(done, &mut pool));
        assert_eq!((f, done), (b, SimTime(5 + 12 * US / 10 + 51_200))); // 64 B: 51.2 ns
        p.finish(64, true);
        assert_eq!(p.q_bytes, 0);
        let c = frame(&mut pool, FrameKind::Control, 64);
        p.push_ctrl(c);
        let (f, done) = sent(p.start_next(done, &mut pool));
        assert_eq!(p.finish(64, false), f);
        assert_eq!(
            p.q_bytes, 0,
            "a frame not charged to the queue leaves its count alone"
        );
        assert_eq!(p.start_next(done, &mut pool), Start::Nothing, "empty");
    }

    #[test]
    fn strict_priority_mac_then_control_then_data() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        let data = frame(&mut pool, FrameKind::Data, 1500);
        let ctrl = frame(&mut pool, FrameKind::Control, 64);
        let pause = frame(
            &mut pool,
            FrameKind::Pause {
                xoff: true,
                class: ALL_CLASSES,
            },
            64,
        );
        p.enqueue(data, 0, 1500);
        p.push_ctrl(ctrl);
        p.push_mac(pause);
        let mut order = vec![];
        let mut t = SimTime::ZERO;
        while let Start::Sent { frame, done } = p.start_next(t, &mut pool) {
            order.push(frame);
            let fr = pool.get(frame);
            p.finish(fr.size as u64, fr.kind.is_buffered());
            t = done;
        }
        assert_eq!(order, vec![pause, ctrl, data]);
    }

    #[test]
    fn pause_holds_data_and_control_but_not_mac_and_not_the_frame_in_service() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        let first = frame(&mut pool, FrameKind::Data, 1500);
        let second = frame(&mut pool, FrameKind::Data, 1500);
        let ctrl = frame(&mut pool, FrameKind::Control, 64);
        p.enqueue(first, 0, 1500);
        p.enqueue(second, 0, 1500);
        sent(p.start_next(SimTime::ZERO, &mut pool));
        assert_eq!(
            p.set_paused(SimTime(100), true, ALL_CLASSES),
            PauseChange::Paused
        );
        assert!(p.busy, "XOFF does not cut the frame in progress");
        assert_eq!(p.finish(1500, true), first);
        p.push_ctrl(ctrl);
        assert_eq!(
            p.start_next(SimTime(200), &mut pool),
            Start::Nothing,
            "paused: control and data wait"
        );
        let xon = frame(
            &mut pool,
            FrameKind::Pause {
                xoff: false,
                class: ALL_CLASSES,
            },
            64,
        );
        p.push_mac(xon);
        assert_eq!(
            sent(p.start_next(SimTime(300), &mut pool)).0,
            xon,
            "MAC control is never paused"
        );
        p.finish(64, false);
        // hysteresis: a repeated XOFF changes nothing and keeps the original start
        assert_eq!(
            p.set_paused(SimTime(400), true, ALL_CLASSES),
            PauseChange::None
        );
        assert_eq!(
            p.set_paused(SimTime(500), false, ALL_CLASSES),
            PauseChange::Resumed {
                since: SimTime(100)
            }
        );
        assert_eq!(
            p.set_paused(SimTime(600), false, ALL_CLASSES),
            PauseChange::None
        );
        assert_eq!(sent(p.start_next(SimTime(700), &mut pool)).0, ctrl);
    }

    /// A class's bytes are its FIFO's plus its frame in service until the frame's last bit
    /// leaves (what `q_bytes` counts for the port), class 0's the rest; one FIFO: the port's.
    #[test]
    fn each_class_counts_its_own_bytes() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        let f = frame(&mut pool, FrameKind::Data, 1500);
        p.enqueue(f, 0, 1500);
        assert_eq!(p.class_bytes(0), 1500);
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        p.set_classes(3);
        let sizes = [(0, 1000), (2, 1500), (1, 700), (2, 64), (0, 300)];
        for &(class, size) in &sizes {
            let f = frame(&mut pool, FrameKind::Data, size as u32);
            p.enqueue(f, class, size);
        }
        let bytes = |p: &Port| [p.class_bytes(0), p.class_bytes(1), p.class_bytes(2)];
        assert_eq!(bytes(&p), [1300, 700, 1564]);
        // class 2's head in service: still counted until its last bit leaves
        let (f, _) = sent(p.start_next(SimTime(0), &mut pool));
        assert_eq!(bytes(&p), [1300, 700, 1564]);
        p.finish(pool.get(f).size as u64, true);
        assert_eq!(bytes(&p), [1300, 700, 64]);
        // a control frame in service counts in no class (class 2's last frame has left)
        let ctrl = frame(&mut pool, FrameKind::Control, 64);
        p.push_ctrl(ctrl);
        assert_eq!(sent(p.start_next(SimTime(0), &mut pool)).0, ctrl);
        assert_eq!(bytes(&p), [1300, 700, 64]);
        p.finish(64, false);
        let mut before = bytes(&p);
        for after in [[1300, 700, 0], [1300, 0, 0], [300, 0, 0], [0, 0, 0]] {
            let (f, _) = sent(p.start_next(SimTime(0), &mut pool));
            assert_eq!(bytes(&p), before, "in service: still counted");
            p.finish(pool.get(f).size as u64, true);
            assert_eq!(bytes(&p), after);
            before = after;
        }
        assert_eq!(p.q_bytes, 0);
    }

    /// PFC: a PAUSE for one class holds that class alone (and never CM control); the classes are
    /// served in strict priority, the highest first; a class resume with another still paused
    /// is a class change, not the end of the paused time.
    #[test]
    fn pfc_pauses_one_class_and_serves_classes_in_strict_priority() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        p.set_classes(3);
        let low = frame(&mut pool, FrameKind::Data, 1500);
        let mid = frame(&mut pool, FrameKind::Data, 1500);
        let high = frame(&mut pool, FrameKind::Data, 1500);
        let ctrl = frame(&mut pool, FrameKind::Control, 64);
        p.enqueue(low, 0, 1500);
        p.enqueue(mid, 1, 1500);
        p.enqueue(high, 2, 1500);
        assert_eq!(p.set_paused(SimTime(10), true, 2), PauseChange::Paused);
        assert_eq!(p.set_paused(SimTime(20), true, 1), PauseChange::Class);
        assert!(p.class_paused(1) && p.class_paused(2) && !p.class_paused(0));
        assert_eq!(p.class_since[2], SimTime(10));
        p.push_ctrl(ctrl);
        let mut t = SimTime(30);
        fn next(p: &mut Port, pool: &mut FramePool, t: &mut SimTime) -> FrameId {
            let (f, done) = sent(p.start_next(*t, pool));
            let fr = pool.get(f);
            p.finish(fr.size as u64, fr.kind.is_buffered());
            *t = done;
            f
        }
        assert_eq!(
            next(&mut p, &mut pool, &mut t),
            ctrl,
            "PFC never holds CM control"
        );
        assert_eq!(
            next(&mut p, &mut pool, &mut t),
            low,
            "classes 1 and 2 are paused"
        );
        assert_eq!(p.start_next(t, &mut pool), Start::Nothing);
        assert_eq!(
            p.set_paused(t, false, 1),
            PauseChange::Class,
            "class 2 is still paused"
        );
        assert_eq!(next(&mut p, &mut pool, &mut t), mid);
        assert_eq!(
            p.set_paused(t, false, 2),
            PauseChange::Resumed { since: SimTime(10) }
        );
        assert_eq!(next(&mut p, &mut pool, &mut t), high);
        // strict priority: with every class waiting the highest goes first
        let (a, b, c) = (
            frame(&mut pool, FrameKind::Data, 64),
            frame(&mut pool, FrameKind::Data, 64),
            frame(&mut pool, FrameKind::Data, 64),
        );
        p.enqueue(a, 0, 64);
        p.enqueue(b, 1, 64);
        p.enqueue(c, 2, 64);
        let order: Vec<FrameId> = (0..3).map(|_| next(&mut p, &mut pool, &mut t)).collect();
        assert_eq!(order, vec![c, b, a]);
        // 802.3x on the same port: everything but MAC control
        let d = frame(&mut pool, FrameKind::Data, 64);
        p.enqueue(d, 0, 64);
        p.push_ctrl(frame(&mut pool, FrameKind::Control, 64));
        assert_eq!(p.set_paused(t, true, ALL_CLASSES), PauseChange::Paused);
        assert_eq!(
            p.start_next(t, &mut pool),
            Start::Nothing,
            "802.3x holds CM control too"
        );
    }

    /// With classes, a head that is not yet ready lets a ready lower class go, and the port is
    /// woken for the earliest head otherwise.
    #[test]
    fn pfc_classes_wait_for_their_heads_independently() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        p.set_classes(2);
        p.hold_until_ready();
        let late = frame(&mut pool, FrameKind::Data, 1500);
        pool.get_mut(late).ready_at = SimTime(10 * US);
        let early = frame(&mut pool, FrameKind::Data, 1500);
        pool.get_mut(early).ready_at = SimTime(5 * US);
        p.enqueue(late, 1, 1500);
        p.enqueue(early, 0, 1500);
        assert_eq!(
            p.start_next(SimTime(US), &mut pool),
            Start::WakeAt(SimTime(5 * US))
        );
        assert_eq!(
            p.start_next(SimTime(2 * US), &mut pool),
            Start::Nothing,
            "the wake-up is pending"
        );
        p.wake_at = SimTime::NEVER;
        assert_eq!(sent(p.start_next(SimTime(5 * US), &mut pool)).0, early);
        p.finish(1500, true);
        // the late head alone: one wake-up for it, not a second
        assert_eq!(
            p.start_next(SimTime(6 * US), &mut pool),
            Start::WakeAt(SimTime(10 * US))
        );
        assert_eq!(p.start_next(SimTime(7 * US), &mut pool), Start::Nothing);
        // a wake-up pending earlier than the head is kept
        p.wake_at = SimTime(8 * US);
        assert_eq!(p.start_next(SimTime(7 * US), &mut pool), Start::Nothing);
        assert_eq!(p.wake_at, SimTime(8 * US));
    }

    #[test]
    fn a_frame_not_yet_ready_wakes_the_port_once() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        let f = frame(&mut pool, FrameKind::Data, 1500);
        p.hold_until_ready();
        pool.get_mut(f).ready_at = SimTime(10 * US);
        p.enqueue(f, 0, 1500);
        assert_eq!(
            p.start_next(SimTime(US), &mut pool),
            Start::WakeAt(SimTime(10 * US))
        );
        assert_eq!(
            p.start_next(SimTime(2 * US), &mut pool),
            Start::Nothing,
            "the wake-up is pending"
        );
        p.wake_at = SimTime::NEVER; // the kernel clears it when the wake-up fires
        assert_eq!(sent(p.start_next(SimTime(10 * US), &mut pool)).0, f);
    }

    #[test]
    fn a_hotspot_slows_data_only_and_zero_holds_it() {
        let (mut p, mut pool) = (port(Device::Switch(0)), FramePool::new());
        let data = frame(&mut pool, FrameKind::Data, 1500);
        let ctrl = frame(&mut pool, FrameKind::Control, 1500);
        p.set_service_fraction(0.2);
        p.enqueue(data, 0, 1500);
        p.push_ctrl(ctrl);
        let (_, done) = sent(p.start_next(SimTime::ZERO, &mut pool));
        assert_eq!(done, SimTime(12 * US / 10), "control at the link rate");
        p.finish(1500, false);
        let (_, done) = sent(p.start_next(SimTime::ZERO, &mut pool));
        assert_eq!(done, SimTime(6 * US), "data at 2 Gb/s");
        p.finish(1500, true);
        p.set_service_fraction(0.0);
        p.enqueue(frame(&mut pool, FrameKind::Data, 1500), 0, 1500);
        assert_eq!(
            p.start_next(SimTime::ZERO, &mut pool),
            Start::Nothing,
            "0 Gb/s: data waits (D16)"
        );
        p.set_service_fraction(1.0);
        assert_eq!(
            sent(p.start_next(SimTime::ZERO, &mut pool)).1,
            SimTime(12 * US / 10),
            "back at the link rate (the serialisation memo follows the rate)"
        );
    }

    #[test]
    fn a_nic_port_stamps_probes_with_their_transmission_start() {
        let (mut nic, mut sw, mut pool) = (
            port(Device::Nic(0)),
            port(Device::Switch(0)),
            FramePool::new(),
        );
        let a = frame(&mut pool, FrameKind::Probe, 64);
        let b = frame(&mut pool, FrameKind::Probe, 64);
        nic.enqueue(a, 0, 64);
        sw.enqueue(b, 0, 64);
        sent(nic.start_next(SimTime(42), &mut pool));
        sent(sw.start_next(SimTime(43), &mut pool));
        assert_eq!(pool.get(a).cm.stamp, 42);
        assert_eq!(
            pool.get(b).cm.stamp,
            0,
            "a switch forwards probes untouched"
        );
    }
}
