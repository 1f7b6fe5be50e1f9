//! The end of a run: close every record at the last instant, then assemble the typed
//! [`Summary`] (window means, whole-run counts, conservation) and the binned series
//! (spec/contract.md "summary.json" and "series").

use std::collections::BTreeMap;

use crate::metrics::recorder::{DropPlace, CM_KINDS};
use crate::metrics::summary::{
    CmCount, CmStats, Conservation, Count, Drops, EngineStats, Latency, QueueStats, Summary,
    Throughput, WindowStats,
};
use crate::metrics::{gbps_bins, Bins, Counter, Series, Window};
use crate::time::{SimTime, PS_PER_S};

use super::{RunResult, Simulator};

impl Count {
    /// Frames and bytes of two counters, read the same way (window or whole run).
    fn of(frames: &Counter, bytes: &Counter, read: impl Fn(&Counter) -> u64) -> Count {
        Count {
            frames: read(frames),
            bytes: read(bytes),
        }
    }
}

impl super::Stats {
    /// The frame accounting: generated = delivered + dropped + source_dropped + in flight.
    fn conservation(&self, in_flight_counted: u64) -> Conservation {
        Conservation {
            generated: self.generated,
            delivered: self.delivered,
            dropped: self.dropped,
            source_dropped: self.source_dropped,
            in_flight: self.generated - self.delivered - self.dropped - self.source_dropped,
            in_flight_counted,
        }
    }
}

/// Bytes over `len_s` seconds as a rate in units of `unit` bit/s (1e9: Gb/s, 1e6: Mb/s); 0
/// for an empty window.
fn rate(bytes: u64, len_s: f64, unit: f64) -> f64 {
    if len_s > 0.0 {
        bytes as f64 * 8.0 / len_s / unit
    } else {
        0.0
    }
}

/// Pause and blocking shares of the window.
struct PauseShares {
    paused: f64,
    paused_all: f64,
    blocked: f64,
}

/// What the hot port did in the window.
struct HotPort {
    gbps: f64,
    underrun: f64,
    utilisation: f64,
}

impl Simulator {
    /// Close every record at the end of the run and build the summary and the series.
    pub fn finish(mut self) -> RunResult {
        let end = self.now;
        let in_flight_counted = self.in_flight_counted();
        let (window, bins) = self.close_records(end);
        let summary = self.summary(end, &window, &bins, in_flight_counted);
        let series = self.series(&bins);
        RunResult {
            summary,
            series,
            bin_s: bins.width as f64 / PS_PER_S as f64,
            bins: bins.count(),
        }
    }

    /// End the window and the bins with the run (a run to completion may stop before its cap),
    /// and close the pause and blocking intervals still open at `end`.
    fn close_records(&mut self, end: SimTime) -> (Window, Bins) {
        self.rec.window.t1 = self.rec.window.t1.min(end.0);
        self.rec.window.t0 = self.rec.window.t0.min(self.rec.window.t1);
        let window = self.rec.window;
        let bins = Bins::new(self.rec.bins.width, end.0.max(1));
        self.rec.fit(bins.count());
        for i in 0..self.ports.len() {
            if self.ports[i].paused != 0 {
                let since = self.ports[i].paused_since;
                let mut record = self.ports[i].pause_record;
                self.rec.add_paused(&mut record, since, end);
                self.ports[i].pause_record = record;
            }
        }
        for since in self.rec.blocked_since.iter_mut() {
            if let Some(s) = since.take() {
                self.rec.blocked_window_ps += window.overlap(s, end);
            }
        }
        (window, bins)
    }

    fn summary(
        &mut self,
        end: SimTime,
        window: &Window,
        bins: &Bins,
        in_flight_counted: u64,
    ) -> Summary {
        let len_s = window.len_s();
        let gbps = |bytes: u64| rate(bytes, len_s, 1e9);
        let hot = self.hot_port_stats(window, gbps);
        let queue_bytes = self.queue_stats(end, window, bins);
        let shares = self.pause_shares(window);
        let throughput_gbps = self.throughput(gbps, hot.gbps);
        let windows = self.named_windows(end, bins);
        let cm = self.cm_stats(len_s);
        let drops = self.drops();
        let rec = &self.rec;
        let delivered_window = rec.aggregate.window / self.frame_size as u64;
        let latency_us = if delivered_window > 0 {
            rec.latency_window_ps as f64 / delivered_window as f64 / 1e6
        } else {
            0.0
        };
        Summary {
            duration_s: end.as_secs_f64(),
            window_s: [
                window.t0 as f64 / PS_PER_S as f64,
                window.t1 as f64 / PS_PER_S as f64,
            ],
            throughput_gbps,
            queue_bytes,
            drops,
            drops_window: Count::of(&rec.drop_frames, &rec.drop_bytes, |c| c.window),
            source_drops: Count::of(&rec.source_drop_frames, &rec.source_drop_bytes, |c| c.total),
            source_blocked_fraction: shares.blocked,
            paused_fraction: shares.paused,
            paused_fraction_all: shares.paused_all,
            pause_frames: rec.pause_frames,
            cm,
            fct_ms: self
                .gens
                .iter()
                .any(|g| g.makes_flows())
                .then(|| self.flows.summary()),
            latency_us: Latency { mean: latency_us },
            underrun: hot.underrun,
            bottleneck_utilisation: hot.utilisation,
            engine: EngineStats {
                events: self.events,
            },
            conservation: self.stats.conservation(in_flight_counted),
            deadlock: self.deadlock.clone(),
            windows,
        }
    }

    /// CM frames in the window, in all and by kind and origin.
    fn cm_stats(&self, len_s: f64) -> CmStats {
        let rec = &self.rec;
        let cm_count = |(frames, bytes): (u64, u64)| CmCount {
            frames,
            bytes,
            mbps: rate(bytes, len_s, 1e6),
        };
        let by_kind = CM_KINDS
            .iter()
            .zip(rec.cm_by_kind)
            .filter(|(_, c)| c.0 > 0)
            .map(|(k, c)| (k.to_string(), cm_count(c)))
            .collect();
        let n_ports = self.ports.len();
        let by_cp = rec
            .cm_by_origin
            .iter()
            .enumerate()
            .filter(|(_, c)| c.0 > 0)
            .map(|(i, &c)| {
                let name = if i < n_ports {
                    self.topo.port_name(i as u32)
                } else {
                    format!("node:{}", self.topo.nodes[i - n_ports])
                };
                (name, cm_count(c))
            })
            .collect();
        CmStats {
            total: cm_count((rec.cm_frames.window, rec.cm_bytes.window)),
            by_kind,
            by_cp,
        }
    }

    /// Whole-run drops, in all and by place.
    fn drops(&self) -> Drops {
        let rec = &self.rec;
        let mut by_place: BTreeMap<String, Count> = DropPlace::ALL
            .iter()
            .zip(rec.drops_by_place)
            .filter(|(_, c)| c.0 > 0)
            .map(|(p, (frames, bytes))| (p.name().to_string(), Count { frames, bytes }))
            .collect();
        if rec.source_drop_frames.total > 0 {
            by_place.insert(
                "source".into(),
                Count::of(&rec.source_drop_frames, &rec.source_drop_bytes, |c| c.total),
            );
        }
        Drops {
            frames: rec.drop_frames.total,
            bytes: rec.drop_bytes.total,
            control: rec.control_drops,
            by_place,
        }
    }

    /// Window throughput: aggregate, hot port, per node and per recorded flow.
    fn throughput(&self, gbps: impl Fn(u64) -> f64, hot_port: f64) -> Throughput {
        let rec = &self.rec;
        let per = |names: &[String], counters: &[Counter]| {
            names
                .iter()
                .zip(counters)
                .map(|(n, c)| (n.clone(), gbps(c.window)))
                .collect()
        };
        Throughput {
            aggregate: gbps(rec.aggregate.window),
            hot_port,
            per_node: per(&self.topo.nodes, &rec.nodes),
            per_flow: per(&rec.flow_names, &rec.flows),
            per_source_sent: self.per_source(&rec.sent, |c| gbps(c.window)),
        }
    }

    /// A figure per node that has traffic generators (`per_source_sent`).
    fn per_source(
        &self,
        counters: &[Counter],
        f: impl Fn(&Counter) -> f64,
    ) -> BTreeMap<String, f64> {
        self.nics
            .iter()
            .filter(|n| !n.gens.is_empty())
            .map(|n| {
                (
                    self.topo.nodes[n.node as usize].clone(),
                    f(&counters[n.node as usize]),
                )
            })
            .collect()
    }

    /// The named windows (`windows.*`): every figure from the binned records over the
    /// window's whole bins, so exact (its edges were put on bin edges when the run was built).
    fn named_windows(&self, end: SimTime, bins: &Bins) -> BTreeMap<String, WindowStats> {
        let rec = &self.rec;
        let mut out = BTreeMap::new();
        for (i, (name, w)) in rec.named.iter().enumerate() {
            let t1 = w.t1.min(end.0);
            let t0 = w.t0.min(t1);
            // bins [b0, b1): the edges are bin edges, except a run's end inside its last bin
            let b0 = ((t0 / bins.width) as usize).min(bins.count());
            let b1 = (t1.div_ceil(bins.width) as usize).min(bins.count()).max(b0);
            let span_ps = t1 - t0;
            let len_s = span_ps as f64 / PS_PER_S as f64;
            let sum = |c: &Counter| c.bins[b0..b1].iter().sum::<u64>();
            let gbps = |c: &Counter| rate(sum(c), len_s, 1e9);
            let per = |names: &[String], counters: &[Counter]| {
                names
                    .iter()
                    .zip(counters)
                    .map(|(n, c)| (n.clone(), gbps(c)))
                    .collect()
            };
            let hot_port = match rec.hot_port {
                Some(h) => {
                    gbps(&rec.ports[self.ports[h as usize].tput_rec().expect("recorded") as usize])
                }
                None => gbps(&rec.hot_tput),
            };
            let queue_bytes = self.window_queues(b0, b1, span_ps);
            let (paused, paused_all) = self.window_pause(i, span_ps);
            let cm_bytes = sum(&rec.cm_bytes);
            out.insert(
                name.clone(),
                WindowStats {
                    window_s: [t0 as f64 / PS_PER_S as f64, t1 as f64 / PS_PER_S as f64],
                    throughput_gbps: Throughput {
                        aggregate: gbps(&rec.aggregate),
                        hot_port,
                        per_node: per(&self.topo.nodes, &rec.nodes),
                        per_flow: per(&rec.flow_names, &rec.flows),
                        per_source_sent: self.per_source(&rec.sent, gbps),
                    },
                    queue_bytes,
                    drops: Count {
                        frames: sum(&rec.drop_frames),
                        bytes: sum(&rec.drop_bytes),
                    },
                    source_drops: Count {
                        frames: sum(&rec.source_drop_frames),
                        bytes: sum(&rec.source_drop_bytes),
                    },
                    paused_fraction: paused,
                    paused_fraction_all: paused_all,
                    cm: CmCount {
                        frames: sum(&rec.cm_frames),
                        bytes: cm_bytes,
                        mbps: rate(cm_bytes, len_s, 1e6),
                    },
                },
            );
        }
        out
    }

    /// Queue statistics over bins [b0, b1) spanning `span_ps`, by name plus `hot`.
    fn window_queues(&self, b0: usize, b1: usize, span_ps: u64) -> BTreeMap<String, QueueStats> {
        let rec = &self.rec;
        let stats = |(mean, std, max): (f64, f64, f64)| QueueStats { mean, std, max };
        let mut out = BTreeMap::new();
        let hot_q = rec
            .hot_port
            .and_then(|h| self.ports[h as usize].queue_rec())
            .map(|r| r as usize);
        if rec.hot_port.is_none() {
            out.insert(
                "hot".into(),
                stats(rec.hot_queue.bin_range_stats(b0, b1, span_ps)),
            );
        }
        for (qi, q) in rec.queues.iter().enumerate() {
            let st = stats(q.bin_range_stats(b0, b1, span_ps));
            if Some(qi) == hot_q {
                out.insert("hot".into(), st);
            }
            out.insert(q.name.clone(), st);
        }
        out
    }

    /// (paused_fraction, paused_fraction_all) of named window `i`, which spans `span_ps`.
    fn window_pause(&self, i: usize, span_ps: u64) -> (f64, f64) {
        if span_ps == 0 {
            return (0.0, 0.0);
        }
        let span = span_ps as f64;
        let touched: Vec<f64> = self
            .ports
            .iter()
            .filter(|p| p.pause_record.named_paused & (1 << i) != 0)
            .map(|p| p.pause_record.named_ps[i] as f64)
            .collect();
        let all: f64 = self
            .ports
            .iter()
            .map(|p| p.pause_record.named_ps[i] as f64)
            .sum();
        let paused = if touched.is_empty() {
            0.0
        } else {
            touched.iter().sum::<f64>() / touched.len() as f64 / span
        };
        (paused, all / self.ports.len().max(1) as f64 / span)
    }

    /// Throughput of the hot port (fixed, or following the hotspot), its underrun and its
    /// utilisation of the capacity the hotspot schedule leaves it.
    fn hot_port_stats(&self, window: &Window, gbps: impl Fn(u64) -> f64) -> HotPort {
        let rec = &self.rec;
        let hot = rec.hot_port;
        let hot_gbps = match hot {
            Some(h) => gbps(
                rec.ports[self.ports[h as usize]
                    .tput_rec()
                    .expect("the hot port is recorded") as usize]
                    .window,
            ),
            None => gbps(rec.hot_tput.window),
        };
        let line = match hot {
            Some(h) => self.ports[h as usize].spec.rate.as_f64(),
            None => self.ports[self.hotspots[0].port as usize]
                .spec
                .rate
                .as_f64(),
        };
        let pieces = self.capacity_pieces(hot, window);
        let cap_bits: f64 = pieces
            .iter()
            .map(|(a, b, f)| (b - a) as f64 / PS_PER_S as f64 * f * line)
            .sum();
        let serving_ps: u64 = pieces
            .iter()
            .filter(|p| p.2 > 0.0)
            .map(|(a, b, _)| b - a)
            .sum();
        let window_ps = (window.t1 - window.t0) as f64;
        HotPort {
            gbps: hot_gbps,
            underrun: if window_ps == 0.0 {
                0.0
            } else {
                (serving_ps.saturating_sub(rec.hot_busy_window)) as f64 / window_ps
            },
            utilisation: if cap_bits > 0.0 {
                hot_gbps * 1e9 * window.len_s() / cap_bits
            } else {
                0.0
            },
        }
    }

    /// Close the queue trackers and the rate samplers; the hot queue is reported as `hot` (and
    /// under its port name when it is a fixed, recorded port).
    fn queue_stats(
        &mut self,
        end: SimTime,
        window: &Window,
        bins: &Bins,
    ) -> BTreeMap<String, QueueStats> {
        let stats = |(mean, std, max): (f64, f64, f64)| QueueStats { mean, std, max };
        let hot = self.rec.hot_port;
        let hot_q = hot.map(|h| {
            self.ports[h as usize]
                .queue_rec()
                .expect("the hot queue is recorded") as usize
        });
        let rec = &mut self.rec;
        let mut out = BTreeMap::new();
        if hot.is_none() {
            out.insert("hot".into(), stats(rec.hot_queue.finish(bins, window, end)));
        }
        for (i, q) in rec.queues.iter_mut().enumerate() {
            let s = stats(q.finish(bins, window, end));
            if Some(i) == hot_q {
                out.insert("hot".into(), s);
            }
            out.insert(q.name.clone(), s);
        }
        for r in rec.rates.iter_mut() {
            r.finish(bins, end);
        }
        out
    }

    fn pause_shares(&self, window: &Window) -> PauseShares {
        let window_ps = (window.t1 - window.t0) as f64;
        if window_ps == 0.0 {
            return PauseShares {
                paused: 0.0,
                paused_all: 0.0,
                blocked: 0.0,
            };
        }
        let paused: Vec<f64> = self
            .ports
            .iter()
            .filter(|p| p.pause_record.paused_in_window)
            .map(|p| p.pause_record.window_ps as f64)
            .collect();
        let n_ports = self.ports.len() as f64;
        let sources = self
            .nics
            .iter()
            .filter(|n| !n.gens.is_empty())
            .count()
            .max(1) as f64;
        PauseShares {
            paused: if paused.is_empty() {
                0.0
            } else {
                paused.iter().sum::<f64>() / paused.len() as f64 / window_ps
            },
            paused_all: self
                .ports
                .iter()
                .map(|p| p.pause_record.window_ps as f64)
                .sum::<f64>()
                / n_ports
                / window_ps,
            blocked: self.rec.blocked_window_ps as f64 / sources / window_ps,
        }
    }

    /// The queue series: each recorded queue's value at bin end, maximum and mean in the bin.
    fn queue_series(&self, bins: &Bins) -> Series {
        let rec = &self.rec;
        let hot = rec.hot_port;
        let mut queue = Series::new(&["bytes", "bytes_max", "bytes_mean"]);
        if hot.is_none() {
            queue.push(
                "hotspot".into(),
                &[
                    &rec.hot_queue.end_values,
                    &rec.hot_queue.max_values,
                    &rec.hot_queue.bin_means(bins),
                ],
            );
        }
        for q in &rec.queues {
            queue.push(
                q.name.clone(),
                &[&q.end_values, &q.max_values, &q.bin_means(bins)],
            );
        }
        queue
    }

    /// The binned series of every kind, entity-major (docs/core-config.md).
    fn series(&self, bins: &Bins) -> Vec<(String, Series)> {
        let rec = &self.rec;
        let hot = rec.hot_port;
        let as_f64 = |v: &[u64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
        let mut tput = Series::new(&["gbps"]);
        tput.push("aggregate".into(), &[&gbps_bins(bins, &rec.aggregate.bins)]);
        for (n, c) in self.topo.nodes.iter().zip(&rec.nodes) {
            tput.push(format!("node:{n}"), &[&gbps_bins(bins, &c.bins)]);
        }
        for (n, c) in rec.flow_names.iter().zip(&rec.flows) {
            tput.push(format!("flow:{n}"), &[&gbps_bins(bins, &c.bins)]);
        }
        for (n, c) in rec.port_names.iter().zip(&rec.ports) {
            tput.push(format!("port:{n}"), &[&gbps_bins(bins, &c.bins)]);
        }
        if hot.is_none() {
            tput.push(
                "port:hotspot".into(),
                &[&gbps_bins(bins, &rec.hot_tput.bins)],
            );
        }
        let queue = self.queue_series(bins);
        let mut drops = Series::new(&["frames", "bytes"]);
        drops.push(
            "network".into(),
            &[
                &as_f64(&rec.drop_frames.bins),
                &as_f64(&rec.drop_bytes.bins),
            ],
        );
        drops.push(
            "source".into(),
            &[
                &as_f64(&rec.source_drop_frames.bins),
                &as_f64(&rec.source_drop_bytes.bins),
            ],
        );
        let n_ports = self.ports.len() as f64;
        let frac: Vec<f64> = rec
            .paused_bins
            .iter()
            .enumerate()
            .map(|(i, &ps)| ps as f64 / (bins.len_ps(i) as f64 * n_ports))
            .collect();
        let mut pause = Series::new(&["fraction"]);
        pause.push("all".into(), &[&frac]);
        let mut cm = Series::new(&["frames", "bytes"]);
        cm.push(
            "all".into(),
            &[&as_f64(&rec.cm_frames.bins), &as_f64(&rec.cm_bytes.bins)],
        );
        let mut rates = Series::new(&["gbps"]);
        for r in &rec.rates {
            rates.push(r.name.clone(), &[&r.end_values]);
        }
        [
            ("throughput", tput),
            ("queue", queue),
            ("drops", drops),
            ("pause", pause),
            ("cm", cm),
            ("rates", rates),
        ]
        .into_iter()
        .map(|(kind, s)| (kind.to_string(), s))
        .collect()
    }
}
