//! A hint to the CPU: start loading the cache line of a value the simulation will read soon, and
//! go on without waiting for it (a plain load would hold up the instructions behind it once the
//! core's reorder window fills). On targets without a prefetch instruction it does nothing.

/// Ask for the cache line holding `*r` (into every cache level). Never faults and changes no
/// state the program can observe: it only moves a line closer to the core.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_address((r as *const T).cast());
}

/// Ask for every cache line of `*r`: a value of a few lines that is read together (a NIC).
#[inline(always)]
pub fn prefetch_all<T>(r: &T) {
    prefetch_lines(r, std::mem::size_of::<T>().div_ceil(64));
}

/// Ask for the first `lines` cache lines of `*r` (a value whose hot fields lead its layout).
#[inline(always)]
pub fn prefetch_lines<T>(r: &T, lines: usize) {
    debug_assert!(
        lines * 64 < std::mem::size_of::<T>() + 64,
        "lines within the value"
    );
    let start: *const u8 = (r as *const T).cast();
    for line in 0..lines {
        prefetch_address(start.wrapping_add(64 * line));
    }
}

/// Ask for the cache line holding address `p` (any address: a prefetch never faults), for a
/// table that hands out where its entry lies rather than a reference to it.
#[inline(always)]
pub fn prefetch_address(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is part of the target's
    // baseline); the instruction reads no memory architecturally and cannot fault, whatever the
    // address (callers pass addresses inside a value they hold a reference to anyway).
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
