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

/// Bodies of every shape a tree can take many times the size of: tiny values, deep
/// objects, many keys, long and many short strings, escapes, empty containers, and a page
/// of the reference data's malls.
pub fn shapes(size: usize) -> Vec<(&'static str, Vec<u8>)> {
    let repeat = |head: &str, one: &str, tail: &str| {
        let mut body = head.to_string();
        while body.len() < size {
            body.push_str(one);
            body.push(',');
        }
        body.push_str(one);
        body.push_str(tail);
        body.into_bytes()
    };
    let deep = format!("{}0{}", r#"{"a":"#.repeat(100), "}".repeat(100));
    let mut keys = String::from("{");
    let mut i = 0u64;
    while keys.len() < size {
        keys.push_str(&format!("\"{i:x}\":0,"));
        i += 1;
    }
    keys.push_str("\"end\":0}");
    // A mall record of §2.2's shape (the layout of the reference data's).
    let mall = r#"{"id":"1001","mallSn":"200000001","templateId":"7","mallName":"Mall 1","industryCode":"retail","edition":1,"appType":1,"state":1,"innerState":0,"isDelete":0,"signature":"5f0c6a1d2b7e4c98","seller":{"merchantId":"5f3c9a1e-7b42-4d8e-9c61-2a8f0e4b7d13","merchantUserId":"b7e2d4a9-1c36-4f5b-8e90-3d7a6c2f1e48","role":"OWNER"},"createTime":"2024-01-02T03:04:05Z","updateTime":"2024-01-02T03:04:05Z","logo":null,"banner":null,"domain":null,"phone":null,"email":null,"address":null,"province":null,"city":null,"district":null,"longitude":null,"latitude":null,"openTime":null,"closeTime":null,"notice":null,"remark":null,"tags":["a","b"]}"#;
    let page = repeat(
        r#"{"success":true,"code":"0000","msg":"ok","data":["#,
        mall,
        "]}",
    );
    vec![
        ("tiny values", repeat(r#"{"data":["#, "0", "]}")),
        ("deep objects", repeat("[", &deep, "]")),
        ("many keys", keys.into_bytes()),
        (
            "one long string",
            format!("\"{}\"", "x".repeat(size)).into_bytes(),
        ),
        ("short strings", repeat("[", r#""ab""#, "]")),
        ("escaped strings", repeat("[", r#""\u00e9\n""#, "]")),
        ("empty containers", repeat("[", "[{},[]]", "]")),
        ("one-member objects", repeat("[", r#"{"k":"v"}"#, "]")),
        ("a page of malls", page),
    ]
}
