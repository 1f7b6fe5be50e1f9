//! Store-and-forward switch (algorithms.md §1.1, §2.2, D12, D14): output queues that are logical
//! FIFOs over the switch memory, three buffer models, an optional OQ limit, 802.3x PAUSE with
//! XOFF/XON watermarks, and a congestion point on every egress port when a scheme is active.
//!
//! With PFC (802.1Qbb, §2.1) each priority class has its own occupancy per input (partitioned)
//! or in the pool (shared), checked against the class's own watermarks (the thresholds are then
//! per class: the front end gives each class an equal share of the memory with its own headroom,
//! §2.3); admission still counts the whole partition or pool.
//!
//! Pipeline (D14): a frame is received at its last bit; admission is decided then (a refused frame
//! is dropped and counted, not sampled); the partition, pool and output-queue counters rise; the CP
//! samples with q including the frame; the XOFF watermark is checked. The frame becomes eligible at
//! its output `processing_delay` later. Every counter drops when its last bit leaves the output,
//! and XON is checked at that instant.
//!
//! The switch owns its memory counters and PAUSE state and decides admission and watermarks
//! alone; it says which inputs to pause or resume ([`PauseSignal`]) and the simulator's kernel
//! sends the frames.

use crate::metrics::recorder::DropPlace;
use crate::scenario::{BufferModel, SwitchConfig, Thresholds};
use crate::time::SimTime;

#[derive(Debug)]
pub struct Switch {
    /// Egress ports (global indices) by local port index; input `i` arrives on the link of port `i`.
    pub ports: Vec<u32>,
    /// Bytes held per input partition (partitioned model) — kept in every model.
    pub occ_in: Vec<u64>,
    /// Bytes held in the whole switch memory.
    pub pool: u64,
    /// Priority classes (1 without PFC).
    pub classes: usize,
    /// Bytes held per input and class (index `input·classes + class`), and per class in the pool.
    pub occ_class: Vec<u64>,
    pub pool_class: Vec<u64>,
    /// (input, class) pairs currently paused by this switch (index `input·classes + class`; in
    /// the shared model all inputs of a class together).
    pub in_paused: Vec<bool>,
    pub limits: Thresholds,
    /// A legacy (non-CM) switch: CM frames are data to it and it generates none (D6).
    pub legacy: bool,
}

/// Where a control message starts its way.
#[derive(Clone, Copy, Debug)]
pub enum Origin {
    Switch(u32),
    Nic(u32),
}

/// The switch parameters common to every switch of a run.
#[derive(Clone, Copy, Debug)]
pub struct SwitchParams {
    pub buffer: BufferModel,
    pub oq_limit: Option<u64>,
    pub processing_delay: SimTime,
    pub pause: bool,
    /// PAUSE frames name a priority class (802.1Qbb) instead of stopping everything (802.3x).
    pub pfc: bool,
}

impl SwitchParams {
    pub fn new(cfg: &SwitchConfig) -> Self {
        SwitchParams {
            buffer: cfg.buffer,
            oq_limit: cfg.oq_limit,
            processing_delay: SimTime(cfg.processing_delay_ps),
            pause: cfg.pause,
            pfc: cfg.pfc_classes > 0,
        }
    }
}

/// Which inputs a watermark crossing pauses or resumes (local input indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseSignal {
    /// No watermark crossed.
    None,
    /// One input's class (partitioned memory: per-input watermarks).
    Input(u32, u8),
    /// Every input's class, in port order (shared memory: one pool, global watermarks).
    All(u8),
}

impl Switch {
    /// A switch with these egress ports (one input per port), limits and priority classes:
    /// memory empty, nothing paused.
    pub fn new(ports: Vec<u32>, limits: Thresholds, legacy: bool, classes: u8) -> Self {
        let n = ports.len();
        let k = classes.max(1) as usize;
        Switch {
            ports,
            occ_in: vec![0; n],
            pool: 0,
            classes: k,
            occ_class: vec![0; n * k],
            pool_class: vec![0; k],
            in_paused: vec![false; n * k],
            limits,
            legacy,
        }
    }

    /// Would a buffered frame of `size` bytes arriving on `in_local` for an output queue holding
    /// `q_out` bytes fit (the buffer model's capacity, then the OQ limit)? The kernel asks
    /// [`Switch::refusal`], which also says why not; the tests ask this.
    #[cfg(test)]
    pub fn admits(&self, params: &SwitchParams, in_local: u32, size: u64, q_out: u64) -> bool {
        self.refusal(params, in_local, size, q_out).is_none()
    }

    /// Why a frame of `size` bytes from input `in_local` into an output queue of `q_out` bytes
    /// would be dropped (its memory is full, or the output-queue limit), if it would.
    pub fn refusal(
        &self,
        params: &SwitchParams,
        in_local: u32,
        size: u64,
        q_out: u64,
    ) -> Option<DropPlace> {
        let (fits, place) = match params.buffer {
            BufferModel::Partitioned => (
                self.occ_in[in_local as usize] + size <= self.limits.capacity,
                DropPlace::Partition,
            ),
            BufferModel::Shared => (self.pool + size <= self.limits.capacity, DropPlace::Pool),
            BufferModel::Egress => (q_out + size <= self.limits.capacity, DropPlace::Egress),
        };
        if !fits {
            return Some(place);
        }
        if params.oq_limit.is_some_and(|limit| q_out + size > limit) {
            return Some(DropPlace::OqLimit);
        }
        None
    }

    /// Charge an admitted frame of priority `class` to input `in_local` and the memory; returns
    /// the inputs to pause if the frame makes its class's occupancy reach XOFF (D12).
    #[inline]
    pub fn admit(
        &mut self,
        params: &SwitchParams,
        in_local: u32,
        class: u8,
        size: u64,
    ) -> PauseSignal {
        let (i, c) = (in_local as usize, class as usize);
        let ic = i * self.classes + c;
        self.occ_in[i] += size;
        self.pool += size;
        self.occ_class[ic] += size;
        self.pool_class[c] += size;
        if !params.pause {
            return PauseSignal::None;
        }
        match params.buffer {
            BufferModel::Partitioned => {
                if !self.in_paused[ic] && self.occ_class[ic] >= self.limits.xoff {
                    self.in_paused[ic] = true;
                    return PauseSignal::Input(in_local, class);
                }
            }
            BufferModel::Shared => {
                if !self.in_paused[c] && self.pool_class[c] >= self.limits.xoff {
                    self.set_class_paused(c, true);
                    return PauseSignal::All(class);
                }
            }
            BufferModel::Egress => {}
        }
        PauseSignal::None
    }

    /// A frame of `class` charged to `in_local` has fully left: release its memory; returns the
    /// inputs to resume if its class's occupancy fell to XON (D12, D14).
    #[inline]
    pub fn depart(
        &mut self,
        params: &SwitchParams,
        in_local: u32,
        class: u8,
        size: u64,
    ) -> PauseSignal {
        let (i, c) = (in_local as usize, class as usize);
        let ic = i * self.classes + c;
        self.occ_in[i] -= size;
        self.pool -= size;
        self.occ_class[ic] -= size;
        self.pool_class[c] -= size;
        if !params.pause {
            return PauseSignal::None;
        }
        match params.buffer {
            BufferModel::Partitioned => {
                if self.in_paused[ic] && self.occ_class[ic] <= self.limits.xon {
                    self.in_paused[ic] = false;
                    return PauseSignal::Input(in_local, class);
                }
            }
            BufferModel::Shared => {
                if self.in_paused[c] && self.pool_class[c] <= self.limits.xon {
                    self.set_class_paused(c, false);
                    return PauseSignal::All(class);
                }
            }
            BufferModel::Egress => {}
        }
        PauseSignal::None
    }

    /// Shared memory: every input's flag of class `c`.
    fn set_class_paused(&mut self, c: usize, paused: bool) {
        for flag in self.in_paused.iter_mut().skip(c).step_by(self.classes) {
            *flag = paused;
        }
    }

    /// Whether input `in_local` is paused for any class (the tests ask; the kernel acts on the
    /// signals).
    #[cfg(test)]
    pub fn input_paused(&self, in_local: u32) -> bool {
        let k = self.classes;
        self.in_paused[in_local as usize * k..(in_local as usize + 1) * k]
            .iter()
            .any(|&x| x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(buffer: BufferModel, pause: bool) -> SwitchParams {
        SwitchParams {
            buffer,
            oq_limit: None,
            processing_delay: SimTime::ZERO,
            pause,
            pfc: false,
        }
    }

    /// Three inputs; 150 KB per input (or a 450 KB pool), XOFF at 100 KB, XON at 50 KB.
    fn switch() -> Switch {
        let limits = Thresholds {
            capacity: 150_000,
            xoff: 100_000,
            xon: 50_000,
        };
        Switch::new(vec![7, 8, 9], limits, false, 1)
    }

    #[test]
    fn partitioned_admission_counts_each_input_against_its_own_partition() {
        let p = params(BufferModel::Partitioned, false);
        let mut sw = switch();
        for _ in 0..100 {
            assert!(sw.admits(&p, 0, 1500, 0));
            sw.admit(&p, 0, 0, 1500);
        }
        assert_eq!((sw.occ_in[0], sw.pool), (150_000, 150_000));
        assert!(!sw.admits(&p, 0, 64, 0), "input 0's partition is full");
        assert!(
            sw.admits(&p, 1, 1500, 150_000),
            "input 1 has its own 150 KB"
        );
        sw.depart(&p, 0, 0, 1500);
        assert!(sw.admits(&p, 0, 1500, 0));
    }

    #[test]
    fn shared_and_egress_models_and_the_oq_limit() {
        let mut shared = switch();
        shared.limits.capacity = 3_000;
        let p = params(BufferModel::Shared, false);
        shared.admit(&p, 0, 0, 1500);
        shared.admit(&p, 1, 0, 1500);
        assert!(!shared.admits(&p, 2, 64, 0), "one pool for every input");
        let e = params(BufferModel::Egress, false);
        let sw = switch();
        assert!(
            sw.admits(&e, 0, 1500, 148_500) && !sw.admits(&e, 0, 1501, 148_500),
            "per-output threshold"
        );
        let mut limited = params(BufferModel::Partitioned, false);
        limited.oq_limit = Some(3_000);
        assert!(sw.admits(&limited, 0, 1500, 1_500) && !sw.admits(&limited, 0, 1500, 1_501));
    }

    /// The watermarks are inclusive (D12): XOFF when occupancy reaches XOFF exactly, XON when it
    /// falls to XON exactly — an off-by-one (`>` for `>=`, `<` for `<=`) changes the instants.
    #[test]
    fn watermarks_are_inclusive() {
        for buffer in [BufferModel::Partitioned, BufferModel::Shared] {
            let p = params(buffer, true);
            let mut sw = switch();
            sw.limits.capacity = 450_000;
            for i in 0..99 {
                assert_eq!(
                    sw.admit(&p, 0, 0, 1000),
                    PauseSignal::None,
                    "{buffer:?}: frame {i}"
                );
            }
            let xoff = sw.admit(&p, 0, 0, 1000); // occupancy exactly 100 000 B = XOFF
            assert_ne!(xoff, PauseSignal::None, "{buffer:?}");
            for i in 0..49 {
                assert_eq!(
                    sw.depart(&p, 0, 0, 1000),
                    PauseSignal::None,
                    "{buffer:?}: departure {i}"
                );
            }
            assert_eq!(sw.occ_in[0], 51_000);
            let xon = sw.depart(&p, 0, 0, 1000); // occupancy exactly 50 000 B = XON
            assert_eq!(
                xon, xoff,
                "{buffer:?}: resume exactly the inputs that were paused"
            );
        }
    }

    #[test]
    fn partitioned_pause_has_hysteresis_per_input() {
        let p = params(BufferModel::Partitioned, true);
        let mut sw = switch();
        let mut signals = vec![];
        for _ in 0..67 {
            signals.push(sw.admit(&p, 1, 0, 1500)); // 67 × 1500 = 100.5 KB
        }
        // XOFF exactly once, at the frame that makes the partition reach 100 KB (the 67th)
        assert_eq!(
            signals.iter().filter(|s| **s != PauseSignal::None).count(),
            1
        );
        assert_eq!(signals[66], PauseSignal::Input(1, 0));
        assert_eq!(sw.in_paused, vec![false, true, false]);
        assert_eq!(
            sw.admit(&p, 0, 0, 1500),
            PauseSignal::None,
            "another input is not affected"
        );
        // no XON until the partition falls to 50 KB, and then once
        let mut resumed = vec![];
        for _ in 0..67 {
            resumed.push(sw.depart(&p, 1, 0, 1500));
        }
        let at = resumed
            .iter()
            .position(|s| *s == PauseSignal::Input(1, 0))
            .expect("XON");
        let occupancy_at_xon = 100_500 - 1500 * (at as u64 + 1);
        assert!(
            occupancy_at_xon <= 50_000 && occupancy_at_xon + 1500 > 50_000,
            "XON at the first departure to <= XON"
        );
        assert_eq!(sw.occ_in[1], 0);
        assert_eq!(
            resumed.iter().filter(|s| **s != PauseSignal::None).count(),
            1
        );
    }

    #[test]
    fn shared_pause_stops_and_resumes_every_input_together() {
        let p = params(BufferModel::Shared, true);
        let mut sw = switch();
        sw.limits.capacity = 450_000;
        let mut first = None;
        for i in 0..100u32 {
            let s = sw.admit(&p, i % 3, 0, 1500);
            if s != PauseSignal::None && first.is_none() {
                first = Some((i, s));
            }
        }
        assert_eq!(
            first,
            Some((66, PauseSignal::All(0))),
            "the pool reaches 100 KB at the 67th frame"
        );
        assert_eq!(sw.in_paused, vec![true, true, true]);
        let mut out = PauseSignal::None;
        let mut i = 0u32;
        while out == PauseSignal::None {
            out = sw.depart(&p, i % 3, 0, 1500); // departures from every input, as they came
            i += 1;
        }
        assert_eq!(out, PauseSignal::All(0));
        assert!(sw.pool <= 50_000);
        assert_eq!(sw.in_paused, vec![false, false, false]);
    }

    /// PFC: each class of an input has its own occupancy against the (per-class) watermarks,
    /// while admission still counts the whole partition; shared memory pauses a class on every
    /// input at once.
    #[test]
    fn pfc_watermarks_are_per_class() {
        let p = params(BufferModel::Partitioned, true);
        let mut sw = Switch::new(
            vec![7, 8, 9],
            Thresholds {
                capacity: 150_000,
                xoff: 60_000,
                xon: 30_000,
            },
            false,
            2,
        );
        for _ in 0..39 {
            assert_eq!(sw.admit(&p, 0, 1, 1500), PauseSignal::None);
        }
        assert_eq!(
            sw.admit(&p, 0, 1, 1500),
            PauseSignal::Input(0, 1),
            "class 1 reaches 60 KB"
        );
        for _ in 0..39 {
            assert_eq!(
                sw.admit(&p, 0, 0, 1500),
                PauseSignal::None,
                "class 0 counts alone"
            );
        }
        assert_eq!(sw.occ_in[0], 118_500);
        assert!(
            sw.admits(&p, 0, 1500, 0) && !sw.admits(&p, 0, 31_501, 0),
            "admission: the whole partition"
        );
        assert!(sw.input_paused(0) && !sw.input_paused(1));
        let mut resumed = PauseSignal::None;
        for _ in 0..20 {
            resumed = sw.depart(&p, 0, 1, 1500);
        }
        assert_eq!(resumed, PauseSignal::Input(0, 1), "XON at 30 KB of class 1");
        let s = params(BufferModel::Shared, true);
        let mut shared = Switch::new(
            vec![7, 8, 9],
            Thresholds {
                capacity: 450_000,
                xoff: 3_000,
                xon: 0,
            },
            false,
            2,
        );
        assert_eq!(shared.admit(&s, 2, 1, 1500), PauseSignal::None);
        assert_eq!(shared.admit(&s, 0, 1, 1500), PauseSignal::All(1));
        assert_eq!(
            shared.in_paused,
            vec![false, true, false, true, false, true]
        );
        assert_eq!(shared.admit(&s, 0, 0, 1500), PauseSignal::None);
    }

    #[test]
    fn without_pause_no_watermark_signals() {
        let p = params(BufferModel::Partitioned, false);
        let mut sw = switch();
        for _ in 0..100 {
            assert_eq!(sw.admit(&p, 0, 0, 1500), PauseSignal::None);
        }
        for _ in 0..100 {
            assert_eq!(sw.depart(&p, 0, 0, 1500), PauseSignal::None);
        }
        assert_eq!((sw.occ_in[0], sw.pool), (0, 0));
    }
}
