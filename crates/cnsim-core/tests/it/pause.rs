//! PAUSE (D12): watermarks, losslessness with enough headroom in both memory models, drops
//! counted (never lost) with too little.

use cnsim_core::scenario::{BufferModel, HotspotConfig, Ingress};

use crate::common::*;

/// Eight sources at 85 % uniform, node 1 served at 20 %: a hogging hotspot.
fn hogging(buffer: BufferModel, m: u64, xoff: u64, xon: u64) -> cnsim_core::CoreConfig {
    let n = 8;
    let mut cfg = star(n, G10, 1_000_000);
    cfg.duration_ps = 40 * MS;
    cfg.metrics.window_ps = [20 * MS, 40 * MS];
    let cap = if buffer == BufferModel::Shared {
        n as u64 * m
    } else {
        m
    };
    set_thresholds(&mut cfg, buffer, cap, xoff, xon, true);
    cfg.traffic.sources = (1..=n)
        .map(|i| source(&i.to_string(), None, 0.85))
        .collect();
    cfg.hotspots = vec![HotspotConfig {
        node: "1".into(),
        rate: 0.2,
        start_ps: 5 * MS,
        end_ps: 40 * MS,
    }];
    cfg
}

#[test]
fn partitioned_memory_with_headroom_is_lossless_and_pauses() {
    // M = 600 KB, rtt·bw = 2·1us·10G/8 + 2·1500 = 5,500 B → XOFF 594,500, XON 297,250
    let out = run(&hogging(
        BufferModel::Partitioned,
        600_000,
        594_500,
        297_250,
    ));
    let sm = &out.summary;
    assert_eq!(num(sm, "drops.frames"), 0.0, "{sm}");
    assert!(num(sm, "paused_fraction") > 0.3, "{sm}");
    assert!(num(sm, "pause_frames") > 0.0);
    // the partition never exceeds M, and the hot port serves its 2 Gb/s
    assert!((num(sm, "throughput_gbps.hot_port") - 2.0).abs() < 0.02);
    assert!(out.in_flight_counted > 0);
}

#[test]
fn shared_memory_with_headroom_is_lossless_and_gates_everything() {
    let n = 8.0;
    let xoff = n * 594_500.0;
    let out = run(&hogging(
        BufferModel::Shared,
        600_000,
        xoff as u64,
        (xoff / 2.0) as u64,
    ));
    let sm = &out.summary;
    assert_eq!(num(sm, "drops.frames"), 0.0, "{sm}");
    assert!(num(sm, "paused_fraction") > 0.3);
    // hogging: global PAUSE gates the whole switch at the hotspot
    assert!(num(sm, "throughput_gbps.aggregate") < 20.0, "{sm}");
}

#[test]
fn too_little_headroom_drops_and_counts() {
    // XOFF at the partition size: frames in flight after XOFF cannot fit
    let out = run(&hogging(BufferModel::Partitioned, 30_000, 30_000, 15_000));
    let sm = &out.summary;
    assert!(num(sm, "drops.frames") > 0.0, "{sm}");
    assert_eq!(num(sm, "drops.bytes"), num(sm, "drops.frames") * 1500.0);
}

#[test]
fn without_pause_a_full_partition_drops() {
    let out =
        run(&hogging(BufferModel::Partitioned, 150_000, 0, 0).tap(|c| c.switch.pause = false));
    assert!(num(&out.summary, "drops.frames") > 0.0);
    assert_eq!(num(&out.summary, "paused_fraction_all"), 0.0);
}

#[test]
fn without_pause_a_full_pool_drops_and_says_where() {
    // one pool of 8 × 150 KB: the hot queue takes it all, and every frame refused counts there
    let out = run(&hogging(BufferModel::Shared, 150_000, 0, 0).tap(|c| c.switch.pause = false));
    let sm = &out.summary;
    assert!(num(sm, "drops.frames") > 0.0, "{sm}");
    assert_eq!(
        num(sm, "drops.by_place.pool.frames"),
        num(sm, "drops.frames")
    );
    // the hot queue fills the pool to the last frame and no further
    assert_eq!(num(sm, "queue_bytes.hot.max"), 1_200_000.0, "{sm}");
}

trait Tap: Sized {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}
impl Tap for cnsim_core::CoreConfig {}

/// D12: a PAUSE frame goes to the head of the egress toward the upstream, ahead of the data
/// queued there. Node 1 floods node 4 (served at 10 %), so input 1 reaches XOFF; nodes 2 and 3
/// send 16 Gb/s to node 1, so the egress S1/1 that must carry the PAUSE holds hundreds of KB of
/// data. With 8 frames of headroom the run is lossless only if the PAUSE overtakes that queue.
#[test]
fn a_pause_frame_overtakes_the_data_queued_toward_the_upstream() {
    let mut cfg = star(4, G10, 1_000_000);
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [0, 20 * MS];
    cfg.metrics.hot_port = "S1/4".into();
    cfg.metrics.queues = vec!["S1/1".into()];
    let (cap, headroom) = (150_000, 8 * 1500);
    set_thresholds(
        &mut cfg,
        BufferModel::Partitioned,
        cap,
        cap - headroom,
        cap / 2,
        true,
    );
    cfg.traffic.sources = vec![
        source("1", Some("4"), 1.0),
        source("2", Some("1"), 0.8),
        source("3", Some("1"), 0.8),
    ];
    cfg.hotspots = vec![HotspotConfig {
        node: "4".into(),
        rate: 0.1,
        start_ps: 0,
        end_ps: 20 * MS,
    }];
    let out = run(&cfg);
    let sm = &out.summary;
    assert!(num(sm, "pause_frames") > 10.0);
    assert!(
        num(sm, "queue_bytes.S1/1.max") > 100_000.0,
        "data waits toward node 1: {sm}"
    );
    assert_eq!(num(sm, "drops.frames"), 0.0, "{sm}");
}

/// A star of `n` nodes at 10 Gb/s and 1 us with PAUSE on partitions of `m` bytes, XOFF at
/// `m − headroom` (XON half of it), frames of `frame` bytes, `sources` at line rate (src, dst),
/// and `hot` nodes served at 20 % for the whole 20 ms.
fn paused_star(
    n: usize,
    m: u64,
    headroom: u64,
    frame: u32,
    sources: &[(&str, &str)],
    hot: &[&str],
) -> serde_json::Value {
    let mut cfg = star(n, G10, 1_000_000);
    cfg.duration_ps = 20 * MS;
    cfg.metrics.window_ps = [0, 20 * MS];
    cfg.metrics.hot_port = "S1/3".into();
    cfg.traffic.frame_size = frame;
    (cfg.nic.egress_buffer, cfg.nic.egress_xoff) = (frame as u64, frame as u64);
    let xoff = m - headroom;
    set_thresholds(&mut cfg, BufferModel::Partitioned, m, xoff, xoff / 2, true);
    cfg.traffic.sources = sources
        .iter()
        .map(|(a, b)| source(a, Some(b), 1.0))
        .collect();
    cfg.hotspots = hot
        .iter()
        .map(|n| HotspotConfig {
            node: (*n).into(),
            rate: 0.2,
            start_ps: 0,
            end_ps: 20 * MS,
        })
        .collect();
    run(&cfg).summary
}

/// Drops, all at a partition, and PAUSE at work.
fn partition_drops(sm: &serde_json::Value) -> f64 {
    assert!(num(sm, "pause_frames") > 10.0, "{sm}");
    let drops = num(sm, "drops.frames");
    if drops > 0.0 {
        assert_eq!(num(sm, "drops.by_place.partition.frames"), drops, "{sm}");
    }
    drops
}

/// D12 with D16: a PAUSE frame starts when the frame in progress on its egress ends, and a hot
/// node's egress serialises that frame at f·C. Node 2 floods node 3 (served at 20 %), so input 2
/// reaches XOFF; node 2 is itself served at 20 % (node 1 keeps its egress busy), so its PAUSE can
/// wait 6 us, not 1.2, behind a frame. D12's rtt·bw + 2 frames (5,500 B at d = 1 us) then leaves
/// too little headroom (27 frames dropped in 20 ms). The bound of docs/decisions.md ("PAUSE
/// headroom"), a frame at f·C and the PAUSE frame more (7,564 B), makes the same run lossless,
/// and so does a node 2 served at line rate.
#[test]
fn a_pause_behind_a_frame_at_the_hotspot_rate_needs_headroom_for_it() {
    let flows = [("1", "2"), ("2", "3")];
    let d12 = 5_500;
    assert!(partition_drops(&paused_star(3, 600_000, d12, 1500, &flows, &["3", "2"])) > 0.0);
    let bound = d12 + 1500 * 5 + 64;
    for sm in [
        paused_star(3, 600_000, bound, 1500, &flows, &["3", "2"]),
        paused_star(3, 600_000, d12, 1500, &flows, &["3"]),
    ] {
        assert_eq!(partition_drops(&sm), 0.0);
    }
}

/// D12's two frames cover the frame in progress upstream and one on the PAUSE's egress, not the
/// frame that crossed XOFF: it is admitted whole and can overshoot XOFF by almost a frame. With
/// 1500 B frames and S0's 600 KB this happens to fit (frames fill a partition in multiples of
/// 1500 B: XOFF 594,500 is crossed at 595,500, and three more frames reach 600,000 exactly). With
/// 9000 B frames in 60 KB it does not: XOFF 39,500 is crossed at 45,000, and two more frames
/// overflow. A frame and the PAUSE frame more (docs/decisions.md, "PAUSE headroom") suffice.
#[test]
fn the_frame_that_crosses_xoff_needs_headroom_too() {
    // nodes 1 and 2 flood node 3; node 4 keeps node 2's egress busy, so a PAUSE to node 2 waits
    let flows = [("1", "3"), ("2", "3"), ("4", "2")];
    let d12 = 2_500 + 2 * 9_000;
    assert!(partition_drops(&paused_star(4, 60_000, d12, 9000, &flows, &[])) > 0.0);
    let bound = d12 + 9_000 + 64;
    assert_eq!(
        partition_drops(&paused_star(4, 60_000, bound, 9000, &flows, &[])),
        0.0
    );
}

/// A source whose NIC is paused to the end of the run keeps generating, though its NIC is no
/// longer serviced (generators are advanced when their NIC is): every frame generated before
/// the end counts — in `generated`, and as a source drop where its VOQ is full — not only those
/// pulled while the NIC was still serviced (contract: generated = delivered + drops +
/// source_drops + in flight). Node 1 floods node 3, served at 0: its 30 KB partition is paused
/// at XOFF 24,500 B (crossed at 25,500) and takes the two frames in flight (28,500 B, 19
/// frames); its NIC holds one frame in the output buffer and 10 in the VOQ (15 KB, 30 KB over
/// N − 1 = 2), and refuses the rest.
#[test]
fn a_source_paused_to_the_end_counts_every_frame_it_generated() {
    let mut cfg = star(3, G10, 1_000_000);
    cfg.duration_ps = 2 * MS;
    cfg.metrics.window_ps = [0, 2 * MS];
    cfg.metrics.hot_port = "S1/3".into();
    set_thresholds(
        &mut cfg,
        BufferModel::Partitioned,
        30_000,
        24_500,
        12_250,
        true,
    );
    cfg.nic.ingress = Ingress::PerVoq;
    cfg.nic.ingress_size = 30_000;
    cfg.traffic.sources = vec![source("1", Some("3"), 1.0)];
    cfg.hotspots = vec![HotspotConfig {
        node: "3".into(),
        rate: 0.0,
        start_ps: 0,
        end_ps: 2 * MS,
    }];
    let out = run(&cfg);
    let sm = &out.summary;
    // a frame in every 1.2 us slot of [0, 2 ms)
    assert_eq!(num(sm, "conservation.generated"), 1667.0, "{sm}");
    assert_eq!(out.in_flight_counted, 19 + 1 + 10, "{sm}");
    assert_eq!(num(sm, "source_drops.frames"), 1667.0 - 30.0, "{sm}");
}
