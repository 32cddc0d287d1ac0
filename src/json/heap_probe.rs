//! Test-only: the lib's unit tests run on an allocator that counts, per thread, the bytes in
//! use as the system allocator's chunks, and their peak, so a test can hold the [`cost`]
//! model (an upper bound of a tree's heap) against what the allocator really hands out.
//!
//! [`cost`]: crate::json::scan::cost

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

/// What glibc takes for a request of `size` bytes: a 16-byte aligned chunk with an 8-byte
/// header, at least 32 bytes.
fn chunk(size: usize) -> usize {
    (size + 8).div_ceil(16).max(2) * 16
}

fn add(size: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + chunk(size);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn sub(size: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(chunk(size))));
}

// SAFETY: every call is passed on to `System` unchanged; the counters are thread-locals
// without destructors, read with `try_with`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        sub(layout.size());
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Counted as if the old and the new block were both held for a moment.
            add(new_size);
            sub(layout.size());
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The peak of this thread's heap in use while `f` runs, above what was in use before it.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, peak - before)
}
