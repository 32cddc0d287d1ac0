//! CPU-bound work on the async runtime.

/// Runs CPU-bound work (decoding, validating a large body) without starving the async workers
/// that read other responses: on a multi-threaded runtime the worker hands its other tasks to
/// another thread first.
pub fn cpu_bound<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}
