//! CPU-bound work on the async runtime.

/// Bytes of input below which work runs in place: `block_in_place` hands the worker's other
/// tasks to another thread (a wake-up and a context switch or two, tens of microseconds),
/// which costs more than reading a small answer. A body of 256 KiB takes about a millisecond.
const IN_PLACE_BELOW: usize = 256 * 1024;

/// Runs CPU-bound work over `size` bytes of input (decoding, validating a large body) without
/// starving the async workers that read other responses: on a multi-threaded runtime, work on
/// a large input first hands the worker's other tasks to another thread.
pub fn cpu_bound<T>(size: usize, work: impl FnOnce() -> T) -> T {
    if size < IN_PLACE_BELOW {
        return work();
    }
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}
