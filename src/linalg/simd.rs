//! The runtime dispatch of the vectorised kernels (`is_x86_feature_detected!` branches),
//! and a switch that lets a test run their scalar fallbacks on a machine whose CPU has
//! the wider instruction sets (issue 50, family 6): otherwise no machine here would ever
//! run the fallbacks, and a fallback replaced by constants would pass every test.
//!
//! The switch is per thread and off by default: production runs dispatch exactly as
//! before (one thread-local read per kernel call), and the output bytes do not depend on
//! it because every fallback computes the same bits as the vectorised build (the tests of
//! tests/hardening3_simd.rs check that, with a negative control).
use std::cell::Cell;

thread_local! {
    static SCALAR: Cell<bool> = const { Cell::new(false) };
    static FALLBACKS: Cell<u64> = const { Cell::new(0) };
}

/// Whether this thread may take the vectorised branch (false while
/// [`with_scalar_fallbacks`] runs).
#[inline]
pub fn vector_allowed() -> bool {
    !SCALAR.with(|s| s.get())
}

/// Counts a call that took a scalar fallback on this thread (read by the tests).
#[inline]
pub fn note_fallback() {
    FALLBACKS.with(|c| c.set(c.get().wrapping_add(1)));
}

/// Runs `f` on this thread with every vectorised kernel dispatching to its scalar
/// fallback; returns `f`'s result and how many kernel calls took a fallback. For tests:
/// kernels called from other threads (rayon workers) are not affected.
#[doc(hidden)]
pub fn with_scalar_fallbacks<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = fallbacks();
    let was = SCALAR.with(|s| s.replace(true));
    let r = f();
    SCALAR.with(|s| s.set(was));
    (r, fallbacks() - before)
}

/// How many kernel calls took a scalar fallback on this thread so far.
#[doc(hidden)]
pub fn fallbacks() -> u64 {
    FALLBACKS.with(|c| c.get())
}
