//! A hint to the CPU: start loading the cache line of a value the simulation will read soon, and
//! go on without waiting for it (a plain load would hold up the instructions behind it once the
//! core's reorder window fills). On targets without a prefetch instruction it does nothing.

/// Ask for the cache line holding `*r` (into every cache level). Never faults and changes no
/// state the program can observe: it only moves a line closer to the core.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is part of the target's
    // baseline); the instruction reads no memory architecturally and cannot fault, and `r` is a
    // valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
