//! Large tables read at random, backed by 2 MiB pages instead of 4 KiB ones, so that reaching
//! any of their entries needs no page-table walk. A `zhb-og-n128` backlog holds 300 MB of VOQ
//! chunks; each frame reads a chunk and writes another, each on its own 4 KiB page among 75,000,
//! far more than the TLB covers (docs/performance.md, "Huge pages for the large tables"). Where
//! the kernel gives no huge pages on request (`transparent_hugepage` set to `never`, or not
//! Linux) the tables work as before.

/// A table's size in bytes from which it is worth huge pages: one huge page.
const HUGE_PAGE: usize = 2 << 20;

/// Append `x` to `v`, a table that may grow large and is read at random, growing it when it is
/// full as [`grow_in_huge_pages`] says.
#[inline(always)]
pub fn push_in_huge_pages<T: Copy>(v: &mut Vec<T>, x: T, large: usize) {
    if v.len() == v.capacity() {
        grow_in_huge_pages(v, large);
    }
    v.push(x);
}

/// Make room for at least one more element in `v`. Below one huge page it doubles as a `Vec`
/// does. Past that it moves once into room for `large` elements, asked for in huge pages before
/// any of it is touched: pages the kernel has already given cannot become huge again, and a
/// `Vec` that grows in place keeps its old pages. The room is address space only; memory comes
/// as elements are used. Where the process may not take that much address space, the table goes
/// on doubling. Beyond `large` elements the room doubles in place, and only its new half is in
/// huge pages.
#[cold]
fn grow_in_huge_pages<T: Copy>(v: &mut Vec<T>, large: usize) {
    let room = v.capacity();
    let bytes = room * std::mem::size_of::<T>();
    if bytes < HUGE_PAGE {
        v.reserve(room.max(64));
    } else if room < large {
        let mut moved = Vec::new();
        if moved.try_reserve_exact(large).is_ok() {
            advise_huge_pages(&moved);
            moved.extend_from_slice(v);
            *v = moved;
        } else {
            // no address space for the room (under `ulimit -v`, say): grow as a `Vec` does
            v.reserve(room);
        }
    } else {
        v.reserve(room);
        advise_huge_pages(v);
    }
}

/// Ask that the whole buffer of `v`, its spare capacity included, be backed by huge pages. Only
/// the 2 MiB-aligned stretches inside the buffer can be; a shorter buffer is left alone. It
/// changes nothing the program can observe but its speed and its resident memory.
fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        // inward to whole pages: madvise wants an aligned start, and no page outside the buffer
        let first = start.next_multiple_of(PAGE);
        let len = end.saturating_sub(first) & !(PAGE - 1);
        if len < HUGE_PAGE {
            return;
        }
        #[allow(unsafe_code)]
        // SAFETY: MADV_HUGEPAGE changes how the kernel backs the pages, never their contents, and
        // the range lies inside `v`'s allocation, which `v` keeps alive for the call. The result
        // is ignored on purpose: a kernel without transparent huge pages refuses the advice, and
        // the table then works as before.
        unsafe {
            libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Push `n` elements of 4 KiB (each filled with its index) into a table with room `large`
    /// ([`push_in_huge_pages`]); check every element and return the rooms it went through.
    fn fill(n: u64, large: usize) -> Vec<usize> {
        let mut v: Vec<[u64; 512]> = Vec::new();
        let mut rooms = Vec::new();
        for i in 0..n {
            let room = v.capacity();
            push_in_huge_pages(&mut v, [i; 512], large);
            if v.capacity() != room {
                rooms.push(v.capacity());
            }
        }
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, e)| e.iter().all(|&x| x == i as u64)));
        rooms
    }

    #[test]
    fn a_table_keeps_its_elements_through_every_kind_of_growth() {
        // doubling from 64 elements up to one huge page (512 elements of 4 KiB), the move into
        // the large room (1,500: not a doubling), then doubling in place
        assert_eq!(fill(3001, 1500), [64, 128, 256, 512, 1500, 3000, 6000]);
    }

    /// A page-aligned element, so that a table's buffer starts on a page and its length in
    /// whole pages is known.
    #[cfg(target_os = "linux")]
    #[derive(Clone, Copy)]
    #[repr(C, align(4096))]
    struct Page([u8; 4096]);

    /// Whether the page at `addr` is advised huge: the `hg` flag of the mapping that holds it
    /// in /proc/self/smaps. `None` where the kernel has no transparent huge pages.
    #[cfg(target_os = "linux")]
    fn advised_huge(addr: usize) -> Option<bool> {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return None;
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                if inside {
                    return Some(flags.split_whitespace().any(|f| f == "hg"));
                }
            } else if let Some((a, b)) = line.split(' ').next().and_then(|r| r.split_once('-')) {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = (a..b).contains(&addr);
                }
            }
        }
        Some(false)
    }

    /// Tables of `pages` pages whose first page is not advised yet (memory a freed, advised
    /// table left is skipped by keeping it): the table, and the address of its first page.
    #[cfg(target_os = "linux")]
    fn fresh_pages(pages: usize, kept: &mut Vec<Vec<Page>>) -> Option<(Vec<Page>, usize)> {
        for _ in 0..16 {
            let v: Vec<Page> = Vec::with_capacity(pages);
            let at = v.as_ptr() as usize;
            if !advised_huge(at)? {
                return Some((v, at));
            }
            kept.push(v);
        }
        panic!("no fresh memory in 16 tries");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_buffer_of_one_huge_page_or_more_is_advised_and_a_shorter_one_is_not() {
        let mut kept = Vec::new();
        let Some((long, at)) = fresh_pages(HUGE_PAGE / 4096, &mut kept) else {
            return; // no transparent huge pages: the advice is refused, nothing to see
        };
        advise_huge_pages(&long);
        assert_eq!(advised_huge(at), Some(true), "exactly one huge page");
        assert_eq!(
            advised_huge(at + HUGE_PAGE - 4096),
            Some(true),
            "to its last page"
        );
        let (short, at) = fresh_pages(HUGE_PAGE / 4096 - 1, &mut kept).unwrap();
        advise_huge_pages(&short);
        assert_eq!(advised_huge(at), Some(false), "a page short of a huge page");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_table_past_one_huge_page_grows_into_advised_pages() {
        let mut v: Vec<[u64; 512]> = Vec::new();
        let large = 3 * HUGE_PAGE / 4096;
        for i in 0..=large as u64 {
            push_in_huge_pages(&mut v, [i; 512], large);
            if v.len() == large {
                // the large room, from its first page
                let Some(advised) = advised_huge(v.as_ptr() as usize + 4096) else {
                    return;
                };
                assert!(advised, "the large room is advised");
            }
        }
        // doubled in place: the new half is advised too
        let new_half = v.as_ptr() as usize + (large + 1) * 4096;
        assert_eq!(advised_huge(new_half), Some(true), "the doubled room");
    }

    #[test]
    fn a_room_beyond_the_address_space_leaves_the_table_doubling() {
        // a room no process can map: the table must go on growing as a Vec, not abort
        let rooms = fill(2000, usize::MAX / 4096);
        assert!(rooms.windows(2).all(|w| w[1] == 2 * w[0]), "{rooms:?}");
    }
}
