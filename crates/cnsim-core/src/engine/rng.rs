//! Seeded random streams, one per stochastic component (ns-3's `AssignStreams` idea): a stream
//! is derived from the master seed and a component key, so adding a component or enabling a
//! scheme does not shift the sample path of the others (algorithms.md §9).

use rand::SeedableRng;

/// The generator every component uses.
pub type SimRng = rand_pcg::Pcg64Mcg;

/// Component families; each has its own key space.
#[derive(Clone, Copy, Debug)]
pub enum StreamKind {
    Traffic = 1,
    CongestionPoint = 2,
    ReactionPoint = 3,
    /// A destination NIC's notification point (QCN-3pt's reflection sampling).
    Sink = 4,
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream of component `index` of family `kind` for master seed `seed`.
pub fn stream(seed: u64, kind: StreamKind, index: u64) -> SimRng {
    let a = splitmix64(seed ^ splitmix64(kind as u64));
    let b = splitmix64(a ^ splitmix64(index.wrapping_add(0x5151)));
    // Both halves of the 128-bit MCG state depend on the component: the low half evolves on its
    // own (a product's low 64 bits depend only on the factors' low 64 bits), so a low half
    // shared by the streams of one (seed, family) ran in lockstep in all of them and correlated
    // their outputs (`streams_of_one_seed_are_uncorrelated`).
    let lo = splitmix64(b ^ 0x6A09_E667_F3BC_C909);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&lo.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    SimRng::from_seed(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: u64 = stream(1, StreamKind::Traffic, 3).gen();
        let b: u64 = stream(1, StreamKind::Traffic, 3).gen();
        let c: u64 = stream(1, StreamKind::Traffic, 4).gen();
        let d: u64 = stream(2, StreamKind::Traffic, 3).gen();
        let e: u64 = stream(1, StreamKind::CongestionPoint, 3).gen();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_ne!(a, e);
    }

    /// Streams of one seed and family are independent: the outputs of two streams agree on 32
    /// of 64 bits on average (binomial, SD 4 per draw). Until the audit of the traffic
    /// generators every stream of a (seed, family) pair shared the low half of its 128-bit MCG
    /// state, which the multiplication never mixes upward: the low 64 bits of all those states
    /// ran in lockstep and their outputs agreed on 32.047 bits (z = +37 over 10^7 draws).
    #[test]
    fn streams_of_one_seed_are_uncorrelated() {
        let n = 1_000_000u64;
        for (i, j) in [(0u64, 1u64), (5, 6), (0, 7)] {
            for kind in [StreamKind::Traffic, StreamKind::CongestionPoint] {
                let (mut x, mut y) = (stream(1, kind, i), stream(1, kind, j));
                let agree: u64 = (0..n)
                    .map(|_| (!(x.gen::<u64>() ^ y.gen::<u64>())).count_ones() as u64)
                    .sum();
                let z = (agree as f64 / n as f64 - 32.0) / (4.0 / (n as f64).sqrt());
                assert!(z.abs() < 5.0, "streams {i} and {j} ({kind:?}): z = {z:.1}");
            }
        }
    }
}
