//! PAUSE deadlock detection (issue 15; algorithms.md §2): the graph of pause dependencies and a
//! search for a cycle in it.
//!
//! A transmitter `p` paused by switch `Y` waits for `Y`'s memory to drain below XON. `Y` drains
//! only through its egress ports, and the frames that matter are those charged to the input `p`
//! feeds (partitioned memory) or any frame (one shared pool). So `p` depends on every egress
//! port `e` of `Y` that is itself paused and holds such a frame. A cycle of such dependencies in
//! which every member has been paused for at least a threshold can never drain on its own: it is
//! the cyclic buffer dependency of lossless networks (the ring of PAUSE), not a slow queue.
//!
//! The kernel builds the [`Waits`] of the paused ports every few thousand events (no event of
//! its own, so results do not change) and asks for a cycle.

/// For every port (global index), the paused ports it waits on; empty for a port that is not
/// paused long enough or waits on nothing paused.
pub type Waits = Vec<Vec<u32>>;

/// A cycle of the wait graph, as port indices starting at its smallest index, if any.
pub fn find_cycle(waits: &Waits) -> Option<Vec<u32>> {
    // iterative three-colour depth-first search: grey = on the current path
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let mut colour = vec![WHITE; waits.len()];
    for root in 0..waits.len() {
        if colour[root] != WHITE || waits[root].is_empty() {
            continue;
        }
        // (node, index of the next edge to follow)
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        colour[root] = GREY;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&to) = waits[node].get(*next) {
                *next += 1;
                let to = to as usize;
                match colour[to] {
                    WHITE => {
                        colour[to] = GREY;
                        stack.push((to, 0));
                    }
                    GREY => {
                        // the path from `to` to `node` closes a cycle
                        let start = stack
                            .iter()
                            .position(|&(n, _)| n == to)
                            .expect("grey nodes are on the path");
                        let mut cycle: Vec<u32> =
                            stack[start..].iter().map(|&(n, _)| n as u32).collect();
                        let min = (0..cycle.len())
                            .min_by_key(|&i| cycle[i])
                            .expect("non-empty");
                        cycle.rotate_left(min);
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                colour[node] = BLACK;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_ring_and_nothing_in_a_chain() {
        // 0 -> 1 -> 2 -> 0 is a ring; 3 -> 0 hangs off it; 4 -> 5 is a chain
        let waits: Waits = vec![vec![1], vec![2], vec![0], vec![0], vec![5], vec![]];
        assert_eq!(find_cycle(&waits), Some(vec![0, 1, 2]));
        let chain: Waits = vec![vec![1], vec![2], vec![], vec![0]];
        assert_eq!(find_cycle(&chain), None);
        assert_eq!(find_cycle(&vec![]), None);
    }

    #[test]
    fn the_cycle_starts_at_its_smallest_port() {
        // the search enters at 0 but the cycle is 5 -> 3 -> 4 -> 5
        let waits: Waits = vec![vec![5], vec![], vec![], vec![4], vec![5], vec![3]];
        assert_eq!(find_cycle(&waits), Some(vec![3, 4, 5]));
        // two switches pausing each other's link
        let pair: Waits = vec![vec![], vec![2], vec![1]];
        assert_eq!(find_cycle(&pair), Some(vec![1, 2]));
    }
}
